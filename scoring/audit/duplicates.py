"""Cases that repeat one another (docs/audit.md#across-the-suite): the same prompt,
expected calls, expectations, extra-call rule and environment. Keys, titles, tags and match
options may differ. Values are compared by JSON meaning (``1`` and ``1.0`` are the same,
keys in any order), and a field left out is the same as one written with its default
(``ordered: false``, ``tool: null``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from scoring.matcher import Case, is_finite_number

from .problems import DUPLICATE, Problem


def duplicate_problems(cases: Sequence[Case], earlier: Iterable[Case] = ()) -> list[Problem]:
    """A ``duplicate`` on each case that repeats one before it, naming the first: ``earlier``
    cases (the rest of the suite, for one case being edited) come before all of ``cases``."""
    first: dict[str, str] = {}
    for case in earlier:
        first.setdefault(fingerprint(case), case.key)
    problems = []
    for case in cases:
        mark = fingerprint(case)
        if mark in first and first[mark] != case.key:
            message = (
                f"the same prompt, expected calls, expectations, extra-call rule and "
                f"environment as case `{first[mark]}`: remove one, or make them differ"
            )
            problems.append(Problem(case.key, DUPLICATE, message))
        else:
            first.setdefault(mark, case.key)
    return problems


def fingerprint(case: Case) -> str:
    calls = [
        [call.name, _canonical(call.required_args), call.ordered, call.depends_on_result,
         call.exact_args]
        for call in case.expected_calls
    ]  # fmt: skip
    expectations = case.data.get("expectations") if isinstance(case.data, Mapping) else None
    environment = case.environment
    return repr(
        (
            case.prompt,
            calls,
            [_canonical(_without_defaults(item)) for item in expectations or ()],
            case.extra_calls,
            None
            if environment is None
            else (environment.name, _canonical(environment.initial_state)),
        )
    )


def _without_defaults(item: Any) -> Any:
    if not isinstance(item, Mapping):
        return item
    return {key: value for key, value in item.items() if value is not None and value is not False}


def _canonical(value: Any) -> Any:
    """``value`` in a form equal for values equal by JSON meaning."""
    if isinstance(value, Mapping):
        return ("{", sorted((key, _canonical(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return ("[", [_canonical(item) for item in value])
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if is_finite_number(value):
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        return ("#", str(number.normalize()))
    return repr(value)
