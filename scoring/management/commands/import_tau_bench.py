"""``manage.py import_tau_bench RESULTS --team SLUG [--suite NAME] [--read-only TOOLS]``
(docs/command-line.md#import_tau_bench, docs/benchmarks.md#a-suite-from-the-results-file).

The tasks of τ-bench's results file as cases: of the team's suite named NAME, as a new
version, when it has one; else of a new suite of that name."""

from pathlib import Path

from django.core.management.base import BaseCommand

from cases import services, tau_bench
from cases.audits import stored_audit
from cases.models import Suite, Team
from scoring.benchmarks.tau_bench_suites import read_limits
from scoring.matcher import InvalidInput

EXIT_INVALID = 2
MESSAGE = "Imported from τ-bench results"


class Command(BaseCommand):
    help = "Make the tasks of a τ-bench results file a suite's cases."

    def add_arguments(self, parser):
        parser.add_argument("results", help="τ-bench's results file (one JSON array)")
        parser.add_argument("--team", required=True, help="the team's slug")
        parser.add_argument(
            "--suite",
            help="the suite's name: its cases are added as a version if the team has it, "
            "else a new suite; default: the file's name",
        )
        parser.add_argument(
            "--read-only",
            help="the tools that only read, comma-separated (empty: none); "
            "default: the suite's catalog, else guessed from their names",
        )

    def handle(self, results, team, suite, read_only, **options):
        path = Path(results)
        found = Team.objects.filter(slug=team).first()
        if found is None:
            self._stop(f"--team: no team {team!r}")
        name = suite or path.stem
        target = Suite.objects.filter(team=found, name=name).first()
        given = None if read_only is None else [t.strip() for t in read_only.split(",") if t]
        try:
            with path.open("rb") as stream:
                read = tau_bench.read_results(stream, **read_limits())
            catalog = services.suite_tools(target) if target else []
            roles = tau_bench.roles_for(read.tools, given, catalog, "--read-only")
            reads = tau_bench.read_only_names(roles)
            if target:
                cases = tau_bench.suite_cases(read, reads)
                rule = tau_bench.writes_rule(read, reads)
                version = services.save_cases(
                    target,
                    cases,
                    None,
                    seen_version=None,
                    message=MESSAGE,
                    suite_expectations=[rule] if rule else [],
                )
            else:
                document = tau_bench.suite_document(read, name=name, read_only=reads)
                target = services.create_suite(found, document, None, MESSAGE)
                version = target.latest_version
        except OSError as exc:
            self._stop(f"{path}: cannot read: {exc.strerror}")
        except InvalidInput as exc:
            self._stop(*(f"{path}: {problem}" for problem in exc.problems))
        self.stdout.write(
            f"{target.name} ({found.slug}/{target.slug}): version {version.number}, "
            f"{len(read.tasks)} cases from {read.runs} results"
        )
        for reading, said in ((True, "read-only"), (False, "writes")):
            tools = [role for role in roles if role.read_only == reading]
            listed = ", ".join(f"{role.name} ({role.said})" for role in tools)
            self.stdout.write(f"{said}: {listed or 'none'}")
        self.stdout.write(f"audit: {stored_audit(version).summary()}")

    def _stop(self, *lines: str):
        for line in lines:
            self.stderr.write(line)
        raise SystemExit(EXIT_INVALID)
