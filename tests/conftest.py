"""Shared fixtures. Database tests run on whatever DATABASE_URL names (PostgreSQL in CI)."""

import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The real hasher is slow on purpose; tests create many users and sign them in.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def password():
    return "correct horse battery staple"


@pytest.fixture
def user(db, password):
    from cases.models import User  # imported here so matcher tests run without Django

    return User.objects.create_user("ada", "ada@example.com", password)
