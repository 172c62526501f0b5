"""Whatever users send, Casebook reads it or refuses it as documented, within the costs a
hostile input is held to (docs/operations.md#limits-on-hostile-input): hypothesis over every
reader (``tests/support/fuzzing.py``'s targets: the importers, whole run files, suite files,
OTLP exports, τ-bench results, BFCL categories, tool catalogs). A bounded part of the search,
a few hundred inputs a target; ``bench/fuzz.py`` runs the same for as long as it is given.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.fuzzing import TARGETS, findings

# Inputs a target, so that the whole runs in a minute or two on a shared machine.
EXAMPLES = {
    "run lines": 300,
    "run files": 300,
    "suite files": 400,
    "OTLP exports": 600,
    "τ-bench results": 300,
    "BFCL categories": 400,
    "tool catalogs": 400,
}


@pytest.mark.parametrize("target", TARGETS, ids=[target.name for target in TARGETS])
def test_every_input_is_read_or_refused_as_documented_within_the_limits(target):
    @settings(
        max_examples=EXAMPLES[target.name],
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(target.inputs())
    def read(example):
        assert not findings(target, example)

    read()


def test_an_error_a_reader_catches_and_logs_is_a_finding_too(monkeypatch):
    """A reader keeps reading past a bug in one record (logged, that record's problem
    alone): the fuzz counts the bug all the same, by where it was raised."""
    run_files = next(target for target in TARGETS if target.name == "run files")
    line = b'{"case": "c", "batches": []}\n'
    assert not findings(run_files, line)

    def broken(value, name):
        raise TypeError("an importer's bug")

    monkeypatch.setattr("scoring.runfiles.reader.to_canonical", broken)
    (finding,) = findings(run_files, line)
    raised_at = broken.__code__.co_firstlineno + 1
    assert finding.site == f"run files: TypeError at test_fuzz.py:{raised_at}, caught and logged"
    assert "reading line 1 of a run file" in finding.detail
