"""Writing many rows at once: PostgreSQL's COPY where it is available, bulk_create elsewhere.

Ingestion and scoring write hundreds of thousands of rows per submission; COPY streams
them in one statement, several times faster than INSERTs (bulk_create or not).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from django.db import connection, models

BATCH = 1000
UPDATE_PARAMETERS = 900  # within the 999 of older SQLite builds


def relax_durability() -> None:
    """Let the current transaction commit without waiting for its WAL to reach the disk
    (PostgreSQL's ``synchronous_commit``). For rows that can be made again from what is
    durable: a crash may lose the last such commits, never corrupt them, and the sweep redoes
    the work they held. Waiting for the disk was a third of a scoring chunk's time."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """Insert ``rows`` (values in the order of ``fields``, attribute names such as
    ``submission_id``); returns how many. JSON fields are written as the ORM would."""
    columns = _columns(model, fields)
    if connection.vendor == "postgresql":
        return _copy(model, columns, rows)
    text = [i for i, column in enumerate(columns) if _is_plain_text(column)]
    count = 0
    batch = []
    for row in rows:
        row = list(row)
        for i in text:
            row[i] = _without_nul(row[i])
        batch.append(model(**dict(zip(fields, row, strict=True))))
        if len(batch) >= BATCH:
            count += len(model._default_manager.bulk_create(batch))
            batch = []
    if batch:
        count += len(model._default_manager.bulk_create(batch))
    return count


def update_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Set ``fields`` (attribute names such as ``run_id``) of many rows at once: ``rows``
    are (pk, *values), each value as its field takes it (a JSON field's, parsed). One
    statement per batch, where ``bulk_update`` writes a CASE over every row for each field
    (a second for a thousand rows)."""
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    pk = quote(model._meta.pk.column)
    columns = _columns(model, fields)
    # A VALUES column of NULLs alone is text to PostgreSQL: each is cast to its column's type.
    typed = "::{}" if connection.vendor == "postgresql" else ""
    assignments = ", ".join(
        f"{quote(column.column)} = changed.column{i}"
        # Django's Field.cast_db_type, which django-stubs leave out.
        + typed.format(column.cast_db_type(connection))  # type: ignore[attr-defined]
        for i, column in enumerate(columns, start=2)
    )
    prepare = [(i, fn) for i, column in enumerate(columns, start=1) if (fn := _preparer(column))]
    placeholders = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    batch_rows = UPDATE_PARAMETERS // (len(fields) + 1)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch_rows):
            batch = [list(row) for row in rows[start : start + batch_rows]]
            for row in batch:
                for i, fn in prepare:
                    row[i] = fn(row[i])
            cursor.execute(
                f"UPDATE {table} SET {assignments} FROM (VALUES "
                f"{', '.join([placeholders] * len(batch))}) AS changed "
                f"WHERE {table}.{pk} = changed.column1",
                [value for row in batch for value in row],
            )


def _columns(model: type[models.Model], fields: Sequence[str]) -> list[models.Field[Any, Any]]:
    """The model's fields named in ``fields`` (attribute names such as ``submission_id``):
    each one of its table's columns, never a relation's other side nor a generic key."""
    return [
        cast("models.Field[Any, Any]", model._meta.get_field(name.removesuffix("_id")))
        for name in fields
    ]


def _copy(model, columns, rows) -> int:
    names = ", ".join(connection.ops.quote_name(column.column) for column in columns)
    statement = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({names}) FROM STDIN"
    prepare = [(i, fn) for i, column in enumerate(columns) if (fn := _preparer(column))]
    count = 0
    # The driver's own cursor copies; its errors are turned into Django's, so that a lost
    # connection is an OperationalError the tasks retry, as it is for any other query.
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(statement) as copy,
    ):
        for row in rows:
            row = list(row)
            for i, fn in prepare:
                row[i] = fn(row[i])
            copy.write_row(row)
            count += 1
    return count


def _preparer(column):
    # Values of plain text, number and link columns go in as given (psycopg adapts them);
    # anything else, JSON text above all, as the field prepares it.
    if _is_plain_text(column):
        return _without_nul
    if isinstance(column, _AS_GIVEN):
        return None
    return column.get_prep_value


def _is_plain_text(column) -> bool:
    return type(column) in (models.CharField, models.TextField)


_AS_GIVEN = (models.ForeignKey, models.IntegerField, models.BooleanField, models.DateTimeField)


def _without_nul(value):
    """PostgreSQL's text cannot hold U+0000, which JSON strings can; it becomes U+FFFD, on
    SQLite too, whose text functions (LIKE, length) would stop at it. (JSON text fields
    escape it, so stored runs and reports keep it exactly.)"""
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value
