"""The audit's two figures (docs/audit.md): the whole ``manage.py audit`` command on 1,000
cases, start-up included (target: under 5 s), and the suite page's "Suite health" panel on
such a suite (target: under 300 ms).

    python bench/audit.py                    # both
    python bench/audit.py --cases 2000 --runs 5
    python bench/audit.py --only command     # no database needed

**The command.** A suite of ``--cases`` realistic cases (``bench.datagen``: 2-5 expected
calls, 3-8 predicates, a third of the values written as argument matchers) and a tool
catalog inferred from what a correct agent sends, no environment; ``manage.py audit FILE
--json`` is run ``--runs`` times as a user runs it, and its wall-clock and CPU time (user
and system, of the process) printed beside those of the same command on a suite of no
cases, which is the start-up: the difference, per case, is the audit's own cost.

**The panel.** Seeds a database of its own, ``casebook_benchaudit`` or
``$BENCH_AUDIT_DATABASE`` (dropped and made again), on PostgreSQL: the suite as version 1
(the time of saving it, its audit included, is printed), ``--submissions`` finished
submissions with a summary row per case (what the panel's history reads), and the time of
saving one case again (what the audit adds to every edit: the changed case audited again,
duplicates looked for across the suite), beside the whole suite's audit. Then requests
the panel N times through Django's test client, signed in as a viewer, and prints the
least, median and p95 server time, CPU time and queries; and once with the version's
audit dropped, which the panel makes and keeps (a version saved before audits were kept).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.datagen import realistic_suite, strip_private, with_matchers  # noqa: E402

COMMAND_TARGET_S = 5.0
PANEL_TARGET_MS = 300
DATABASE = os.environ.get("BENCH_AUDIT_DATABASE", "casebook_benchaudit")


def suite_of(n_cases: int) -> dict:
    from cases.tool_catalog import infer_tools

    raw = realistic_suite(random.Random(41), n_cases)
    calls = [(c["name"], c["_arguments"]) for case in raw["cases"] for c in case["expected_calls"]]
    calls.append(("delete_everything", {}))  # the tool the cases forbid: it exists
    suite = with_matchers(strip_private(raw))
    return {**suite, "name": f"audit-{n_cases}", "tools": infer_tools(calls)}


def run_command(path: Path) -> tuple[float, float, dict]:
    """One ``manage.py audit --json`` as a user runs it: wall and CPU seconds, its JSON."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "manage.py", "audit", str(path), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none"},
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"audit failed ({done.returncode}): {done.stderr}")
    return wall, cpu, json.loads(done.stdout)


