"""Structure-aware fuzzing of everything that reads what users send, shared by
tests/importers/test_fuzz.py, tests/security/test_fuzz.py and bench/fuzz.py: the importers
(docs/formats.md#run-formats), whole run files, suite files, OTLP exports, τ-bench results,
BFCL categories and tool catalogs (``TARGETS``).

Each seed is a real input: the running example of every format, and the lines the producing
libraries wrote in ``tests/fixtures/``; the suites, results, categories and catalogs the
tests use; the exports the instrumentations sent. A mutation puts an arbitrary JSON value (a
list, an object, a huge number, a deep array, text) in place of one node, or drops one key;
a body of bytes (protobuf, a file) has bytes changed, inserted, dropped or repeated.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import logging
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from cases import tau_bench as tau_bench_suites
from cases.tool_catalog import tools_from_any
from scoring.benchmarks.bfcl_suites import suite_from_bfcl
from scoring.importers import FORMAT_NAMES, detect_format, to_canonical
from scoring.live import otlp_codec
from scoring.live.otlp_codec import ItemLimits
from scoring.matcher import (
    InvalidInput,
    dump_json,
    load_run,
    load_suite,
    nested_deeper_than,
    parse_json,
    parse_suite_document,
)
from scoring.runfiles.reader import MAX_DEPTH, read_run_lines
from tests.importers.examples import LINES
from tests.support import FIXTURES, ROOT, producers, tau_bench
from tests.support.cost import measured
from tests.support.otlp_fixtures import VARIANTS, as_otlp_json, collector_lines, requests

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


# --- every reader of what users send: importers, files, suites, OTLP -------------------------
#
# Each target draws a mutated real input and reads it as Casebook would; ``findings`` says
# what is wrong with that reading: an exception other than the documented refusals (a crash,
# by the file and line it was raised at), or a cost past the limits a hostile input is held
# to (docs/operations.md#limits-on-hostile-input), measured as tests/support/cost.py does.


@st.composite
def mutated_documents(draw, seeds: list) -> Any:
    """One of ``seeds`` (JSON values) with one to three nodes replaced or dropped."""
    document = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        where = draw(st.sampled_from(list(paths(document))))
        document = mutated(document, where, draw(replacements), draw(st.booleans()))
    return document


@st.composite
def mutated_bytes(draw, seeds: list[bytes]) -> bytes:
    """One of ``seeds`` with a byte changed, bytes inserted or dropped, or a stretch of it
    repeated (up to thousands of times: repeated fields, blank lines, brackets)."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        kind = draw(st.sampled_from(["flip", "insert", "drop", "repeat"]))
        if kind == "flip" and at < len(data):
            data[at] = draw(st.integers(min_value=0, max_value=255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "drop":
            del data[at : at + draw(st.integers(min_value=1, max_value=64))]
        else:
            size = draw(st.integers(min_value=1, max_value=16))
            data[at:at] = bytes(data[at : at + size]) * draw(st.integers(1, 20_000))
    return bytes(data)


def crash_site(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__} at {Path(frame.filename).name}:{frame.lineno}"


@dataclass(frozen=True)
class Target:
    """What is fuzzed: its inputs, how Casebook reads one, and the exceptions that are its
    documented refusals (anything else is a finding)."""

    name: str
    inputs: Callable[[], st.SearchStrategy]
    read: Callable[[Any], Any]
    refusals: tuple[type[BaseException], ...] = (InvalidInput,)


@dataclass(frozen=True)
class Finding:
    """Something wrong with reading an input: where (a crash's site, or the limits), and
    what."""

    site: str
    detail: str


def findings(target: Target, example: Any) -> list[Finding]:
    """What is wrong with reading ``example``: a crash (by site), one a reader caught and
    logged as a bug (the record's problem alone, but a bug all the same), or a cost past the
    limits."""
    found = []
    with measured() as cost, logged_errors() as logged:
        try:
            target.read(example)
        except target.refusals:
            pass
        except Exception as exc:  # what the fuzz looks for
            found.append(Finding(f"{target.name}: {crash_site(exc)}", f"{exc!s:.200}"))
    for record in logged:
        exc = record.exc_info[1] if record.exc_info else None
        site = crash_site(exc) if exc is not None else "an error"
        found.append(
            Finding(f"{target.name}: {site}, caught and logged", f"{record.getMessage():.200}")
        )
    if not cost.within_limits:
        found.append(Finding(f"{target.name}: past the limits", str(cost)))
    return found


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def logged_errors() -> Iterator[list[logging.LogRecord]]:
    """The errors Casebook's own modules log meanwhile (a reader's ``logger.exception``)."""
    handler = _Kept()
    loggers = [logging.getLogger(name) for name in ("scoring", "cases")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def _read_line(line: Any) -> None:
    """A line as the run-file reader reads it, detected and forced into every format; what
    it makes must be storable (the stored document is JSON)."""
    text = text_of(line)
    if nested_deeper_than(text, MAX_DEPTH):
        return  # the reader refuses it before any importer sees it
    for format_name in (None, *FORMAT_NAMES):
        try:
            value = parse_json(text)
            name = format_name or (detect_format(value) if isinstance(value, dict) else None)
            canonical = to_canonical(value, name)
            load_run(canonical)
        except InvalidInput:
            continue
        dump_json(canonical)


def _read_file(data: bytes) -> None:
    """A whole run file, as ``manage.py score`` and the upload read one: every record is
    a run or its problems, and nothing else is raised."""
    for item in read_run_lines(io.BufferedReader(io.BytesIO(data)), max_line_bytes=1 << 20):
        if item.canonical is not None:
            dump_json(item.canonical)


def _load_suite_text(file: tuple[str, bytes]) -> None:
    """A suite file as the import reads it: parsed by its name's kind, then loaded as the
    server saves it (strictly) and as a stored version is scored (leniently)."""
    document = parse_suite_document(file[1], file[0])
    load_suite(document, strict=False)
    load_suite(document)


def _suite_text(document: Any) -> st.SearchStrategy:
    files = [("suite.json", text_of(document))]
    # Nested past what PyYAML's writer recurses into: the JSON text alone.
    with contextlib.suppress(RecursionError):
        files.append(("suite.yaml", yaml.safe_dump(document).encode()))
    return st.sampled_from(files)


def _otlp_limits():
    return ItemLimits(depth=MAX_DEPTH, attributes=5000, events=1000, links=1000)


def _read_otlp(example: tuple[str, bytes, str]) -> None:
    """An export decoded as the receiver decodes it, each item measured, and those it keeps
    made into OTLP/JSON and read by the importer as a trace's spans."""
    signal, body, content_type = example
    export = otlp_codec.decode(
        body,
        content_type=content_type,
        encoding="",
        max_bytes=16 << 20,
        max_depth=MAX_DEPTH,
        max_containers=800_000,
        signal=otlp_codec.LOGS if signal == "logs" else otlp_codec.TRACES,
    )
    spans, records = [], []
    if signal == "logs":
        items = [r for rl in export.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    else:
        items = [s for rs in export.resource_spans for ss in rs.scope_spans for s in ss.spans]
    for item in items:
        if otlp_codec.measure(item, _otlp_limits()).problem is not None:
            continue
        otlp_codec.attributes(item.attributes)
        if signal == "logs":
            records.append(otlp_codec.log_record_document(item))
        else:
            spans.append(otlp_codec.span_document(item))
    line = {"case": "c", "spans": spans}
    if records:
        line["resourceLogs"] = [{"scopeLogs": [{"logRecords": records}]}]
    with contextlib.suppress(InvalidInput):  # a trace may make no run
        load_run(to_canonical(line, "otel"))


def _otlp_seeds() -> list[tuple[str, bytes, str]]:
    seeds = []
    for variant in VARIANTS:
        for signal, body, content_type, compressed in requests(variant):
            seeds.append((signal, gzip.decompress(body) if compressed else body, content_type))
    return seeds


@st.composite
def _otlp_inputs(draw) -> tuple[str, bytes, str]:
    signal, body, content_type = draw(st.sampled_from(OTLP_SEEDS))
    if content_type == "application/json" or draw(st.booleans()):
        document = draw(mutated_documents([as_otlp_json(signal, body, content_type, False)]))
        return signal, text_of(document), "application/json"
    return signal, draw(mutated_bytes([body])), content_type


def _read_tau_bench(data: bytes) -> None:
    results = tau_bench_suites.read_results(
        io.BytesIO(data), max_item_bytes=1 << 20, max_depth=MAX_DEPTH, max_rows=100_000
    )
    read_only = [tool for tool in results.tools if tau_bench_suites.looks_read_only(tool)]
    load_suite(tau_bench_suites.suite_document(results, name="fuzz", read_only=read_only))


def _read_bfcl(pair: Any) -> None:
    """A question and its answer (a mutation may have replaced the pair: then a question of
    a category without answers)."""
    if isinstance(pair, list) and len(pair) == 2:
        question, answers = pair[0], [(1, pair[1])]
    else:
        question, answers = pair, None
    load_suite(suite_from_bfcl([(1, question)], answers, name="fuzz"))


def _bfcl_pairs() -> list:
    pairs = []
    for category in ("simple_python", "multiple", "parallel", "parallel_multiple"):
        questions = (FIXTURES / f"bfcl/{category}.questions.jsonl").read_text().splitlines()
        answers = (FIXTURES / f"bfcl/{category}.answers.jsonl").read_text().splitlines()
        pairs += [
            [json.loads(q), json.loads(a)] for q, a in zip(questions[:3], answers[:3], strict=True)
        ]
    return pairs


def _catalogs() -> list:
    airline = json.loads((FIXTURES / "tau_bench/airline-tools.json").read_text())
    mcp = {
        "tools": [
            {
                "name": "book",
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
                "annotations": {"readOnlyHint": False},
            }
        ],
        "nextCursor": None,
    }
    bfcl = json.loads((FIXTURES / "bfcl/simple_python.questions.jsonl").read_text().split("\n")[0])
    return [airline, mcp, {"jsonrpc": "2.0", "id": 1, "result": mcp}, bfcl["function"]]


def _suite_seeds() -> list:
    with_everything = {
        **tau_bench.suite_document(),
        "tools": json.loads((FIXTURES / "tau_bench/airline-tools.json").read_text()),
        "catalog_checks": True,
        "environment": {"name": "bfcl", "initial_state": {"involved_classes": ["MathAPI"]}},
        "expectations": [{"type": "no_calls_beyond_expected", "tools": ["book_reservation"]}],
    }
    demo = json.loads((ROOT / "cases/demo/assistant.suite.json").read_text())
    return [demo, producers.SUITE, with_everything]


def _run_files() -> list[bytes]:
    lines = b"".join(text_of(seed) + b"\n" for seed in SEEDS[:12])
    inspect = (FIXTURES / "inspect/tools.json").read_bytes()
    array = json.dumps(tau_bench.RECORDS[:2]).encode()
    collector = b"".join(json.dumps(line).encode() + b"\n" for line in collector_lines(VARIANTS[0]))
    return [lines, inspect, array, collector, b"\n" * 100 + lines]


OTLP_SEEDS = _otlp_seeds()
TARGETS = [
    Target("run lines", lambda: mutations(), _read_line),
    Target("run files", lambda: mutated_bytes(_run_files()), _read_file),
    Target(
        "suite files",
        lambda: mutated_documents(_suite_seeds()).flatmap(_suite_text),
        _load_suite_text,
    ),
    Target(
        "OTLP exports",
        _otlp_inputs,
        _read_otlp,
        (otlp_codec.BadExport, InvalidInput),
    ),
    Target(
        "τ-bench results",
        lambda: mutated_documents([tau_bench.RECORDS[:3]]).map(text_of),
        _read_tau_bench,
    ),
    Target("BFCL categories", lambda: mutated_documents(_bfcl_pairs()), _read_bfcl),
    Target("tool catalogs", lambda: mutated_documents(_catalogs()), tools_from_any),
]
