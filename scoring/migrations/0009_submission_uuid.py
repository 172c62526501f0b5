import uuid

from django.db import migrations, models


def give_each_its_own(apps, schema_editor):
    # Adding the column gave every existing row the same value.
    Submission = apps.get_model("scoring", "Submission")
    for pk in Submission.objects.values_list("pk", flat=True).iterator():
        Submission.objects.filter(pk=pk).update(uuid=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0008_submission_case_field"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="uuid",
            field=models.UUIDField(default=uuid.uuid4, editable=False),
        ),
        migrations.RunPython(give_each_its_own, migrations.RunPython.noop),
    ]
