"""The migrations of this release (docs/upgrading.md, "Unreleased") pass
django-migration-linter on PostgreSQL's SQL: nothing the release before still uses is
renamed or dropped, no NOT NULL column comes without a database default, no unique
constraint is added to a table that has rows. Index builds that lock a table are warnings
(docs/upgrading.md says which migrations have them), not failures."""

import contextlib
import io

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django_migration_linter import MigrationLinter

from tests.upgrade.releases import ROOT, UNRELEASED, releases

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="the linter reads the SQL the migrations run on PostgreSQL, production's",
)


@pytest.mark.django_db
def test_this_releases_migrations_keep_the_release_before_running():
    unreleased = releases()[0]
    assert unreleased.title == UNRELEASED
    loader = MigrationLoader(connection)
    linter = MigrationLinter(str(ROOT), no_cache=True)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        for app, name in unreleased.migrations:
            linter.lint_migration(loader.disk_migrations[app, name])
    assert linter.nb_total == len(unreleased.migrations)
    assert not linter.has_errors, said.getvalue()


@pytest.mark.django_db
def test_the_linter_finds_what_the_release_before_cannot_run_on():
    """What made 3c520dd to fbcc28c need downtime, as the linter sees it."""
    loader = MigrationLoader(connection)
    linter = MigrationLinter(str(ROOT), no_cache=True)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        for name in (
            "0020_known_failures",
            "0022_trace_log_records",
            "0026_failed_predicates_only",
        ):
            linter.lint_migration(loader.disk_migrations["scoring", name])
    assert linter.nb_erroneous == 3
    for problem in ("RENAMING tables", "NOT NULL constraint", "DROPPING columns"):
        assert problem in said.getvalue()
