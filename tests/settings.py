"""The settings tests run with: the project's, with a fast password hasher.

The real hasher is slow on purpose; tests create many users and sign them in. A settings
module rather than a fixture, so that tests which need no Django (the matcher's) run
without pytest-django (``pytest -p no:django tests/matcher``)."""

from evalsite.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
