"""Casebook's matcher: scores recorded agent runs against suites of cases.

A pure library (no Django): the web app, the Celery workers and ``manage.py score`` all
call it. The formats it reads and writes are specified in docs/formats.md, its semantics in
docs/matcher.md.

    suite = load_suite(parse_suite_document(text, "suite.yaml"))
    report = score(suite.case("delete-if-exists"), load_run(run_dict))
    report.verdict, report.to_dict()

Invalid suites and runs raise ``InvalidInput``, whose ``problems`` name every bad field.

Its modules are grouped by responsibility, in layers: each imports only the layers below it
(an import-linter contract in pyproject.toml, docs/architecture.md#the-matcher-inside).

- ``verdicts``: ``score``, a run judged against a case into its report;
- ``suites``: loading suites, each case built of expectations and argument patterns;
- ``expectations``: the expectation types, each judging a run;
- ``arguments``: arguments and matchers, what a call's arguments may be, with the tool
  catalog and its schemas;
- the modules at this package's top, which every layer uses: the error (``errors``), JSON
  and suite documents (``jsonvalue``, ``documents``), fields and match options (``fields``,
  ``options``), numbers, text and RE2 patterns (``numbers``, ``text``, ``regex``,
  ``examples``), a recorded run (``run``), the report's parts (``report``) and the search
  that credits expected calls (``assignment``). They stay at the top rather than in a
  package of their own: they are the bottom layer, small and imported everywhere. A
  recorded run is what every expectation reads and the report's causes what each writes,
  so loading runs and the report sit below the expectations; the assignment is a search
  over integers, whose slots each case prepares.

Everything the rest of Casebook uses is exported here, and only here (a test checks that
nothing outside imports a submodule):

- loading suites and runs, scoring, reports: ``load_suite``, ``load_run``, ``score``, ...;
- checking what authors type: ``argument_problems``, ``pattern_problem``, ``is_matcher``,
  ``EXPECTATION_TYPES``, ``field_path`` (the paths problems are named by);
- JSON read, compared and written as the matcher does: ``parse_json``, ``dump_json``,
  ``pretty_json``, ``json_equal``, ``json_type``, ``render_value``, ``nested_deeper_than``,
  ``json_containers``;
- a recorded call's arguments beside an expected call's, for the run page:
  ``compare_arguments`` and its ``ArgumentRow``;
- required arguments in words, as report labels word matchers: ``describe_arguments``;
- what a case's own rules allow, for its audit (docs/audit.md): an expected call's
  ``arguments.example()`` and a regex's ``example()``, or ``NoExample`` saying why not;
  a tool's schema checked against some of a call's arguments
  (``case.catalog.schema(tool).failure(arguments, partial=True)``, or ``SchemaUnusable``);
- judging by end state (docs/matcher.md#end-state): the ``Replayer`` protocol ``score``
  takes, what it returns (``TurnEnd``, ``CallOutcome``) or raises (``ReplayFailed``), a
  case's ``CaseEnvironment``, a run's calls by turn (``run_turns``), and where a run parts
  from the reference (``TurnComparison``, ``StateDifference``).
"""

from .arguments.argdiff import ArgumentRow, compare_arguments
from .arguments.matchers import argument_problems, is_matcher
from .arguments.schemas import SchemaUnusable
from .arguments.tools import SCHEMA_TYPES, Tool, catalog_entries
from .arguments.words import describe_arguments
from .documents import parse_suite_document
from .errors import InvalidInput, Problem, field_path
from .examples import NoExample
from .expectations.end_state import (
    CallOutcome,
    CaseEnvironment,
    Replayer,
    ReplayFailed,
    StateDifference,
    TurnComparison,
    TurnEnd,
    end_state_comparisons,
    run_turns,
)
from .expectations.expectation_types import EXPECTATION_TYPES
from .jsonvalue import (
    dump_json,
    duplicate_key,
    is_finite_number,
    json_containers,
    json_equal,
    json_type,
    nested_deeper_than,
    number_as_parsed,
    parse_json,
    pretty_json,
    render_short,
)
from .jsonvalue import render as render_value
from .options import MatchOptions
from .regex import limit_patterns, pattern_problem
from .report import (
    CAUSE_KINDS,
    CAUSE_WORDS,
    ERROR,
    FAIL,
    NOT_CAPTURED,
    PASS,
    Cause,
    PredicateResult,
    Report,
    failure_signature,
    pass_rate_text,
)
from .run import USAGE_KEYS, Call, Run, TrialNumbering, load_run, public_usage
from .suites.suite import EXTRA_CALLS_LABEL, Case, ExpectedCall, Suite, load_suite
from .suites.suite import SCHEMA as SUITE_SCHEMA
from .suites.warnings import suite_warnings
from .verdicts.scorer import score

__all__ = [
    "CAUSE_KINDS",
    "CAUSE_WORDS",
    "ERROR",
    "EXPECTATION_TYPES",
    "EXTRA_CALLS_LABEL",
    "FAIL",
    "NOT_CAPTURED",
    "PASS",
    "SCHEMA_TYPES",
    "SUITE_SCHEMA",
    "USAGE_KEYS",
    "ArgumentRow",
    "Call",
    "CallOutcome",
    "Case",
    "CaseEnvironment",
    "Cause",
    "ExpectedCall",
    "InvalidInput",
    "MatchOptions",
    "NoExample",
    "PredicateResult",
    "Problem",
    "ReplayFailed",
    "Replayer",
    "Report",
    "Run",
    "SchemaUnusable",
    "StateDifference",
    "Suite",
    "Tool",
    "TrialNumbering",
    "TurnComparison",
    "TurnEnd",
    "argument_problems",
    "catalog_entries",
    "compare_arguments",
    "describe_arguments",
    "dump_json",
    "duplicate_key",
    "end_state_comparisons",
    "failure_signature",
    "field_path",
    "is_finite_number",
    "is_matcher",
    "json_containers",
    "json_equal",
    "json_type",
    "limit_patterns",
    "load_run",
    "load_suite",
    "nested_deeper_than",
    "number_as_parsed",
    "parse_json",
    "parse_suite_document",
    "pass_rate_text",
    "pattern_problem",
    "pretty_json",
    "public_usage",
    "render_short",
    "render_value",
    "run_turns",
    "score",
    "suite_warnings",
]
