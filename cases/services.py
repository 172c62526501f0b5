"""Changing suites: every saved change is validated as a whole suite and becomes a version.

The functions here span models (a suite, its cases, their rows, its versions), so they live
outside any one model. Each runs in a transaction holding the suite's row lock, which
serialises version numbers and case keys between concurrent editors.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.http import Http404
from django.utils.text import slugify

from scoring.matcher import (
    SUITE_SCHEMA,
    InvalidInput,
    Problem,
    field_path,
    json_equal,
    load_suite,
    suite_warnings,
)

from .audits import suite_audit
from .diff import VersionDiff, diff_documents
from .models import (
    Case,
    Expectation,
    ExpectedCall,
    Membership,
    ReviewLabel,
    Role,
    Suite,
    SuiteVersion,
    Team,
    Visibility,
)
from .tool_catalog import catalog_tools

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


class NothingToChange(Exception):
    """The edit would leave the case as it is: no version is made for it."""


class StaleEdit(Exception):
    """The case changed since the editor loaded it; saving would overwrite someone's work."""

    def __init__(self, case: Case):
        self.case = case
        latest = case.suite.latest_version
        now = f" (the suite is now at version {latest.number})" if latest else ""
        super().__init__(f"case {case.key!r} was changed by someone else since it was read{now}")


# --- teams -----------------------------------------------------------------------------------


class LastAdmin(Exception):
    """The change would leave the team without an admin."""

    def __init__(self):
        super().__init__("A team needs an admin: make someone else admin first.")


class LabelTaken(Exception):
    """Another request gave a label of the team this name or key first."""

    def __init__(self, label: ReviewLabel):
        super().__init__(
            f"The team has a label {label.name!r}, or one keyed {label.key!r}, already."
        )


def save_label(label: ReviewLabel) -> None:
    """Save a review label whose form or serializer found its name and key free; raises
    ``LabelTaken`` if a request racing this one took either since."""
    try:
        with transaction.atomic():
            label.save()
    except IntegrityError:
        raise LabelTaken(label) from None


def _created_with_unique_slug(create, make_slug, attempts: int = 5):
    """``create(slug)`` with a free slug; two creations racing for one slug retry."""
    for attempt in range(attempts):
        try:
            with transaction.atomic():
                return create(make_slug())
        except IntegrityError:
            if attempt == attempts - 1:
                raise
    return None  # not reached


@transaction.atomic
def create_team(name: str, user) -> Team:
    """A new team; its creator is its admin."""
    team = _created_with_unique_slug(
        lambda slug: Team.objects.create(name=name, slug=slug), lambda: Team.unique_slug(name)
    )
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    return team


@transaction.atomic
def set_member_role(team: Team, user, role: str) -> tuple[Membership, bool]:
    """Add ``user`` to the team with ``role``, or change their role; True when added.

    Membership changes of one team take its row lock, so two admins demoting each other at
    once cannot leave it without an admin (``LastAdmin``)."""
    Team.objects.select_for_update().get(pk=team.pk)
    membership = Membership.objects.filter(team=team, user=user).first()
    added = membership is None
    if added:
        membership = Membership(team=team, user=user)
    elif membership.role == Role.ADMIN and role != Role.ADMIN:
        _keep_an_admin(team, membership)
    membership.role = role
    membership.save()
    return membership, added


@transaction.atomic
def remove_member(membership: Membership) -> None:
    """Take the user out of the team (``LastAdmin`` if they are its only admin)."""
    Team.objects.select_for_update().get(pk=membership.team_id)
    membership = Membership.objects.filter(pk=membership.pk).first()
    if membership is None:  # removed meanwhile
        return
    if membership.role == Role.ADMIN:
        _keep_an_admin(membership.team, membership)
    membership.delete()


def _keep_an_admin(team: Team, leaving: Membership) -> None:
    others = Membership.objects.filter(team=team, role=Role.ADMIN).exclude(pk=leaving.pk)
    if not others.exists():
        raise LastAdmin


# --- suite files from rows, and rows from suite files ---------------------------------------


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


def _unknown(data: Mapping, known: tuple[str, ...]) -> dict:
    return {key: value for key, value in data.items() if key not in known}


def _create_case(suite: Suite, data: Mapping, position: int) -> Case:
    case = Case.objects.create(
        suite=suite,
        key=data["key"],
        title=data.get("title") or "",
        prompt=data.get("prompt") or "",
        tags=list(data.get("tags") or []),
        match=data.get("match"),
        extra_calls=data.get("extra_calls") or "allow",
        position=position,
        extra=_unknown(data, CASE_FIELDS),
    )
    _create_rows(case, data)
    return case


