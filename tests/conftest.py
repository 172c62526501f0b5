"""Shared fixtures. Database tests run on whatever DATABASE_URL names (PostgreSQL in CI).

Django's modules are imported inside the fixtures and no fixture is used by every test, so
the matcher's tests run without Django and pytest-django (``pytest -p no:django``)."""

import pytest


@pytest.fixture
def password():
    return "correct horse battery staple"


@pytest.fixture
def user(db, password):
    from cases.models import User  # imported here so matcher tests run without Django

    return User.objects.create_user("ada", "ada@example.com", password)


@pytest.fixture
def make_user(db, password):
    from cases.models import User

    def make(username: str):
        return User.objects.create_user(username, f"{username}@example.com", password)

    return make


@pytest.fixture
def admin(make_user):
    return make_user("alice-admin")


@pytest.fixture
def editor(make_user):
    return make_user("eddie-editor")


@pytest.fixture
def viewer(make_user):
    return make_user("vera-viewer")


@pytest.fixture
def outsider(make_user):
    return make_user("olga-outsider")


@pytest.fixture
def team(admin, editor, viewer):
    """One member of each role."""
    from tests.builders import make_team

    return make_team("Agents", admin=admin, editor=editor, viewer=viewer)


@pytest.fixture
def other_team(outsider):
    """The outsider's own team, where they are admin; nobody of ``team`` is in it."""
    from tests.builders import make_team

    return make_team("Elsewhere", admin=outsider)
