"""``manage.py import_bfcl_results RESULTS [--out RUN_FILE]``
(docs/command-line.md#import_bfcl_results, docs/benchmarks.md#model-results).

Turns a BFCL model-result file into a canonical run file: one run per id, its calls in one
batch (a prompting model's string of Python calls decoded as BFCL decodes it), or, for a
multi-turn result, one batch per step with its turns in the transcript. Bad lines are
listed on stderr by line and field (exit status 2); the valid ones are still written.
``--out`` is written to a temporary file renamed into place at the end, so a failed import
never leaves it empty or half-written.
"""

import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from scoring.importers import bfcl_results
from scoring.matcher import InvalidInput, dump_json
from scoring.runfiles.reader import json_lines

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
        except OSError as exc:
            self.stderr.write(f"{exc.filename}: cannot open: {exc.strerror}")
            raise SystemExit(EXIT_INVALID) from None
        if not out:
            with source:
                _, invalid = self._convert(results, source, sys.stdout.buffer)
        else:
            temporary = Path(out).with_name(f".{Path(out).name}.partial")
            try:
                target = open(temporary, "wb")  # noqa: SIM115 - closed by the with below
            except OSError as exc:
                source.close()
                self.stderr.write(f"{exc.filename}: cannot write: {exc.strerror}")
                raise SystemExit(EXIT_INVALID) from None
            try:
                with source, target:
                    written, invalid = self._convert(results, source, target)
                os.replace(temporary, out)
            finally:
                temporary.unlink(missing_ok=True)
            self.stderr.write(f"{out}: {written} runs")
        if invalid:
            raise SystemExit(EXIT_INVALID)

    def _convert(self, results: str, source, target) -> tuple[int, int]:
        """(runs written, invalid lines)."""
        invalid = written = 0
        for line, value in json_lines(source):
            try:
                if isinstance(value, InvalidInput):
                    raise value
                run = bfcl_results.convert(value) if isinstance(value, dict) else _not_object()
            except InvalidInput as exc:
                invalid += 1
                for problem in exc.at_line(line).problems:
                    field = f"{problem.path}: " if problem.path else ""
                    self.stderr.write(f"{results}:{line}: {field}{problem.message}")
                continue
            target.write(dump_json(run) + b"\n")
            written += 1
        return written, invalid


def _not_object():
    raise InvalidInput.single("", "a result line must be a JSON object")
