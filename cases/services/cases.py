"""A suite's cases: saved one at a time (the case editor) or several at once, an expected
call put in place, a case deleted, each as a new version of the suite; and what the suite's
rules and tool catalog say of a case being edited."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max

from cases.models import (
    Case,
    Suite,
    SuiteVersion,
)
from cases.services.documents import (
    CASE_FIELDS,
    case_document,
    case_rows,
    create_case,
    create_rows,
    held_rows,
    length_problems,
    rows_problem,
    unknown_fields,
)
from cases.services.suites import locked, record_version, refuse_if_changed
from cases.services.tools import suite_tools
from scoring.matcher import (
    SUITE_SCHEMA,
    InvalidInput,
    Problem,
    json_equal,
    load_suite,
    suite_warnings,
)


class NothingToChange(Exception):
    """The edit would leave the case as it is: no version is made for it."""


class StaleEdit(Exception):
    """The case changed since the editor loaded it; saving would overwrite someone's work."""

    def __init__(self, case: Case):
        self.case = case
        latest = case.suite.latest_version
        now = f" (the suite is now at version {latest.number})" if latest else ""
        super().__init__(f"case {case.key!r} was changed by someone else since it was read{now}")


@dataclass
class SavedCase:
    case: Case
    version: SuiteVersion


@transaction.atomic
def save_case(
    suite: Suite, data: Mapping, user, *, case: Case | None = None, revision: int | None = None,
    message: str = "",
) -> SavedCase:  # fmt: skip
    """Create ``data`` as a new case, or replace ``case`` with it, as a new version.

    ``revision`` is the case revision the editor started from: if the case has been saved
    since, ``StaleEdit`` is raised and nothing changes. Problems are ``InvalidInput`` with
    paths relative to the case (``expected_calls[1].required_args``).
    """
    suite = locked(suite)
    if case is not None:
        case = Case.objects.select_for_update().get(pk=case.pk, suite=suite)
        if revision is not None and case.revision != revision:
            raise StaleEdit(case)
    problems = case_problems(suite, data, case)
    too_many = rows_problem(held_rows(suite, [case] if case else []) + case_rows(data))
    if problems or too_many:
        raise InvalidInput([*problems, *([too_many] if too_many else [])])
    if case is None:
        case = create_case(suite, data, _next_position(suite))
        verb = "Added"
    else:
        _replace_case(case, data)
        verb = "Changed"
    version = record_version(suite, user, message or f"{verb} case {case.key}")
    return SavedCase(case, version)


def _next_position(suite: Suite) -> int:
    return (suite.cases.aggregate(last=Max("position"))["last"] or 0) + 1


def _replace_case(case: Case, data: Mapping) -> None:
    """Make the case hold ``data`` (its key included), as its next revision."""
    case.expected_calls.all().delete()
    case.expectations.all().delete()
    case.key = data["key"]
    case.title = data.get("title") or ""
    case.prompt = data.get("prompt") or ""
    case.tags = list(data.get("tags") or [])
    case.match = data.get("match")
    case.extra_calls = data.get("extra_calls") or "allow"
    case.extra = {**unknown_fields(data, CASE_FIELDS)}
    case.revision += 1
    case.save()
    create_rows(case, data)


@transaction.atomic
def save_cases(
    suite: Suite,
    documents: Sequence[Mapping],
    user,
    *,
    seen_version: int | None,
    message: str,
    suite_expectations: Sequence[Mapping] = (),
) -> SuiteVersion:
    """Save several cases at once as one new version: each document replaces the suite's
    case of its key, or is added as a new case. ``suite_expectations`` join the ones the
    suite carries for every case (docs/formats.md#top-level), unless it has an equal one.

    ``seen_version`` is the suite's version the author reviewed them against: if the suite
    has a newer one, ``SuiteChanged`` is raised and nothing changes. Problems are
    ``InvalidInput`` naming the case by its place in ``documents`` (``cases[2].key``)."""
    suite = locked(suite)
    refuse_if_changed(suite, seen_version)
    carried = list(suite.extra.get("expectations") or [])
    added = [item for item in suite_expectations if not any(json_equal(item, c) for c in carried)]
    if added:
        suite.extra = {**suite.extra, "expectations": carried + added}
    keys = [document.get("key") for document in documents]
    existing: dict[Any, Case] = {case.key: case for case in suite.cases.filter(key__in=keys)}
    problems = []
    for index, document in enumerate(documents):
        if keys.index(document.get("key")) != index:
            problems.append(Problem(f"cases[{index}].key", "another case here has this key"))
        found = case_problems(suite, document, existing.get(document.get("key")))
        problems += [Problem(f"cases[{index}].{p.path}".rstrip("."), p.message) for p in found]
    rows = held_rows(suite, list(existing.values())) + sum(map(case_rows, documents))
    too_many = rows_problem(rows)
    if problems or too_many:
        raise InvalidInput([*problems, *([too_many] if too_many else [])])
    if added:
        suite.save(update_fields=["extra"])
    position = _next_position(suite)
    for document in documents:
        if document["key"] in existing:
            _replace_case(existing[document["key"]], document)
        else:
            create_case(suite, document, position)
            position += 1
    return record_version(suite, user, message)


