"""Expectations (docs/matcher.md#expectations): the base class, the view of a run they read,
and the types about calls, final text and the run's error, each validating its own fields
(docs/formats.md#expectations-in-a-case). The catalog's are in ``tool_checks``.

Expectations look at the flat call log (batches in order, calls in order within a batch)
and the run's final text and error, through a ``RunView``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..arguments.arguments import AnyWhenNotRecorded, ArgumentsPattern
from ..arguments.tools import EMPTY_CATALOG, Catalog
from ..fields import FieldReader, Number
from ..jsonvalue import render, shorten, to_decimal
from ..numbers import MAX_BOUND_DIGITS, Tolerance, bound_digits, last_number
from ..options import MatchOptions
from ..regex import Pattern, PatternError, compile_pattern
from ..report import (
    COUNT,
    FINAL_NUMBER,
    FINAL_TEXT,
    FORBIDDEN_CALL,
    NO_CALL,
    ORDER,
    RUN_ERROR,
    Cause,
    PredicateResult,
)
from ..run import Call, Run
from ..text import WHITE_SPACE

# Tools a failure of ``no_calls_beyond_expected`` names before counting the rest.
DIFFERENCES_NAMED = 5


@dataclass(slots=True)  # made per evaluation: not frozen, for speed (see run.py)
class Outcome:
    """What a predicate found: whether it holds and, if not, why and where to look."""

    passed: bool
    detail: str | None = None
    nearest: tuple[int, int] | None = None
    error: str | None = None
    cause: Cause | None = None  # when not the expectation's usual one (``usual_cause``)


PASSED = Outcome(True)


class OutOfTime(Exception):
    """Scoring the run went past its deadline (``RunView.check_time``)."""


class RunView:
    """A run as one case sees it: its calls looked up by name under the case's rules.

    ``deadline`` (a ``time.monotonic()`` value) is when scoring must give up: the scorer
    checks it between predicates and between the expected calls it compares, so a run gets
    past it by at most one predicate's work on one call (each regex match is bounded by
    the pattern limits of regex.py)."""

    __slots__ = (
        "_folded",
        "calls",
        "catalog",
        "deadline",
        "environment",
        "options",
        "replayed",
        "replayer",
        "run",
    )

    def __init__(
        self,
        run: Run,
        options: MatchOptions,
        deadline: float = math.inf,
        catalog: Catalog = EMPTY_CATALOG,
        environment: Any = None,
        replayer: Any = None,
    ):
        self.run = run
        self.calls = run.calls
        self.options = options
        self.deadline = deadline
        self.catalog = catalog
        # The case's environment and who replays calls in it (end_state.py), and the run's
        # replay once made: every end-state expectation of the case reads the same one.
        self.environment = environment
        self.replayer = replayer
        self.replayed: Any = None
        self._folded: dict[str, list[int]] | None = None

    def check_time(self) -> None:
        """Raise ``OutOfTime`` once the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise OutOfTime

    def name_index(self) -> dict[str, list[int]]:
        """Tool name (as ``MatchOptions.tool_key`` gives it) → positions of its calls in the
        flat call log."""
        if not self.options.ignore_tool_case:
            return self.run.by_name
        if self._folded is None:
            folded: dict[str, list[int]] = {}
            for name, positions in self.run.by_name.items():
                folded.setdefault(name.casefold(), []).extend(positions)
            for positions in folded.values():
                positions.sort()
            self._folded = folded
        return self._folded

    def indices(self, key: str) -> list[int]:
        """Positions in the flat call log of the calls whose name matches ``key``."""
        return self.name_index().get(key, [])

    def named(self, key: str) -> list[Call]:
        """The calls whose name matches ``key``, in order."""
        calls = self.calls
        return [calls[n] for n in self.indices(key)]

    def tool_names(self) -> str:
        """The distinct tool names called, in order of first call."""
        names = list(self.run.by_name)
        return ", ".join(names[:8]) + (", …" if len(names) > 8 else "")

    def names_called(self) -> str:
        if not self.calls:
            return "the run made no tool calls"
        return f"the run called {self.tool_names()}"

    def case_variant(self, tool: str) -> Call | None:
        """A call whose name equals ``tool`` ignoring case only, when names must match exactly."""
        if self.options.ignore_tool_case:
            return None
        folded = tool.casefold()
        return next((c for c in self.calls if c.name.casefold() == folded), None)


