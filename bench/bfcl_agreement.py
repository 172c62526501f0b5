"""Agreement of Casebook's verdicts with BFCL's own AST checker
(docs/benchmarks.md#agreement-with-bfcls-checker).

    python bench/bfcl_agreement.py                  # the four Python categories, in full
    python bench/bfcl_agreement.py --write-fixture  # also refresh tests/fixtures/bfcl/

BFCL's checker comes from the ``bfcl-eval`` package, installed with ``--no-deps`` into
``bench/.bfcl`` (not the app's environment: its dependencies are heavy). Only its AST
checker is imported; the model registry it imports for function-name conversion is
replaced by a stub that converts nothing.

For every test id, model results are generated from the possible answers: correct ones
(first acceptable values, other acceptable values, strings respelled as BFCL normalises
them, optional parameters left out, parallel calls reordered) and ones broken each way
BFCL's checker detects (wrong value, missing required parameter, unexpected parameter,
wrong count, wrong function). Both sides judge each; every difference is classified:
``first-fit`` (BFCL's greedy pairing of parallel calls misses an assignment that exists:
reordering the calls makes BFCL pass), ``number type`` (BFCL's type check refuses a number
equal by JSON meaning), or unexplained.

Every result is judged twice: as a function-calling model writes it (``result`` a list of
calls) and as a prompting model does (``result`` a string of Python calls, written by
BFCL's own ``decoded_output_to_execution_list``; BFCL decodes it with its default decoder,
``default_decode_ast_prompting``, and counts a string that does not decode as a failure,
as its eval runner does). Prompting results also come in the other spellings BFCL's
decoder reads (a bare call without brackets, inside a ``` fence, surrounded by newlines)
and ones it refuses (a text answer, a ```python fence, positional arguments). The
``irrelevance`` category (no possible answers: BFCL passes a result when no call decodes)
is judged with text answers, ``[]``, and calls, in both forms.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.benchmarks.bfcl_suites import suite_from_bfcl  # noqa: E402
from scoring.importers import bfcl_results as bfcl_importer  # noqa: E402
from scoring.importers.python_calls import Undecodable, decode_calls  # noqa: E402
from scoring.matcher import json_equal, load_run, load_suite, score  # noqa: E402

BFCL_VERSION = "2026.3.23"
BFCL_DIR = ROOT / "bench" / ".bfcl"
# What BFCL's model-handler utilities import beyond the standard library and this venv.
BFCL_HANDLER_DEPENDENCIES = ("filelock==3.20.0", "overrides==7.7.0")
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
PROMPTING = "prompting"
FIXTURE = ROOT / "tests" / "fixtures" / "bfcl"
FIXTURE_IDS_PER_CATEGORY = 12


def bfcl_checker():
    """BFCL's ``ast_checker`` and its package directory, installed on first use."""
    if not (BFCL_DIR / "overrides").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
             str(BFCL_DIR), f"bfcl-eval=={BFCL_VERSION}", *BFCL_HANDLER_DEPENDENCIES],
            check=True,
        )  # fmt: skip
    sys.path.insert(0, str(BFCL_DIR))
    # ast_checker imports the model registry (and with it every provider SDK) only to
    # ask whether a model's API turns "." into "_" in function names; none does here.
    registry = types.ModuleType("bfcl_eval.constants.model_config")
    registry.MODEL_CONFIG_MAPPING = _NoConversion()
    sys.modules["bfcl_eval.constants.model_config"] = registry
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    def check(functions, output, possible_answer, category) -> dict:
        return ast_checker(
            functions, output, possible_answer, Language.PYTHON, category, "casebook"
        )

    return check, BFCL_DIR / "bfcl_eval" / "data"


def bfcl_prompting():
    """BFCL's default prompting decoder and its encoder of calls as Python text (its model
    handler utilities; their Java and JavaScript parsers, which need tree-sitter, are
    replaced by stubs: only Python is decoded here)."""
    for name in ("java_parser", "js_parser"):
        sys.modules[f"bfcl_eval.model_handler.parser.{name}"] = types.SimpleNamespace(
            parse_java_function_call=None, parse_javascript_function_call=None
        )
    from bfcl_eval.model_handler.utils import (
        decoded_output_to_execution_list,
        default_decode_ast_prompting,
    )
    from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

    def decode(text: str) -> list | None:
        """The calls BFCL reads in ``text``, or None where its eval runner fails it."""
        try:
            decoded = default_decode_ast_prompting(text)
        except Exception:  # BFCL's runner counts any error of its decoder a failure
            return None
        return decoded if is_function_calling_format_output(decoded) else None

    def encode(calls: list) -> str:
        return "[" + ", ".join(decoded_output_to_execution_list(calls)) + "]"

    return decode, encode, is_empty_output


