"""Routing of live telemetry (docs/live-traces.md#routing): the suite and the label a
resource's attributes, or the sender's suite token, send its spans (or log records) to.

One ``Router`` serves one export: ``address`` reads what a resource names without a query,
``resolve`` looks the suite up and checks that the sender may send it runs (once per suite
an export names), and ``route`` does both. A receiver that bounds its work by the export's
size (``scoring.live.traces``) calls ``address`` for every resource and ``resolve`` only
for what it keeps.

- ``casebook.suite`` names the suite: its id (an integer, a string of one, a double with no
  fraction) or ``team-slug/suite-slug``; malformed, kind 400. A suite that does not exist
  or that the sender may not see: 404; one they see but do not edit: 403.
- ``casebook.label`` names the live submission (at most ``LABEL_LIMIT`` characters; a NUL
  is refused, kind 400), and a ``casebook.case`` holding a NUL is refused likewise: read
  without it, it would be another case's key.
- A suite token (``cases.tokens.suite_of``) needs neither: its spans go to its suite, under
  its label when it has one, else the resource's. A resource naming another suite is
  refused (403). The sender must still edit the suite, checked as for any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cases import permissions, tokens
from cases.models import Suite
from scoring.models import Trace

SUITE = "casebook.suite"
LABEL = "casebook.label"
CASE = "casebook.case"
LABEL_LIMIT = Trace._meta.get_field("label").max_length

# Why a resource's spans are rejected, by kind: the answer's status when every span was
# rejected alike.
NOT_FOUND, FORBIDDEN, INVALID = 404, 403, 400
Refusal = tuple[int, str]  # (kind, reason)

NUL_CASE = f"{CASE} holds a NUL character, which no case key may hold"

_SLUGS = re.compile(r"([-\w]{1,100})/([-\w]{1,200})", re.ASCII)  # Team.slug / Suite.slug
SuiteReference = int | tuple[str, str]  # an id, or (team slug, suite slug)
REFERENCE = "a suite's id or team-slug/suite-slug"


@dataclass(frozen=True)
class Address:
    """What a resource names, before any lookup."""

    suite: SuiteReference
    label: str


@dataclass(frozen=True)
class Route:
    """Where a resource's spans go: a suite the sender may send runs to, and the label."""

    suite: Suite
    label: str


class Router:
    """The routing of one export sent by ``user`` with ``token`` (``request.auth``)."""

    def __init__(self, user, token=None):
        self.user = user
        self.scope = tokens.suite_of(token)  # a suite token's suite, else None
        self.scope_label = token.label if self.scope is not None else ""
        self.suites: dict[SuiteReference, Suite | Refusal] = {}

    def route(self, resource: dict) -> Route | Refusal:
        """Where the spans of a resource (its attributes, ``otlp_codec.attributes``) go, or
        why they are rejected."""
        address = self.address(resource)
        return address if isinstance(address, tuple) else self.resolve(address)

    def address(self, resource: dict) -> Address | Refusal:
        """What the resource's attributes (and the token) name; no query."""
        reference = resource.get(SUITE)
        named = None if reference is None else _reference(reference)
        if reference is not None and named is None:
            return INVALID, f"{SUITE} must be {REFERENCE}, not {str(reference)[:100]!r}"
        if self.scope is not None:
            if named is not None and named not in (self.scope.pk, _slugs(self.scope)):
                return FORBIDDEN, (
                    f"{SUITE} {_shown(named)}: this token sends to suite {self.scope.pk} "
                    f"({'/'.join(_slugs(self.scope))}) only"
                )
            named = self.scope.pk
        elif named is None:
            return INVALID, f"no {SUITE} resource attribute ({REFERENCE})"
        label = self.scope_label or str(resource.get(LABEL, ""))
        if "\0" in label:  # no text column of PostgreSQL holds it; the label is not guessed at
            return INVALID, f"{LABEL} holds a NUL character"
        if holds_nul(resource.get(CASE)):
            return INVALID, NUL_CASE
        return Address(named, label[:LABEL_LIMIT])

    def resolve(self, address: Address) -> Route | Refusal:
        """The route of an address, if the sender may send runs to its suite; else why not.
        Each suite is looked up once."""
        if address.suite not in self.suites:
            self.suites[address.suite] = self._suite(address.suite)
        suite = self.suites[address.suite]
        return suite if isinstance(suite, tuple) else Route(suite, address.label)

    def _suite(self, reference: SuiteReference) -> Suite | Refusal:
        found = Suite.objects.select_related("team")
        if isinstance(reference, tuple):
            found = found.filter(team__slug=reference[0], slug=reference[1])
        else:
            found = found.filter(pk=reference)
        suite = found.first()
        if suite is None or not permissions.can_view_suite(self.user, suite):
            return NOT_FOUND, f"{SUITE} {_shown(reference)}: no such suite"
        if not permissions.can_edit_suite(self.user, suite):
            return FORBIDDEN, (
                f"{SUITE} {_shown(reference)}: only the suite's editors and admins send runs"
            )
        return suite


def holds_nul(value) -> bool:
    """Whether an attribute's value (as ``otlp_codec.attributes`` gives it) is text holding
    U+0000."""
    return isinstance(value, str) and "\0" in value


def _reference(value) -> SuiteReference | None:
    """The suite ``casebook.suite`` names: an id (an integer, a string of one, a double
    that is a whole number) or the slugs of ``team-slug/suite-slug``; None for anything
    else. Ids past the database's integers name no suite: they are left to the lookup."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else None  # not inf, nor NaN
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) < 20:
            return int(text)
        slugs = _SLUGS.fullmatch(text)
        return (slugs[1], slugs[2]) if slugs else None
    return value


def _slugs(suite: Suite) -> tuple[str, str]:
    return suite.team.slug, suite.slug


def _shown(reference: SuiteReference) -> str:
    return "/".join(reference) if isinstance(reference, tuple) else str(reference)
