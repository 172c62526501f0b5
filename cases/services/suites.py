"""Suites and their versions: creating, copying, importing a suite file into a suite, its
settings, picking a version. Each change runs in a transaction holding the suite's row lock,
which serialises version numbers between concurrent editors, and becomes a version with its
audit (``record_version``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.http import Http404
from django.utils.text import slugify

from cases.audits import suite_audit
from cases.diff import VersionDiff, diff_documents
from cases.models import (
    Suite,
    SuiteVersion,
    Team,
    Visibility,
)
from cases.services.documents import (
    SUITE_FIELDS,
    create_case,
    suite_document,
    unknown_fields,
    validate_suite,
)
from cases.services.teams import created_with_unique_slug
from scoring.matcher import (
    SUITE_SCHEMA,
    InvalidInput,
    Problem,
    field_path,
)


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


def latest_number(suite: Suite) -> int:
    return suite.versions.aggregate(last=Max("number"))["last"] or 0


def locked(suite: Suite) -> Suite:
    return Suite.objects.select_for_update().get(pk=suite.pk)


def unique_slug(team: Team, name: str, exclude: int | None = None) -> str:
    base = slugify(name)[:190] or "suite"
    slug, n = base, 1
    taken = Suite.objects.filter(team=team)
    if exclude is not None:
        taken = taken.exclude(pk=exclude)
    while taken.filter(slug=slug).exists():
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
    suite = created_with_unique_slug(
        lambda slug: Suite.objects.create(
            team=team,
            name=document["name"],
            slug=slug,
            description=document.get("description") or "",
            tags=list(document.get("tags") or []),
            match=document.get("match"),
            visibility=visibility,
            extra=unknown_fields(document, SUITE_FIELDS),
        ),
        lambda: unique_slug(team, document["name"]),
    )
    for position, data in enumerate(document["cases"]):
        create_case(suite, data, position)
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


@transaction.atomic
def copy_suite(suite: Suite, team: Team, user) -> Suite:
    """A copy of the suite's current version in another (or the same) team."""
    document = suite.latest_version.document
    return create_suite(team, document, user, message=f"Copied from {suite.team.slug}/{suite.slug}")


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


class SuiteChanged(Exception):
    """The suite has a newer version than the one the author reviewed the change against."""

    def __init__(self, number: int):
        self.number = number
        super().__init__(f"the suite was changed meanwhile (now version {number})")


def refuse_if_changed(suite: Suite, seen_version: int | None) -> None:
    """``SuiteChanged`` if the locked suite has a newer version than ``seen_version``."""
    latest = latest_number(suite)
    if seen_version is not None and latest != seen_version:
        raise SuiteChanged(latest)


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
        suite = locked(suite)
        version = latest_number(suite)
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
    suite = locked(suite)
    refuse_if_changed(suite, seen_version)
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
    suite.slug = unique_slug(suite.team, document["name"], exclude=suite.pk)
    suite.description = document.get("description") or ""
    suite.tags = list(document.get("tags") or [])
    suite.match = document.get("match")
    suite.extra = unknown_fields(document, SUITE_FIELDS)
    suite.save()
    for position, data in enumerate(document["cases"]):
        create_case(suite, data, position)


@transaction.atomic
def update_settings(suite: Suite, user, *, message: str = "", **fields) -> SuiteVersion:
    """Change the suite's own fields (name, description, tags, visibility, match,
    ``catalog_checks``, the case attribute of live traces and its map of values to case
    keys, and the retention of runs); a new version only when the suite file changed."""
    suite = locked(suite)
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
        suite.extra = unknown_fields(document, SUITE_FIELDS)
    validate_suite(document)
    if "trace_case_map" in fields:
        problems = trace_case_map_problems(suite, fields["trace_case_map"])
        if problems:
            raise InvalidInput(problems)
    for key, value in fields.items():
        setattr(suite, key, value)
    if "name" in fields:
        suite.slug = unique_slug(suite.team, fields["name"], exclude=suite.pk)
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
