"""A suite's results over time, for its page: the pass rate of each finished submission as a
chart (and against the versions it was scored against before a re-score), and the cases
whose verdict keeps changing (flaky cases).

The chart reads the submissions' stored counts (no runs), so it costs two small queries
whatever the suite's history. The flaky cases need every result of the last
``FLAKY_SUBMISSIONS`` submissions (one grouped query that returns only the ``FLAKY_SHOWN``
flakiest cases): a second or more on ten submissions of 100,000 runs. So the suite page
never waits for it: the list is cached under the submissions it covers (and their
generations, which re-scoring moves), and until it is, the page loads it afterwards (htmx).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from django.core.cache import cache
from django.db import connection
from django.db.models import Case, Count, F, Q, Value, When
from django.urls import reverse

from scoring.models import EarlierScore, Result, Status, Submission, Verdict

TREND_SUBMISSIONS = 30  # on the chart
FLAKY_SUBMISSIONS = 10  # whose results the flaky cases are read from
FLAKY_SHOWN = 10
FLAKY_CACHED_FOR = 7 * 24 * 3600  # seconds; the key changes with every new submission

# The chart's drawing box, in SVG user units (it scales with the page).
WIDTH, HEIGHT, MARGIN = 640, 180, 28


@dataclass(frozen=True)
class TrendPoint:
    """A submission's result against one version: its current one, or one it was scored
    against before being re-scored (which keeps its point on the chart)."""

    submission: Submission
    version_number: int
    passed: int
    scored: int
    current: bool
    x: float = 0.0
    y: float = 0.0
    # The mean cost of its runs (docs/api.md#usage), where its usage summary gives one.
    cost: float | None = None
    cost_y: float = 0.0

    @property
    def rate(self) -> float:
        return self.passed / self.scored

    @property
    def url(self) -> str:
        if self.current:
            return self.submission.get_absolute_url()
        return reverse("submission_earlier", args=[self.submission.pk, self.version_number])


@dataclass(frozen=True)
class FlakyCase:
    case: str
    submissions: int  # how many of the submissions scored it
    pairs: int  # consecutive pairs of those
    flips: int  # pairs where its verdict changed
    split: int  # submissions in which its trials disagreed

    @property
    def flip_share(self) -> float | None:
        return self.flips / self.pairs if self.pairs else None

    @property
    def split_share(self) -> float:
        return self.split / self.submissions


@dataclass(frozen=True)
class Trend:
    points: list[TrendPoint]  # oldest first
    flaky: list[FlakyCase] | None  # None: not worked out yet
    flaky_over: int = 0  # how many submissions the flaky cases are read from
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def line(self) -> str:
        """The polyline's ``points`` attribute."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)

    @property
    def highest_cost(self) -> float | None:
        costs = [p.cost for p in self.points if p.cost is not None]
        return max(costs) if costs else None

    @property
    def cost_line(self) -> str:
        """The cost line's ``points``: per run, scaled to the highest (the right axis)."""
        return " ".join(f"{p.x:.1f},{p.cost_y:.1f}" for p in self.points if p.cost is not None)

    @property
    def gridlines(self) -> list[tuple[float, str]]:
        """Where 0 %, 50 % and 100 % fall, with their labels."""
        return [(_y(share), f"{share:.0%}") for share in (0, 0.5, 1)]

    @property
    def newest_first(self) -> list[TrendPoint]:
        return self.points[::-1]

    @property
    def submissions_newest_first(self) -> list[Submission]:
        """The submissions on the chart, each once: the choices for comparing."""
        return [p.submission for p in self.newest_first if p.current]


def _y(rate: float) -> float:
    return MARGIN + (1 - rate) * (HEIGHT - 2 * MARGIN)


def _x(index: int, count: int) -> float:
    """Evenly spaced in upload order: submissions come in bursts, and by time they would
    pile up on each other."""
    if count == 1:
        return WIDTH / 2
    return 2 * MARGIN + index * (WIDTH - 3 * MARGIN) / (count - 1)


def suite_trend(suite, *, find_flaky: bool = False) -> Trend:
    """The suite's trend. Its flaky cases are those cached, or found now with
    ``find_flaky``; else None (the page asks for them separately)."""
    recent = list(
        Submission.objects.filter(suite=suite, status=Status.DONE, scored__gt=0)
        .select_related("version")
        .defer("version__document", "version__audit", "unknown_cases", "formats_seen", "error")
        .order_by("-created", "-pk")[:TREND_SUBMISSIONS]
    )[::-1]
    points = _placed(_results_of(recent))
    window = recent[-FLAKY_SUBMISSIONS:]
    key = (
        "flaky:"
        + hashlib.sha256(" ".join(f"{s.uuid}.{s.generation}" for s in window).encode()).hexdigest()[
            :24
        ]
    )
    flaky = cache.get(key) if window else []
    if flaky is None and find_flaky:
        flaky = flaky_cases([s.pk for s in window])
        cache.set(key, flaky, FLAKY_CACHED_FOR)
    return Trend(points, flaky, len(window))