def _never_called(view: RunView, tool: str) -> Outcome:
    variant = view.case_variant(tool)
    if variant is not None:
        return Outcome(
            False,
            f"{tool} was never called; {variant.name} was (batch {variant.batch}), "
            "but tool names must match exactly",
            variant.at,
            cause=Cause(NO_CALL, tool),
        )
    return Outcome(
        False, f"{tool} was never called; {view.names_called()}", cause=Cause(NO_CALL, tool)
    )


def _excerpt(text: str) -> str:
    return render(shorten(text, 120))


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _succeeded(calls: Sequence[Call]) -> list[Call]:
    """The calls whose result is not a tool error (``is_error``): the ones that took effect,
    as a count with ``succeeded_only`` reads them (docs/matcher.md#expectations)."""
    return [call for call in calls if not call.is_error]


# Said after a count's label and detail when it counts only calls that succeeded.
SUCCEEDED_ONLY = "calls that succeeded"


@dataclass(frozen=True, slots=True)
class Expectation:
    """An assertion about a run. Subclasses declare ``type`` and their fields."""

    type: ClassVar[str]
    cause_kind: ClassVar[str]  # why it fails, unless its outcome says otherwise
    # The recorded content it reads beyond tool names (docs/matcher.md#content-not-captured).
    reads: ClassVar[str | None] = None
    # Whether it checks calls against the suite's tool catalog (so needs one).
    reads_catalog: ClassVar[bool] = False
    # Whether it replays the calls in the case's environment (so needs one).
    needs_environment: ClassVar[bool] = False
    # Whether evaluating it can fail for reasons of its own, not the run's (``Outcome.error``).
    may_not_evaluate: ClassVar[bool] = False
    index: int
    label: str
    # This expectation's result when it holds: the same for every run, so made once.
    passed: PredicateResult = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "passed", PredicateResult("expectation", self.label, True, self.index)
        )

    @property
    def unavailable(self) -> str | None:
        """Why this expectation cannot be evaluated (a pattern RE2 refused), or None."""
        return None

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        """The expectation, or None when its fields have problems (recorded on ``fields``).

        This default suits the types without fields; the others read theirs."""
        return cls(index, "")

    def describe(self) -> str:
        """The label before it is made unique within its case."""
        raise NotImplementedError

    def evaluate(self, view: RunView) -> Outcome:
        raise NotImplementedError

    def cause(self, outcome: Outcome) -> Cause:
        """The cause of a failed ``outcome`` of this expectation (docs/formats.md#cause)."""
        return outcome.cause or Cause(self.cause_kind, getattr(self, "tool", None))

    def for_case(self, expected_calls: Sequence[Any]) -> Expectation:
        """This expectation as the case of ``expected_calls`` evaluates it (most read
        nothing of them; a suite-level one is compiled once and given to every case)."""
        return self

    def without(self, content: str) -> Expectation | None:
        """What is left of this expectation for a run whose ``content`` was not recorded:
        itself when it does not read it, else nothing. Without the calls, nothing about
        them is left."""
        return None if _reads(self, content) else self


def _reads(expectation: Expectation, content: str) -> bool:
    if content == "calls":
        return expectation.reads in ("calls", "arguments")
    return expectation.reads == content


@dataclass(frozen=True, slots=True)
class _AboutOneTool(Expectation):
    """An expectation whose only field is ``tool``."""

    tool: str
    key: str  # the name as compared under the case's tool_names rule

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        tool = fields.string("tool", required=True, nonempty=True)  # never "": None instead
        return None if tool is None else cls(index, "", tool, options.tool_key(tool))