def _create_rows(case: Case, data: Mapping) -> None:
    ExpectedCall.objects.bulk_create(
        ExpectedCall(
            case=case,
            position=index,
            name=call["name"],
            required_args=call.get("required_args") or {},
            ordered=bool(call.get("ordered")),
            depends_on_result=bool(call.get("depends_on_result")),
            exact_args=bool(call.get("exact_args")),
            extra=_unknown(call, CALL_FIELDS),
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
    return sum(_case_rows(case) for case in cases) if isinstance(cases, list) else 0


def _case_rows(case: Any) -> int:
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


def _held_rows(suite: Suite, but: list[Case]) -> int:
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


def pick_version(suite: Suite, number: str | None, tag: str | None) -> SuiteVersion:
    """The version ``number``, else the newest tagged ``tag``, else the newest: ``Http404``
    if there is none (pages and the API look versions up alike)."""
    versions = suite.versions.order_by("-number")
    if number:
        if not number.isdigit():
            raise Http404("A version is a whole number.")
        versions = versions.filter(number=int(number))
    elif tag:
        versions = versions.filter(tag=tag)
    version = versions.first()
    if version is None:
        raise Http404("No such version.")
    return version


# --- changes -------------------------------------------------------------------------------


def record_version(suite: Suite, user, message: str) -> SuiteVersion:
    """Snapshot the suite's rows as its next version, with its audit. Call inside the
    suite's lock."""
    document = suite_document(suite)
    latest = suite.versions.order_by("-number").first()
    return SuiteVersion.objects.create(
        suite=suite,
        number=(latest.number if latest else 0) + 1,
        document=document,
        author=user,
        message=message[:300],
        audit=suite_audit(document, latest).to_dict(),
    )


def _latest_number(suite: Suite) -> int:
    return suite.versions.aggregate(last=Max("number"))["last"] or 0


def _locked(suite: Suite) -> Suite:
    return Suite.objects.select_for_update().get(pk=suite.pk)


def _unique_slug(team: Team, name: str, exclude: int | None = None) -> str:
    base = slugify(name)[:190] or "suite"
    slug, n = base, 1
    while Suite.objects.filter(team=team, slug=slug).exclude(pk=exclude).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


@transaction.atomic
def create_suite(
    team: Team,
    document: Mapping,
    user,
    message: str = "Imported",
    *,
    visibility: str = Visibility.TEAM,
) -> Suite:
    """A new suite in ``team`` from a suite file, as its version 1."""
    validate_suite(document)
    suite = _created_with_unique_slug(
        lambda slug: Suite.objects.create(
            team=team,
            name=document["name"],
            slug=slug,
            description=document.get("description") or "",
            tags=list(document.get("tags") or []),
            match=document.get("match"),
            visibility=visibility,
            extra=_unknown(document, SUITE_FIELDS),
        ),
        lambda: _unique_slug(team, document["name"]),
    )
    for position, data in enumerate(document["cases"]):
        _create_case(suite, data, position)
    record_version(suite, user, message)
    return suite


def new_suite(
    team: Team,
    user,
    *,
    name: str,
    description: str = "",
    tags: list[str] | None = None,
    match: Any = None,
    visibility: str = Visibility.TEAM,
) -> Suite:
    """A new empty suite (no cases yet) with these settings, as its version 1."""
    document: dict[str, Any] = {"schema": SUITE_SCHEMA, "name": name, "cases": []}
    if description:
        document["description"] = description
    if tags:
        document["tags"] = list(tags)
    if match is not None:
        document["match"] = match
    return create_suite(team, document, user, message="Created", visibility=visibility)


# --- importing a suite file into a suite ------------------------------------------------------

# The top-level fields a preview names as kept when the file leaves them out.
KEPT_FIELDS = ("name", "description", "tags", "match", "tools", "cases")


@dataclass(frozen=True)
class ImportPreview:
    """What importing a suite file into a suite would change (docs/review.md#import-file)."""

    diff: VersionDiff
    kept: list[str]  # fields the file leaves out, which keep the suite's values
    version: int  # the suite's version the diff starts from
    cases: int  # how many cases the suite would hold
    changes_nothing: bool
    document: dict  # the suite file the suite would then hold


def import_preview(suite: Suite, document: Any) -> ImportPreview:
    """What ``replace_contents`` would make of the suite with this file, worked out by doing
    it and rolling it back: the diff is the one its new version would show. ``InvalidInput``
    when the suite the file makes breaks a rule of the suite file."""
    with transaction.atomic():
        suite = _locked(suite)
        version = _latest_number(suite)
        before = suite_document(suite)
        _import(suite, document, before)
        after = suite_document(suite)
        transaction.set_rollback(True)
    kept = [name for name in KEPT_FIELDS if name in before and name not in document]
    return ImportPreview(
        diff_documents(before, after), kept, version, len(after["cases"]), before == after, after
    )


@transaction.atomic
def replace_contents(
    suite: Suite, document: Any, user, message: str = "Imported", *, seen_version: int | None = None
) -> SuiteVersion:
    """Import a suite file into the suite, as a new version whose message is ``message`` and
    what changed (``Imported a.json: name changed, 1 case removed``).

    ``seen_version`` is the suite's version the author previewed the import against: if the
    suite has a newer one, ``SuiteChanged`` is raised and nothing changes."""
    suite = _locked(suite)
    _refuse_if_changed(suite, seen_version)
    before = suite_document(suite)
    _import(suite, document, before)
    diff = diff_documents(before, suite_document(suite))
    return record_version(suite, user, f"{message}: {diff.summary()}")


def _import(suite: Suite, document: Any, current: dict) -> None:
    """Make the locked suite hold the file, whose suite file now is ``current``: each top-level
    field the file holds replaces the suite's, and one it leaves out (its tags, its tool
    catalog, even its cases) is kept (docs/formats.md#importing-into-a-suite)."""
    if isinstance(document, Mapping):
        document = copy.copy(document)  # keeps the parser's note of keys named twice
        for key, value in current.items():
            document.setdefault(key, value)
    validate_suite(document)
    suite.cases.all().delete()
    suite.name = document["name"]
    suite.slug = _unique_slug(suite.team, document["name"], exclude=suite.pk)
    suite.description = document.get("description") or ""
    suite.tags = list(document.get("tags") or [])
    suite.match = document.get("match")
    suite.extra = _unknown(document, SUITE_FIELDS)
    suite.save()
    for position, data in enumerate(document["cases"]):
        _create_case(suite, data, position)


@transaction.atomic
def update_settings(suite: Suite, user, *, message: str = "", **fields) -> SuiteVersion:
    """Change the suite's own fields (name, description, tags, visibility, match,
    ``catalog_checks``, the case attribute of live traces and its map of values to case
    keys, and the retention of runs); a new version only when the suite file changed."""
    suite = _locked(suite)
    document = suite_document(suite)
    for key in ("name", "description", "tags", "match"):
        if key in fields:
            document[key] = fields[key]
    if document.get("match") is None:
        document.pop("match", None)
    if "catalog_checks" in fields:
        # A field of the suite file that the suite keeps among those it does not model.
        document.pop("catalog_checks", None)
        if fields.pop("catalog_checks"):
            document["catalog_checks"] = True
        suite.extra = _unknown(document, SUITE_FIELDS)
    validate_suite(document)
    if "trace_case_map" in fields:
        problems = trace_case_map_problems(suite, fields["trace_case_map"])
        if problems:
            raise InvalidInput(problems)
    for key, value in fields.items():
        setattr(suite, key, value)
    if "name" in fields:
        suite.slug = _unique_slug(suite.team, fields["name"], exclude=suite.pk)
    suite.save()
    latest = suite.latest_version
    if latest is not None and latest.document == suite_document(suite):
        return latest  # only the visibility (or the like) changed: the suite file did not
    return record_version(suite, user, message or "Changed the suite's settings")


TRACE_CASE_MAP_LIMIT = 1000  # entries of a suite's map of live traces' case values
TRACE_CASE_VALUE_LIMIT = 200  # characters of a value, as of a case key


def trace_case_map_problems(suite: Suite, mapping) -> list[Problem]:
    """What is wrong with ``mapping`` as the suite's ``trace_case_map``: an object of at
    most ``TRACE_CASE_MAP_LIMIT`` values (each up to ``TRACE_CASE_VALUE_LIMIT`` characters),
    each naming one of the suite's case keys."""
    where = "trace_case_map"
    if not isinstance(mapping, dict):
        return [Problem(where, "must be an object of attribute values to case keys")]
    if len(mapping) > TRACE_CASE_MAP_LIMIT:
        return [Problem(where, f"{len(mapping):,} values; at most {TRACE_CASE_MAP_LIMIT:,}")]
    keys = set(suite.cases.values_list("key", flat=True))
    problems = []
    for value, key in mapping.items():
        path = field_path(where, value[:TRACE_CASE_VALUE_LIMIT])
        if not value or len(value) > TRACE_CASE_VALUE_LIMIT:
            problems.append(
                Problem(path, f"a value must be 1 to {TRACE_CASE_VALUE_LIMIT} characters")
            )
        elif not isinstance(key, str):
            problems.append(Problem(path, "must be a case key (text)"))
        elif key not in keys:
            problems.append(Problem(path, f"no case {key[:TRACE_CASE_VALUE_LIMIT]!r} in the suite"))
    return problems


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
    suite = _locked(suite)
    if case is not None:
        case = Case.objects.select_for_update().get(pk=case.pk, suite=suite)
        if revision is not None and case.revision != revision:
            raise StaleEdit(case)
    problems = case_problems(suite, data, case)
    too_many = rows_problem(_held_rows(suite, [case] if case else []) + _case_rows(data))
    if problems or too_many:
        raise InvalidInput([*problems, *([too_many] if too_many else [])])
    if case is None:
        case = _create_case(suite, data, _next_position(suite))
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
    case.extra = {**_unknown(data, CASE_FIELDS)}
    case.revision += 1
    case.save()
    _create_rows(case, data)


class SuiteChanged(Exception):
    """The suite has a newer version than the one the author reviewed the change against."""

    def __init__(self, number: int):
        self.number = number
        super().__init__(f"the suite was changed meanwhile (now version {number})")


def _refuse_if_changed(suite: Suite, seen_version: int | None) -> None:
    """``SuiteChanged`` if the locked suite has a newer version than ``seen_version``."""
    latest = _latest_number(suite)
    if seen_version is not None and latest != seen_version:
        raise SuiteChanged(latest)


@transaction.atomic
def save_cases(
    suite: Suite,
    documents: list[Mapping],
    user,
    *,
    seen_version: int | None,
    message: str,
    suite_expectations: list[Mapping] = (),
) -> SuiteVersion:
    """Save several cases at once as one new version: each document replaces the suite's
    case of its key, or is added as a new case. ``suite_expectations`` join the ones the
    suite carries for every case (docs/formats.md#top-level), unless it has an equal one.

    ``seen_version`` is the suite's version the author reviewed them against: if the suite
    has a newer one, ``SuiteChanged`` is raised and nothing changes. Problems are
    ``InvalidInput`` naming the case by its place in ``documents`` (``cases[2].key``)."""
    suite = _locked(suite)
    _refuse_if_changed(suite, seen_version)
    carried = list(suite.extra.get("expectations") or [])
    added = [item for item in suite_expectations if not any(json_equal(item, c) for c in carried)]
    if added:
        suite.extra = {**suite.extra, "expectations": carried + added}
    keys = [document.get("key") for document in documents]
    existing = {case.key: case for case in suite.cases.filter(key__in=keys)}
    problems = []
    for index, document in enumerate(documents):
        if keys.index(document.get("key")) != index:
            problems.append(Problem(f"cases[{index}].key", "another case here has this key"))
        found = case_problems(suite, document, existing.get(document.get("key")))
        problems += [Problem(f"cases[{index}].{p.path}".rstrip("."), p.message) for p in found]
    rows = _held_rows(suite, list(existing.values())) + sum(map(_case_rows, documents))
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
            _create_case(suite, document, position)
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
    suite = _locked(case.suite)
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


# --- the tool catalog ---------------------------------------------------------------------


def suite_tools(suite: Suite) -> list:
    """The suite's tool catalog (docs/formats.md#tool-catalog): its tool objects as its suite
    file holds them, the pages of an MCP ``tools/list`` merged.

    It is kept with the file's other fields beyond Casebook's columns (``extra``): it is
    versioned, exported and imported with the suite, and no query ever filters on it."""
    return catalog_tools(suite.extra.get("tools"))


def with_tools(suite: Suite, tools: list) -> dict:
    """The suite file of the suite with ``tools`` as its catalog; ``InvalidInput`` by the
    suite file's paths (``tools[2].name: required``) when the catalog breaks its rules."""
    document = {**suite_document(suite), "tools": tools}
    validate_suite(document)
    return document


@transaction.atomic
def replace_tools(suite: Suite, tools: list, user, message: str) -> SuiteVersion:
    """Make ``tools`` the suite's catalog, as a new version (``InvalidInput`` as
    ``with_tools`` says)."""
    suite = _locked(suite)
    with_tools(suite, tools)
    suite.extra = {**suite.extra, "tools": tools}
    suite.save()
    return record_version(suite, user, message)


@transaction.atomic
def delete_case(case: Case, user) -> SuiteVersion:
    suite = _locked(case.suite)
    key = case.key
    case.delete()
    return record_version(suite, user, f"Removed case {key}")


@transaction.atomic
def copy_suite(suite: Suite, team: Team, user) -> Suite:
    """A copy of the suite's current version in another (or the same) team."""
    document = suite.latest_version.document
    return create_suite(team, document, user, message=f"Copied from {suite.team.slug}/{suite.slug}")
