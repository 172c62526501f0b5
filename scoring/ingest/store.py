"""The run store (docs/pipeline.md#ingest): what is stored of a submission's runs, and its
counts, for every path that brings runs in or scores them: a file read whole or in ranges
(``scoring.ingest.reading``), a chunk scored (``scoring.ingest.chunks``), live traces made
into runs (``scoring.live.assembly``), and the conductor that re-scores, settles and
resumes (``scoring.ingest.conductor``).

It holds the one list of a run's columns (``RUN_FIELDS``) and makes their values
(``run_row``), counts runs against the version (``total``, the unknown cases), writes a
chunk's results with its tally (``write_results``), clears what is to be made again, and
moves a submission to ``done`` (or ``failed``) once its counts say it is complete. Every
write to a submission's rows takes its lock (``current``), and raises ``Superseded`` when
the attempt writing is no longer the current one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from itertools import groupby

from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone

from cases.fields import JSONText
from cases.models import Case, SuiteVersion
from cases.natural import natural_key
from scoring.ingest.bulk import insert_rows, relax_durability
from scoring.ingest.prices import USAGE_FIELDS, usage_values
from scoring.ingest.uploads import GZIP_ERRORS, UploadRefused, open_upload
from scoring.matcher import (
    ERROR,
    FAIL,
    PASS,
    Problem,
    Report,
    dump_json,
    failure_signature,
    parse_json,
)
from scoring.matcher import PredicateResult as MatcherPredicate
from scoring.matcher import Run as MatcherRun
from scoring.matcher import Suite as MatcherSuite
from scoring.models import (
    LABEL_LIMIT,
    EarlierResult,
    EarlierScore,
    InvalidLine,
    PredicateResult,
    Result,
    Review,
    ReviewEvent,
    Run,
    ScoredChunk,
    Status,
    Submission,
)
from scoring.runfiles.diagnosis import (
    CASES_KEPT,
    HEAD_BYTES,
    diagnose,
    no_known_case,
    note_unknown_case,
)
from scoring.runfiles.reader import RunLine
from scoring.runfiles.runmeta import file_reward, meta_values

RUN_FIELDS = (
    "submission_id", "seq", "line", "case_key", "case_order", "trial", "trial_given", "document",
    "final_text", "tools", "meta_values", "reward", *USAGE_FIELDS,
)  # fmt: skip


TOOLS, META_VALUES = RUN_FIELDS.index("tools"), RUN_FIELDS.index("meta_values")
# What making a run again in place (a live trace whose spans came late) changes of it: all
# but its place in the submission.
REMADE_FIELDS = tuple(
    name for name in RUN_FIELDS if name not in ("submission_id", "seq", "line", "trial_given")
)
INVALID_FIELDS = ("submission_id", "line", "reason")


# A run's case key and trial go into indexed, 32-bit columns; past these a run is refused by
# line rather than failing its whole chunk's insert.
CASE_KEY_LIMIT: int = Case._meta.get_field("key").max_length or 0  # no case has a longer one


TRIAL_LIMIT = 2**31 - 1


class Superseded(Exception):
    """The submission was started again (or deleted) while this attempt was reading it."""


def current(submission_id: int, generation: int) -> Submission:
    """The submission, locked; raises ``Superseded`` if it moved on past ``generation``, or
    is no longer reading its file (a range failed on a bug: the others stop)."""
    submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
    if (
        submission is None
        or submission.generation != generation
        or submission.status != Status.INGESTING
    ):
        raise Superseded
    return submission


def tools_text(run) -> str:
    """``Run.tools`` for a run: the names it called, one a line."""
    names = sorted({call.name for batch in run.batches for call in batch})
    return "".join(f"\n{name}" for name in names) + "\n" if names else ""


def run_row(
    submission_id: int,
    seq: int,
    line: int,
    case_key: str,
    trial: int,
    run: MatcherRun,
    canonical: dict,
    trial_given: bool = False,
) -> tuple:
    """A run's row, its values in the order of ``RUN_FIELDS``: its place, case and trial,
    the canonical run as a document (with the trial as numbered: a stored run is complete),
    and the copies the pages filter by. The document is written out as JSON text at once,
    so that the parsed run can be dropped before its chunk is written (``Scored``)."""
    canonical["trial"] = trial
    meta = meta_values(run.meta)
    document = JSONText(dump_json(canonical).decode())
    return (
        submission_id, seq, line, case_key, natural_key(case_key), trial, trial_given,
        document, run.final_text, tools_text(run), meta, file_reward(meta), *usage_values(run),
    )  # fmt: skip


def write_runs(rows: Iterable[tuple]) -> int:
    """Write runs' rows (``run_row``) in bulk (COPY on PostgreSQL: runs are wide, and
    INSERT dumps them slowly); returns how many."""
    return insert_rows(Run, RUN_FIELDS, rows)


def write_invalid(rows: Iterable[tuple]) -> int:
    """Write invalid lines, as ``(submission id, line, reason)``, in bulk."""
    return insert_rows(InvalidLine, INVALID_FIELDS, rows)


def remade(row: tuple) -> tuple:
    """The values of ``REMADE_FIELDS`` in a run's row: what making the run again changes."""
    return tuple(row[RUN_FIELDS.index(name)] for name in REMADE_FIELDS)


