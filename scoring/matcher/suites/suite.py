"""Suites and cases (docs/formats.md#suite-files): validation with every problem by JSON path, and
the compiled form the scorer uses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any, cast

from ..arguments.arguments import AnyWhenNotRecorded, ArgumentsPattern
from ..arguments.tools import EMPTY_CATALOG, Catalog, Tool, load_tools
from ..assignment import Slot
from ..errors import InvalidInput, Problems, field_path
from ..expectations.end_state import CaseEnvironment
from ..expectations.expectation_types import EXPECTATION_TYPES
from ..expectations.expectations import Expectation
from ..expectations.tool_checks import ArgumentsMatchSchema, OnlyCatalogTools
from ..fields import FieldReader
from ..jsonvalue import json_type, lone_surrogate_path, render
from ..options import DEFAULT, MatchOptions, read_match_options
from ..report import BUDGET, PredicateResult
from ..run import Call

SCHEMA = "casebook.suite/1"
EXTRA_CALLS = ("allow", "forbid")

RUN_LABEL = "run completed without error"
EXTRA_CALLS_LABEL = "no calls beyond the expected ones"


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A tool call the agent should make, compiled for its case's match options."""

    index: int
    name: str
    required_args: Mapping[str, Any]
    ordered: bool
    depends_on_result: bool
    exact_args: bool
    key: str  # the name as compared under the case's tool_names rule
    arguments: ArgumentsPattern | AnyWhenNotRecorded = field(repr=False, compare=False)
    label: str = ""
    # Passing results by credited position, made once: most runs credit the same places.
    _credited: dict[tuple[int, int], PredicateResult] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def credited_to(self, call: Call) -> PredicateResult:
        """This expected call's passing result, credited to ``call``."""
        at = (call.batch, call.position)
        result = self._credited.get(at)
        if result is None:
            result = PredicateResult("expected_call", self.label, True, self.index, at)
            if len(self._credited) < 256:
                self._credited[at] = result
        return result

    @property
    def flags(self) -> tuple[str, ...]:
        """What is required beyond the name and arguments, in words: ``ordered``, ..."""
        flags = []
        if self.ordered:
            flags.append("ordered")
        if self.depends_on_result:
            flags.append(f"after result of #{self.index - 1}")
        if self.exact_args:
            flags.append("no other arguments")
        return tuple(flags)

    def describe(self) -> str:
        """The label before it is made unique: ``f(path="x") [ordered, after result of #0]``."""
        flags = self.flags
        text = f"{self.name}({self.arguments.describe()})"
        return f"{text} [{', '.join(flags)}]" if flags else text