def bench_command(n_cases: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        suite = Path(folder, "suite.json")
        suite.write_text(json.dumps(suite_of(n_cases)))
        empty = Path(folder, "empty.json")
        empty.write_text(json.dumps({"name": "empty", "cases": []}))
        rows = {"empty": [], "suite": []}
        for _ in range(runs):  # side by side, so both see the same machine
            rows["empty"].append(run_command(empty)[:2])
            wall, cpu, found = run_command(suite)
            rows["suite"].append((wall, cpu))
    kinds: dict[str, int] = {}
    for problem in found["problems"]:
        kinds[problem["kind"]] = kinds.get(problem["kind"], 0) + 1
    print(f"manage.py audit on {found['cases']:,} cases, {runs} runs (median):")
    medians = {}
    for name, label in (("empty", "start-up (no cases)"), ("suite", f"{n_cases:,} cases")):
        wall = statistics.median(w for w, _ in rows[name])
        cpu = statistics.median(c for _, c in rows[name])
        medians[name] = (wall, cpu)
        print(f"  {label:>22}: {wall:6.2f} s wall, {cpu:6.2f} s CPU")
    own = medians["suite"][1] - medians["empty"][1]
    print(f"  the audit's own CPU: {own:.2f} s, {1e6 * own / n_cases:,.0f} µs a case")
    verdict = "under" if medians["suite"][0] < COMMAND_TARGET_S else "OVER"
    print(
        f"  whole command {verdict} the {COMMAND_TARGET_S:g} s target; problems: {kinds or 'none'}"
    )


def configure(database: str) -> None:
    os.environ.pop("REDIS_URL", None)
    os.environ.update(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{database}",
        DJANGO_SETTINGS_MODULE="evalsite.settings",
        DEBUG="0",
        SECRET_KEY="bench-only-secret-key",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
    )
    import django
    import psycopg

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {database}")
    django.setup()


def seed(n_cases: int, n_submissions: int):
    from django.core.management import call_command

    from cases import services
    from cases.audits import suite_audit
    from cases.models import Membership, Role, User
    from scoring.models import CaseSummary, Status, Submission

    call_command("migrate", verbosity=0)
    editor = User.objects.create_user("bench-editor", password="bench-password")
    viewer = User.objects.create_user("bench-viewer", password="bench-password")
    team = services.create_team("Bench", editor)
    Membership.objects.create(team=team, user=viewer, role=Role.VIEWER)
    started = time.perf_counter()
    suite = services.create_suite(team, suite_of(n_cases), editor)
    print(f"  saving version 1, its audit included: {time.perf_counter() - started:.2f} s")
    case = suite.cases.order_by("pk").first()
    started = time.perf_counter()
    document = services.case_document(case) | {"title": "changed"}
    services.save_case(suite, document, editor, case=case)
    print(
        f"  saving one case as version 2, its audit included: {time.perf_counter() - started:.2f} s"
    )
    first, second = suite.versions.order_by("number")
    started = time.perf_counter()
    suite_audit(second.document)
    print(f"    the whole suite's audit alone: {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    suite_audit(second.document, first)
    print(
        f"    the save's, only the changed case audited again: "
        f"{time.perf_counter() - started:.2f} s"
    )
    rng = random.Random(7)
    keys = list(suite.cases.values_list("key", flat=True))
    for number in range(n_submissions):
        submission = Submission.objects.create(
            suite=suite, version=suite.latest_version, status=Status.DONE, scored=4 * n_cases,
            chunk_runs=1000, label=f"nightly {number}",
        )  # fmt: skip
        rows = []
        for key in keys:
            passed = rng.choice((0, 1, 2, 3, 4, 4, 4))
            verdicts = "0:" + "p" * passed + "f" * (4 - passed)
            rows.append(
                CaseSummary(
                    submission=submission, generation=0, case_key=key, runs=4,
                    passed=passed, verdicts=verdicts,
                )
            )  # fmt: skip
        CaseSummary.objects.bulk_create(rows)
    return suite, viewer


def bench_panel(n_cases: int, n_submissions: int, requests: int) -> None:
    configure(DATABASE)
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from cases.models import SuiteVersion

    print(f"the Suite health panel, {n_cases:,} cases, {n_submissions} submissions:")
    suite, viewer = seed(n_cases, n_submissions)
    client = Client()
    client.force_login(viewer)
    url = f"/suites/{suite.pk}/health/"
    client.get(url)  # the first request of a process loads templates and the like
    walls, cpus, queries = [], [], []
    for _ in range(requests):
        reset_queries()
        with CaptureQueriesContext(connection) as captured:
            cpu = time.process_time()
            started = time.perf_counter()
            response = client.get(url)
            walls.append(1000 * (time.perf_counter() - started))
            cpus.append(1000 * (time.process_time() - cpu))
        assert response.status_code == 200
        queries.append(len(captured))
    p95 = statistics.quantiles(walls, n=20)[-1] if len(walls) >= 2 else walls[0]
    verdict = "under" if p95 < PANEL_TARGET_MS else "OVER"
    print(
        f"  {requests} requests: least {min(walls):.0f} ms, median {statistics.median(walls):.0f}"
        f" ms, p95 {p95:.0f} ms ({verdict} the {PANEL_TARGET_MS} ms target); CPU median "
        f"{statistics.median(cpus):.0f} ms; {max(queries)} queries"
    )
    SuiteVersion.objects.filter(suite=suite).update(audit=None)
    started = time.perf_counter()
    client.get(url)
    print(
        f"  a version saved before audits were kept, audited on its first request: "
        f"{1000 * (time.perf_counter() - started):.0f} ms (then kept)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3, help="runs of the command")
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--requests", type=int, default=20, help="requests of the panel")
    parser.add_argument("--only", choices=["command", "panel"])
    options = parser.parse_args()
    if options.only != "panel":
        bench_command(options.cases, options.runs)
    if options.only != "command":
        bench_panel(options.cases, options.submissions, options.requests)


if __name__ == "__main__":
    main()
