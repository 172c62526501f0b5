"""``manage.py import_bfcl QUESTIONS [POSSIBLE_ANSWERS] [--out SUITE_FILE]``
(docs/command-line.md#import_bfcl, docs/benchmarks.md#importing-a-category).

POSSIBLE_ANSWERS is left out for the categories that have none (irrelevance, relevance)."""

import sys
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand

from scoring.benchmarks.bfcl_suites import read_records, suite_from_bfcl
from scoring.matcher import InvalidInput, Problem

EXIT_INVALID = 2


class Command(BaseCommand):
    help = "Turn a BFCL category (question and possible-answer files) into a Casebook suite."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("questions", help="BFCL question file (JSON lines)")
        parser.add_argument(
            "possible_answers",
            nargs="?",
            help="BFCL possible-answer file (JSON lines); none for irrelevance and relevance",
        )
        parser.add_argument("--out", help="suite file to write (default: standard output)")
        parser.add_argument("--name", help="suite name (default: the question file's name)")
        parser.add_argument(
            "--underscore-dots",
            action="store_true",
            help="write function names with . as _ (for models whose API refuses dots)",
        )

    def handle(self, questions, possible_answers, out, name, underscore_dots, **options):
        files = {"questions": questions, "answers": possible_answers}
        try:
            suite = suite_from_bfcl(
                _records(questions, "questions"),
                _records(possible_answers, "answers") if possible_answers else None,
                name=name or Path(questions).stem,
                underscore_dots=underscore_dots,
            )
        except OSError as exc:
            self.stderr.write(f"{exc.filename}: cannot read: {exc.strerror}")
            raise SystemExit(EXIT_INVALID) from None
        except InvalidInput as exc:
            for problem in exc.problems:
                self.stderr.write(_located(problem, files))
            raise SystemExit(EXIT_INVALID) from None
        data = orjson.dumps(suite, option=orjson.OPT_INDENT_2) + b"\n"
        if out:
            Path(out).write_bytes(data)
            self.stderr.write(f"{out}: {len(suite['cases'])} cases")
        else:
            sys.stdout.buffer.write(data)


def _records(path: str, source: str) -> list[tuple[int, object]]:
    with open(path, "rb") as lines:
        return read_records(lines, source)


def _located(problem: Problem, files: dict[str, str]) -> str:
    """``FILE:LINE: field: message``; the path's first segment names the file."""
    source, _, field = problem.path.partition(".")
    where = f"{files.get(source, source)}:{problem.line}"
    return f"{where}: {field}: {problem.message}" if field else f"{where}: {problem.message}"
