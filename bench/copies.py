"""Millions of runs for a benchmark in minutes: runs read and scored once by the real code,
then copied inside PostgreSQL with their results, predicates and reviews.

Reading and scoring 10,000,000 runs through the pipeline would take hours on a 2-core
machine; what a page costs depends on how many rows it reads, not on how they were made.
So ``bench/pages.py`` reads and scores a template of runs for real (``--template``), then
``grow`` appends copies of it to a submission and ``copy_submission`` makes other
submissions of the same runs. Every copy is one ``INSERT … SELECT`` a table, which never
leaves the server: the rows are not parsed again, as a ``COPY`` through the client would
parse them. Copies are made inside ``bulk_loading``, as PostgreSQL's "Populating a
Database" advises: the secondary indexes of the large tables are dropped and made again
once at the end, and foreign keys are not checked row by row (the copies refer to rows that
are there by construction; the unique indexes, made again, check that no copy collides).

A copy keeps every column of its row but those below: new ids (the template's, shifted
past the table's highest), the submission, and ``seq``, ``line`` and ``trial`` moved past
the submission's runs so that they stay unique. The document keeps its own ``trial``:
no page reads it there. The stored upload (``UploadChunk``) is not copied: no page reads
it once the runs are stored.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection, transaction

from scoring.models import (
    CaseSummary,
    FailureSummary,
    KnownFailureSummary,
    LabelLink,
    PredicateResult,
    Result,
    Review,
    ReviewEvent,
    Run,
    ScoredChunk,
    Submission,
)

LARGE = (Run, Result, PredicateResult)  # whose secondary indexes ``bulk_loading`` drops
RUN_ROWS = (PredicateResult, ReviewEvent, LabelLink)  # rows of runs, with ids of their own


@dataclass(frozen=True)
class Template:
    """The runs of a submission as read and scored, before any copy: ids ``first_id`` to
    ``last_id`` (``bench/pages.py`` reads them before those of any other submission, so
    no other run has an id between), ``seq`` and ``line`` up to ``last_seq``; and the ids
    of the rows of those runs in the tables of ``RUN_ROWS`` (written while the template
    was read, scored and triaged, so that no other rows have ids between either)."""

    submission_id: int
    last_seq: int
    first_id: int
    last_id: int
    last_trial: int
    last_chunk: int
    row_ids: dict[type, tuple[int, int] | tuple[None, None]]

    @classmethod
    def of(cls, submission: Submission) -> Template:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT greatest(max(seq), max(line)), min(id), max(id), max(trial)"
                " FROM scoring_run WHERE submission_id = %s",
                [submission.pk],
            )
            last_seq, first_id, last_id, last_trial = cursor.fetchone()
            cursor.execute(
                "SELECT coalesce(max(index), 0) FROM scoring_scoredchunk WHERE submission_id = %s",
                [submission.pk],
            )
            (last_chunk,) = cursor.fetchone()
            row_ids = {}
            for model in RUN_ROWS:
                cursor.execute(
                    f"SELECT min(id), max(id) FROM {model._meta.db_table}"
                    f" WHERE {_run_column(model)} BETWEEN %s AND %s",
                    [first_id, last_id],
                )
                row_ids[model] = cursor.fetchone()
        return cls(submission.pk, last_seq, first_id, last_id, last_trial, last_chunk, row_ids)


@contextmanager
def bulk_loading():
    """Copies made fast: the large tables' indexes but their constraints' dropped, then
    made again once; no foreign key checked per row (``session_replication_role``, which
    needs the superuser the benchmarks connect as); and every submission counted at the
    end, once the indexes that count them are there."""
    with connection.cursor() as cursor:
        tables = [model._meta.db_table for model in LARGE]
        cursor.execute(  # not those of a constraint: primary keys, unique (submission, seq)
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) AND NOT"
            " EXISTS (SELECT FROM pg_constraint WHERE conindid = indexname::regclass)",
            [tables],
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute("SET session_replication_role = replica")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = DEFAULT")
            cursor.execute("SET maintenance_work_mem = '1GB'")
            for _, definition in indexes:
                cursor.execute(definition)
            cursor.execute("RESET maintenance_work_mem")
        for submission_id in Submission.objects.values_list("pk", flat=True):
            _recount(submission_id)


def grow(template: Template, copies: int) -> None:
    """Append ``copies`` copies of the template's runs to its own submission."""
    for copy in range(1, copies + 1):
        _copy(template, template.submission_id, copy)


