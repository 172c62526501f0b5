# A re-score or a retry is timed from when it starts, not from the upload
# (docs/review.md#submission-page).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0020_known_failures"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="scoring_restarted",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