def unstorable(item: RunLine) -> tuple[Problem, ...]:
    """What keeps a valid run out of the database: a case key holding NUL (no case key may,
    and PostgreSQL's text and jsonb cannot: read without it, it would be another key), a
    case key longer than any case's (the index over runs could not hold a very long one),
    or a trial past the column's range."""
    run = item.run
    assert run is not None  # a valid line's
    problems = []
    if "\x00" in run.case:
        problems.append(
            item.problem("case", "holds the NUL character (U+0000), which no case key may hold")
        )
    if len(run.case) > CASE_KEY_LIMIT:
        length = len(run.case)
        message = f"at most {CASE_KEY_LIMIT} characters, as a case's key (this is {length:,})"
        problems.append(item.problem("case", message))
    if run.trial is not None and run.trial > TRIAL_LIMIT:
        problems.append(item.problem("trial", f"at most {TRIAL_LIMIT:,}"))
    return tuple(problems)


def describe(problems: tuple[Problem, ...]) -> str:
    """An invalid line's reason: each problem, with the field it is about."""
    return "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)


def count_run(submission: Submission, suite: MatcherSuite, case_key: str, line: int) -> None:
    """Count a stored run against the submission's version (``suite``): in ``total`` when
    the version has its case, else among the unknown cases; a live trace's run that names
    no case is unassigned, neither."""
    if suite.case(case_key) is not None:
        submission.total += 1
    elif case_key:
        note_unknown_case(submission.unknown_cases, case_key, line)


def recount_cases(submission: Submission, suite: MatcherSuite) -> None:
    """Set ``total`` and ``unknown_cases`` for the runs stored, against ``suite``."""
    submission.total = 0
    submission.unknown_cases = {}
    runs = submission.runs.order_by("seq").values_list("case_key", "line")
    for case_key, line in runs.iterator(chunk_size=5000):
        count_run(submission, suite, case_key, line)


def update_counts(submission: Submission) -> None:
    """The verdict counts as the sums of the scored chunks of the current generation."""
    sums = ScoredChunk.objects.filter(
        submission=submission, generation=submission.generation
    ).aggregate(
        scored=Sum("scored", default=0),
        passed=Sum("passed", default=0),
        failed=Sum("failed", default=0),
        errored=Sum("errored", default=0),
    )
    for name, value in sums.items():
        setattr(submission, name, value)


def finish_if_complete(submission: Submission) -> None:
    """Mark the (locked) submission done once its file is read and every run scored.

    A file whose runs are all of cases its version lacks has nothing to score: it ends
    failed, saying which cases the runs name and which the version has, and so never
    stands as a result. Its runs stay, scored by a re-score against a version that has
    their cases. A live submission (traces, ``live_day``) waits for further traces instead."""
    if (
        submission.status != Status.SCORING
        or submission.ingest_finished is None
        or submission.scored < submission.total
    ):
        return
    if not submission.total and submission.stored_runs and submission.live_day is None:
        submission.status = Status.FAILED
        submission.error = nothing_to_score(submission)
        return
    submission.status = Status.DONE
    submission.scoring_finished = timezone.now()


def nothing_to_score(submission: Submission) -> str:
    """Why a submission whose runs are all of cases its version lacks scored nothing."""
    version = SuiteVersion.objects.defer("document", "audit").get(pk=submission.version_id)
    suite_cases = [case.key for case in version.matcher_suite().cases]
    run_cases = list(submission.unknown_cases)
    return no_known_case(
        run_cases,
        submission.stored_runs,
        suite_cases,
        suite=f"version {version.number} of the suite",
        more=len(run_cases) >= CASES_KEPT,
    )


