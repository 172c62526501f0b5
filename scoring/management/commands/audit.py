"""``manage.py audit SUITE_FILE [--json] [--strict]`` (docs/command-line.md#audit).

Audits a suite file offline, with no database, broker or server (docs/audit.md): each case
against its own reference run, an agent that does nothing, its tool catalog and, in the
sandbox process scoring uses, its environment; and the suite for duplicates. Exit status:
0 no problems (``passes_idle`` alone is a warning, unless ``--strict``), 1 problems,
2 an invalid suite file.
"""

import orjson
from django.conf import settings
from django.core.management.base import BaseCommand

from scoring.audit import Audit, audit_suite
from scoring.environments import EnvironmentLimits, SandboxReplayer
from scoring.matcher import InvalidInput, load_suite, parse_suite_document

EXIT_CLEAN, EXIT_PROBLEMS, EXIT_INVALID = 0, 1, 2


class Command(BaseCommand):
    help = "Audit a suite file: cases that contradict themselves, pass an idle agent, ..."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("suite_file", help="suite file, JSON or YAML")
        parser.add_argument(
            "--json",
            action="store_true",
            dest="as_json",
            help='print {"cases": N, "problems": [{"case", "kind", "message"}, ...]}',
        )
        parser.add_argument(
            "--strict",
            action="store_true",
            help="exit 1 on passes_idle too, which is otherwise a warning",
        )

    def handle(self, suite_file, as_json, strict, **options):
        self.stdout.ending = ""
        try:
            with open(suite_file, "rb") as file:
                text = file.read()
        except OSError as exc:
            status = self.refuse(f"{suite_file}: cannot read it: {exc.strerror}", as_json)
            raise SystemExit(status) from None
        try:
            suite = load_suite(parse_suite_document(text, suite_file))
        except InvalidInput as exc:
            listed = "; ".join(str(problem) for problem in exc.problems)
            status = self.refuse(f"{suite_file}: invalid suite file: {listed}", as_json)
            raise SystemExit(status) from None
        replayer = SandboxReplayer(EnvironmentLimits.from_settings(settings))
        try:
            audit = audit_suite(suite, replayer)
        finally:
            replayer.close()
        if as_json:
            self.stdout.write(orjson.dumps(audit.to_dict()).decode() + "\n")
        else:
            self.write_text(audit)
        for unchecked in audit.unchecked:
            self.stderr.write(f"{unchecked.case}: not checked: {unchecked.message}")
        raise SystemExit(EXIT_PROBLEMS if audit.has_problems(strict=strict) else EXIT_CLEAN)

    def refuse(self, message: str, as_json: bool) -> int:
        if as_json:
            self.stdout.write(orjson.dumps({"error": message}).decode() + "\n")
        else:
            self.stderr.write(message)
        return EXIT_INVALID

    def write_text(self, audit: Audit) -> None:
        for problem in audit.problems:
            self.stdout.write(f"{problem.case}: {problem.kind}: {problem.message}\n")
        self.stdout.write(audit.summary() + "\n")
