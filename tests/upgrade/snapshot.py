"""Everything a database holds, table by table, to compare an old release's database with
the same data upgraded: each table's rows over the columns both schemas have, hashed in
PostgreSQL. What the migrations change on purpose (docs/upgrading.md) is named here, and
nothing else may differ."""

from __future__ import annotations

import psycopg
from psycopg import sql

# Tables a migration renamed (scoring 0020: Problem became KnownFailure), old name: new.
RENAMED = {
    "scoring_problem": "scoring_knownfailure",
    "scoring_problemsummary": "scoring_knownfailuresummary",
}
# Rows a migration deletes on purpose, as the old table's condition for the rows kept
# (scoring 0026: only failed predicates are stored; it deletes the passed ones).
KEPT_ROWS = {("scoring_predicateresult", "passed"): sql.SQL("NOT passed")}
# Django's own records, which ``migrate`` updates: the migrations applied, and the models'
# content types and permissions (renamed with a model, added for a new one).
NOT_DATA = {"django_migrations", "django_content_type", "auth_permission"}


def columns(url: str) -> dict[str, list[str]]:
    """Each table of the public schema, with its columns."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        ).fetchall()
    tables: dict[str, list[str]] = {}
    for table, column in rows:
        tables.setdefault(table, []).append(column)
    return tables


def counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {
            table: conn.execute(
                sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
            ).fetchone()[0]
            for table in columns(url)
        }


def _digest(conn, table: str, kept: list[str], where: sql.Composable | None) -> tuple[int, str]:
    """The table's row count and the MD5 of its rows over the columns ``kept``, the rows
    sorted, so that neither the physical order nor the columns a migration added count."""
    row = sql.SQL(" || '|' || ").join(
        sql.SQL("quote_nullable({}::text)").format(sql.Identifier(c)) for c in kept
    )
    rows = sql.SQL("SELECT {} AS r FROM {}").format(row, sql.Identifier(table))
    if where is not None:
        rows += sql.SQL(" WHERE ") + where
    query = sql.SQL(
        "SELECT count(*), md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) FROM ({}) rows"
    ).format(rows)
    count, digest = conn.execute(query).fetchone()
    return count, digest


def differences(old_url: str, new_url: str) -> list[str]:
    """What the old database holds that the upgraded one lacks or holds differently, each
    as a sentence naming the table; a column the upgrade dropped is named too."""
    old_tables, new_tables = columns(old_url), columns(new_url)
    found = []
    with psycopg.connect(old_url) as old, psycopg.connect(new_url) as new:
        for table, old_columns in sorted(old_tables.items()):
            if table in NOT_DATA:
                continue
            target = table if table in new_tables else RENAMED.get(table, "")
            if target not in new_tables:
                found.append(f"{table}: gone from the upgraded database")
                continue
            kept = [c for c in old_columns if c in new_tables[target]]
            where = None
            for column in old_columns:
                if column not in kept:
                    where = KEPT_ROWS.get((table, column))
                    if where is None:
                        found.append(f"{table}.{column}: gone from the upgraded database")
            before, after = _digest(old, table, kept, where), _digest(new, target, kept, None)
            if before != after:
                found.append(
                    f"{table}: {before[0]} rows before, {after[0]} after, or their values differ"
                )
    return found
