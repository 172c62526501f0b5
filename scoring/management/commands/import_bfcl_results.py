"""``manage.py import_bfcl_results RESULTS [--out RUN_FILE]`` (DESIGN.md §4.3).

Turns a BFCL model-result file into a canonical run file: one run per id, its calls in one
batch. Bad lines are listed on stderr by line and field (exit status 2); the valid ones are
still written.
"""

import sys

import orjson
from django.core.management.base import BaseCommand

from scoring.importers import bfcl
from scoring.matcher import InvalidInput
from scoring.runfile import json_lines

EXIT_INVALID = 2


class Command(BaseCommand):
    help = "Turn a BFCL model-result file into a Casebook run file."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("results", help="BFCL result file (JSON lines)")
        parser.add_argument("--out", help="run file to write (default: standard output)")

    def handle(self, results, out, **options):
        try:
            source = open(results, "rb")  # noqa: SIM115 - closed by the with below
            target = open(out, "wb") if out else sys.stdout.buffer  # noqa: SIM115
        except OSError as exc:
            self.stderr.write(f"{exc.filename}: cannot open: {exc.strerror}")
            raise SystemExit(EXIT_INVALID) from None
        invalid = written = 0
        with source:
            for line, value in json_lines(source):
                try:
                    if isinstance(value, InvalidInput):
                        raise value
                    run = bfcl.convert(value) if isinstance(value, dict) else _not_object()
                except InvalidInput as exc:
                    invalid += 1
                    for problem in exc.at_line(line).problems:
                        field = f"{problem.path}: " if problem.path else ""
                        self.stderr.write(f"{results}:{line}: {field}{problem.message}")
                    continue
                target.write(orjson.dumps(run) + b"\n")
                written += 1
        if out:
            target.close()
            self.stderr.write(f"{out}: {written} runs")
        if invalid:
            raise SystemExit(EXIT_INVALID)


def _not_object():
    raise InvalidInput.single("", "a result line must be a JSON object")