class _NoConversion(dict):
    def __missing__(self, key):
        return types.SimpleNamespace(underscore_to_dot=False)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- model results from possible answers -----------------------------------------------------


def respell(text: str, rng: random.Random) -> str:
    """The same string as BFCL normalises it: other case, other spaces and punctuation."""
    choice = rng.randrange(3)
    if choice == 0:
        return text.upper()
    if choice == 1:
        return text.replace(" ", "  ") + "."
    return text.lower()


def acceptable(values: list, rng: random.Random, *, respelled: bool, other: bool):
    options = [v for v in values if v != ""]
    value = options[-1] if other else options[0]
    value = copy.deepcopy(value)
    if isinstance(value, dict):
        return {
            key: acceptable(vals, rng, respelled=respelled, other=other)
            for key, vals in value.items()
            if any(v != "" for v in vals)
        }
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [
            {
                k: acceptable(vs, rng, respelled=respelled, other=other)
                for k, vs in item.items()
                if any(v != "" for v in vs)
            }
            for item in value
        ]
    if respelled and isinstance(value, str) and value:
        return respell(value, rng)
    return value


def correct_call(function: str, params: dict, required: set, rng, *, respelled=False, other=False,
                 omit_optional=False) -> dict:  # fmt: skip
    arguments = {}
    for name, values in params.items():
        if all(v == "" for v in values):
            continue  # only "left out" is acceptable
        if "" in values and omit_optional and name not in required:
            continue
        arguments[name] = acceptable(values, rng, respelled=respelled, other=other)
    return {function: arguments}


def floats_for_integers(value):
    """``value`` with every integer written as a float (2 as 2.0): equal by JSON meaning."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [floats_for_integers(item) for item in value]
    if isinstance(value, dict):
        return {key: floats_for_integers(item) for key, item in value.items()}
    return value


def correct_for_types(question: dict, output: list) -> list:
    """``output`` with each number written as its parameter's documented type asks (an
    integer parameter's 5.0 as 5, a float array's 5 as 5.0): equal by JSON meaning."""
    docs = {f["name"]: f["parameters"].get("properties", {}) for f in question["function"]}
    fixed = []
    for call in output:
        ((function, arguments),) = call.items()
        properties = docs.get(function, {})
        fixed.append(
            {function: {k: as_type(v, properties.get(k, {})) for k, v in arguments.items()}}
        )
    return fixed


def as_type(value, schema: dict):
    kind = schema.get("type")
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind in ("array", "tuple") and isinstance(value, list):
        return [as_type(item, schema.get("items", {})) for item in value]
    return value


def integers_for_whole_floats(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [integers_for_whole_floats(item) for item in value]
    if isinstance(value, dict):
        return {key: integers_for_whole_floats(item) for key, item in value.items()}
    return value


def wrong_value(value):
    """A value of the same type that no acceptable-value list holds."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7919
    if isinstance(value, float):
        return value + 7919.5
    if isinstance(value, str):
        return value + " zzz"
    if isinstance(value, list):
        return [*value, value[0] if value else "extra"]
    if isinstance(value, dict):
        key = next(iter(value), "k")
        return {**value, key: wrong_value(value.get(key, 0))}
    return "unexpected"


