"""What a submission's runs cost, summarized (docs/api.md#usage): totals, the median and
95th percentile per run, cost per passing run, and histograms of durations and tokens.

Summed from the runs table's usage columns; a figure no run recorded is null. Percentiles
are nearest-rank over the runs that recorded the figure. A finished submission's summary is
stored with it once (``summarize``), for its pages and the API to read; one still being
scored (a live one, say) is summarized when asked.
"""

from __future__ import annotations

import math
from typing import Any

from django.db.models import Count, F, Q, QuerySet, Sum

from scoring.importers.costs import CATALOGUE, unpriced
from scoring.matcher import USAGE_KEYS
from scoring.models import Result, Run, Status, Submission, Verdict

FIGURES = tuple(key for key in USAGE_KEYS if key != "models")
PERCENTILE_FIGURES = ("duration_ms", "input_tokens", "output_tokens", "cost_usd")
BINS = 12


def usage_of(submission: Submission) -> dict[str, Any]:
    """The submission's usage summary: stored, or made now while it is being scored."""
    stored = submission.usage
    if stored and stored.get("generation") == submission.generation:
        return {k: v for k, v in stored.items() if k != "generation"}
    return summary(submission)


def summarize(submission: Submission) -> None:
    """Store the summary of a finished submission (a no-op when stored for its results)."""
    if submission.status != Status.DONE:
        return
    stored = submission.usage
    if stored and stored.get("generation") == submission.generation:
        return
    made = summary(submission)
    made["generation"] = submission.generation
    Submission.objects.filter(pk=submission.pk).update(usage=made)
    submission.usage = made


def summary(submission: Submission) -> dict[str, Any]:
    runs = Run.objects.filter(submission=submission)
    recorded = Q()
    for figure in FIGURES:
        recorded |= Q(**{f"{figure}__isnull": False})
    summed = runs.aggregate(
        **{f"sum_{figure}": Sum(figure) for figure in FIGURES},
        runs_with_usage=Count("pk", filter=recorded),
    )
    with_usage = summed.pop("runs_with_usage")
    totals: dict[str, Any] = {figure: summed[f"sum_{figure}"] for figure in FIGURES}
    totals["models"] = models_of(runs)
    passing = Result.objects.filter(submission=submission, verdict=Verdict.PASS).count()
    cost = totals["cost_usd"]
    return {
        "totals": totals,
        "p50": {f: percentile(runs, f, 50) for f in PERCENTILE_FIGURES},
        "p95": {f: percentile(runs, f, 95) for f in PERCENTILE_FIGURES},
        "runs_with_usage": with_usage,
        "cost_per_passing_run": cost / passing if cost is not None and passing else None,
        "runs_without_cost": runs.filter(cost_usd__isnull=True).count() if cost else None,
        "unpriced_models": unpriced(totals["models"], CATALOGUE),
        "histograms": {
            "duration_ms": histogram(runs, F("duration_ms")),
            "tokens": histogram(runs, F("input_tokens") + F("output_tokens")),
        },
    }


def models_of(runs: QuerySet) -> list[str]:
    """The models the runs named, each once, in name order."""
    named: set[str] = set()
    for text in runs.exclude(model_names=None).values_list("model_names", flat=True).distinct():
        named.update(name for name in text.split("\n") if name)
    return sorted(named)


def percentile(runs: QuerySet, figure: str, p: int) -> float | None:
    """The nearest-rank ``p``-th percentile of ``figure`` over the runs that recorded it."""
    known = runs.filter(**{f"{figure}__isnull": False})
    n = known.count()
    if not n:
        return None
    rank = max(math.ceil(p / 100 * n), 1)
    value = known.order_by(figure).values_list(figure, flat=True)[rank - 1]
    return float(value) if figure in ("duration_ms", "cost_usd") else value


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
