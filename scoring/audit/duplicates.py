"""Cases that repeat one another (docs/audit.md#across-the-suite): the same prompt,
expected calls, expectations, extra-call rule and environment. Keys, titles, tags and match
options may differ. Values are compared by JSON meaning (``1`` and ``1.0`` are the same,
keys in any order), and a field left out is the same as one written with its default
(``ordered: false``, ``tool: null``).

Read from the cases as the suite file writes them, so that a suite's cases are compared
without loading them all (an edited case against the rest of its suite, a version whose
other cases did not change)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from scoring.matcher import is_finite_number

from .problems import DUPLICATE, Problem

CALL_FLAGS = ("ordered", "depends_on_result", "exact_args")


def duplicate_problems(
    cases: Sequence[Mapping], environment: Any = None, earlier: Iterable[Mapping] = ()
) -> list[Problem]:
    """A ``duplicate`` on each case that repeats one before it, naming the first. ``cases``
    as a suite file holds them; ``environment`` the suite's, for a case without its own;
    ``earlier`` cases (the rest of the suite, for one case being edited) come before all."""
    first: dict[str, str] = {}
    for case in earlier:
        first.setdefault(fingerprint(case, environment), case["key"])
    problems = []
    for case in cases:
        key, mark = case["key"], fingerprint(case, environment)
        if mark in first and first[mark] != key:
            message = (
                f"the same prompt, expected calls, expectations, extra-call rule and "
                f"environment as case `{first[mark]}`: remove one, or make them differ"
            )
            problems.append(Problem(key, DUPLICATE, message))
        else:
            first.setdefault(mark, key)
    return problems


def fingerprint(case: Mapping, environment: Any = None) -> str:
    calls = [
        [call.get("name"), call.get("required_args") or {}]
        + [bool(call.get(flag)) for flag in CALL_FLAGS]
        for call in case.get("expected_calls") or ()
        if isinstance(call, Mapping)
    ]
    place = case.get("environment") or environment
    if isinstance(place, Mapping):
        place = [place.get("name"), place.get("initial_state")]
    return json.dumps(
        _numbers_alike(
            [
                case.get("prompt") or "",
                calls,
                [_without_defaults(item) for item in case.get("expectations") or ()],
                case.get("extra_calls") or "allow",
                place,
            ]
        ),
        sort_keys=True,
        ensure_ascii=False,
    )


def _without_defaults(item: Any) -> Any:
    if not isinstance(item, Mapping):
        return item
    return {key: value for key, value in item.items() if value is not None and value is not False}


def _numbers_alike(value: Any) -> Any:
    """``value`` with numbers equal by JSON meaning written alike (``1.0`` as ``1``, a
    decimal as its normal form), and objects as plain dicts, so that their JSON text is
    equal (keys sorted by ``json.dumps``)."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, Mapping):
        return {key: _numbers_alike(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_numbers_alike(item) for item in value]
    if is_finite_number(value):
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        return int(number) if number == number.to_integral_value() else str(number.normalize())
    return repr(value)
