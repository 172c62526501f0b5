"""The expected-call predicates of a case: credit recorded calls, explain what was not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from ..assignment import credit
from ..expectations.expectations import RunView
from ..report import (
    ARGUMENT_VALUE,
    COUNT,
    DEPENDENCY,
    EXTRA_CALL,
    MISSING_CALL,
    NO_CALL,
    ORDER,
    Cause,
    PredicateResult,
)
from ..run import Call
from ..suites.suite import EXTRA_CALLS_LABEL, Case, ExpectedCall


def assess_expected_calls(case: Case, view: RunView) -> list[PredicateResult]:
    """One predicate per expected call, plus the extra-calls one when the case forbids them."""
    expected = case.expected_calls
    calls = view.calls
    if not expected and not case.forbids_extra_calls:
        return []
    by_name = view.name_index()
    batch_of = view.run.batch_of
    assignment = _first_fit(expected, by_name, calls, batch_of, view)
    candidates: list[list[int]] | None = None
    if assignment is None:  # first fit fell short: search with every matching call
        candidates = []
        for e in expected:
            view.check_time()
            matches = e.arguments.matches
            candidates.append([n for n in by_name.get(e.key, ()) if matches(calls[n].arguments)])
        assignment = credit(case.slots, candidates, batch_of)

    results = []
    explainer = None
    for e in expected:
        view.check_time()
        r = assignment.get(e.index)
        if r is not None:
            results.append(e.credited_to(calls[r]))
            continue
        if e.arguments.error:
            reason = f"cannot evaluate: {e.arguments.error}"
            cause = Cause(ARGUMENT_VALUE, e.name)
            results.append(
                PredicateResult(
                    "expected_call",
                    e.label,
                    False,
                    e.index,
                    detail=reason,
                    error=reason,
                    cause=cause,
                )
            )
            continue
        # An uncredited call means first fit fell short, so the candidates were gathered.
        gathered = cast(list[list[int]], candidates)
        explainer = explainer or _Explainer(case, view, gathered, assignment)
        nearest, detail, cause = explainer.explain(e)
        results.append(
            PredicateResult(
                "expected_call",
                e.label,
                False,
                index=e.index,
                nearest=nearest.at if nearest else None,
                detail=detail,
                cause=cause,
            )
        )
    if case.forbids_extra_calls:
        results.append(_extra_calls(calls, set(assignment.values())))
    return results


def _first_fit(
    expected: Sequence[ExpectedCall],
    by_name: Mapping[str, list[int]],
    calls: Sequence[Call],
    batch_of: Sequence[int],
    view: RunView,
) -> dict[int, int] | None:
    """Each expected call given the first free call that fits, or None if one gets none.

    Most runs pass, and for them first fit succeeds; checking order and freedom before
    arguments then spares most argument comparisons. A complete assignment is correct
    however it was found; when first fit falls short, ``credit`` searches properly.
    """
    assignment: dict[int, int] = {}
    used: set[int] = set()
    last_ordered_batch = 0
    for e in expected:
        view.check_time()
        low = last_ordered_batch if e.ordered else 0
        if e.depends_on_result:
            low = max(low, batch_of[assignment[e.index - 1]] + 1)
        matches = e.arguments.matches
        for r in by_name.get(e.key, ()):
            if r not in used and batch_of[r] >= low and matches(calls[r].arguments):
                break
        else:
            return None
        assignment[e.index] = r
        used.add(r)
        if e.ordered:
            last_ordered_batch = batch_of[r]
    return assignment


def _extra_calls(calls: tuple[Call, ...], credited: set[int]) -> PredicateResult:
    extra = [call for n, call in enumerate(calls) if n not in credited]
    if not extra:
        return PredicateResult("extra_calls", EXTRA_CALLS_LABEL, True)
    listed = "; ".join(f"{call.describe()} in batch {call.batch}" for call in extra[:5])
    more = f" (and {len(extra) - 5} more)" if len(extra) > 5 else ""
    noun = "call matches" if len(extra) == 1 else "calls match"
    return PredicateResult(
        "extra_calls",
        EXTRA_CALLS_LABEL,
        False,
        nearest=extra[0].at,
        detail=f"{len(extra)} recorded {noun} no expected call: {listed}{more}",
        cause=Cause(EXTRA_CALL, extra[0].name),
    )


class _Explainer:
    """Says why an expected call was not credited, and which recorded call to look at."""

    def __init__(
        self,
        case: Case,
        view: RunView,
        candidates: Sequence[Sequence[int]],
        assignment: dict[int, int],
    ):
        self.expected = case.expected_calls
        self.view = view
        self.calls = view.calls
        self.candidates = candidates
        self.assignment = assignment
        self.owner = {r: slot for slot, r in assignment.items()}

    def explain(self, e: ExpectedCall) -> tuple[Call | None, str, Cause]:
        """The recorded call to look at, why ``e`` was not credited, and the cause."""
        same_name = self.view.indices(e.key)
        if not same_name:
            return (*self._no_call_named(e), Cause(NO_CALL, e.name))
        if not self.candidates[e.index]:
            return self._arguments_differ(e, same_name)
        nearest, kind, detail = self._not_creditable(e)
        return nearest, detail, Cause(kind, e.name)

    def _no_call_named(self, e: ExpectedCall) -> tuple[Call | None, str]:
        variant = self.view.case_variant(e.name)
        if variant is not None:
            return variant, (
                f"no call of {e.name}; {variant.name} was called in batch {variant.batch}, "
                "but tool names must match exactly"
            )
        return None, f"no call of {e.name}; {self.view.names_called()}"

    def _arguments_differ(
        self, e: ExpectedCall, same_name: list[int]
    ) -> tuple[Call | None, str, Cause]:
        # A call credited to another expected call is not a wrong attempt at this one: the
        # nearest is drawn from the free calls only (docs/matcher.md, "Missing calls are
        # missing"), and with none free this expected call is missing.
        free = [n for n in same_name if n not in self.owner]
        taken = len(same_name) - len(free)
        if not free:
            return None, self._none_left(e, same_name), Cause(MISSING_CALL, e.name)
        n = min(free, key=lambda n: (e.arguments.mismatches(self.calls[n].arguments), n))
        nearest = self.calls[n]
        differences = e.arguments.differences(nearest.arguments)
        if len(same_name) == 1:
            where = f"{e.name} was called in batch {nearest.batch}"
        elif not taken:
            where = (
                f"{len(same_name)} calls of {e.name}, none with these arguments; "
                f"the nearest, in batch {nearest.batch}"
            )
        else:
            credited = (
                "1 is credited to another expected call"
                if taken == 1
                else f"{taken} are credited to other expected calls"
            )
            others = "the other one" if len(free) == 1 else f"the nearest of the other {len(free)}"
            where = (
                f"{len(same_name)} calls of {e.name}, none with these arguments; {credited} "
                f"({self._holders(same_name)}); {others}, in batch {nearest.batch}"
            )
        cause = e.arguments.cause(e.name, nearest.arguments, differences)
        return nearest, f"{where}: {'; '.join(differences)}", cause

    def _none_left(self, e: ExpectedCall, same_name: list[int]) -> str:
        calls = "1 call" if len(same_name) == 1 else f"{len(same_name)} calls"
        each = "" if len(same_name) == 1 else " each"
        return (
            f"{calls} of {e.name},{each} credited to another expected call "
            f"({self._holders(same_name)}); none left for this one"
        )

    def _holders(self, indices: list[int]) -> str:
        """The expected calls credited with the recorded calls ``indices``, in case order."""
        return ", ".join(
            f"#{slot}" for slot in sorted(self.owner[n] for n in indices if n in self.owner)
        )

    def _not_creditable(self, e: ExpectedCall) -> tuple[Call, str, str]:
        """The call to look at, the cause kind and the reason, for an expected call some
        recorded calls match but none could be credited to."""
        i = e.index
        first = self.calls[self.candidates[i][0]]
        if e.depends_on_result and i - 1 not in self.assignment:
            before = self.expected[i - 1]
            return (
                first,
                DEPENDENCY,
                (
                    f"{e.name} was called in batch {first.batch}, but it depends on the result of "
                    f"#{i - 1} ({before.name}), which was not credited"
                ),
            )
        taken = []
        for r in self.candidates[i]:
            if r in self.owner:
                taken.append(r)
                continue
            conflict = self._conflict(e, self.calls[r])
            if conflict is not None:
                return self.calls[r], *conflict
        if taken and len(taken) == len(self.candidates[i]):
            holders = self._holders(taken)
            call = self.calls[taken[0]]
            noun = "its matching call" if len(taken) == 1 else f"all {len(taken)} matching calls"
            return (
                call,
                COUNT,
                (
                    f"{e.name} was called in batch {call.batch}, but {noun} "
                    f"{'is' if len(taken) == 1 else 'are'} credited to {holders}; "
                    "each expected call needs a call of its own"
                ),
            )
        call = self.calls[next(r for r in self.candidates[i] if r not in self.owner)]
        kind = DEPENDENCY if e.depends_on_result else ORDER
        return (
            call,
            kind,
            (
                f"{e.name} was called in batch {call.batch}, but no assignment credits it together "
                "with the expected calls before it"
            ),
        )

    def _batch_of(self, slot: int) -> int:
        return self.calls[self.assignment[slot]].batch

    def _conflict(self, e: ExpectedCall, call: Call) -> tuple[str, str] | None:
        """The constraint that a free matching call breaks against the credited calls: its
        cause kind and the reason."""
        i, batch = e.index, call.batch
        if e.depends_on_result:
            before, before_batch = self.expected[i - 1], self._batch_of(i - 1)
            if batch == before_batch:
                return DEPENDENCY, (
                    f"{e.name} was called in batch {batch}, the same batch as {before.name} "
                    f"(#{i - 1}); it depends on #{i - 1}'s result, so it must come in a later batch"
                )
            if batch < before_batch:
                return DEPENDENCY, (
                    f"{e.name} was called in batch {batch}, before {before.name} (#{i - 1}) in "
                    f"batch {before_batch}; it depends on #{i - 1}'s result, so it must come "
                    "in a later batch"
                )
        after = i + 1
        if after in self.assignment and self.expected[after].depends_on_result:
            after_batch = self._batch_of(after)
            if after_batch <= batch:
                return DEPENDENCY, (
                    f"{e.name} was called in batch {batch}, but {self.expected[after].name} "
                    f"(#{after}), which depends on its result, was called in batch {after_batch}"
                )
        if e.ordered:
            for j, r in sorted(self.assignment.items()):
                other = self.expected[j]
                if not other.ordered:
                    continue
                other_batch = self.calls[r].batch
                if j < i and other_batch > batch:
                    return ORDER, (
                        f"{e.name} was called in batch {batch}, before {other.name} (#{j}) in "
                        f"batch {other_batch}; both are ordered, so #{j} must not come later"
                    )
                if j > i and other_batch < batch:
                    return ORDER, (
                        f"{e.name} was called in batch {batch}, after {other.name} (#{j}) in "
                        f"batch {other_batch}; both are ordered, so #{i} must not come later"
                    )
        return None
