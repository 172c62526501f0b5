"""The migrations of this release (docs/upgrading.md, "Unreleased") pass
django-migration-linter on PostgreSQL's SQL: nothing the release before still uses is
renamed or dropped, no NOT NULL column comes without a database default, no unique
constraint is added to a table that has rows. And no index is built on an existing table
without CONCURRENTLY (the linter only warns of that; earlier releases' are listed in
docs/upgrading.md)."""

import contextlib
import io
import re

import pytest
from django.core.management import call_command
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


# A plain CREATE INDEX on a table that already has rows holds its writes until the index is
# built; AddIndexConcurrently does not (docs/upgrading.md). A table the same migration
# creates has no rows yet, so its indexes may be plain.
LOCKING_INDEX = re.compile(r'CREATE (?:UNIQUE )?INDEX (?!CONCURRENTLY)\S+ ON "(\w+)"')
CREATED_TABLE = re.compile(r'CREATE TABLE "(\w+)"')


def indexes_locking_a_table(app: str, name: str) -> list[str]:
    """The tables an existing migration's SQL (on PostgreSQL) indexes without CONCURRENTLY,
    other than those it creates."""
    sql = io.StringIO()
    call_command("sqlmigrate", app, name, stdout=sql)
    created = set(CREATED_TABLE.findall(sql.getvalue()))
    return [table for table in LOCKING_INDEX.findall(sql.getvalue()) if table not in created]


@pytest.mark.django_db
def test_this_releases_indexes_are_built_without_locking_their_tables():
    locking = {
        f"{app} {name}": tables
        for app, name in releases()[0].migrations
        if (tables := indexes_locking_a_table(app, name))
    }
    assert not locking, f"use AddIndexConcurrently (atomic = False) for: {locking}"


@pytest.mark.django_db
def test_a_plain_index_on_an_existing_table_is_found():
    assert indexes_locking_a_table("scoring", "0019_cases_in_file_order_index") == ["scoring_run"]
    assert indexes_locking_a_table("scoring", "0001_initial") == []