@dataclass(frozen=True, slots=True)
class CalledTool(_AboutOneTool):
    type: ClassVar[str] = "called_tool"
    cause_kind: ClassVar[str] = NO_CALL
    reads: ClassVar[str] = "calls"

    def describe(self) -> str:
        return f"called {self.tool}"

    def evaluate(self, view: RunView) -> Outcome:
        return PASSED if view.indices(self.key) else _never_called(view, self.tool)


@dataclass(frozen=True, slots=True)
class DidNotCallTool(_AboutOneTool):
    type: ClassVar[str] = "did_not_call_tool"
    cause_kind: ClassVar[str] = FORBIDDEN_CALL
    reads: ClassVar[str] = "calls"

    def describe(self) -> str:
        return f"did not call {self.tool}"

    def evaluate(self, view: RunView) -> Outcome:
        calls = view.named(self.key)
        if not calls:
            return PASSED
        first = calls[0]
        return Outcome(
            False,
            f"{self.tool} was called {_times(len(calls))}, first in batch {first.batch}: "
            f"{first.describe()}",
            first.at,
        )


@dataclass(frozen=True, slots=True)
class CalledToolWith(Expectation):
    type: ClassVar[str] = "called_tool_with"
    cause_kind: ClassVar[str] = NO_CALL
    reads: ClassVar[str] = "arguments"
    tool: str
    key: str
    args: Mapping[str, Any]
    pattern: ArgumentsPattern | AnyWhenNotRecorded

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        tool = fields.string("tool", required=True, nonempty=True)
        args = fields.object("args", required=True)
        if tool is None or args is None:
            return None
        pattern = ArgumentsPattern(
            args,
            options,
            contains=True,
            path=fields.at("args"),
            problems=fields.problems,
            strict=strict,
        )
        return cls(index, "", tool, options.tool_key(tool), args, pattern)

    @property
    def unavailable(self) -> str | None:
        return self.pattern.error

    def without(self, content: str) -> Expectation | None:
        """Without some recorded arguments, a call that lacks them matches."""
        if content == "arguments":
            return replace(self, pattern=AnyWhenNotRecorded(self.pattern))
        return None if _reads(self, content) else self

    def describe(self) -> str:
        if not self.args:
            return f"called {self.tool} with any arguments"
        return f"called {self.tool} with {self.pattern.describe()}"

    def evaluate(self, view: RunView) -> Outcome:
        if self.pattern.error:
            return Outcome(False, error=f"cannot evaluate: {self.pattern.error}")
        positions = view.indices(self.key)
        if not positions:
            return _never_called(view, self.tool)
        calls, matches = view.calls, self.pattern.matches
        for n in positions:
            if matches(calls[n].arguments):
                return PASSED
        # The nearest call is the one with the fewest differing arguments (earliest on ties).
        nearest = min(view.named(self.key), key=lambda c: self.pattern.mismatches(c.arguments))
        differences = self.pattern.differences(nearest.arguments)
        return Outcome(
            False,
            f"no call of {self.tool} has these arguments; nearest, in batch {nearest.batch}: "
            + "; ".join(differences),
            nearest.at,
            cause=self.pattern.cause(self.tool, nearest.arguments, differences),
        )