def _results_of(submissions: list[Submission]) -> list[TrendPoint]:
    """Each submission's results, in upload order: those against the versions it was scored
    against before (by version number), then its current one."""
    earlier: dict[int, list[TrendPoint]] = {}
    scores = (
        EarlierScore.objects.filter(submission__in=submissions, scored__gt=0)
        .order_by("version__number")
        .values_list("submission_id", "version__number", "passed", "scored")
    )
    by_pk = {s.pk: s for s in submissions}
    for submission_id, number, passed, scored in scores:
        point = TrendPoint(by_pk[submission_id], number, passed, scored, current=False)
        earlier.setdefault(submission_id, []).append(point)
    return [
        point
        for s in submissions
        for point in [
            *earlier.get(s.pk, ()),
            TrendPoint(s, s.version.number, s.passed, s.scored, current=True),
        ]
    ]


def _placed(points: list[TrendPoint]) -> list[TrendPoint]:
    costs = [cost for p in points if (cost := _cost(p.submission)) is not None]
    top = max(costs, default=0) or 1
    placed = []
    for i, p in enumerate(points):
        cost = _cost(p.submission)
        cost_y = _y(cost / top) if cost is not None else 0.0
        placed.append(replace(p, x=_x(i, len(points)), y=_y(p.rate), cost=cost, cost_y=cost_y))
    return placed


def _cost(submission: Submission) -> float | None:
    """The mean cost per run its stored usage summary gives (``scoring.results.usage``)."""
    stored = submission.usage
    mean = stored.get("mean") if isinstance(stored, dict) else None
    cost = mean.get("cost_usd") if isinstance(mean, dict) else None
    return cost if isinstance(cost, int | float) else None


# Over the per-case rows of each submission: each case's state in consecutive submissions
# (window), then per case how often it changed, and in how many submissions its trials split.
FLAKY_SQL = """
SELECT case_key, COUNT(*), COUNT(previous),
       SUM(CASE WHEN previous <> state THEN 1 ELSE 0 END) AS flips,
       SUM(CASE WHEN state = 1 THEN 1 ELSE 0 END) AS split
FROM (
    SELECT case_key, state,
           LAG(state) OVER (PARTITION BY case_key ORDER BY created, submission_ref) AS previous
    FROM ({per_case}) per_case
) states
GROUP BY case_key
HAVING SUM(CASE WHEN previous <> state THEN 1 ELSE 0 END) > 0
    OR SUM(CASE WHEN state = 1 THEN 1 ELSE 0 END) > 0
ORDER BY COALESCE(1.0 * SUM(CASE WHEN previous <> state THEN 1 ELSE 0 END)
                  / NULLIF(COUNT(previous), 0), 0) DESC,
         1.0 * SUM(CASE WHEN state = 1 THEN 1 ELSE 0 END) / COUNT(*) DESC,
         case_key
LIMIT %s
"""

# A case's state in one submission: every trial failed, the trials disagreed, all passed.
FAILED, SPLIT, PASSED = 0, 1, 2


def flaky_cases(submission_ids: list[int], limit: int = FLAKY_SHOWN) -> list[FlakyCase]:
    """The cases whose verdict changes most often between consecutive submissions (of
    ``submission_ids``), then those whose trials disagree most often within one."""
    per_case = (
        # The runs narrowed too, so that the join reads only these submissions' runs.
        Result.objects.filter(submission__in=submission_ids, run__submission__in=submission_ids)
        .values(
            submission_ref=F("submission_id"),
            created=F("submission__created"),
            case_key=F("run__case_key"),
        )
        .annotate(runs=Count("pk"), passed=Count("pk", filter=Q(verdict=Verdict.PASS)))
        .annotate(
            state=Case(
                When(passed=F("runs"), then=Value(PASSED)),
                When(passed=0, then=Value(FAILED)),
                default=Value(SPLIT),
            )
        )
        .order_by()
    )
    sql, params = per_case.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(FLAKY_SQL.format(per_case=sql), (*params, limit))
        return [FlakyCase(*row) for row in cursor.fetchall()]
