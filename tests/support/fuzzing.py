"""Structure-aware fuzzing of the importers (docs/formats.md#run-formats), shared by
tests/importers/test_fuzz.py and bench/fuzz_importers.py.

Each seed is a real line: the running example of every format, and the lines the producing
libraries wrote in ``tests/fixtures/``. A mutation puts an arbitrary JSON value (a list, an
object, a huge number, a deep array, text) in place of one node, or drops one key.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from scoring.importers import detect_format, to_canonical
from scoring.matcher import InvalidInput, load_run, parse_json
from scoring.runfiles.reader import MAX_DEPTH
from tests.importers.examples import LINES
from tests.support import FIXTURES, ROOT, tau_bench

DEMO_RUNS = ROOT / "cases" / "demo" / "assistant.runs.jsonl"

FIXTURE_FILES = [
    "openai/chat_completions.jsonl",
    "openai/request_response.jsonl",
    "openai/responses_state.jsonl",
    "anthropic/messages.jsonl",
    "gemini/generate_content.jsonl",
    "otel/otlp.jsonl",
    "otel/sdk_spans.jsonl",
    "bfcl/results.jsonl",
    "bfcl/results_prompting.jsonl",
]


def seed_lines() -> list[dict]:
    """Real lines of every format: the examples, three lines of each producer's fixture and
    of the demo's canonical runs, and two τ-bench results as the benchmark writes them."""
    seeds = [{"case": "weather", **make()} for make in LINES.values()]
    for path in [*(FIXTURES / name for name in FIXTURE_FILES), DEMO_RUNS]:
        with open(path, encoding="utf-8") as lines:
            seeds.extend(json.loads(line) for _, line in zip(range(3), lines, strict=False))
    return seeds + tau_bench.RECORDS[:2]


SEEDS = seed_lines()

HUGE = "<5000 digits>"  # a placeholder: the number itself is put in the line's text

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.just(HUGE),  # written as 5,000 digits: past Python's int-to-text digit limit
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["", "tool_use", "function", "assistant", "{", "[1,", '{"a": 1}']),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
deep = st.integers(min_value=50, max_value=600).map(lambda n: json.loads("[" * n + "]" * n))
replacements = st.one_of(json_values, deep)


def paths(value: Any, where: tuple = ()) -> Iterator[tuple]:
    """The paths of the nodes in ``value``, to the depth the reader reads: deeper ones would
    recurse past Python's stack, differently each time the search replays an example."""
    yield where
    if len(where) >= MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*where, index))


def mutated(seed: dict, path: tuple, replacement: Any, drop: bool) -> Any:
    line = copy.deepcopy(seed)
    if not path:
        return replacement
    parent = line
    for step in path[:-1]:
        parent = parent[step]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return line


@st.composite
def mutations(draw) -> Any:
    seed = draw(st.sampled_from(SEEDS))
    line = seed
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        where = draw(st.sampled_from(list(paths(line))))
        line = mutated(line, where, draw(replacements), draw(st.booleans()))
    return line


def text_of(line: Any) -> bytes:
    return json.dumps(line).replace(json.dumps(HUGE), "9" * 5000).encode()


def problems_of(text: bytes, format_name: str | None) -> list:
    """As the run file reader reads one line: parse, detect, convert, load. The problems
    that refuse it (none: it is a run); anything but ``InvalidInput`` is a bug."""
    try:
        value = parse_json(text)
        name = format_name or (detect_format(value) if isinstance(value, dict) else None)
        load_run(to_canonical(value, name))
    except InvalidInput as exc:
        return exc.problems or [None]
    return []
