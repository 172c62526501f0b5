"""What a submission's runs cost, summarized (docs/api.md#usage): totals, the median and
95th percentile per run, cost per passing run, and histograms of durations and tokens.

Summed from the runs table's usage columns; a figure no run recorded is null. Percentiles
are nearest-rank over the runs that recorded the figure. A finished submission's summary is
stored with it once (``summarize``), for its pages and the API to read; a live one is
summarized when asked, and an upload still being scored not at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import Avg, Count, F, Q, QuerySet, Sum

from scoring.importers.costs import unpriced
from scoring.matcher import USAGE_KEYS
from scoring.models import Result, Run, Status, Submission, Verdict, team_prices

FIGURES = tuple(key for key in USAGE_KEYS if key != "models")
PERCENTILE_FIGURES = (
    "duration_ms",
    "tool_duration_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
BINS = 12


def usage_of(submission: Submission) -> dict[str, Any] | None:
    """The submission's usage summary: stored, or made now (and stored, when its scoring is
    done) when none is stored for its current runs. None for an upload still being read or
    scored: its runs are summed once, when its scoring ends, where a client polling its
    status would have had all of them summed at each ask."""
    if submission.status in (Status.INGESTING, Status.SCORING) and submission.live_day is None:
        return None
    stored = submission.usage
    if stored is not None and _current(submission, stored):
        return {k: v for k, v in stored.items() if k not in _STAMPS}
    made = summary(submission)
    if submission.status == Status.DONE:
        _store(submission, made)
    return made


def summarize(submission: Submission) -> None:
    """Store the summary of a finished upload (a no-op when stored for its runs). A live
    submission gains runs all day: its summary is made when a page or the API asks."""
    if submission.live_day is not None:
        return
    if submission.status == Status.DONE and not _current(submission, submission.usage):
        _store(submission, summary(submission))


# What a stored summary is of: the submission's results (re-scored: a new generation) and
# its runs (a live submission gains runs all day).
_STAMPS = ("generation", "stored_runs")


def _current(submission: Submission, stored: Any) -> bool:
    return bool(stored) and all(stored.get(k) == getattr(submission, k) for k in _STAMPS)


def _store(submission: Submission, made: dict[str, Any]) -> None:
    stamped = {**made, **{k: getattr(submission, k) for k in _STAMPS}}
    Submission.objects.filter(pk=submission.pk).update(usage=stamped)
    submission.usage = stamped


def summary(submission: Submission) -> dict[str, Any]:
    """The summary, in one pass over the runs for the sums and counts; the percentiles,
    histograms and models only of figures some run recorded (a file with no usage pays
    the one pass)."""
    runs = Run.objects.filter(submission=submission)
    recorded = Q()
    for figure in FIGURES:
        recorded |= Q(**{f"{figure}__isnull": False})
    summed = runs.aggregate(
        **{f"sum_{figure}": Sum(figure) for figure in FIGURES},
        **{f"n_{figure}": Count(figure) for figure in FIGURES},
        runs_with_usage=Count("pk", filter=recorded),
        named=Count("model_names"),
        mean_cost_usd=Avg("cost_usd"),
        mean_duration_ms=Avg("duration_ms"),
        mean_tokens=Avg(F("input_tokens") + F("output_tokens")),
    )
    with_usage = summed.pop("runs_with_usage")
    known = {figure: summed[f"n_{figure}"] for figure in FIGURES}
    means = {key: summed.pop(f"mean_{key}") for key in ("cost_usd", "duration_ms", "tokens")}
    totals: dict[str, Any] = {figure: summed[f"sum_{figure}"] for figure in FIGURES}
    totals["models"] = models_of(runs) if summed["named"] else []
    passing = Result.objects.filter(submission=submission, verdict=Verdict.PASS).count()
    cost = totals["cost_usd"]

    def percentiles(p: int) -> dict[str, Any]:
        return {f: percentile(runs, f, p, known[f]) if known[f] else None
                for f in PERCENTILE_FIGURES}  # fmt: skip

    with_tokens = min(known["input_tokens"], known["output_tokens"])
    return {
        "totals": totals,
        "p50": percentiles(50),
        "p95": percentiles(95),
        "runs_with_usage": with_usage,
        "mean": means,
        "cost_per_passing_run": cost / passing if cost is not None and passing else None,
        "unpriced_models": unpriced(totals["models"], team_prices(submission.suite.team_id))
        if totals["models"]
        else [],
        "histograms": {
            "duration_ms": histogram(runs, F("duration_ms")) if known["duration_ms"] else [],
            "tokens": histogram(runs, F("input_tokens") + F("output_tokens"))
            if with_tokens
            else [],
        },
    }


def models_of(runs: QuerySet) -> list[str]:
    """The models the runs named, each once, in name order."""
    named: set[str] = set()
    for text in runs.exclude(model_names=None).values_list("model_names", flat=True).distinct():
        named.update(name for name in text.split("\n") if name)
    return sorted(named)


def percentile(runs: QuerySet, figure: str, p: int, n: int) -> float | None:
    """The nearest-rank ``p``-th percentile of ``figure`` over the ``n`` runs that recorded
    it."""
    known = runs.filter(**{f"{figure}__isnull": False})
    rank = max(math.ceil(p / 100 * n), 1)
    value = known.order_by(figure).values_list(figure, flat=True)[rank - 1]
    return float(value) if figure in ("duration_ms", "tool_duration_ms", "cost_usd") else value


def histogram(runs: QuerySet, expression: Any) -> list[dict[str, Any]]:
    """Equal bins from 0 to the largest value, each ``{"from", "to", "runs"}`` (``to``
    included in the last); empty when no run recorded the figure."""
    valued = runs.annotate(value=expression).filter(value__isnull=False)
    top = valued.order_by("-value").values_list("value", flat=True).first()
    if top is None:
        return []
    width = _nice_width(float(top))
    edges = [width * k for k in range(BINS + 1)]
    counts = valued.aggregate(
        **{
            f"b{k}": Count("pk", filter=Q(value__gte=edges[k], value__lt=edges[k + 1]))
            for k in range(BINS)
        }
    )
    return [{"from": edges[k], "to": edges[k + 1], "runs": counts[f"b{k}"]} for k in range(BINS)]


def _nice_width(top: float) -> float:
    """A round bin width (1, 2 or 5 times a power of ten) that fits ``top`` in the bins."""
    if top <= 0:
        return 1.0
    raw = top / BINS * 1.000001
    power = 10 ** math.floor(math.log10(raw))
    for step in (1, 2, 5, 10):
        if step * power >= raw:
            return float(step * power)
    return float(10 * power)


# --- what the pages show ---------------------------------------------------------------------

CHART_WIDTH, CHART_HEIGHT, AXIS = 360, 150, 24


@dataclass
class Bar:
    """A histogram's bin as the page draws it: its bounds, runs and rectangle."""

    low: float
    high: float
    runs: int
    x: float
    y: float
    width: float
    height: float


