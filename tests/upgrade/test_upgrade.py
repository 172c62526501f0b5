"""Upgrading a running Casebook with data, from each old release docs/upgrading.md lists in
its upgrade paths to this one, on PostgreSQL, as docs/operations.md#upgrades says:

1. the old release (``git archive`` of its commit, served by gunicorn) is given
   representative data through its own API and pages (tests/upgrade/data.py), and what it
   says of every submission and verdict is noted;
2. the backup (``pg_dump``), then ``migrate`` with this release's code, while nothing stops;
3. every table of the backup, restored into an empty database (the documented rollback),
   compared with the upgraded one: nothing lost but what a migration removes on purpose;
   no suite from before retention gets a period, so a prune removes no live run;
4. the old release's smoke test and every kind of its pages on the migrated schema, as
   while the new release is being deployed: they must pass where the page says the path
   needs no downtime;
5. this release on the upgraded database: every page kind answers, it says the same of
   every submission and verdict, and its own smoke test passes;
6. the rollback: the old release on the restored database says what it said before and
   passes its smoke test; the upgrade runs on it again.

It makes its own databases, so it needs DATABASE_URL to name PostgreSQL (CI's second
pass) and pg_dump; about a minute a path."""

from __future__ import annotations

import os
import shutil
import time

import psycopg
import pytest

from tests.upgrade import data, snapshot
from tests.upgrade.casebook import Casebook
from tests.upgrade.releases import (
    ROOT,
    UNRELEASED,
    checkout,
    migrations_at,
    require_commit,
    unmet_pins,
    upgrade_paths,
)
from tests.upgrade.servers import Databases, manage, pg_dump, pg_restore, serving

pytestmark = [pytest.mark.pipeline, pytest.mark.upgrade]

PATHS = [path for path in upgrade_paths() if path.new == UNRELEASED]
SHOWN = {
    "scoring_submission", "scoring_run", "scoring_result", "scoring_review", "scoring_reviewevent",
    "scoring_problem", "scoring_knownfailure", "scoring_queueitem", "scoring_blinddecision",
    "cases_apitoken", "authtoken_token", "cases_suiteversion", "scoring_tracespan",
}  # fmt: skip
# Older than any retention period: what a prune would remove if a suite had one.
LIVE_DAYS_AGO = 400


@pytest.fixture(scope="module")
def databases():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip(
            "upgrades are tested on PostgreSQL, with pg_dump: set DATABASE_URL to a postgres:// URL"
        )
    for tool in ("pg_dump", "pg_restore"):
        if shutil.which(tool) is None:
            (pytest.fail if os.environ.get("CI") else pytest.skip)(f"{tool} is not installed")
    # Named after the test database's, so that runs on one server do not meet.
    made = Databases(url, f"{url.rsplit('/', 1)[1].split('?')[0]}_upgrade")
    yield made
    made.drop_all()


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    return tmp_path_factory.mktemp("releases")


def said(base: str, made: data.Seeded) -> dict:
    """What a running release says of the seeded submissions: their status and counts, and
    every run's verdict, against the current version and each one scored before; and of
    the queues: their progress and agreement."""
    api = Casebook(base, token=made.tokens["alice"])
    try:
        told = {}
        for submission in (made.demo, made.demo_again, made.tau, made.live):
            status = api.api("GET", f"/api/submissions/{submission}/")
            versions = [
                status["version"],
                *(earlier["version"] for earlier in status["earlier_results"]),
            ]
            told[submission] = {
                "status": status["status"],
                "counts": [status["total"], status["scored"], status["counts"], status["invalid"]],
                "earlier": [
                    [e["version"], e["total"], e["counts"]] for e in status["earlier_results"]
                ],
                "verdicts": {
                    version: {
                        r["run_id"]: r["verdict"] for r in api.results(submission, version=version)
                    }
                    for version in versions
                },
            }
        for queue in (made.queue, made.blind_queue):
            progress = api.api("GET", f"/api/queues/{queue}/")
            told[f"queue {queue}"] = [progress["total"], progress["done"], progress["agreement"]]
        return told
    finally:
        api.close()


def live_runs(url: str, submission: int) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT count(*) FROM scoring_run WHERE submission_id = %s", [submission]
        ).fetchone()[0]


@pytest.mark.parametrize("path", PATHS, ids=[f"from-{path.old}" for path in PATHS])
def test_upgrade_keeps_everything_and_rolls_back(path, databases, trees, tmp_path):
    require_commit(path.old)
    assert unmet_pins(path.old) == [], f"{path.old} needs a virtualenv of its own"
    old = checkout(path.old, trees)
    log = tmp_path / "servers.log"
    upgraded = databases.create(f"{path.old}_upgraded")

    # 1. The old release, with data.
    manage(old, upgraded, "migrate", "--noinput")
    users, tokens = data.make_users(old, upgraded)
    with serving(old, upgraded, log) as base:
        made = data.seed(base, users, tokens)
        before = said(base, made)
    with psycopg.connect(upgraded) as conn:  # a day of live traces long past
        conn.execute(
            "UPDATE scoring_submission SET live_day = live_day - %s WHERE id = %s",
            [LIVE_DAYS_AGO, made.live],
        )
    counts_before = snapshot.counts(upgraded)
    print(f"{path.old} seeded:", {t: n for t, n in counts_before.items() if t in SHOWN})

    # 2. Backup, and migrate.
    backup = tmp_path / "backup.dump"
    pg_dump(upgraded, backup)
    started = time.monotonic()
    manage(ROOT, upgraded, "migrate", "--noinput")
    print(f"from {path.old}: migrate took {time.monotonic() - started:.1f} s")

    # 3. The rollback's restore, compared with the upgrade.
    restored = databases.create(f"{path.old}_restored")
    restore = pg_restore(backup, restored)
    assert restore.returncode == 0, restore.stderr
    assert snapshot.counts(restored) == counts_before
    assert snapshot.differences(restored, upgraded) == []
    if ("cases", "0009_suite_retention_days") not in migrations_at(path.old):
        with psycopg.connect(upgraded) as conn:
            periods = conn.execute(
                "SELECT DISTINCT live_retention_days FROM cases_suite"
            ).fetchall()
        assert periods == [(None,)], "suites from before retention must keep their live runs"
        kept = live_runs(upgraded, made.live)
        assert "removed 0 submissions' runs" in manage(ROOT, upgraded, "prune")
        assert live_runs(upgraded, made.live) == kept == 2

    # 4. The old release on the migrated schema, as while the new one is being deployed.
    with serving(old, upgraded, log) as base:
        old_on_new = data.smoke(base, made) + data.page_failures(base, made)
    if path.downtime:
        print(
            f"from {path.old} (needs downtime, as documented): "
            + "; ".join(old_on_new or ["no failure"])
        )
    else:
        assert old_on_new == [], (
            f"{path.old} fails on the migrated schema, yet docs/upgrading.md says no downtime"
        )

    # 5. This release on the upgraded database.
    with serving(ROOT, upgraded, log) as base:
        assert data.page_failures(base, made) == []
        assert said(base, made) == before
        assert data.smoke(base, made) == []

    # 6. The rollback: the old release on the backup restored into an empty database.
    with serving(old, restored, log) as base:
        assert said(base, made) == before
        assert data.page_failures(base, made) == []
        assert data.smoke(base, made) == []
    manage(ROOT, restored, "migrate", "--noinput")
