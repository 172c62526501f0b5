"""What ``casebook submit`` makes of a scored submission: the gate's verdict, the lines it
prints, and the Markdown summary a CI shows as it is (``$GITHUB_STEP_SUMMARY``, a merge
request's comment; docs/ci.md#the-summary). Untrusted text (case keys, labels, causes) is
escaped for Markdown."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]  # an object of the API's answers

FAILURES, REGRESSIONS = "failures", "regressions"
LISTED = 50  # regressions and fixes named in the summary, each; the rest are counted
GROUPS_LISTED = 10
# Characters Markdown (GitHub's, GitLab's) reads as markup inside a line or a table's cell,
# raw HTML and entities included. Escaped text never starts a line, so list and heading
# markers need no escape.
_MARKUP = re.compile(r"([\\`*_\[\]|<>~&])")


def escaped(text: str) -> str:
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def percent(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.1f}%"


def usage_text(submission: JSON) -> str | None:
    """What the runs cost (docs/api.md#usage), in a line; None when no run recorded usage.
    A figure no run recorded is left out, never given as 0."""
    usage = submission.get("usage") or {}
    if not usage.get("runs_with_usage"):
        return None
    totals, p95 = usage["totals"], usage["p95"]
    said = []
    if totals.get("cost_usd") is not None:
        per_pass = usage.get("cost_per_passing_run")
        each = f" (${per_pass:,.4f} per passing run)" if per_pass is not None else ""
        said.append(f"cost ${totals['cost_usd']:,.4f}{each}")
    elif usage.get("unpriced_models"):
        said.append(f"cost unknown: no price for {', '.join(usage['unpriced_models'])}")
    if totals.get("input_tokens") is not None or totals.get("output_tokens") is not None:
        tokens_in, tokens_out = totals.get("input_tokens"), totals.get("output_tokens")
        said.append(
            f"tokens {'—' if tokens_in is None else f'{tokens_in:,}'} in, "
            f"{'—' if tokens_out is None else f'{tokens_out:,}'} out"
        )
    if totals.get("model_calls") is not None:
        said.append(f"{totals['model_calls']:,} model calls")
    if p95.get("duration_ms") is not None:
        said.append(f"95th percentile time {p95['duration_ms'] / 1000:,.1f} s")
    return "; ".join(said) or None


@dataclass(frozen=True)
class Outcome:
    """A submission scored to the end, its comparison (``GET …/comparison/``), and the
    gate asked for."""

    suite: JSON
    submission: JSON
    comparison: JSON
    fail_on: str
    baseline_name: str

    @property
    def not_passing(self) -> int:
        counts = self.submission["counts"]
        return int(counts["fail"] + counts["error"])

    @property
    def regressed(self) -> int:
        return int(self.comparison["counts"]["regressed"])

    @property
    def gate_failed(self) -> bool:
        return bool(self.regressed if self.fail_on == REGRESSIONS else self.not_passing)

    @property
    def gate_text(self) -> str:
        if self.fail_on == REGRESSIONS:
            said = f"{self.regressed} case(s) regressed" if self.regressed else "no regression"
        else:
            said = f"{self.not_passing} run(s) did not pass" if self.not_passing else "all pass"
        return f"{'failed' if self.gate_failed else 'passed'} ({said}; --fail-on {self.fail_on})"

    @property
    def baseline_text(self) -> str:
        baseline = self.comparison["baseline"]
        if baseline is None:
            wanted = "" if self.baseline_name == "latest" else f" labelled {self.baseline_name!r}"
            return f"no finished submission{wanted} before it"
        label = f" ({baseline['label']})" if baseline["label"] else ""
        return f"submission {baseline['id']}{label}, pass rate {percent(baseline['pass_rate'])}"

    def lines(self) -> list[str]:
        """What the command prints once the submission is scored."""
        submission, counts = self.submission, self.submission["counts"]
        lines = [
            f"Scored {submission['scored']:,} runs: {counts['pass']:,} pass, "
            f"{counts['fail']:,} fail, {counts['error']:,} error, "
            f"pass rate {percent(submission['pass_rate'])}",
        ]
        if cost := usage_text(submission):
            lines.append(f"Usage: {cost}")
        lines.append(f"Baseline: {self.baseline_text}")
        if self.comparison["baseline"] is not None:
            changes = self.comparison["counts"]
            lines.append(f"  {changes['regressed']} regressed, {changes['fixed']} fixed")
            lines += [
                f"  regressed: {row['case']}  {row['candidate']['html_url']}"
                for row in self.comparison["regressions"]
            ]
            lines.append(f"  compared: {self.comparison['html_url']}")
        lines.append(f"Gate: {self.gate_text}")
        lines.append(f"Submission: {submission['html_url']}")
        return lines


def markdown_summary(outcome: Outcome, failure_groups: list[JSON]) -> str:
    """The summary in Markdown: verdict, counts, regressions and fixes by case with their
    runs' pages, the failure groups."""
    submission, counts = outcome.submission, outcome.submission["counts"]
    suite_name = escaped(f"{outcome.suite['team']}/{outcome.suite['slug']}")
    label = f" · {escaped(submission['label'])}" if submission["label"] else ""
    mark = "❌" if outcome.gate_failed else "✅"
    parts = [
        f"## {mark} Casebook: {suite_name}{label}\n",
        f"Gate {outcome.gate_text}. [Submission {submission['id']}]({submission['html_url']})\n",
        "| runs | pass | fail | error | pass rate |",
        "|---:|---:|---:|---:|---:|",
        f"| {submission['scored']:,} | {counts['pass']:,} | {counts['fail']:,} | "
        f"{counts['error']:,} | {percent(submission['pass_rate'])} |\n",
    ]
    if cost := usage_text(submission):
        parts.append(f"Usage: {escaped(cost)}.\n")
    comparison = outcome.comparison
    if comparison["baseline"] is None:
        parts.append(f"Baseline: {escaped(outcome.baseline_text)}.\n")
    else:
        changes = comparison["counts"]
        parts.append(
            f"Against the baseline, {escaped(outcome.baseline_text)} "
            f"([compared]({comparison['html_url']})): **{changes['regressed']} regressed**, "
            f"{changes['fixed']} fixed, {changes['still_failing']} still failing.\n"
        )
        parts += _cases("Regressions", comparison["regressions"], changes["regressed"])
        parts += _cases("Fixes", comparison["fixes"], changes["fixed"])
    if failure_groups:
        parts += [
            "### Failures by cause\n",
            "| cause | tool | runs | cases |",
            "|---|---|---:|---:|",
        ]
        for group in failure_groups[:GROUPS_LISTED]:
            tool = escaped(group["tool"]) if group["tool"] else "—"
            parts.append(
                f"| {escaped(group['kind'])} | {tool} | {group['runs']:,} | {group['cases']:,} |"
            )
        if len(failure_groups) > GROUPS_LISTED:
            parts.append(f"\n…and {len(failure_groups) - GROUPS_LISTED} more groups.")
        parts.append("")
    return "\n".join(parts) + "\n"


def _cases(title: str, rows: list[JSON], count: int) -> list[str]:
    if not rows:
        return []
    lines = [f"### {title}\n", "| case | baseline | now |", "|---|---|---|"]
    for row in rows[:LISTED]:
        before, now = row["baseline"], row["candidate"]
        lines.append(
            f"| {escaped(row['case'])} "
            f"| [{before['passed']}/{before['runs']} passed]({before['html_url']}) "
            f"| [{now['passed']}/{now['runs']} passed]({now['html_url']}) |"
        )
    if count > LISTED:
        lines.append(f"\n…and {count - LISTED} more.")
    lines.append("")
    return lines