@dataclass
class Chart:
    """A histogram laid out for an SVG like the suite's trend chart, with its table."""

    title: str
    unit: str
    bars: list[Bar]
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT

    @property
    def most(self) -> int:
        return max((bar.runs for bar in self.bars), default=0)

    @property
    def baseline(self) -> int:
        return self.height - AXIS


def chart(title: str, unit: str, bins: list[dict[str, Any]]) -> Chart | None:
    """The histogram of ``bins`` (``histogram``'s) laid out; None when it has none."""
    if not bins:
        return None
    most = max(b["runs"] for b in bins) or 1
    width = CHART_WIDTH / len(bins)
    room = CHART_HEIGHT - AXIS - 18  # the top keeps room for the count of the tallest bar
    bars = []
    for k, b in enumerate(bins):
        height = room * b["runs"] / most
        bars.append(
            Bar(b["from"], b["to"], b["runs"], k * width + 1, CHART_HEIGHT - AXIS - height,
                width - 2, height)
        )  # fmt: skip
    return Chart(title, unit, bars)


def page_summary(submission: Submission) -> dict[str, Any] | None:
    """The submission page's usage panel; None when no run recorded any usage (or the
    submission is still being scored)."""
    made = usage_of(submission)
    if made is None or not made["runs_with_usage"]:
        return None
    histograms = made.get("histograms") or {}
    seconds = [
        {**b, "from": b["from"] / 1000, "to": b["to"] / 1000}
        for b in histograms.get("duration_ms", [])
    ]
    charts = [
        chart("Run durations", "s", seconds),
        chart("Tokens per run (input + output)", "tokens", histograms.get("tokens", [])),
    ]
    return {**made, "chart_list": [c for c in charts if c is not None]}


