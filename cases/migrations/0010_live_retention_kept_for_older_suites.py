# Suites that existed before live retention (0009) keep their live runs until a team
# chooses a period (docs/upgrading.md, docs/operations.md#retention): 0009 gave them
# 30 days, which the first daily prune would have applied to runs kept under no such rule.
# Only a value is set, so the release before runs on the result unchanged.

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder

RETENTION_ADDED = "0009_suite_retention_days"
DAYS_IT_GAVE = 30


def keep_live_runs_of_older_suites(apps, schema_editor):
    """Suites made before 0009 was applied that still have the 30 days it gave them."""
    applied = (
        MigrationRecorder(schema_editor.connection)
        .migration_qs.filter(app="cases", name=RETENTION_ADDED)
        .values_list("applied", flat=True)
        .first()
    )
    if applied is None:
        return
    Suite = apps.get_model("cases", "Suite")
    older = Suite.objects.using(schema_editor.connection.alias).filter(
        created__lt=applied, live_retention_days=DAYS_IT_GAVE
    )
    older.update(live_retention_days=None)


class Migration(migrations.Migration):
    dependencies = [
        ("cases", "0009_suite_retention_days"),
    ]

    operations = [
        migrations.RunPython(keep_live_runs_of_older_suites, migrations.RunPython.noop),
    ]
