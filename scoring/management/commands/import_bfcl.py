"""``manage.py import_bfcl QUESTIONS [POSSIBLE_ANSWERS] [--out SUITE_FILE]``
(docs/command-line.md#import_bfcl, docs/benchmarks.md#importing-a-category).

POSSIBLE_ANSWERS is left out for the categories that have none (irrelevance, relevance). The
multi_turn categories' function docs are read from the installed bfcl-eval package."""

import sys
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand

try:  # BFCL's package, installed with the bfcl environment (docs/environments.md#bfcl)
    from bfcl_eval.constants.eval_config import MULTI_TURN_FUNC_DOC_PATH
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING
except ImportError:
    MULTI_TURN_FUNC_DOC_FILE_MAPPING = None

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
                function_docs=_multi_turn_docs(),
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


def _multi_turn_docs() -> dict[str, list] | None:
    """The function docs of BFCL's multi-turn classes, by class, from its package; None when
    it is not installed."""
    if MULTI_TURN_FUNC_DOC_FILE_MAPPING is None:
        return None
    docs = {}
    for name, file in MULTI_TURN_FUNC_DOC_FILE_MAPPING.items():
        path = Path(MULTI_TURN_FUNC_DOC_PATH) / file
        if path.exists():
            docs[name] = [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
    return docs


def _records(path: str, source: str) -> list[tuple[int, object]]:
    with open(path, "rb") as lines:
        return read_records(lines, source)


def _located(problem: Problem, files: dict[str, str]) -> str:
    """``FILE:LINE: field: message``; the path's first segment names the file."""
    source, _, field = problem.path.partition(".")
    where = f"{files.get(source, source)}:{problem.line}"
    return f"{where}: {field}: {problem.message}" if field else f"{where}: {problem.message}"
