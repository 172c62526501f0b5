"""Shared fixtures. Database tests run on whatever DATABASE_URL names (PostgreSQL in CI).

Django's modules are imported inside the fixtures and no fixture is used by every test, so
the matcher's tests run without Django and pytest-django (``pytest -p no:django``)."""

import os

import pytest

# Fixtures that start real services: a test using one is a pipeline test (make test-fast
# leaves those out, with the browser tests).
REAL_SERVICES = {"pipeline", "broker", "use_broker"}


# What makes a test touch the database (docs/development.md#tests): with
# CASEBOOK_TESTS=database, as CI's second pass on PostgreSQL sets, only such tests run; the
# others gave the same answer on SQLite's pass.
DATABASE_FIXTURES = {"db", "transactional_db", "live_server"}
DATABASE_MARKERS = ("django_db", "pipeline", "stack", "upgrade", "e2e")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if REAL_SERVICES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.pipeline)
    if os.environ.get("CASEBOOK_TESTS") == "database":
        kept, left = [], []
        for item in items:
            (kept if _touches_the_database(item) else left).append(item)
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def _touches_the_database(item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return bool(DATABASE_FIXTURES & fixtures) or any(
        item.get_closest_marker(name) for name in DATABASE_MARKERS
    )


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
    from tests.support.builders import make_team

    return make_team("Agents", admin=admin, editor=editor, viewer=viewer)


@pytest.fixture
def other_team(outsider):
    """The outsider's own team, where they are admin; nobody of ``team`` is in it."""
    from tests.support.builders import make_team

    return make_team("Elsewhere", admin=outsider)


# --- suites and submissions, made the way the app makes them ---------------------------------


@pytest.fixture
def suite(team, admin):
    """The demo suite in ``team`` (private to the team), as version 1."""
    from cases import services
    from tests.support.pages import demo_document

    return services.create_suite(team, demo_document(), admin)


@pytest.fixture
def private_suite(other_team, outsider):
    """Another team's private suite: nobody of ``team`` may see it."""
    from cases import services
    from tests.support.pages import small_document

    document = small_document("secret-ops", tool="launch_missiles", case_tag="classified")
    document["description"] = "hush hush"
    document["tags"] = ["confidential"]
    return services.create_suite(other_team, document, outsider)


@pytest.fixture
def shared_suite(other_team, outsider):
    """Another team's suite visible to every signed-in user."""
    from cases import services
    from tests.support.pages import small_document

    document = small_document("shared-weather", tool="forecast", case_tag="public")
    made = services.create_suite(other_team, document, outsider)
    made.visibility = "everyone"
    made.save(update_fields=["visibility"])
    return made


@pytest.fixture
def as_user(client):
    """``as_user(user)``: the test client, signed in as the user."""

    def sign_in(user):
        client.force_login(user)
        return client

    return sign_in


@pytest.fixture
def run_tasks(django_capture_on_commit_callbacks):
    """A context in which the tasks enqueued after commit run (Celery is eager in tests)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def submit(run_tasks, admin):
    """``submit(suite, lines)``: a submission of the lines, read and scored."""
    import io

    from scoring.ingest.pipeline import create_submission
    from tests.support.pages import jsonl

    def make(suite, lines, *, label="", filename="runs.jsonl", user=None):
        with run_tasks():
            made = create_submission(
                suite, user or admin, io.BytesIO(jsonl(lines)), filename=filename, label=label
            )
        made.refresh_from_db()
        return made

    return make
