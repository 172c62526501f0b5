"""Agreement of Casebook's verdicts with τ-bench's own ``reward``
(docs/benchmarks.md#agreement-with-τ-benchs-reward).

    python bench/tau_bench_agreement.py [RESULTS_FILE]

Makes the suite of the results file's tasks as the import does (``cases.tau_bench``, the
read-only tools proposed from their names), scores every run of the same file against it
with the matcher, and compares each verdict with the run's ``reward`` (pass with reward 1,
fail or error with reward 0). Each disagreement is put down to a reason:

- Casebook fails a run τ-bench rewards: by the failing predicate's cause, and for a write
  beyond the ground truth's, whether the tool refused it (its result starts ``Error``: the
  database did not change) or it wrote what was there already; for an output, whether an
  earlier message of the agent's said it (τ-bench looks in every message, commas removed);
- Casebook passes a run τ-bench does not reward: by what τ-bench's ``reward_info`` says
  failed (the database, ``r_actions``; the outputs, ``r_outputs``).

The default file is the fixture of 200 GPT-4o airline runs in ``tests/fixtures/tau_bench``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cases import tau_bench  # noqa: E402
from scoring.matcher import PASS, load_suite, score  # noqa: E402
from scoring.runfiles.reader import read_run_lines  # noqa: E402

FIXTURE = ROOT / "tests/fixtures/tau_bench/tau-bench-airline-gpt-4o.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default=str(FIXTURE), type=Path)
    path = parser.parse_args().results
    with path.open("rb") as stream:
        results = tau_bench.read_results(stream)
    roles = tau_bench.proposed_roles(results.tools, [])
    read_only = {role.name for role in roles if role.read_only}
    document = tau_bench.suite_document(results, name=path.stem, read_only=read_only)
    cases = {case.key: case for case in load_suite(document).cases}

    # τ-bench's reward_info, which the run's meta does not keep (it holds scalars only).
    records = json.loads(path.read_bytes())
    counts: Counter = Counter()
    reasons: Counter = Counter()
    with path.open("rb") as stream:
        for line in read_run_lines(stream):
            run, record = line.run, records[line.line - 1]
            report = score(cases[run.case], run)
            passed, rewarded = report.verdict == PASS, record["reward"] == 1
            counts[passed, rewarded] += 1
            if passed != rewarded:
                reason = failed_reason(report, run, record) if rewarded else passed_reason(record)
                reasons[passed, reason] += 1

    agree = counts[True, True] + counts[False, False]
    total = sum(counts.values())
    print(f"{path.name}: {len(results.tasks)} tasks, {total} runs")
    print(f"read-only (guessed from the names): {', '.join(sorted(read_only))}")
    print(
        f"agree: {agree} of {total} ({counts[True, True]} pass with reward 1, "
        f"{counts[False, False]} fail with reward 0)"
    )
    print(f"Casebook fails, τ-bench rewards: {counts[False, True]}")
    print(f"Casebook passes, τ-bench does not: {counts[True, False]}")
    for (passed, reason), runs in sorted(reasons.items(), key=lambda item: -item[1]):
        side = "passes" if passed else "fails"
        print(f"  {runs:4}  Casebook {side}: {reason}")


def failed_reason(report, run, record: dict) -> str:
    """Why Casebook fails a run τ-bench rewarded: its first failing predicate's cause."""
    failure = report.failures[0]
    cause = failure.cause
    if cause.kind in ("count", "forbidden_call"):
        results = [str(call.result) for call in run.calls if call.name == cause.tool]
        if any(result.startswith("Error") for result in results):
            return f"{cause.kind} {cause.tool}: a write beyond the ground truth's the tool refused"
        return f"{cause.kind} {cause.tool}: a write beyond the ground truth's, of what was there"
    if cause.kind == "final_text":
        final = (run.final_text or "").lower().replace(",", "")
        outputs = record["info"]["task"]["outputs"]
        if all(output.lower() in final for output in outputs):
            return "final_text: the last message writes the output with commas (1,786)"
        return "final_text: the output was said in an earlier message, not the last"
    where = f" {cause.argument}" if cause.argument else ""
    return f"{cause.kind} {cause.tool or ''}{where}: the database ends the same all the same"


def passed_reason(record: dict) -> str:
    """Why τ-bench did not reward a run Casebook passes, as its reward_info says."""
    checks = (record["info"].get("reward_info") or {}).get("info") or {}
    if checks.get("r_actions") == 0:
        return "the database differs from the ground truth's (τ-bench's r_actions 0)"
    if checks.get("r_outputs") == 0:
        return "an output was not said (τ-bench's r_outputs 0)"
    return "no reward_info: τ-bench never judged the run (it ended before the user stopped)"


if __name__ == "__main__":
    main()
