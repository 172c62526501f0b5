"""Shared fixtures. Database tests run on whatever DATABASE_URL names (PostgreSQL in CI)."""

import pytest

from cases.models import User


@pytest.fixture
def password():
    return "correct horse battery staple"


@pytest.fixture
def user(db, password):
    return User.objects.create_user("ada", "ada@example.com", password)
