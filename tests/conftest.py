"""Shared fixtures. Database tests run on whatever DATABASE_URL names (PostgreSQL in CI)."""

import pytest


@pytest.fixture
def password():
    return "correct horse battery staple"


@pytest.fixture
def user(db, password):
    from cases.models import User  # imported here so matcher tests run without Django

    return User.objects.create_user("ada", "ada@example.com", password)
