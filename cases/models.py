from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    """The project's user model, in place from the first migration so it can grow later."""