@dataclass(frozen=True, slots=True)
class ToolCallCount(Expectation):
    type: ClassVar[str] = "tool_call_count"
    cause_kind: ClassVar[str] = COUNT
    reads: ClassVar[str] = "calls"
    tool: str | None
    key: str | None
    min: int | None
    max: int | None
    # Count only the calls whose result is not a tool error: a refused write changed nothing.
    succeeded_only: bool = False

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        tool = fields.string("tool", nonempty=True)
        low = fields.integer("min", minimum=0)
        high = fields.integer("max", minimum=0)
        succeeded_only = fields.boolean("succeeded_only") if cls is ToolCallCount else False
        if low is not None and high is not None and low > high:
            fields.problems.add(fields.at("min"), f"min ({low}) is greater than max ({high})")
            return None
        return cls(index, "", tool, tool and options.tool_key(tool), low, high, succeeded_only)

    def _bounds(self) -> str:
        low, high = self.min, self.max
        if low is not None and high is not None:
            return f"exactly {_times(low)}" if low == high else f"{low} to {high} times"
        if low is not None:
            return f"at least {_times(low)}"
        if high is not None:
            return f"at most {_times(high)}"
        return "any number of times"

    def describe(self) -> str:
        subject = f"called {self.tool}" if self.tool is not None else "made tool calls"
        counted = f", counting {SUCCEEDED_ONLY}" if self.succeeded_only else ""
        return f"{subject} {self._bounds()}{counted}"

    def evaluate(self, view: RunView) -> Outcome:
        calls = view.named(self.key) if self.key is not None else view.calls
        if self.succeeded_only:
            calls = _succeeded(calls)
        count = len(calls)
        if (self.min is None or count >= self.min) and (self.max is None or count <= self.max):
            return PASSED
        subject = self.tool if self.tool is not None else "tools"
        succeeded = " successfully" if self.succeeded_only else ""
        return Outcome(
            False,
            f"{subject} {'was' if self.tool else 'were'} called{succeeded} {_times(count)}; "
            f"expected {self._bounds()}",
        )


@dataclass(frozen=True, slots=True)
class NoCallsBeyondExpected(Expectation):
    """Each of ``tools`` is called no more often than the case's expected calls name it:
    never, when none does. τ-bench's "no writes beyond the ground truth's" as one rule a
    suite carries for every case (docs/matcher.md#expectations)."""

    type: ClassVar[str] = "no_calls_beyond_expected"
    cause_kind: ClassVar[str] = COUNT
    reads: ClassVar[str] = "calls"
    tools: tuple[str, ...]
    keys: tuple[str, ...]
    # How many calls of each key the case's expected calls make (``for_case``).
    allowed: tuple[int, ...] = ()
    # Count only the calls whose result is not a tool error: a refused write changed nothing.
    succeeded_only: bool = False

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        succeeded_only = fields.boolean("succeeded_only")
        if not fields.data.get("tools"):
            fields.problems.add(fields.at("tools"), "required: a non-empty list of tool names")
            return None
        # One entry a name as compared: two that the case's rules make one count together.
        named = {options.tool_key(tool): tool for tool in fields.strings("tools", nonempty=True)}
        tools, keys = tuple(named.values()), tuple(named)
        return cls(index, "", tools, keys, (0,) * len(keys), succeeded_only)

    def for_case(self, expected_calls: Sequence[Any]) -> Expectation:
        expected = Counter(call.key for call in expected_calls)
        return replace(self, allowed=tuple(expected[key] for key in self.keys))

    def describe(self) -> str:
        named = ", ".join(self.tools[:3]) + (", …" if len(self.tools) > 3 else "")
        of = f"of {len(self.tools)} tools ({named})" if len(self.tools) > 3 else f"of {named}"
        counted = f", counting {SUCCEEDED_ONLY}" if self.succeeded_only else ""
        return f"no calls {of} beyond the expected ones{counted}"

    def evaluate(self, view: RunView) -> Outcome:
        over = []
        for tool, key, allowed in zip(self.tools, self.keys, self.allowed, strict=True):
            calls = view.named(key)
            if self.succeeded_only:
                calls = _succeeded(calls)
            if len(calls) > allowed:
                over.append((tool, allowed, calls))
        if not over:
            return PASSED
        tool, allowed, calls = over[0]
        first = calls[allowed]  # the first call beyond those expected
        said = [
            f"{name} was called{' successfully' if self.succeeded_only else ''} "
            f"{_times(len(made))}, "
            + (f"expected {_times(wanted)}" if wanted else "never expected")
            for name, wanted, made in over[:DIFFERENCES_NAMED]
        ]
        if len(over) > DIFFERENCES_NAMED:
            said.append(f"and {len(over) - DIFFERENCES_NAMED} more tools")
        return Outcome(
            False,
            f"{'; '.join(said)}; the first beyond, in batch {first.batch}: {first.describe()}",
            first.at,
            cause=Cause(COUNT if allowed else FORBIDDEN_CALL, tool),
        )


