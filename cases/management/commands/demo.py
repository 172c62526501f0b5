"""``manage.py demo``: a demo user to sign in with (idempotent)."""

from django.core.management.base import BaseCommand

from cases.models import User

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "casebook-demo"


class Command(BaseCommand):
    help = "Create the demo user (and reset its password) so the app can be tried at once."

    def handle(self, **options):
        user, created = User.objects.get_or_create(username=DEMO_USERNAME)
        user.set_password(DEMO_PASSWORD)
        user.is_staff = user.is_superuser = True
        user.save()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo user {'created' if created else 'ready'}. Sign in at "
                f"http://127.0.0.1:8000/ as {DEMO_USERNAME} / {DEMO_PASSWORD}"
            )
        )
