"""Millions of runs for a benchmark in minutes: runs read and scored once by the real code,
then copied inside PostgreSQL with their results, predicates and reviews.

Reading and scoring 10,000,000 runs through the pipeline would take hours on a 2-core
machine; what a page costs depends on how many rows it reads, not on how they were made.
So ``bench/pages.py`` reads and scores a template of runs for real (``--template``), then
``grow`` appends copies of it to a submission and ``copy_submission`` makes other
submissions of the same runs. Every copy is one ``INSERT … SELECT`` a table, which never
leaves the server: the rows are not parsed again, as a ``COPY`` through the client would
parse them.

A copy keeps every column of its row but those below: new ids (the template's, shifted
past the table's highest), the submission, and ``seq``, ``line`` and ``trial`` moved past
the submission's runs so that they stay unique. The document keeps its own ``trial``:
no page reads it there. The stored upload (``UploadChunk``) is not copied: no page reads
it once the runs are stored.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class Template:
    """The runs of a submission as read and scored, before any copy: ids ``first_id`` to
    ``last_id`` (``bench/pages.py`` reads them before those of any other submission, so
    no other run has an id between), ``seq`` and ``line`` up to ``last_seq``."""

    submission_id: int
    last_seq: int
    first_id: int
    last_id: int
    last_trial: int
    last_chunk: int

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
        return cls(submission.pk, last_seq, first_id, last_id, last_trial, last_chunk)


def grow(template: Template, copies: int) -> None:
    """Append ``copies`` copies of the template's runs to its own submission."""
    for copy in range(1, copies + 1):
        _copy(template, template.submission_id, copy)
    _recount(template.submission_id)


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
    _recount(submission.pk)
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
        first_predicate = _lowest(cursor, PredicateResult, "result_id", template)
        _insert(cursor, PredicateResult, in_template.format(run="result_id"), where, {
            "id": f"id + {_shift(cursor, PredicateResult, first_predicate)}",
            "result_id": f"result_id + {run_shift}", "submission_id": str(submission_id),
        })  # fmt: skip
        of_template_runs = "run_id BETWEEN %s AND %s"
        first_event = _lowest(cursor, ReviewEvent, "run_id", template)
        _insert(cursor, ReviewEvent, of_template_runs, where[1:], {
            "id": f"id + {_shift(cursor, ReviewEvent, first_event)}",
            "run_id": f"run_id + {run_shift}",
        })  # fmt: skip
        first_link = _lowest(cursor, LabelLink, "review_id", template)
        _insert(cursor, LabelLink, of_template_runs.replace("run_id", "review_id"), where[1:], {
            "id": f"id + {_shift(cursor, LabelLink, first_link)}",
            "review_id": f"review_id + {run_shift}",
        })  # fmt: skip
        _insert(cursor, ScoredChunk, "submission_id = %s AND index <= %s", [
            template.submission_id, template.last_chunk,
        ], {
            "id": "DEFAULT", "submission_id": str(submission_id),
            "index": f"index + {copy * (template.last_chunk + 1)}",
        })  # fmt: skip
        for model in (Run, PredicateResult, ReviewEvent, LabelLink):
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


def _lowest(cursor, model, run_column: str, template: Template) -> int | None:
    """The lowest id of ``model``'s rows of the template's runs."""
    cursor.execute(
        f"SELECT min(id) FROM {model._meta.db_table} WHERE {run_column} BETWEEN %s AND %s",
        [template.first_id, template.last_id],
    )
    return cursor.fetchone()[0]


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
