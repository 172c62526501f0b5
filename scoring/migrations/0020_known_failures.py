# A known failure is not a "Problem": that name belongs to the matcher's validation problems.
# Renamed in place, so the decisions already made are kept.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("cases", "0001_initial"),
        ("scoring", "0019_cases_in_file_order_index"),
    ]

    operations = [
        migrations.RenameModel("Problem", "KnownFailure"),
        migrations.RenameModel("ProblemSummary", "KnownFailureSummary"),
        migrations.AlterField(
            model_name="knownfailure",
            name="suite",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="known_failures",
                to="cases.suite",
            ),
        ),
    ]
