from django.db import migrations, models

from cases.fields import document_digest


def fill_digests(apps, schema_editor):
    SuiteVersion = apps.get_model("cases", "SuiteVersion")
    for pk, document in SuiteVersion.objects.values_list("pk", "document").iterator():
        SuiteVersion.objects.filter(pk=pk).update(digest=document_digest(document))


class Migration(migrations.Migration):
    dependencies = [
        ("cases", "0003_api_token"),
    ]

    operations = [
        migrations.AddField(
            model_name="suiteversion",
            name="digest",
            field=models.CharField(
                default="", editable=False, help_text="SHA-256 of the document", max_length=64
            ),
            preserve_default=False,
        ),
        migrations.RunPython(fill_digests, migrations.RunPython.noop),
    ]