def copy_submission(template: Template, label: str, days_ago: int) -> Submission:
    """A new submission of the template's suite and version, uploaded ``days_ago`` days ago,
    holding one copy of its runs."""
    source = Submission.objects.get(pk=template.submission_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT now() - make_interval(days => %s)", [days_ago])
        (created,) = cursor.fetchone()
    fields = {
        field.attname: getattr(source, field.attname)
        for field in Submission._meta.concrete_fields
        if field.attname not in ("id", "uuid", "label")
    }
    submission = Submission.objects.create(**fields, label=label)
    Submission.objects.filter(pk=submission.pk).update(
        created=created, ingest_started=created, ingest_finished=created, scoring_finished=created
    )
    _copy(template, submission.pk, 0)
    return submission


def _copy(template: Template, submission_id: int, copy: int) -> None:
    """Copy ``copy`` (0 for the first) of the template into ``submission_id``."""
    seq, trial = copy * template.last_seq, copy * (template.last_trial + 1)  # trials count from 0
    with transaction.atomic(), connection.cursor() as cursor:
        run_shift = _shift(cursor, Run, template.first_id)
        in_template = "submission_id = %s AND {run} BETWEEN %s AND %s"
        where = [template.submission_id, template.first_id, template.last_id]
        _insert(cursor, Run, in_template.format(run="id"), where, {
            "id": f"id + {run_shift}", "submission_id": str(submission_id),
            "seq": f"seq + {seq}", "line": f"line + {seq}", "trial": f"trial + {trial}",
        })  # fmt: skip
        moved = {"run_id": f"run_id + {run_shift}", "submission_id": str(submission_id)}
        _insert(cursor, Result, in_template.format(run="run_id"), where, moved)
        _insert(cursor, Review, in_template.format(run="run_id"), where, moved)
        for model in RUN_ROWS:
            first, last = template.row_ids[model]
            if first is None:
                continue
            run = _run_column(model)
            replaced = {"id": f"id + {_shift(cursor, model, first)}", run: f"{run} + {run_shift}"}
            if model is PredicateResult:
                replaced["submission_id"] = str(submission_id)
            _insert(cursor, model, "id BETWEEN %s AND %s", [first, last], replaced)
        _insert(cursor, ScoredChunk, "submission_id = %s AND index <= %s", [
            template.submission_id, template.last_chunk,
        ], {
            "id": "DEFAULT", "submission_id": str(submission_id),
            "index": f"index + {copy * (template.last_chunk + 1)}",
        })  # fmt: skip
        for model in (Run, *RUN_ROWS):
            table = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table}"
            )


def _insert(cursor, model, where: str, params: list, replaced: dict[str, str]) -> None:
    """``INSERT INTO`` the model's table ``SELECT`` its rows ``where``, every column copied
    but those ``replaced`` (column → SQL expression)."""
    table = model._meta.db_table
    columns = [field.column for field in model._meta.concrete_fields]
    if replaced.get("id") == "DEFAULT":  # a fresh id from the table's own sequence
        columns.remove("id")
    values = ", ".join(replaced.get(column, column) for column in columns)
    cursor.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values} FROM {table} WHERE {where}",
        params,
    )


def _shift(cursor, model, first_id: int | None) -> int:
    """What to add to the template's ids of ``model`` so that they follow the table's
    highest."""
    table = model._meta.db_table
    cursor.execute(f"SELECT coalesce(max(id), 0) FROM {table}")
    (highest,) = cursor.fetchone()
    return highest + 1 - (first_id or 0)


def _run_column(model) -> str:
    """The column of ``model`` that holds the run's id."""
    return {PredicateResult: "result_id", ReviewEvent: "run_id", LabelLink: "review_id"}[model]


def _recount(submission_id: int) -> None:
    """The submission's counts from its rows, and its summaries dropped so that
    ``failures.summarize_when_scored`` makes them again for all its runs."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE scoring_submission SET"
            " stored_runs = (SELECT count(*) FROM scoring_run WHERE submission_id = %(s)s),"
            " total = (SELECT count(*) FROM scoring_result WHERE submission_id = %(s)s),"
            " scored = (SELECT count(*) FROM scoring_result WHERE submission_id = %(s)s),"
            " passed = (SELECT count(*) FROM scoring_result"
            "   WHERE submission_id = %(s)s AND verdict = 'pass'),"
            " failed = (SELECT count(*) FROM scoring_result"
            "   WHERE submission_id = %(s)s AND verdict = 'fail'),"
            " errored = (SELECT count(*) FROM scoring_result"
            "   WHERE submission_id = %(s)s AND verdict = 'error')"
            " WHERE id = %(s)s",
            {"s": submission_id},
        )
    for summary in (CaseSummary, FailureSummary, KnownFailureSummary):
        summary.objects.filter(submission_id=submission_id).delete()
