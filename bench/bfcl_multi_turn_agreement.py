"""Agreement of Casebook's end-state verdicts with BFCL's own multi-turn checker
(docs/benchmarks.md#agreement-on-multi-turn-categories).

    python bench/bfcl_multi_turn_agreement.py                       # multi_turn_base, in full
    python bench/bfcl_multi_turn_agreement.py --category multi_turn_miss_param --limit 50

BFCL's checker (``multi_turn_checker``) and its data come from the installed ``bfcl-eval``
(requirements-nodeps.txt). For every test entry, model results are generated from the ground
truth, as a function-calling model writes them (a list of turns, each a list of steps, each
a list of ``{function: arguments}``): correct ones (each turn in one step; each call in its
own step) and ones broken each way BFCL's checker detects (a wrong argument, a missing call,
an extra call, the last call repeated, two calls swapped, a call moved to the turn before,
an empty turn, a turn too few). Both sides judge each result, BFCL as its eval runner does
(a result with another number of turns fails; each step is turned into call strings as
BFCL's ``convert_to_function_call`` does), Casebook through ``import_bfcl``'s suite, the
``bfcl`` run importer and ``score`` with the sandbox replayer. Every disagreement is listed
with both reasons.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bfcl_eval.constants.eval_config import MULTI_TURN_FUNC_DOC_PATH, PROMPT_PATH  # noqa: E402
from bfcl_eval.constants.executable_backend_config import (  # noqa: E402
    MULTI_TURN_FUNC_DOC_FILE_MAPPING,
)
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (  # noqa: E402
    multi_turn_checker,
)

from scoring.benchmarks.bfcl_suites import suite_from_bfcl  # noqa: E402
from scoring.environments import EnvironmentLimits, SandboxReplayer  # noqa: E402
from scoring.importers import bfcl_results  # noqa: E402
from scoring.matcher import load_run, load_suite, score  # noqa: E402

MODEL = "casebook-bench"


def function_docs() -> dict[str, list]:
    docs = {}
    for name, file in MULTI_TURN_FUNC_DOC_FILE_MAPPING.items():
        path = MULTI_TURN_FUNC_DOC_PATH / file
        if path.exists():
            docs[name] = [json.loads(line) for line in path.read_text().splitlines() if line]
    return docs


def read_category(category: str, limit: int | None) -> tuple[list, list]:
    def lines(path: Path) -> list:
        return [json.loads(line) for line in path.read_text().splitlines() if line][:limit]

    name = f"BFCL_v4_{category}.json"
    return lines(PROMPT_PATH / name), lines(PROMPT_PATH / "possible_answer" / name)


def reference_turns(case: dict) -> list[list[dict]]:
    return case["expectations"][0]["reference_turns"]


def as_result(turns: list[list[list[dict]]]) -> list:
    """Turns of steps of calls as a function-calling model's result."""
    return [
        [[{call["name"]: json.dumps(call["arguments"])} for call in step] for step in turn]
        for turn in turns
    ]


def variants(turns: list[list[dict]]) -> dict[str, list]:
    """Results made from the reference turns, by name; only those that apply."""
    one_step = [[list(turn)] if turn else [] for turn in turns]
    made = {
        "correct": one_step,
        "correct, a step per call": [[[call] for call in turn] for turn in turns],
    }
    acting = [t for t, turn in enumerate(turns) if turn]
    if not acting:
        return made
    first, last = acting[0], acting[-1]
    broken = copy.deepcopy(one_step)
    for call in (c for turn in turns for c in turn):
        name = next((k for k, v in call["arguments"].items() if isinstance(v, str)), None)
        if name is not None:
            t = next(t for t, turn in enumerate(turns) if call in turn)
            i = turns[t].index(call)
            broken[t][0][i] = {
                **call,
                "arguments": {**call["arguments"], name: call["arguments"][name] + "_x"},
            }
            made["wrong argument"] = broken
            break
    missing = copy.deepcopy(one_step)
    missing[last][0] = missing[last][0][:-1]
    if not missing[last][0]:
        missing[last] = []
    made["missing call"] = missing
    extra = copy.deepcopy(one_step)
    extra[first][0].append(turns[first][0])
    made["extra call"] = extra
    repeated = copy.deepcopy(one_step)
    repeated[last][0].append(turns[last][-1])
    made["last call repeated"] = repeated
    two = next((t for t in acting if len(turns[t]) >= 2), None)
    if two is not None:
        swapped = copy.deepcopy(one_step)
        calls = swapped[two][0]
        calls[0], calls[1] = calls[1], calls[0]
        made["two calls swapped"] = swapped
    later = [t for t in acting if t > 0]
    if later:
        moved = copy.deepcopy(one_step)
        t = later[0]
        call = moved[t][0].pop(0)
        moved[t - 1] = [[*(moved[t - 1][0] if moved[t - 1] else []), call]]
        if not moved[t][0]:
            moved[t] = []
        made["call in the turn before"] = moved
    empty = copy.deepcopy(one_step)
    empty[last] = []
    made["empty turn"] = empty
    made["a turn too few"] = copy.deepcopy(one_step)[:-1]
    return made  # fmt: skip


