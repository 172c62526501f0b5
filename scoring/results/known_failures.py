"""Known failures: failures tracked across a suite's submissions by their signature
(docs/pipeline.md#signatures, docs/review.md#known-failures).

A failing run's signature (its case and the causes of its failures, without values) names
the same failure in every submission of the suite. The last triage decision on any run
failing that way is kept on its ``KnownFailure`` row: ``scoring.review.decisions`` records
it as statuses are set, and applies it to a later submission's runs
(``apply_earlier_decisions``). This module reads them: the decisions made in other
submissions on failures that come back here, offered again ("marked 'expectation wrong'
in #3 by ann"), and those failing again (marked fixed in an earlier submission, failing
since: not the review status "regression", which is a decision like the others); what the
run page says of its run's failure; and the suite page's open known failures, over each
submission's failing runs counted by signature (``KnownFailureSummary``, stored by
``summarize`` once its scoring is done).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, F, Max, Min, Q, QuerySet, Sum

from scoring.models import (
    KnownFailure,
    KnownFailureSummary,
    Result,
    ReviewStatus,
    Run,
    Status,
    Submission,
)
from scoring.results.tables import kept

KNOWN_FAILURE_SUBMISSIONS = 10  # the suite page's known failures: its latest submissions'
KNOWN_FAILURES_READ = 200  # most recent known failures read, of which the open ones are shown
KNOWN_FAILURES_SHOWN = 20


def _here(submission: Submission) -> QuerySet:
    return Result.objects.filter(submission=submission).exclude(signature="")


def earlier_decisions(submission: Submission) -> QuerySet[KnownFailure]:
    """The suite's known failures decided in another submission that fail here too."""
    return (
        KnownFailure.objects.filter(suite_id=submission.suite_id)
        .exclude(decided_in=submission)
        .filter(signature__in=_here(submission).values("signature"))
        .select_related("decided_by")
    )


def fixed_before(decision: KnownFailure | None, submission_id: int) -> bool:
    """Whether ``decision`` marked its failure fixed in a submission earlier than
    ``submission_id`` (or in one since deleted): that failure seen in ``submission_id`` is
    failing again."""
    return (
        decision is not None
        and decision.status == ReviewStatus.FIXED
        and (decision.decided_in_id or 0) < submission_id
    )


def failing_again(submission: Submission) -> QuerySet[KnownFailure]:
    """Known failures marked fixed in an earlier submission that fail here again (as
    ``fixed_before`` says)."""
    earlier = Q(decided_in__isnull=True) | Q(decided_in_id__lt=submission.pk)
    return earlier_decisions(submission).filter(earlier, status=ReviewStatus.FIXED)


def offered(submission: Submission) -> QuerySet[KnownFailure]:
    """The earlier decisions worth applying here: all but "fixed" (failing again, that is a
    failure to look at, not a decision to copy)."""
    return earlier_decisions(submission).exclude(status=ReviewStatus.FIXED)


def runs_here(submission: Submission, signatures: list[str]) -> dict[str, int]:
    """How many runs of the submission fail in each of these ways. Once it is done, every
    signature's count is kept at once (``tables.kept``): a million runs take seconds."""
    if submission.status == Status.DONE:
        counted = kept(submission, "runs-by-signature", lambda: _every_signature(submission))
    else:
        counted = _counted(_here(submission).filter(signature__in=signatures))
    return {signature: counted[signature] for signature in signatures if signature in counted}


def _every_signature(submission: Submission) -> dict[str, int]:
    """The runs of every failing signature of a done submission: from its stored summary
    (a row a signature, where counting reads every failing result: seconds at a million
    runs, on the first visit), or counted when none is stored for its current results. A
    live submission goes on after it is first done, so its summary is not its counts."""
    if submission.live_day is None:
        stored = KnownFailureSummary.objects.filter(
            submission=submission, generation=submission.generation
        ).values_list("signature", "runs")
        rows = dict(stored)
        if "" in rows:  # the summary is made (a row with no signature marks it)
            del rows[""]
            return rows
    return _counted(_here(submission))


def _counted(results: QuerySet[Result]) -> dict[str, int]:
    return dict(results.values_list("signature").annotate(runs=Count("pk")).order_by())


def runs_of(submission: Submission, signatures) -> QuerySet[Run]:
    return Run.objects.filter(submission=submission, result__signature__in=signatures)


@dataclass(frozen=True)
class RunKnownFailure:
    """What the run page says of the run's failure as a known failure."""

    signature: str
    first_seen: int  # the suite's first submission failing this way
    runs_here: int  # runs of this submission failing this way
    decision: KnownFailure | None  # the last decision, if made in another submission
    failing_again: bool  # that decision is "fixed", made in an earlier submission

    @property
    def offered(self) -> bool:
        """Whether its decision may be set on this submission's runs, as ``offered``."""
        return self.decision is not None and self.decision.status != ReviewStatus.FIXED