@dataclass(frozen=True, slots=True)
class CalledToolsInOrder(Expectation):
    type: ClassVar[str] = "called_tools_in_order"
    cause_kind: ClassVar[str] = ORDER
    reads: ClassVar[str] = "calls"
    tools: tuple[str, ...]
    keys: tuple[str, ...]

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        if "tools" not in fields.data or fields.data["tools"] is None:
            fields.problems.add(fields.at("tools"), "required")
            return None
        tools = tuple(fields.strings("tools", nonempty=True))
        return cls(index, "", tools, tuple(map(options.tool_key, tools)))

    def describe(self) -> str:
        return (
            f"called {', '.join(self.tools)} in order" if self.tools else "called no tools in order"
        )

    def evaluate(self, view: RunView) -> Outcome:
        # A subsequence test: taking each wanted name at its first chance is optimal.
        keys = self.keys
        if not keys:
            return PASSED
        fold = view.options.ignore_tool_case
        found = 0
        last: Call | None = None
        for call in view.calls:
            if (call.name.casefold() if fold else call.name) == keys[found]:
                found += 1
                last = call
                if found == len(keys):
                    return PASSED
        missing = self.tools[found]
        calls_of_missing = view.named(self.keys[found])
        if last is None:  # the first tool was never called
            return _never_called(view, missing)
        prefix = ", ".join(self.tools[:found])
        if not calls_of_missing:
            return Outcome(
                False,
                f"found {prefix} in order, but {missing} was never called",
                last.at,
                cause=Cause(NO_CALL, missing),
            )
        first = calls_of_missing[0]
        return Outcome(
            False,
            f"found {prefix} in order (up to batch {last.batch}), but no call of {missing} "
            f"after that; it was called in batch {first.batch}",
            first.at,
            cause=Cause(ORDER, missing),
        )


@dataclass(frozen=True, slots=True)
class NoToolCalls(Expectation):
    type: ClassVar[str] = "no_tool_calls"
    cause_kind: ClassVar[str] = FORBIDDEN_CALL
    reads: ClassVar[str] = "calls"

    def describe(self) -> str:
        return "made no tool calls"

    def evaluate(self, view: RunView) -> Outcome:
        if not view.calls:
            return PASSED
        return Outcome(
            False,
            f"the run made {_count(len(view.calls), 'tool call')}: {view.tool_names()}",
            view.calls[0].at,
            cause=Cause(FORBIDDEN_CALL, view.calls[0].name),
        )


NO_FINAL_TEXT = Outcome(False, "the run has no final text")


@dataclass(frozen=True, slots=True)
class FinalTextContains(Expectation):
    type: ClassVar[str] = "final_text_contains"
    cause_kind: ClassVar[str] = FINAL_TEXT
    reads: ClassVar[str] = "final_text"
    text: str
    case_insensitive: bool

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        text = fields.string("text", required=True)
        ignore_case = fields.boolean("case_insensitive")
        return None if text is None else cls(index, "", text, ignore_case)

    def describe(self) -> str:
        suffix = " (ignoring case)" if self.case_insensitive else ""
        return f"final text contains {render(shorten(self.text, 60))}{suffix}"

    def evaluate(self, view: RunView) -> Outcome:
        final = view.run.final_text
        if final is None:
            return NO_FINAL_TEXT
        if self.case_insensitive:
            found = self.text.casefold() in final.casefold()
        else:
            found = self.text in final
        if found:
            return PASSED
        return Outcome(False, f"the final text does not contain it: {_excerpt(final)}")


