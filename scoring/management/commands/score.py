"""``manage.py score SUITE_FILE RUN_FILE [--json] [--junit FILE] [--format NAME]`` (DESIGN.md §7).

Scores offline, with no database, broker or server: each run line is parsed, scored and
written before the next is read. Exit status: 0 all pass, 1 some fail or error, 2 invalid
input (the valid lines are still scored and reported).
"""

import os
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand

from scoring.importers import FORMAT_NAMES
from scoring.junit import JUnitWriter
from scoring.matcher import (
    PASS,
    InvalidInput,
    load_suite,
    parse_suite_document,
    score,
    suite_warnings,
)
from scoring.runfile import read_run_lines
from scoring.writers import JsonArrayWriter, SummaryWriter

EXIT_PASS, EXIT_FAIL, EXIT_INVALID = 0, 1, 2


class Command(BaseCommand):
    help = "Score a run file against a suite file, offline."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("suite_file", help="suite file, JSON or YAML")
        parser.add_argument(
            "run_file",
            help="run file: JSON lines, or an Inspect AI eval log (.json); - for standard input",
        )
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print a JSON array of reports"
        )
        parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
        parser.add_argument(
            "--format",
            choices=FORMAT_NAMES,
            dest="format_name",
            help="run format (default: detect)",
        )

    def handle(self, suite_file, run_file, as_json, junit, format_name, **options):
        self.stdout.ending = ""  # writers end their own lines; --json must be exactly JSON
        try:
            status = self.score_files(suite_file, run_file, as_json, junit, format_name)
        except BrokenPipeError:  # the reader went away (| head): stop quietly
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the flush at exit
            status = EXIT_FAIL
        raise SystemExit(status)

    def fail(self, message: str) -> int:
        self.stderr.write(message)
        return EXIT_INVALID

    def score_files(self, suite_file, run_file, as_json, junit, format_name) -> int:
        try:
            text = Path(suite_file).read_bytes()
        except OSError as exc:
            return self.fail(f"{suite_file}: cannot read the suite file: {exc.strerror}")
        try:
            suite = load_suite(parse_suite_document(text, suite_file))
        except InvalidInput as exc:
            listed = "\n".join(f"  {problem}" for problem in exc.problems)
            return self.fail(f"{suite_file}: invalid suite file:\n{listed}")
        for warning in suite_warnings(suite.data):  # said, never failing (DESIGN §3.1)
            self.stderr.write(f"{suite_file}: {warning.path}: warning: {warning.message}")
        try:
            runs = sys.stdin.buffer if run_file == "-" else open(run_file, "rb")  # noqa: SIM115
        except OSError as exc:
            return self.fail(f"{run_file}: cannot read the run file: {exc.strerror}")

        out = JsonArrayWriter(self.stdout) if as_json else SummaryWriter(self.stdout, suite)
        junit_writer = JUnitWriter(suite.name) if junit else None
        invalid = 0
        all_passed = True
        with runs:
            for item in read_run_lines(runs, format_name=format_name):
                problems = item.problems
                case = suite.case(item.run.case) if item.run else None
                if item.run and case is None:
                    problems = (item.problem("case", f"{item.run.case!r} is not in the suite"),)
                if problems:
                    invalid += 1
                    for problem in problems:
                        # A sample of an Inspect log has no line; its path names the sample.
                        at = f"{run_file}:{problem.line}" if problem.line is not None else run_file
                        field = f"{problem.path}: " if problem.path else ""
                        self.stderr.write(f"{at}: {field}{problem.message}")
                    if junit_writer:
                        junit_writer.add_invalid(item.line, problems)
                    continue
                started = time.perf_counter()
                report = score(case, item.run)
                out.add_report(report)
                if junit_writer:
                    junit_writer.add_report(report, time.perf_counter() - started)
                all_passed &= report.verdict == PASS
        out.finish(invalid)
        if junit_writer:
            try:
                with open(junit, "w", encoding="utf-8") as xml:
                    junit_writer.write(xml)
            except OSError as exc:
                return self.fail(f"{junit}: cannot write the JUnit file: {exc.strerror}")
        if invalid:
            return EXIT_INVALID
        return EXIT_PASS if all_passed else EXIT_FAIL
