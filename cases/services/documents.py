"""Suite files from a suite's rows, rows from suite files, and the rules a suite file must
keep to be stored (docs/formats.md#suite-files): the layer the other services build on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from cases.models import (
    Case,
    Expectation,
    ExpectedCall,
    Suite,
)
from scoring.matcher import (
    SUITE_SCHEMA,
    InvalidInput,
    Problem,
    load_suite,
)

SUITE_FIELDS = ("schema", "name", "description", "match", "cases", "tags")


CASE_FIELDS = (
    "key",
    "title",
    "prompt",
    "tags",
    "match",
    "expected_calls",
    "extra_calls",
    "expectations",
)


CALL_FIELDS = ("name", "required_args", "ordered", "depends_on_result", "exact_args")


def case_document(case: Case) -> dict:
    """One case as the suite file writes it (docs/formats.md#cases), unknown fields kept."""
    data: dict[str, Any] = {"key": case.key}
    if case.title:
        data["title"] = case.title
    if case.prompt:
        data["prompt"] = case.prompt
    if case.tags:
        data["tags"] = list(case.tags)
    if case.match is not None:
        data["match"] = case.match
    data["expected_calls"] = [_call_document(call) for call in case.expected_calls.all()]
    data["extra_calls"] = case.extra_calls
    data["expectations"] = [{"type": e.type, **e.fields} for e in case.expectations.all()]
    return {**data, **case.extra}


def _call_document(call: ExpectedCall) -> dict:
    data = {
        "name": call.name,
        "required_args": call.required_args,
        "ordered": call.ordered,
        "depends_on_result": call.depends_on_result,
    }
    if call.exact_args:
        data["exact_args"] = True
    return {**data, **call.extra}


def suite_document(suite: Suite) -> dict:
    """The suite file (docs/formats.md#suite-files) of the suite's current rows."""
    data: dict[str, Any] = {"schema": SUITE_SCHEMA, "name": suite.name}
    if suite.description:
        data["description"] = suite.description
    if suite.tags:
        data["tags"] = list(suite.tags)
    if suite.match is not None:
        data["match"] = suite.match
    cases = suite.cases.prefetch_related("expected_calls", "expectations")
    data["cases"] = [case_document(case) for case in cases]
    return {**data, **suite.extra}


def unknown_fields(data: Mapping, known: tuple[str, ...]) -> dict:
    return {key: value for key, value in data.items() if key not in known}


def create_case(suite: Suite, data: Mapping, position: int) -> Case:
    case = Case.objects.create(
        suite=suite,
        key=data["key"],
        title=data.get("title") or "",
        prompt=data.get("prompt") or "",
        tags=list(data.get("tags") or []),
        match=data.get("match"),
        extra_calls=data.get("extra_calls") or "allow",
        position=position,
        extra=unknown_fields(data, CASE_FIELDS),
    )
    create_rows(case, data)
    return case


def create_rows(case: Case, data: Mapping) -> None:
    ExpectedCall.objects.bulk_create(
        ExpectedCall(
            case=case,
            position=index,
            name=call["name"],
            required_args=call.get("required_args") or {},
            ordered=bool(call.get("ordered")),
            depends_on_result=bool(call.get("depends_on_result")),
            exact_args=bool(call.get("exact_args")),
            extra=unknown_fields(call, CALL_FIELDS),
        )
        for index, call in enumerate(data.get("expected_calls") or [])
    )
    Expectation.objects.bulk_create(
        Expectation(
            case=case,
            position=index,
            type=item["type"],
            fields={k: v for k, v in item.items() if k != "type"},
        )
        for index, item in enumerate(data.get("expectations") or [])
    )


# What the database holds at most; longer text is refused by path, not cut.
MAX_LENGTHS = {"name": 200, "key": 200, "title": 300, "call name": 200}


def validate_suite(document: Any) -> None:
    """Refuse a suite file that breaks any rule of docs/formats.md#what-is-refused, lacks a name, or
    holds text longer than Casebook stores (``InvalidInput`` listing every problem by JSON path)."""
    rows = rows_problem(_rows(document))
    if rows is not None:
        raise InvalidInput([rows])  # before the matcher compiles every one of them
    problems: list[Problem] = []
    try:
        load_suite(document)
    except InvalidInput as exc:
        problems.extend(exc.problems)
    if isinstance(document, Mapping):
        problems.extend(nul_problems({k: v for k, v in document.items() if k != "cases"}))
        name = document.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(Problem("name", "required: the suite's name"))
        problems.extend(_too_long(name, "name", MAX_LENGTHS["name"]))
        cases = document.get("cases")
        for index, case in enumerate(cases if isinstance(cases, list) else []):
            if isinstance(case, Mapping):
                problems.extend(length_problems(case, f"cases[{index}]."))
    if problems:
        raise InvalidInput(problems)


def _rows(document: Any) -> int:
    """The rows a suite file makes: a case, and an expected call or an expectation each."""
    cases = document.get("cases") if isinstance(document, Mapping) else None
    return sum(case_rows(case) for case in cases) if isinstance(cases, list) else 0


def case_rows(case: Any) -> int:
    if not isinstance(case, Mapping):
        return 1
    return 1 + sum(
        len(items) if isinstance(items := case.get(name), list) else 0
        for name in ("expected_calls", "expectations")
    )


def rows_problem(rows: int) -> Problem | None:
    """The problem of a suite of ``rows`` rows past ``CASEBOOK_MAX_SUITE_ROWS``, or None:
    every version of a suite copies them, and every page of it reads them."""
    limit = settings.CASEBOOK_MAX_SUITE_ROWS
    if rows <= limit:
        return None
    return Problem(
        "cases",
        f"the suite would hold {rows:,} rows (cases, expected calls and expectations): over "
        f"the limit, CASEBOOK_MAX_SUITE_ROWS = {limit:,}",
    )


def held_rows(suite: Suite, but: list[Case]) -> int:
    """The rows the suite holds, those of the cases ``but`` left out."""
    cases = suite.cases.exclude(pk__in=[case.pk for case in but])
    return (
        cases.count()
        + ExpectedCall.objects.filter(case__in=cases).count()
        + Expectation.objects.filter(case__in=cases).count()
    )


def length_problems(case: Mapping, prefix: str = "") -> list[Problem]:
    """Text of a case that Casebook cannot store, by path: too long, or holding U+0000."""
    found = nul_problems(case, prefix.removesuffix("."))
    found += _too_long(case.get("key"), f"{prefix}key", MAX_LENGTHS["key"])
    found += _too_long(case.get("title"), f"{prefix}title", MAX_LENGTHS["title"])
    calls = case.get("expected_calls")
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        if isinstance(call, Mapping):
            where = f"{prefix}expected_calls[{index}].name"
            found += _too_long(call.get("name"), where, MAX_LENGTHS["call name"])
    return found


def nul_problems(value: Any, path: str = "") -> list[Problem]:
    """Every string, key or value, at any depth, that holds U+0000: valid JSON, but neither
    PostgreSQL's text nor its jsonb can hold it."""
    if isinstance(value, str) and "\x00" in value:
        return [Problem(path, "holds the NUL character (U+0000), which cannot be stored")]
    if isinstance(value, Mapping):
        found = []
        for key, item in value.items():
            # the path names the key readably, its NUL written as JSON would
            where = (f"{path}.{key}" if path else str(key)).replace("\x00", "\\u0000")
            found += nul_problems(key, where) + nul_problems(item, where)
        return found
    if isinstance(value, list):
        return [
            found for i, item in enumerate(value) for found in nul_problems(item, f"{path}[{i}]")
        ]
    return []


def _too_long(value: Any, path: str, limit: int) -> list[Problem]:
    if isinstance(value, str) and len(value) > limit:
        return [Problem(path, f"at most {limit} characters (this is {len(value)})")]
    return []
