"""Whatever a line holds, reading it raises only ``InvalidInput``: one line's problem is that
line's, named by its path, and every other line is read (docs/formats.md#run-formats).

Structure-aware fuzzing with hypothesis (``tests/support/fuzzing.py``): each mutated real
line is detected, converted (as detected, and forced into every format) and loaded as
``manage.py score`` does. A longer run of the same search, beside every other reader of
what users send, is ``bench/fuzz.py`` (tests/security/test_fuzz.py runs a bounded part).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.importers import FORMAT_NAMES
from scoring.matcher import nested_deeper_than
from scoring.runfiles.reader import MAX_DEPTH, read_run_lines
from tests.support.fuzzing import mutations, problems_of, text_of


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations(), st.sampled_from([None, *FORMAT_NAMES]))
def test_a_mutated_line_is_read_or_refused_with_its_problems(line, format_name):
    text = text_of(line)
    if nested_deeper_than(text, MAX_DEPTH):
        return  # the reader refuses it before any importer sees it
    assert None not in problems_of(text, format_name), "a refusal names its problems"


@pytest.mark.parametrize("format_name", [None, *FORMAT_NAMES])
def test_a_bad_line_is_that_lines_problem_alone(format_name):
    """Between two good lines, whatever a line holds: the file's reader never stops."""
    good = json.dumps({"case": "ok", "batches": []}).encode() + b"\n"
    deep = b'{"case": "c", "batches": [], "meta": {"x": ' + b"[" * 500 + b"]" * 500 + b"}}"
    bad = [
        deep,
        json.dumps({"case": "c", "messages": [{"role": "assistant", "content": [
            {"type": ["tool_use"], "id": "1", "name": "f", "input": {}}]}]}).encode(),
        json.dumps({"case": "c", "resourceSpans": [{"scopeSpans": [{"spans": [{
            "traceId": "a" * 32, "spanId": "b" * 16, "name": "chat", "attributes": [{
                "key": "gen_ai.operation.name", "value": {"stringValue": ["chat"]}}]}]}]}]}
        ).encode(),
        b'{"id": "simple_1", "result": [{"f": {"a": ' + b"9" * 5000 + b"}}]}",
        b'{"case": "c", "spans": 7}',
        b'{"case": "c"}',
    ]  # fmt: skip
    for line in bad:
        read = list(read_run_lines([good, line + b"\n", good], format_name=format_name))
        assert [item.line for item in read] == [1, 2, 3]
        assert read[1].run is not None or read[1].problems
        if format_name in (None, "canonical"):
            assert read[0].run is not None
            assert read[2].run is not None
