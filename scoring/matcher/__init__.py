"""Casebook's matcher: scores recorded agent runs against suites of cases.

A pure library (no Django): the web app, the Celery workers and ``manage.py score`` all
call it. The formats and semantics are those of DESIGN.md §3 and §4.

    suite = load_suite(parse_suite_document(text, "suite.yaml"))
    report = score(suite.case("delete-if-exists"), load_run(run_dict))
    report.verdict, report.to_dict()

Invalid suites and runs raise ``InvalidInput``, whose ``problems`` name every bad field.
"""

from .documents import parse_suite_document
from .errors import InvalidInput, Problem
from .jsonvalue import json_equal, parse_json
from .options import MatchOptions
from .report import CAUSE_KINDS, CAUSE_WORDS, ERROR, FAIL, PASS, Cause, PredicateResult, Report
from .run import Call, Run, TrialNumbering, load_run
from .scorer import score
from .suite import Case, ExpectedCall, Suite, load_suite
from .tools import Tool
from .warnings import suite_warnings

__all__ = [
    "CAUSE_KINDS",
    "CAUSE_WORDS",
    "ERROR",
    "FAIL",
    "PASS",
    "Call",
    "Case",
    "Cause",
    "ExpectedCall",
    "InvalidInput",
    "MatchOptions",
    "PredicateResult",
    "Problem",
    "Report",
    "Run",
    "Suite",
    "Tool",
    "TrialNumbering",
    "json_equal",
    "load_run",
    "load_suite",
    "parse_json",
    "parse_suite_document",
    "score",
    "suite_warnings",
]
