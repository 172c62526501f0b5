from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0028_trace_attribute_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="reward",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
