from django.db import DatabaseError, migrations, transaction


def tune_column_storage(apps, schema_editor):
    """On PostgreSQL: uploads are stored gzip-compressed already, so compressing each chunk
    again costs time for nothing; stored runs and reports are compressed with lz4 rather
    than the default pglz, which cost a sixth of the ingestion's time (bench/ingest.py)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE scoring_uploadchunk ALTER COLUMN data SET STORAGE EXTERNAL")
    try:
        with transaction.atomic(using=schema_editor.connection.alias):
            for table, column in [("scoring_run", "document"), ("scoring_result", "report")]:
                schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION lz4")
    except DatabaseError:
        pass  # a server built without lz4 keeps pglz


class Migration(migrations.Migration):
    dependencies = [("scoring", "0001_initial")]

    operations = [migrations.RunPython(tune_column_storage, migrations.RunPython.noop)]