@dataclass(frozen=True, slots=True)
class Case:
    key: str
    expected_calls: tuple[ExpectedCall, ...]
    expectations: tuple[Expectation, ...]
    match: MatchOptions = DEFAULT
    extra_calls: str = "allow"
    title: str = ""
    prompt: str = ""
    tags: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # The suite's tool catalog, which the catalog expectations check calls against.
    catalog: Catalog = field(default=EMPTY_CATALOG, repr=False, compare=False)
    # Where the end-state expectations replay calls (docs/formats.md#environment).
    environment: CaseEnvironment | None = None
    slots: tuple[Slot, ...] = field(init=False, repr=False, compare=False)
    # Whether some predicate may be left unevaluated: one holds a pattern RE2 refused
    # (possible after a lenient load), or checks calls against schemas that may not apply.
    unevaluable: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # What the assignment search needs of each expected call, computed once per case.
        slots = tuple(Slot(e.ordered, e.depends_on_result) for e in self.expected_calls)
        object.__setattr__(self, "slots", slots)
        unevaluable = any(e.arguments.error for e in self.expected_calls) or any(
            e.unavailable or e.may_not_evaluate for e in self.expectations
        )
        object.__setattr__(self, "unevaluable", unevaluable)

    @property
    def forbids_extra_calls(self) -> bool:
        return self.extra_calls == "forbid"

    @property
    def replays(self) -> bool:
        """Whether scoring a run of it replays calls in its environment (a sandbox process's
        work, docs/operations.md#environments)."""
        return any(e.needs_environment for e in self.expectations)

    def without(self, contents: Iterable[str]) -> Case:
        """This case as far as a run whose ``contents`` were not recorded can be judged on
        (docs/matcher.md#content-not-captured): without ``arguments``, a call whose
        arguments were not recorded matches every expected call and ``called_tool_with`` of
        its tool (the scorer gives it ``NOT_RECORDED``); without ``batches``, expected calls
        are neither ``ordered`` nor ``depends_on_result``; without ``final_text``,
        expectations on it are left out; without ``calls``, everything about calls is.
        Predicates keep their kind and index."""
        expected_calls, expectations = self.expected_calls, self.expectations
        extra_calls = self.extra_calls
        for content in contents:
            if content == "calls":
                expected_calls, extra_calls = (), "allow"
            elif content == "arguments":
                expected_calls = tuple(
                    replace(e, arguments=AnyWhenNotRecorded(e.arguments)) for e in expected_calls
                )
            elif content == "batches":
                expected_calls = tuple(
                    replace(e, ordered=False, depends_on_result=False) for e in expected_calls
                )
            expectations = tuple(
                kept for e in expectations if (kept := e.without(content)) is not None
            )
        return replace(
            self, expected_calls=expected_calls, expectations=expectations, extra_calls=extra_calls
        )


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    cases: tuple[Case, ...]
    description: str = ""
    match: MatchOptions = DEFAULT
    # The tool catalog (docs/formats.md#tool-catalog): authoring reads it, and the catalog
    # expectations score calls against it.
    tools: tuple[Tool, ...] = ()
    # Whether every case checks its calls against the catalog (docs/matcher.md#tool-checks).
    catalog_checks: bool = False
    # The expectations every case carries after its own (docs/formats.md#top-level), as
    # the suite's match options compile them.
    expectations: tuple[Expectation, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    by_key: dict[str, Case] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_key", {case.key: case for case in self.cases})

    def case(self, key: str) -> Case | None:
        return self.by_key.get(key)


def load_suite(data: Any, *, strict: bool = True) -> Suite:
    """Validate a suite document (a parsed JSON or YAML object) and compile it.

    Raises ``InvalidInput`` listing every problem by JSON path. With ``strict=False`` a
    regex RE2 cannot compile is not refused: the expectation that holds it then evaluates
    to an error, which is how a stored suite is scored after its rules have tightened.
    """
    if not isinstance(data, Mapping):
        raise InvalidInput.single("", f"a suite must be a JSON object, not {json_type(data)}")
    problems = Problems()
    if not _text_is_sound(data):
        _check_text(data, "", problems)
    top = FieldReader(data, "", problems)
    schema = data.get("schema")
    if schema is not None and schema != SCHEMA:
        problems.add("schema", f'unsupported schema {render(schema)}; expected "{SCHEMA}"')
    name = top.string("name", default="")
    description = top.string("description", default="")
    inherited = _Inherited.read(top, strict)
    if "cases" not in data:
        problems.add("cases", "required: a list of cases")
    cases = []
    first_seen: dict[str, int] = {}
    for index, path, raw in top.objects("cases", what="a case object"):
        key = raw.get("key")
        if isinstance(key, str) and key in first_seen:
            problems.add(
                field_path(path, "key"),
                f"duplicate case key {key!r} (also cases[{first_seen[key]}])",
            )
        elif isinstance(key, str):
            first_seen[key] = index
        case = _load_case(raw, path, problems, strict, inherited)
        if case is not None:
            cases.append(case)
    problems.raise_if_any()
    return Suite(
        name=name,
        cases=tuple(cases),
        description=description,
        match=inherited.match,
        tools=inherited.catalog.tools,
        catalog_checks=inherited.catalog_checks,
        expectations=inherited.expectations(inherited.match),
        data=data,
    )


class _Inherited:
    """What a suite gives each of its cases (docs/formats.md#top-level): match options, the
    tool catalog, ``catalog_checks``, an environment, and expectations of its own, which
    every case carries after its own. Those are read and checked once, at the suite's
    paths (``expectations[0].tools``), and compiled again under each case's match options
    (once per distinct options)."""

    def __init__(
        self,
        match: MatchOptions,
        catalog: Catalog,
        catalog_checks: bool,
        environment: CaseEnvironment | None,
        strict: bool,
    ) -> None:
        self.match: MatchOptions = match
        self.catalog: Catalog = catalog
        self.catalog_checks: bool = catalog_checks
        self.environment: CaseEnvironment | None = environment
        self.strict = strict
        self.items: list[tuple[type[Expectation], Mapping[str, Any], str]] = []
        self._compiled: dict[MatchOptions, tuple[Expectation, ...]] = {}

    @classmethod
    def read(cls, top: FieldReader, strict: bool) -> _Inherited:
        problems = top.problems
        match = read_match_options(top.data, "match", top, problems, DEFAULT)
        tools = load_tools(top.data, top, problems)
        catalog_checks = top.boolean("catalog_checks")
        if catalog_checks and not tools:
            problems.add("catalog_checks", "needs a tool catalog (tools) to check calls against")
        inherited = cls(match, Catalog(tools), catalog_checks, read_environment(top), strict)
        for _, path, raw in top.objects("expectations", what="an expectation object"):
            expectation = _read_expectation(raw, 0, path, match, problems, strict)
            if expectation is not None and expectation.reads_catalog:
                _check_catalog_use(expectation, path, inherited.catalog, match, problems, strict)
            if expectation is not None:
                inherited.items.append((type(expectation), raw, path))
        return inherited

    def expectations(
        self,
        match: MatchOptions,
        first: int = 0,
        skip: AbstractSet[type[Expectation]] = frozenset(),
    ) -> tuple[Expectation, ...]:
        """The suite's expectations under ``match``, indexed from ``first``, less those of
        the types in ``skip``."""
        found = self._compiled.get(match)
        if found is None:
            quiet = Problems()  # read once already, at the suite's paths: never None
            found = tuple(
                cast(
                    Expectation,
                    kind.from_data(0, FieldReader(raw, path, quiet), match, self.strict),
                )
                for kind, raw, path in self.items
            )
            self._compiled[match] = found
        kept = [item for item in found if type(item) not in skip]
        return tuple(replace(item, index=first + n) for n, item in enumerate(kept))

    def environment_problems(
        self, environment: CaseEnvironment | None, path: str, problems: Problems
    ) -> None:
        """A suite expectation that replays calls needs the case to have an environment."""
        for kind, _, where in self.items:
            if kind.needs_environment and environment is None:
                problems.add(
                    path, f"the suite's {where} replays calls: the case needs an environment"
                )


def _read_expectation(
    raw: Mapping[str, Any],
    index: int,
    path: str,
    match: MatchOptions,
    problems: Problems,
    strict: bool,
) -> Expectation | None:
    kind = raw.get("type")
    cls = EXPECTATION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        known = ", ".join(EXPECTATION_TYPES)
        what = "required" if kind is None else f"unknown expectation type {kind!r}"
        problems.add(field_path(path, "type"), f"{what}; one of: {known}")
        return None
    return cls.from_data(index, FieldReader(raw, path, problems), match, strict)


def _load_case(
    data: Mapping[str, Any], path: str, problems: Problems, strict: bool, inherited: _Inherited
) -> Case | None:
    fields = FieldReader(data, path, problems)
    before = len(problems.items)
    key = fields.string("key", required=True, nonempty=True)
    title = fields.string("title", default="")
    prompt = fields.string("prompt", default="")
    tags = tuple(fields.strings("tags"))
    match = read_match_options(data, "match", fields, problems, inherited.match)
    extra_calls = fields.choice("extra_calls", EXTRA_CALLS, default="allow")
    environment = read_environment(fields) or inherited.environment
    catalog = inherited.catalog

    expected_calls = [
        _load_expected_call(raw, index, call_path, match, problems, strict)
        for index, call_path, raw in fields.objects("expected_calls")
    ]
    expectations: list[Expectation] = []
    for index, item_path, raw in fields.objects("expectations"):
        expectation = _read_expectation(raw, index, item_path, match, problems, strict)
        if expectation is None:  # its problems recorded
            continue
        if expectation.reads_catalog:
            _check_catalog_use(expectation, item_path, catalog, match, problems, strict)
        if expectation.needs_environment and environment is None:
            problems.add(
                item_path, "the case has no environment (environment) to replay the calls in"
            )
        expectations.append(expectation)
    inherited.environment_problems(environment, path, problems)

    if key is None or len(problems.items) > before:  # a key missing is a problem too
        return None
    # The suite's budgets are defaults: a case's own budget of a type replaces the suite's.
    own_budgets = {type(e) for e in expectations if e.cause_kind == BUDGET}
    expectations += inherited.expectations(match, first=len(expectations), skip=own_budgets)
    if inherited.catalog_checks:
        expectations += _catalog_checks(expectations)
    expectations = [item.for_case(expected_calls) for item in expectations]
    labels = _unique_labels(
        [(call.describe(), f"#{call.index}") for call in expected_calls]
        + [(item.describe(), f"expectation #{item.index}") for item in expectations]
    )
    call_labels, expectation_labels = labels[: len(expected_calls)], labels[len(expected_calls) :]
    expected_calls = [
        replace(call, label=label) for call, label in zip(expected_calls, call_labels, strict=True)
    ]
    expectations = [
        replace(item, label=label)
        for item, label in zip(expectations, expectation_labels, strict=True)
    ]
    return Case(
        key=key,
        expected_calls=tuple(expected_calls),
        expectations=tuple(expectations),
        match=match,
        extra_calls=extra_calls,
        title=title,
        prompt=prompt,
        tags=tags,
        data=data,
        catalog=catalog,
        environment=environment,
    )


def read_environment(fields: FieldReader) -> CaseEnvironment | None:
    """The ``environment`` of a suite or case: ``{"name", "initial_state"}``, the name an
    installed environment's (docs/formats.md#environment)."""
    data = fields.object("environment")
    if data is None:
        return None
    inner = FieldReader(data, fields.at("environment"), fields.problems)
    name = inner.string("name", required=True, nonempty=True)
    if "initial_state" not in data:
        fields.problems.add(inner.at("initial_state"), "required: the JSON document it starts from")
        return None
    return None if name is None else CaseEnvironment(name, data["initial_state"])


def _check_catalog_use(
    expectation: Expectation,
    path: str,
    catalog: Catalog,
    match: MatchOptions,
    problems: Problems,
    strict: bool,
) -> None:
    """Problems of an expectation that checks calls against the catalog: there must be
    one, holding the tool it names; and, loading strictly, the schemas it validates with
    must be usable (a stored suite's unusable schema leaves the predicate unevaluated)."""
    if not catalog:
        problems.add(path, "the suite has no tool catalog (tools) to check calls against")
        return
    name = getattr(expectation, "tool", None)
    named = name and catalog.find(name, match)
    if name is not None and named is None:
        problems.add(field_path(path, "tool"), f"{name!r} is not in the suite's tool catalog")
        return
    if not strict or not isinstance(expectation, ArgumentsMatchSchema):
        return
    for tool in (named,) if named else catalog.tools:
        problem = catalog.schema(tool).problem
        if problem is not None:
            problems.add(tool.schema_path, f"cannot check calls against it: {problem}")


def _catalog_checks(expectations: list[Expectation]) -> list[Expectation]:
    """The catalog expectations the suite's ``catalog_checks`` adds to a case, unless the
    case has them already, indexed after its own."""
    has = {type(e) for e in expectations if getattr(e, "tool", None) is None}
    added = [kind for kind in (ArgumentsMatchSchema, OnlyCatalogTools) if kind not in has]
    return [kind(len(expectations) + n, "") for n, kind in enumerate(added)]


def _load_expected_call(
    data: Mapping[str, Any],
    index: int,
    path: str,
    match: MatchOptions,
    problems: Problems,
    strict: bool,
) -> ExpectedCall:
    fields = FieldReader(data, path, problems)
    name = fields.string("name", required=True, nonempty=True) or ""
    required_args = fields.object("required_args", default={})
    ordered = fields.boolean("ordered")
    depends = fields.boolean("depends_on_result")
    exact_args = fields.boolean("exact_args")
    if depends and index == 0:
        problems.add(
            fields.at("depends_on_result"),
            "the first expected call has no call before it whose result it could depend on",
        )
    return ExpectedCall(
        index=index,
        name=name,
        required_args=required_args,
        ordered=ordered,
        depends_on_result=depends,
        exact_args=exact_args,
        key=match.tool_key(name),
        arguments=ArgumentsPattern(
            required_args,
            match,
            contains=False,
            exact=exact_args,
            path=fields.at("required_args"),
            problems=problems,
            strict=strict,
        ),
    )


def _unique_labels(labels: list[tuple[str, str]]) -> list[str]:
    """Labels made unique within a case: a label that would repeat carries its index.

    The run and extra-calls labels are reserved, so every label in a report is distinct."""
    counts = Counter(label for label, _ in labels)
    counts.update((RUN_LABEL, EXTRA_CALLS_LABEL))
    return [f"{label} ({where})" if counts[label] > 1 else label for label, where in labels]


def _text_is_sound(value: Any) -> bool:
    """Whether ``_check_text`` would find nothing: the same walk without building a path
    for every value (most documents are sound; the paths are built only for one that is
    not). A third of loading a 50-case suite went to those paths."""
    if isinstance(value, str):
        return value.isascii() or lone_surrogate_path(value) is None
    if isinstance(value, Mapping):
        if getattr(value, "duplicate_keys", ()):
            return False
        return all(_text_is_sound(key) and _text_is_sound(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_text_is_sound(item) for item in value)
    return True


def _check_text(value: Any, path: str, problems: Problems) -> None:
    """Report what no field rule sees: objects that named a key twice (the parsers mark
    them; see ``documents``) and strings that are not valid Unicode."""
    if isinstance(value, str):
        if lone_surrogate_path(value) is not None:
            problems.add(path, "holds a lone surrogate, which is not valid Unicode")
    elif isinstance(value, Mapping):
        for key in getattr(value, "duplicate_keys", ()):
            problems.add(path, f"duplicate key {key!r}")
        for key, item in value.items():
            _check_text(key, field_path(path, key), problems)
            _check_text(item, field_path(path, key), problems)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_text(item, field_path(path, index), problems)
