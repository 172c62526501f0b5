from django.db import migrations

import cases.fields


class Migration(migrations.Migration):
    """Each version's audit, kept with it: a nullable column, so the release before runs
    against it unchanged (docs/operations.md, upgrades)."""

    dependencies = [
        ("cases", "0010_live_retention_kept_for_older_suites"),
    ]

    operations = [
        migrations.AddField(
            model_name="suiteversion",
            name="audit",
            field=cases.fields.JSONTextField(editable=False, null=True),
        ),
    ]