def usage_object(run: Run | None) -> dict[str, Any]:
    """A run's usage as reports give it (docs/formats.md#usage), from its columns; every
    figure null for no run."""
    made: dict[str, Any] = {figure: getattr(run, figure, None) for figure in FIGURES}
    made["models"] = [m for m in (getattr(run, "model_names", None) or "").split("\n") if m]
    return made


def runs_beside_reports(run_ids: list[int]) -> dict[int, Run]:
    """Run id → the run with what the results API gives beside its report (its reward and
    its usage columns), for a page of reports, in one query."""
    runs = Run.objects.filter(pk__in=run_ids).only("reward", *FIGURES, "model_names")
    return {run.pk: run for run in runs}


def run_figures(run: Run) -> dict[str, Any] | None:
    """A run page's header figures; None when the run recorded no usage."""
    figures = {figure: getattr(run, figure) for figure in FIGURES}
    if all(value is None for value in figures.values()):
        return None
    models = [m for m in (run.model_names or "").split("\n") if m]
    figures["models"] = models
    figures["unpriced"] = (
        unpriced(models, team_prices(run.submission.suite.team_id))
        if figures["cost_usd"] is None
        else []
    )
    return figures


# --- two submissions compared ----------------------------------------------------------------

CASES_CHANGED = 10


def _delta(base: float | None, cand: float | None, kind: str) -> dict[str, Any]:
    change = None if base is None or cand is None else cand - base
    ratio = change / base if change is not None and base else None
    return {"kind": kind, "baseline": base, "candidate": cand, "change": change, "ratio": ratio}


def comparison_figures(comparison: Any) -> dict[str, Any] | None:
    """A comparison's cost and time beside its pass rates: the overall deltas (pass rate,
    cost and tokens per run, the 95th percentile of time), and the cases whose mean cost or
    time per run changed most; None when neither side recorded usage, or one is still
    being scored."""
    base, cand = usage_of(comparison.baseline), usage_of(comparison.candidate)
    if base is None or cand is None:
        return None
    if not base["runs_with_usage"] and not cand["runs_with_usage"]:
        return None
    totals = comparison.totals
    base_mean, cand_mean = base.get("mean") or {}, cand.get("mean") or {}
    rows = [
        ("Pass rate", _delta(totals.base_rate, totals.cand_rate, "rate")),
        ("Cost per run", _delta(base_mean.get("cost_usd"), cand_mean.get("cost_usd"), "usd")),
        ("Tokens per run", _delta(base_mean.get("tokens"), cand_mean.get("tokens"), "tokens")),
        (
            "95th percentile time",
            _delta(base["p95"]["duration_ms"], cand["p95"]["duration_ms"], "ms"),
        ),
    ]
    return {
        "rows": rows,
        "changed": [
            ("Cost per run changed most", _most_changed(comparison.all_rows, "cost_usd")),
            ("Time per run changed most", _most_changed(comparison.all_rows, "duration_ms")),
        ],
    }


def _most_changed(rows: list[Any], figure: str) -> list[dict[str, Any]]:
    """The cases whose mean ``figure`` per run changed most, either way."""
    found = []
    for row in rows:
        before = getattr(row.baseline, figure, None) if row.baseline else None
        after = getattr(row.candidate, figure, None) if row.candidate else None
        if before is not None and after is not None and after != before:
            found.append({"row": row, **_delta(before, after, figure)})
    found.sort(key=lambda d: (-abs(d["change"]), d["row"].case))
    return found[:CASES_CHANGED]
