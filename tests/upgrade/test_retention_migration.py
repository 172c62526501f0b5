"""``cases`` 0010: suites made before live retention existed (``cases`` 0009) keep their
live runs until a team chooses a period (docs/upgrading.md); suites made since, and periods
someone chose, are left alone."""

import importlib
from datetime import timedelta
from types import SimpleNamespace

from django.apps import apps
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from cases import services
from cases.models import Suite
from tests.support.pages import small_document

migration = importlib.import_module("cases.migrations.0010_live_retention_kept_for_older_suites")


def test_suites_from_before_retention_keep_their_live_runs(team, admin):
    applied = MigrationRecorder.Migration.objects.get(
        app="cases", name="0009_suite_retention_days"
    ).applied
    older, chosen, newer = (
        services.create_suite(team, small_document(name), admin) for name in ("a", "b", "c")
    )
    assert newer.live_retention_days == 30  # a new suite's default is unchanged
    Suite.objects.filter(pk__in=[older.pk, chosen.pk]).update(created=applied - timedelta(days=9))
    Suite.objects.filter(pk=chosen.pk).update(live_retention_days=7)

    migration.keep_live_runs_of_older_suites(apps, SimpleNamespace(connection=connection))

    kept = dict(Suite.objects.values_list("pk", "live_retention_days"))
    assert kept == {older.pk: None, chosen.pk: 7, newer.pk: 30}