def variants(question: dict, answer: dict, rng: random.Random) -> list[tuple[str, list]]:
    """(kind, model output) pairs for one test id."""
    docs = {f["name"]: f for f in question["function"]}
    truth = answer["ground_truth"]

    def required_of(function):
        return set(docs.get(function, {}).get("parameters", {}).get("required", []))

    def calls(**options):
        out = []
        for item in truth:
            ((function, params),) = item.items()
            out.append(correct_call(function, params, required_of(function), rng, **options))
        return out

    found = [
        ("correct", calls()),
        ("correct, other acceptable values", calls(other=True)),
        ("correct, strings respelled", calls(respelled=True)),
        ("correct, optional parameters left out", calls(omit_optional=True)),
    ]
    # Numbers written differently but equal by JSON meaning (5 as 5.0, and 5.0 as 5).
    for kind, respelled in (
        ("correct, integers written as floats", floats_for_integers(calls())),
        ("correct, whole floats written as integers", integers_for_whole_floats(calls())),
    ):
        if json.dumps(respelled) != json.dumps(calls()):
            found.append((kind, respelled))
    if len(truth) > 1:
        shuffled = calls(other=True)
        rng.shuffle(shuffled)
        found.append(("correct, calls reordered", shuffled))
        found.append(("correct, calls reversed", list(reversed(calls()))))
    base = calls()
    # Broken the ways BFCL's checker detects.
    for index, call in enumerate(base):
        ((function, arguments),) = call.items()
        if arguments:
            name = next(iter(arguments))
            broken = copy.deepcopy(base)
            broken[index][function][name] = wrong_value(arguments[name])
            found.append(("wrong value", broken))
        for name in sorted(required_of(function) & set(arguments)):
            broken = copy.deepcopy(base)
            del broken[index][function][name]
            found.append(("missing required parameter", broken))
            break
        broken = copy.deepcopy(base)
        broken[index][function]["unexpected_parameter"] = 1
        found.append(("unexpected parameter", broken))
        broken = copy.deepcopy(base)
        broken[index] = {f"{function}_other": arguments}
        found.append(("wrong function", broken))
        break  # one call broken per kind is enough
    found.append(("wrong count: a call more", [*base, base[0]]))
    if len(base) > 1:
        found.append(("wrong count: a call fewer", base[:-1]))
    else:
        found.append(("wrong count: no calls", []))
    return found


# --- judging ---------------------------------------------------------------------------------


def casebook_passes(case, test_id: str, output: list | str) -> bool:
    run = load_run(bfcl_importer.convert({"id": test_id, "result": output}))
    return score(case, run).verdict == "pass"


def prompting_variants(found: list[tuple[str, list]], encode) -> list[tuple[str, str]]:
    """The results of ``found`` as a prompting model writes them, and other spellings of the
    first (correct) one: those BFCL's decoder reads and those it refuses."""
    texts = [(f"{PROMPTING}: {kind}", encode(output)) for kind, output in found]
    correct = texts[0][1]
    texts += [
        (f"{PROMPTING}: correct, in a ``` fence", f"```\n{correct}\n```"),
        (f"{PROMPTING}: correct, surrounded by newlines and spaces", f"\n  {correct}  \n"),
        (f"{PROMPTING}: wrong, in a ```python fence", f"```python\n{correct}\n```"),
        (f"{PROMPTING}: wrong, a text answer", "I would call the function for you."),
    ]
    if correct.count("(") == 1:  # one call: also without its brackets
        texts.append((f"{PROMPTING}: correct, a bare call", correct[1:-1]))
        ((function, arguments),) = found[0][1][0].items()
        if arguments:
            values = ", ".join(repr(value) for value in arguments.values())
            texts.append((f"{PROMPTING}: wrong, positional arguments", f"[{function}({values})]"))
    return texts


def classify(check, question, answer, output, category) -> str:
    """Why BFCL refused an output Casebook accepts (``output`` as BFCL decoded it; None when
    it could not)."""
    if output is None:
        return "unexplained (BFCL's decoder refuses it)"

    def valid(candidate) -> bool:
        return check(question["function"], candidate, answer["ground_truth"], category)["valid"]

    # If BFCL accepts an output equal to this one by JSON meaning (numbers written the other
    # way), only its type check of numbers stood between the two.
    typed = correct_for_types(question, output)
    if json_equal(typed, output) and valid(typed):
        return "number type"
    orders = itertools.permutations(output) if len(output) <= 6 else ()
    if "parallel" in category and any(valid(list(order)) for order in orders):
        return "first-fit"
    kind = check(question["function"], output, answer["ground_truth"], category).get("error_type")
    return f"unexplained ({kind})"