def run_known_failure(run: Run, signature: str) -> RunKnownFailure | None:
    if not signature:
        return None
    submission = run.submission
    # The first submission in the (signature, submission) index: no count of the others.
    # The run's own result fails this way, so there is one: this submission at the latest.
    first_seen = (
        Result.objects.filter(signature=signature, submission__suite_id=submission.suite_id)
        .order_by("submission_id")
        .values_list("submission_id", flat=True)
        .first()
    ) or submission.pk
    decision = (
        KnownFailure.objects.filter(suite_id=submission.suite_id, signature=signature)
        .exclude(decided_in=submission)
        .select_related("decided_by")
        .first()
    )
    failing = fixed_before(decision, submission.pk)
    here = runs_here(submission, [signature]).get(signature, 0)
    return RunKnownFailure(signature, first_seen, here, decision, failing)


@dataclass(frozen=True)
class SuiteKnownFailure:
    """A known failure as the suite page lists it: where it was seen, and what was decided."""

    signature: str
    case_key: str
    first_seen: int
    last_seen: int
    submissions: int
    runs: int
    decision: KnownFailure | None

    @property
    def failing_again(self) -> bool:
        """Marked fixed, and seen in a later submission."""
        return fixed_before(self.decision, self.last_seen)

    @property
    def open(self) -> bool:
        """Not settled: never decided, or decided as something still to act on, or fixed
        and seen since."""
        if self.decision is None or self.failing_again:
            return True
        return self.decision.status not in (ReviewStatus.FIXED, ReviewStatus.WONT_FIX)


def summarize(submission: Submission) -> None:
    """Store the submission's failing runs counted by signature, for its current results
    (its scoring is done: ``failures.summarize_when_scored`` calls this in its transaction),
    unless they are stored already. A row with no signature marks a summary made, which a
    submission with no failure has too."""
    stored = KnownFailureSummary.objects.filter(submission=submission)
    if stored.filter(generation=submission.generation).exists():
        return
    stored.delete()
    counted = (
        _here(submission)
        .values_list("signature")
        .annotate(case_key=Min("run__case_key"), runs=Count("pk"))
        .order_by("signature")
    )
    rows = [("", "", 0), *counted]
    KnownFailureSummary.objects.bulk_create(
        (
            KnownFailureSummary(
                submission=submission,
                generation=submission.generation,
                signature=signature,
                case_key=case_key,
                runs=runs,
            )
            for signature, case_key, runs in rows
        ),
        batch_size=1000,
    )


def _current_summaries(submission_ids: list[int]) -> QuerySet[KnownFailureSummary]:
    return KnownFailureSummary.objects.filter(
        submission_id__in=submission_ids, generation=F("submission__generation")
    )


def _grouped(submission_ids: list[int]) -> QuerySet:
    """Each signature failing in ``submission_ids``: its case, first and last submission,
    in how many submissions and runs. Added up from the stored summaries when every one
    of the submissions has its current one, else grouped from their results."""
    summarized = _current_summaries(submission_ids).filter(signature="")
    if summarized.count() == len(set(submission_ids)):
        return (
            _current_summaries(submission_ids)
            .exclude(signature="")
            .values("signature")
            .annotate(
                case_key=Min("case_key"),
                first=Min("submission_id"),
                last=Max("submission_id"),
                submissions=Count("submission_id"),  # one row per submission and signature
                runs=Sum("runs"),
            )
        )
    return (
        Result.objects.filter(submission_id__in=submission_ids)
        .exclude(signature="")
        .values("signature")
        .annotate(
            case_key=Min("run__case_key"),
            first=Min("submission_id"),
            last=Max("submission_id"),
            submissions=Count("submission_id", distinct=True),
            runs=Count("pk"),
        )
    )


def open_known_failures(submission_ids: list[int]) -> list[SuiteKnownFailure]:
    """The suite's open known failures over ``submission_ids`` (its latest submissions): most
    recently seen first, then most runs; at most ``KNOWN_FAILURES_SHOWN``."""
    rows = list(
        _grouped(submission_ids).order_by("-last", "-runs", "signature")[:KNOWN_FAILURES_READ]
    )
    if not rows:
        return []
    suite_id = Submission.objects.filter(pk=submission_ids[0]).values_list("suite_id", flat=True)
    decisions = {
        p.signature: p
        for p in KnownFailure.objects.filter(
            suite_id__in=suite_id, signature__in=[row["signature"] for row in rows]
        ).select_related("decided_by")
    }
    found = [
        SuiteKnownFailure(
            row["signature"],
            row["case_key"],
            row["first"],
            row["last"],
            row["submissions"],
            row["runs"],
            decisions.get(row["signature"]),
        )
        for row in rows
    ]
    return [known for known in found if known.open][:KNOWN_FAILURES_SHOWN]