@dataclass(frozen=True, slots=True)
class FinalTextEquals(Expectation):
    type: ClassVar[str] = "final_text_equals"
    cause_kind: ClassVar[str] = FINAL_TEXT
    reads: ClassVar[str] = "final_text"
    text: str

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        text = fields.string("text", required=True)
        return None if text is None else cls(index, "", text)

    def describe(self) -> str:
        return f"final text equals {render(shorten(self.text, 60))}"

    def evaluate(self, view: RunView) -> Outcome:
        final = view.run.final_text
        if final is None:
            return NO_FINAL_TEXT
        if final.strip(WHITE_SPACE) == self.text.strip(WHITE_SPACE):
            return PASSED
        return Outcome(False, f"the final text is {_excerpt(final)}")


@dataclass(frozen=True, slots=True)
class FinalTextMatches(Expectation):
    type: ClassVar[str] = "final_text_matches"
    cause_kind: ClassVar[str] = FINAL_TEXT
    reads: ClassVar[str] = "final_text"
    regex: str
    compiled: Pattern | None  # None when RE2 could not compile it (a lenient load)
    compile_error: str | None

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        regex = fields.string("regex", required=True)
        if regex is None:
            return None
        try:
            return cls(index, "", regex, compile_pattern(regex), None)
        except PatternError as exc:
            if strict:
                fields.problems.add(fields.at("regex"), str(exc))
                return None
            return cls(index, "", regex, None, str(exc))

    def describe(self) -> str:
        return f"final text matches /{shorten(self.regex, 60)}/"

    @property
    def unavailable(self) -> str | None:
        return self.compile_error

    def evaluate(self, view: RunView) -> Outcome:
        if self.compiled is None:
            return Outcome(False, error=f"cannot evaluate: {self.compile_error}")
        final = view.run.final_text
        if final is None:
            return NO_FINAL_TEXT
        if self.compiled.search(final):
            return PASSED
        return Outcome(False, f"the final text does not match: {_excerpt(final)}")


@dataclass(frozen=True, slots=True)
class FinalNumberEquals(Expectation):
    type: ClassVar[str] = "final_number_equals"
    cause_kind: ClassVar[str] = FINAL_NUMBER
    reads: ClassVar[str] = "final_text"
    value: Any
    tolerance: Any
    bounds: Tolerance

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> Expectation | None:
        value = fields.number("value", required=True)
        tolerance = fields.number("tolerance", default=0)
        if value is None or tolerance is None:
            return None
        if tolerance < 0:
            fields.problems.add(fields.at("tolerance"), "must not be negative")
            return None
        bounds = _tolerance(value, tolerance, fields)
        return None if bounds is None else cls(index, "", value, tolerance, bounds)

    def describe(self) -> str:
        return f"final number equals {self.bounds.describe()}"

    def evaluate(self, view: RunView) -> Outcome:
        final = view.run.final_text
        if final is None:
            return NO_FINAL_TEXT
        number = last_number(final)
        if number is None:
            return Outcome(False, f"there is no number in the final text: {_excerpt(final)}")
        if number in self.bounds:
            return PASSED
        return Outcome(
            False,
            f"the last number in the final text is {number}, expected {self.bounds.describe()}",
        )


def _tolerance(value: Number, tolerance: Number, fields: FieldReader) -> Tolerance | None:
    if bound_digits(to_decimal(value), to_decimal(tolerance)) > MAX_BOUND_DIGITS:
        fields.problems.add(
            fields.at("tolerance"), "value and tolerance are too far apart in magnitude"
        )
        return None
    return Tolerance(value, tolerance)


@dataclass(frozen=True, slots=True)
class NoError(Expectation):
    type: ClassVar[str] = "no_error"
    cause_kind: ClassVar[str] = RUN_ERROR

    def describe(self) -> str:
        return "no run error"

    def evaluate(self, view: RunView) -> Outcome:
        error = view.run.error
        if error is None:
            return PASSED
        return Outcome(False, f"the run ended with an error: {_excerpt(error)}")