def bfcl_verdict(result: list, ground_truth: list, entry: dict, category: str, tag: str):
    """(passed, reason) as BFCL's eval runner judges ``result``."""
    if len(result) != len(ground_truth):
        return False, "multi_turn:force_terminated"
    decoded = [[_to_call_strings(step) for step in turn if step] for turn in result]
    try:
        outcome = multi_turn_checker(decoded, ground_truth, copy.deepcopy(entry), category, tag)
    finally:
        _forget_instances()
    return outcome["valid"], outcome.get("error_type", "")


def _to_call_strings(step: list) -> list[str]:
    """BFCL's ``convert_to_function_call`` (model_handler/utils.py), whose module imports
    the model SDKs: ``name(k=repr(v), …)`` per call."""
    calls = []
    for call in step:
        for name, value in call.items():
            value = json.loads(value) if isinstance(value, str) else value
            calls.append(f"{name}({','.join(f'{k}={v!r}' for k, v in value.items())})")
    return calls


def _forget_instances() -> None:
    """BFCL keeps each backend instance in its module's globals for the later turns."""
    for key in [k for k in vars(multi_turn_utils) if k.endswith("_instance")]:
        del vars(multi_turn_utils)[key]


def agreement(category: str, limit: int | None, replayer) -> tuple[Counter, list]:
    questions, answers = read_category(category, limit)
    suite = load_suite(
        suite_from_bfcl(
            list(enumerate(questions, 1)),
            list(enumerate(answers, 1)),
            name=category,
            function_docs=function_docs(),
        )
    )
    counts: Counter = Counter()
    disagreements = []
    for entry, answer in zip(questions, answers, strict=True):
        case = suite.case(entry["id"])
        for name, result in variants(reference_turns(case.data)).items():
            tag = f"{MODEL}_{len(disagreements)}_{counts.total()}"
            bfcl_passed, bfcl_reason = bfcl_verdict(
                as_result(result), answer["ground_truth"], entry, category, tag
            )
            run = load_run(bfcl_results.convert({"id": entry["id"], "result": as_result(result)}))
            report = score(case, run, replayer=replayer)
            ours = report.verdict == "pass"
            counts[(name, bfcl_passed, ours)] += 1
            if ours != bfcl_passed:
                why = report.error or "; ".join(p.detail or "" for p in report.failures)
                disagreements.append(
                    (entry["id"], name, bfcl_passed, bfcl_reason, report.verdict, why)
                )
    return counts, disagreements  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--category", default="multi_turn_base")
    parser.add_argument("--limit", type=int, help="the first N entries only")
    args = parser.parse_args()
    os.environ.setdefault("BFCL_PROJECT_ROOT", "/tmp")
    replayer = SandboxReplayer(EnvironmentLimits(cpu_seconds=30, memory_mb=2048, wall_seconds=60))
    counts, disagreements = agreement(args.category, args.limit, replayer)
    total = counts.total()
    agreed = total - len(disagreements)
    print(f"{args.category}: {agreed:,} of {total:,} results agree ({100 * agreed / total:.2f}%)")
    by_variant: Counter = Counter()
    for (name, bfcl_passed, _), n in counts.items():
        by_variant[(name, "BFCL pass" if bfcl_passed else "BFCL fail")] += n
    for (name, verdict), n in sorted(by_variant.items()):
        print(f"  {name:<28} {verdict:<10} {n:>5}")
    for key, name, bfcl_passed, bfcl_reason, ours, why in disagreements:
        bfcl = "pass" if bfcl_passed else f"fail ({bfcl_reason})"
        print(f"DISAGREE {key} [{name}]: BFCL {bfcl}; Casebook {ours}: {why[:300]}")


if __name__ == "__main__":
    main()