def finish_reading(submission: Submission, first_problems: list[str]) -> None:
    """The (locked) submission's file is read: on to scoring, or failed if it gave no run."""
    submission.ingest_finished = timezone.now()
    if submission.stored_runs:
        submission.status = Status.SCORING
        finish_if_complete(submission)
    else:
        submission.status = Status.FAILED
        submission.error = diagnosis(submission.pk, first_problems, submission.invalid)


def diagnosis(submission_id: int, first_problems: list[str], invalid: int) -> str:
    """What the file that gave no valid run looks like, and what to change."""
    try:
        with closing(open_upload(submission_id)) as stream:
            head = stream.read(HEAD_BYTES)
    except (UploadRefused, *GZIP_ERRORS):  # type: ignore[misc]
        head = b""
    return diagnose(head, first_problems, invalid=invalid)


def clear_results(submission: Submission) -> None:
    """Delete the submission's results and the record of its scored chunks."""
    PredicateResult.objects.filter(result__submission=submission).delete()
    Result.objects.filter(submission=submission).only("pk").delete()
    ScoredChunk.objects.filter(submission=submission).delete()
    submission.scored = submission.passed = submission.failed = submission.errored = 0


def clear_chunk_results(submission: Submission, seqs: tuple[int, int]) -> None:
    """Delete the results of the (locked) submission's runs whose ``seq`` is in ``seqs``
    (first, last), and the record of the chunks that scored them; the counts summed again."""
    results = Result.objects.filter(run__submission=submission, run__seq__range=seqs)
    PredicateResult.objects.filter(result__in=results.values("pk")).delete()
    results.only("pk").delete()
    first, last = ((seq - 1) // submission.chunk_runs for seq in seqs)
    ScoredChunk.objects.filter(submission=submission, index__range=(first, last)).delete()
    update_counts(submission)


def clear_runs(submission: Submission) -> None:
    """Delete everything read from the file, to read it again from the start."""
    clear_results(submission)
    EarlierResult.objects.filter(submission=submission).delete()
    EarlierScore.objects.filter(submission=submission).delete()
    ReviewEvent.objects.filter(run__submission=submission).delete()
    Review.objects.filter(submission=submission).delete()
    submission.runs.only("pk").delete()
    submission.invalid_lines.all().delete()
    submission.read_ranges.all().delete()
    submission.stored_runs = submission.total = submission.invalid = 0
    submission.unknown_cases = {}
    submission.formats_seen = []
    submission.tools_seen = []
    submission.meta_keys = []


@dataclass(slots=True)
class Scored:
    """A run's report as the store writes it, made as soon as the run is scored: its verdict,
    the report as JSON text (the trial it was scored as), its failure signature and its
    failed predicates' values. A chunk then holds these until it is written, not the runs'
    and reports' objects: processing each run at once, while its objects are fresh in the
    CPU's caches, takes about half the CPU of holding a chunk's worth of them
    (docs/pipeline.md#scoring-chunks)."""

    verdict: str
    trial: int | None
    report: str
    signature: str
    predicates: list[tuple]  # ``PREDICATE_FIELDS`` but the first two

    @classmethod
    def of(cls, report: Report) -> Scored:
        return cls(
            report.verdict,
            report.trial,
            # The usage is the run's own columns: not stored again with each report.
            dump_json(report.to_dict(with_usage=False)).decode(),
            failure_signature(report) or "",
            [_predicate_values(p) for p in report.predicates if not p.passed],
        )

    def report_for_trial(self, trial: int) -> str:
        """The report as JSON text, of the run's trial as stored now: settling the ranges
        of a file may have numbered it again since it was scored."""
        if trial == self.trial:
            return self.report
        document = parse_json(self.report)
        document["trial"] = trial
        return dump_json(document).decode()


def write_results(
    submission_id: int, generation: int, indexes: list[int], scored: list[tuple[int, int, Scored]]
) -> None:
    """Write the results of the chunks ``indexes`` (their runs' reports, as ``(run id, seq,
    Scored)``) in one transaction under the submission's lock, if the generation still
    holds: what an earlier scoring of the chunks wrote is replaced and its tally taken back,
    the results and failed predicates written in bulk with each chunk's tally, and the
    counts moved by it; the submission is done once complete."""
    with transaction.atomic():
        relax_durability()  # results can be scored again
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None or submission.generation != generation:
            return
        # The runs as they are now: settling a file read in ranges may have renumbered some
        # or deleted repeats since they were read (docs/pipeline.md#ranges).
        present = Run.objects.filter(seq_ranges(submission, indexes), submission=submission)
        trials, occupied = {}, set()
        for run_id, seq, trial in present.values_list("pk", "seq", "trial"):
            trials[run_id] = trial
            occupied.add((seq - 1) // submission.chunk_runs)
        live = submission.live_day is not None
        if any(run_id not in trials for run_id, _, _ in scored):
            if live or submission.ingest_finished is None:
                # A range read again, or a live run made again, deleted them meanwhile: it
                # sends this chunk again as it writes the runs anew.
                return
            scored = [item for item in scored if item[0] in trials]  # refused repeats
        # A chunk of a file left with no run (all refused as repeats) has no tally: only
        # the chunks that hold runs are scored (``chunk_indexes``).
        tallies = {index: Counter[str]() for index in indexes if live or index in occupied}
        predicates: list[tuple] = []
        results: list[tuple] = []
        now = timezone.now()
        for run_id, seq, run in scored:
            tallies[(seq - 1) // submission.chunk_runs][run.verdict] += 1
            predicates.extend((run_id, submission_id, *values) for values in run.predicates)
            report = JSONText(run.report_for_trial(trials[run_id]))
            results.append((run_id, submission_id, run.verdict, report, now, run.signature))
        chunks = ScoredChunk.objects.filter(submission=submission, generation=generation)
        # Bounded as well as listed: read as a range of the (submission, generation, index)
        # index, not a filter over every chunk of a live submission.
        earlier = chunks.filter(index__range=(min(indexes), max(indexes)), index__in=indexes)
        if earlier.exists():  # scored before: its results are replaced, its tally taken back
            _count(submission, earlier, sign=-1)
            scored_before = Result.objects.filter(
                seq_ranges(submission, earlier.values_list("index", flat=True), "run__seq"),
                submission=submission,
            )
            PredicateResult.objects.filter(result__in=scored_before.values("pk")).delete()
            scored_before.only("pk").delete()
            earlier.delete()
        insert_rows(Result, RESULT_FIELDS, results)
        insert_rows(PredicateResult, PREDICATE_FIELDS, predicates)
        new = ScoredChunk.objects.bulk_create(
            ScoredChunk(
                submission=submission,
                generation=generation,
                index=index,
                scored=tally.total(),
                passed=tally[PASS],
                failed=tally[FAIL],
                errored=tally[ERROR],
            )
            for index, tally in tallies.items()
        )
        _count(submission, new, sign=1)
        finish_if_complete(submission)
        submission.save()


RESULT_FIELDS = ("run_id", "submission_id", "verdict", "report", "scored_at", "signature")


PREDICATE_FIELDS = (
    "result_id",
    "submission_id",
    "kind",
    "index",
    "label",
    "detail",
    "cause_kind",
    "cause_tool",
    "cause_argument",
)


def _predicate_values(p: MatcherPredicate) -> tuple:
    cause = p.cause
    return (
        p.kind,
        p.index,
        p.label[:LABEL_LIMIT],
        p.detail or "",
        cause.kind if cause else "",
        (cause.tool or "")[:LABEL_LIMIT] if cause else "",
        (cause.argument or "")[:LABEL_LIMIT] if cause else "",
    )


def seq_ranges(submission: Submission, indexes, field: str = "seq") -> Q:
    """The runs of the chunks ``indexes``: a range of ``seq`` per stretch of consecutive
    chunks."""
    ranges = Q(pk__in=[])
    for _, pairs in groupby(enumerate(sorted(indexes)), key=lambda pair: pair[1] - pair[0]):
        stretch = [index for _, index in pairs]
        first, _ = submission.chunk_bounds(stretch[0])
        _, last = submission.chunk_bounds(stretch[-1])
        ranges |= Q(**{f"{field}__range": (first, last)})
    return ranges


def _count(submission: Submission, chunks, *, sign: int) -> None:
    """Move the submission's counts by the chunks' tallies: they stay the sums of its
    scored chunks, without summing them all again."""
    for chunk in chunks:
        submission.scored += sign * chunk.scored
        submission.passed += sign * chunk.passed
        submission.failed += sign * chunk.failed
        submission.errored += sign * chunk.errored
