"""Small builders for matcher tests: suites, cases and runs as plain dicts (docs/formats.md)."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.matcher import InvalidInput, load_run, load_suite, score

CASE_KEY = "c"


def suite_doc(*cases: dict, **suite_fields: Any) -> dict:
    """A suite document holding ``cases`` (each a case dict)."""
    return {"schema": "casebook.suite/1", "name": "tests", **suite_fields, "cases": list(cases)}


def case_doc(key: str = CASE_KEY, **case_fields: Any) -> dict:
    return {"key": key, **case_fields}


def make_case(*, suite_fields: dict | None = None, strict: bool = True, **case_fields: Any):
    """Load a one-case suite and return its case."""
    case_fields.setdefault("key", CASE_KEY)
    suite = load_suite(suite_doc(case_fields, **(suite_fields or {})), strict=strict)
    return suite.case(case_fields["key"])


def call(name: str, arguments: Any = None, **fields: Any) -> dict:
    """A recorded call; ``arguments`` defaults to ``{}`` (see ``null_call`` for null)."""
    return {"name": name, "arguments": {} if arguments is None else arguments, **fields}


def null_call(name: str, raw: str = "{not json", **fields: Any) -> dict:
    """A recorded call whose arguments could not be parsed (docs/formats.md#calls)."""
    return {"name": name, "arguments": None, "arguments_raw": raw, **fields}


def expected(name: str, required_args: dict | None = None, **fields: Any) -> dict:
    data: dict = {"name": name, **fields}
    if required_args is not None:
        data["required_args"] = required_args
    return data


def run_doc(
    batches: list[list[dict]] | None = None,
    *,
    final_text: Any = None,
    error: Any = None,
    case: str = CASE_KEY,
    **fields: Any,
) -> dict:
    return {
        "case": case,
        "batches": [] if batches is None else batches,
        "final_text": final_text,
        "error": error,
        **fields,
    }


def make_run(batches: list[list[dict]] | None = None, **fields: Any):
    return load_run(run_doc(batches, **fields))


def score_case(case_fields: dict, batches=None, **run_fields: Any):
    """Score one run against a case built from ``case_fields``."""
    return score(make_case(**case_fields), make_run(batches, **run_fields))


def predicates_of(report, kind: str):
    return [p for p in report.predicates if p.kind == kind]


def expected_call_results(report):
    return predicates_of(report, "expected_call")


def expectation_results(report):
    return predicates_of(report, "expectation")


def only_expectation(report):
    (result,) = expectation_results(report)
    return result


def expectation_passes(expectation: dict, batches=None, *, match: Any = None, **run_fields) -> bool:
    """Whether a single expectation holds on a run; the verdict must not be ``error``."""
    case_fields: dict = {"expectations": [expectation]}
    if match is not None:
        case_fields["match"] = match
    report = score_case(case_fields, batches, **run_fields)
    assert report.verdict != "error", report.to_dict()
    return only_expectation(report).passed


def problems_of(load, *args, **kwargs) -> list[tuple[str, str]]:
    """The (path, message) pairs of the InvalidInput that ``load`` must raise."""
    with pytest.raises(InvalidInput) as info:
        load(*args, **kwargs)
    problems = info.value.problems
    assert problems, "InvalidInput without problems"
    return [(p.path, p.message) for p in problems]


def problem_paths(load, *args, **kwargs) -> list[str]:
    return [path for path, _ in problems_of(load, *args, **kwargs)]


def suite_problem_paths(*cases: dict, **suite_fields: Any) -> list[str]:
    return problem_paths(load_suite, suite_doc(*cases, **suite_fields))