def agreement(check, prompting, data_dir: Path, categories, limit: int | None = None):
    decode, encode, _ = prompting
    rows = []
    for category in categories:
        questions = read_lines(data_dir / f"BFCL_v4_{category}.json")[:limit]
        answers = {
            a["id"]: a
            for a in read_lines(data_dir / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        answers = [answers[q["id"]] for q in questions]
        suite = load_suite(
            suite_from_bfcl(enumerate(questions, 1), enumerate(answers, 1), name=category)
        )
        rng = random.Random(f"{category}-2026")
        for question, answer in zip(questions, answers, strict=True):
            found = variants(question, answer, rng)
            for kind, output in [*found, *prompting_variants(found, encode)]:
                # BFCL's runner fails a string its decoder cannot read, before any check.
                calls = decode(output) if isinstance(output, str) else output
                theirs = (
                    calls is not None
                    and check(question["function"], calls, answer["ground_truth"], category)[
                        "valid"
                    ]
                )
                ours = casebook_passes(suite.case(question["id"]), question["id"], output)
                why = "" if theirs == ours else classify(check, question, answer, calls, category)
                if theirs and not ours:
                    why = "unexplained (Casebook refuses what BFCL accepts)"
                group = f"{category} ({PROMPTING})" if isinstance(output, str) else category
                rows.append((group, question["id"], kind, output, theirs, ours, why))
    return rows


# Strings BFCL's decoder is run on to compare it with Casebook's, value by value. Nothing
# here may run code: BFCL's decoder evaluates arithmetic with ``eval``.
DECODER_CORPUS = (
    "[f(a=1, b='x')]",
    "f(a=1)",
    "[f(a=1), g(b=2)]",
    "```\n[f(a=1)]\n```",
    "```python\n[f(a=1)]\n```",
    "  \n[f(a=1)]\n  ",
    "[a.b.c.d(x=1)]",
    "[f(a=-1, b=-2.5, c=1e3, d=True, e=None)]",
    "[f(a=[1, [2, 3]], b={'k': [1, {'n': 'v'}]}, c=(1, 2))]",
    """[f(a="it's", b='say "hi"', c='''multi\nline''')]""",
    "[f(a=unit, b=celsius)]",
    "[f(a=datetime(2020, 1, 1), b=g(x=1))]",
    "[f(a=x[0], b=...)]",
    "[f(a=0.05/12, b=2**10, c=7//2, d=7%3, e=1+2*3, f='a'+'b', g=-(3))]",
    "[f(1, 2, a=3)]",
    "[]",
    "I cannot help with that.",
    "[f(a=1)] and some text",
    "[f(a=lambda x: x)]",
    "[f(a={1, 2})]",
    "[f(a=f'{x}')]",
    "[f(a=1 if b else 2)]",
    "[f(a=math.pi)]",
    "[f(a=not b)]",
    "[f(a=x + 1)]",
    "[1, 2]",
    "[f(a=1)][0]",
    "'[f(a=1)]'",
    "[f(a=1,)]",
    "[f(a=1); g(b=2)]",
    "[f(a='\\u00e9', b='日本')]",
    "[f(a=123456789012345678901234567890)]",
    "[x.y().z(a=1)]",
    "[f(a=+5)]",
    "[f(a=b'x')]",
    "[f(a={1: 'x'})]",
)
# Where Casebook decodes differently on purpose (python_calls' docstring says why).
DECODER_DIFFERENCES = {
    "[f(a=+5)]": "BFCL reads +5 as -5",
    "[f(a=b'x')]": "bytes have no JSON value",
    "[f(a={1: 'x'})]": "a dictionary key that is not a string has no JSON value",
}


def decoder_agreement(prompting) -> tuple[int, list[str]]:
    """(strings decoded alike, a line for each difference) over ``DECODER_CORPUS``."""
    decode = prompting[0]
    alike, differences = 0, []
    for text in DECODER_CORPUS:
        theirs = decode(text)
        # Tuples as lists; what JSON cannot hold (bytes, int keys) as its repr.
        theirs = None if theirs is None else json.loads(json.dumps(theirs, default=repr))
        try:
            ours = decode_calls(text)[0]
        except Undecodable:
            ours = None
        if ours == theirs:
            alike += 1
        else:
            why = DECODER_DIFFERENCES.get(text, "unexplained")
            differences.append(f"  {why}: {text!r}: BFCL {theirs}, Casebook {ours}")
    return alike, differences


def irrelevance_agreement(prompting, data_dir: Path, limit: int | None = None):
    """The irrelevance category: BFCL passes a result when no call decodes from it."""
    decode, encode, is_empty_output = prompting
    category = "irrelevance"
    questions = read_lines(data_dir / f"BFCL_v4_{category}.json")[:limit]
    suite = load_suite(suite_from_bfcl(enumerate(questions, 1), None, name=category))
    rows = []
    for question in questions:
        function = question["function"][0]
        required = function["parameters"].get("required", [])
        call = {function["name"]: dict.fromkeys(required, "x")}
        found = [
            ("no call", []),
            ("a call", [call]),
            (f"{PROMPTING}: a text answer", "I cannot answer that with these functions."),
            (f"{PROMPTING}: no call, []", "[]"),
            (f"{PROMPTING}: a call", encode([call])),
            (f"{PROMPTING}: a call, bare", encode([call])[1:-1]),
        ]
        for kind, output in found:
            calls = decode(output) if isinstance(output, str) else output
            theirs = calls is None or is_empty_output(calls)
            ours = casebook_passes(suite.case(question["id"]), question["id"], output)
            why = "" if theirs == ours else "unexplained"
            group = f"{category} ({PROMPTING})" if isinstance(output, str) else category
            rows.append((group, question["id"], kind, output, theirs, ours, why))
    return rows


def report(rows) -> None:
    print(f"{'category':<33}{'results':>9}{'agree':>8}{'first-fit':>11}{'type':>6}{'other':>7}")
    for category in dict.fromkeys(row[0] for row in rows):
        mine = [row for row in rows if row[0] == category]
        reasons = Counter(row[6].split(" (")[0] for row in mine if row[6])
        agree = sum(row[4] == row[5] for row in mine)
        print(
            f"{category:<33}{len(mine):>9}{agree:>8}{reasons['first-fit']:>11}"
            f"{reasons['number type']:>6}{reasons['unexplained']:>7}"
        )
    agree = sum(row[4] == row[5] for row in rows)
    for label, mine in (
        ("function-calling results", [row for row in rows if PROMPTING not in row[0]]),
        ("prompting results", [row for row in rows if PROMPTING in row[0]]),
        ("all", rows),
    ):
        agree = sum(row[4] == row[5] for row in mine)
        print(f"{label:<33}{len(mine):>9}{agree:>8}  ({agree / len(mine):.2%} agree)")
    kinds = Counter((row[2], row[4]) for row in rows)
    print("results by kind (BFCL's verdict):", dict(sorted(kinds.items())))
    for _, test_id, kind, output, theirs, ours, why in rows:
        if why:
            verdicts = f"BFCL {'pass' if theirs else 'fail'}, Casebook {'pass' if ours else 'fail'}"
            print(f"  {why}: {test_id} [{kind}] {verdicts}: {json.dumps(output)[:160]}")


def write_fixture(rows, data_dir: Path) -> None:
    """An excerpt for the test suite: the first ids of each category and those where BFCL's
    first fit misses an assignment, their generated results (function-calling ones in
    ``results.jsonl``, prompting ones in ``results_prompting.jsonl``), and BFCL's verdict on
    each (so the tests need no BFCL); the first irrelevance ids and their results too."""
    FIXTURE.mkdir(parents=True, exist_ok=True)
    chosen = set()
    for category in (*CATEGORIES, "irrelevance"):
        ids = list(dict.fromkeys(row[1] for row in rows if row[0] == category))
        first_fit = {row[1] for row in rows if row[0] == category and row[6] == "first-fit"}
        chosen |= set(ids[:FIXTURE_IDS_PER_CATEGORY]) | first_fit
    rows = [row for row in rows if row[1] in chosen]
    for category in (*CATEGORIES, "irrelevance"):
        questions = [
            q for q in read_lines(data_dir / f"BFCL_v4_{category}.json") if q["id"] in chosen
        ]
        write_lines(FIXTURE / f"{category}.questions.jsonl", questions)
        if category == "irrelevance":
            continue  # it has no possible answers
        ids = {q["id"] for q in questions}
        answers = [
            a
            for a in read_lines(data_dir / "possible_answer" / f"BFCL_v4_{category}.json")
            if a["id"] in ids
        ]
        write_lines(FIXTURE / f"{category}.answers.jsonl", answers)
    results = [
        {
            "id": test_id,
            "result": output,
            "kind": kind,
            "bfcl_valid": theirs,
            "difference": why or None,
        }
        for _, test_id, kind, output, theirs, _, why in rows
    ]
    for name, mine in (
        ("results.jsonl", [r for r in results if not isinstance(r["result"], str)]),
        ("results_prompting.jsonl", [r for r in results if isinstance(r["result"], str)]),
    ):
        write_lines(FIXTURE / name, mine)
        print(f"wrote {FIXTURE.relative_to(ROOT) / name}: {len(mine)} results")


def write_lines(path: Path, records: list) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="ids per category (default: all)")
    parser.add_argument("--write-fixture", action="store_true", help="refresh tests/fixtures/bfcl")
    args = parser.parse_args()
    check, data_dir = bfcl_checker()
    prompting = bfcl_prompting()
    rows = agreement(check, prompting, data_dir, CATEGORIES, args.limit)
    rows += irrelevance_agreement(prompting, data_dir, args.limit)
    report(rows)
    alike, differences = decoder_agreement(prompting)
    print(f"decoder: {alike} of {len(DECODER_CORPUS)} strings decoded as BFCL decodes them")
    print("\n".join(differences))
    if args.write_fixture:
        write_fixture(rows, data_dir)


if __name__ == "__main__":
    main()