def case_problems(suite: Suite, data: Mapping, case: Case | None = None) -> list[Problem]:
    """What stops ``data`` from being saved as ``case`` (or as a new case) of the suite: every rule
    of the suite file (docs/formats.md#what-is-refused), and a key of its own. Paths are relative to
    the case."""
    problems = []
    key = data.get("key")
    others = suite.cases.exclude(pk=case.pk) if case else suite.cases.all()
    if isinstance(key, str) and key and others.filter(key=key).exists():
        problems.append(Problem("key", f"another case of this suite has the key {key!r}"))
    try:
        load_suite(one_case_suite(suite, data))
    except InvalidInput as exc:
        problems.extend(_relative_to_case(exc.problems))
    problems.extend(length_problems(data))
    return problems


def one_case_suite(suite: Suite, case: Mapping) -> dict:
    """A suite file holding only ``case`` and everything of the suite a case inherits (its
    ``match``, tool catalog, ``catalog_checks``, environment and expectations: every field
    but its cases): how a case is checked, or scored, on its own, as the suite scores it
    (its paths are ``cases[0]...``)."""
    document = {**suite.extra, "schema": SUITE_SCHEMA, "name": suite.name, "cases": [case]}
    if suite.match is not None:
        document["match"] = suite.match
    return document


def case_warnings(suite: Suite, data: Mapping) -> list[Problem]:
    """What the suite's tool catalog says of ``data`` (unknown tools and arguments, values
    of the wrong type...): never a reason to refuse it. Paths are relative to the case."""
    tools = suite_tools(suite)
    if not tools:
        return []
    document = {"name": suite.name, "tools": tools, "cases": [data]}
    if suite.match is not None:
        document["match"] = suite.match
    return _relative_to_case(suite_warnings(document))


def call_warnings(suite: Suite, tool: str, args: Any, *, expectation: bool = False) -> list[str]:
    """The catalog's warnings about one expected call (or ``called_tool_with`` expectation)
    being typed, in words for beside its arguments: ``citty: unknown argument ...``."""
    if expectation:
        item = {"type": "called_tool_with", "tool": tool, "args": args}
        case, place = {"key": "typing", "expectations": [item]}, "expectations[0]"
    else:
        call = {"name": tool, "required_args": args}
        case, place = {"key": "typing", "expected_calls": [call]}, "expected_calls[0]"
    said = []
    for warning in case_warnings(suite, case):
        where = warning.path.removeprefix(place).lstrip(".")
        for field in ("required_args", "args", "name", "tool"):
            where = where.removeprefix(field).lstrip(".")
        said.append(f"{where}: {warning.message}" if where else warning.message)
    return said


def _relative_to_case(problems) -> list[Problem]:
    prefix = "cases[0]"
    found = []
    for problem in problems:
        path = problem.path
        if path == prefix:
            path = ""
        elif path.startswith(prefix + "."):
            path = path[len(prefix) + 1 :]
        found.append(Problem(path, problem.message))
    return found


def likely_corrected(expected_calls: list[Mapping], name: str) -> int | None:
    """Which of a case's expected calls a recorded call of tool ``name`` most likely
    corrects: the first of the same name (None: none has it)."""
    return next((i for i, call in enumerate(expected_calls) if call.get("name") == name), None)


@transaction.atomic
def put_expected_call(
    case: Case,
    user,
    *,
    name: str,
    required_args: dict,
    replace: int | None = None,
    revision: int | None = None,
    source: str = "",
) -> SavedCase:
    """Add an expected call to the case, or put it in place of expected call ``replace``
    (keeping that call's order and dependency flags), as a new version whose message says
    what changed and, with ``source``, where the call came from ("run 12").

    ``StaleEdit`` if the case is no longer at ``revision``; ``InvalidInput`` if the case would break
    a rule of the suite file (or ``replace`` names no expected call); ``NothingToChange`` if the
    case already has that expected call there (no empty version is made)."""
    suite = locked(case.suite)
    case = Case.objects.select_for_update().get(pk=case.pk, suite=suite)
    if revision is not None and case.revision != revision:
        raise StaleEdit(case)
    document = case_document(case)
    calls = list(document["expected_calls"])
    if replace is None:
        calls.append({"name": name, "required_args": required_args})
        verb = "Added"
    elif 0 <= replace < len(calls):
        calls[replace] = {**calls[replace], "name": name, "required_args": required_args}
        verb = "Replaced"
    else:
        raise InvalidInput([Problem("replace", f"the case has no expected call #{replace}")])
    if json_equal(calls, document["expected_calls"]):
        raise NothingToChange(f"case {case.key!r} already expects this call")
    document["expected_calls"] = calls
    message = f"{verb} expected call {name} of case {case.key}"
    return save_case(
        suite,
        document,
        user,
        case=case,
        revision=case.revision,
        message=f"{message} from {source}" if source else message,
    )


@transaction.atomic
def delete_case(case: Case, user) -> SuiteVersion:
    suite = locked(case.suite)
    key = case.key
    case.delete()
    return record_version(suite, user, f"Removed case {key}")
