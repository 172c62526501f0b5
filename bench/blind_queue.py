"""A double-blind review queue at size (docs/review.md#double-blind-review): the time to make
it, and the server time of its page and API once both reviewers have decided every run (when
the agreement is computed).

    python bench/blind_queue.py                # 10,000 runs in the queue
    python bench/blind_queue.py --items 40000

Seeds a database of its own, ``casebook_benchblind`` (dropped and made again): a suite, a
submission whose runs and results are written in bulk (not scored: the queue only needs
their rows), three team labels, then a double-blind queue of every run for two reviewers,
whose decisions are filled in bulk (about 70% agreeing, a label on one in five). Prints the
time to make the queue, and the median and p95 server time and queries of the queue page
(progress, κ per status and label, the first disagreements to resolve, a page of items) and
of ``GET /api/queues/{id}/``. Target: p95 under 300 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.pages import TARGET_MS, configure, recreate_database  # noqa: E402

DATABASE = "casebook_benchblind"
STATUSES = ["regression", "expectation_wrong", "flaky", "wont_fix"]


def setup() -> None:

    recreate_database(DATABASE)
    configure(DATABASE)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seed(n_items: int):
    from cases import services
    from cases.models import Membership, ReviewLabel, Role, User
    from scoring.models import Result, Run, Submission
    from tests.support.builders import DEMO

    maker = User.objects.create_user("maker", password="bench-password")
    ann = User.objects.create_user("ann")
    bob = User.objects.create_user("bob")
    team = services.create_team("Bench", maker)
    for user in (ann, bob):
        Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    labels = [ReviewLabel.objects.create(team=team, name=n) for n in ("a", "b", "c")]
    suite = services.create_suite(team, DEMO, maker)
    submission = Submission.objects.create(
        suite=suite, version=suite.latest_version, chunk_runs=1000, status="done"
    )
    runs = Run.objects.bulk_create(
        (
            Run(
                submission=submission,
                seq=i,
                line=i,
                case_key="greeting",
                trial=i,
                document={"case": "greeting", "batches": []},
            )
            for i in range(1, n_items + 1)
        ),
        batch_size=5000,
    )
    Result.objects.bulk_create(
        (Result(run=run, submission=submission, verdict="fail", report={}) for run in runs),
        batch_size=5000,
    )
    return maker, ann, bob, submission, labels


def decide_everything(queue, labels) -> None:
    """Both reviewers' decisions, written in bulk: about 70% agree, one in five labelled."""
    from django.utils import timezone

    from scoring.models import BlindDecision

    rng = random.Random(14)
    now = timezone.now()
    decisions = list(BlindDecision.objects.filter(item__queue=queue).order_by("item_id", "pk"))
    links = []
    for first, second in zip(decisions[::2], decisions[1::2], strict=True):
        first.status = rng.choice(STATUSES)
        second.status = first.status if rng.random() < 0.7 else rng.choice(STATUSES)
        for decision in (first, second):
            decision.decided_at = now
            if rng.random() < 0.2:
                link = BlindDecision.labels.through(blinddecision=decision, reviewlabel=labels[0])
                link.reviewlabel = rng.choice(labels)
                links.append(link)
    BlindDecision.objects.bulk_update(decisions, ["status", "decided_at"], batch_size=5000)
    BlindDecision.labels.through.objects.bulk_create(links, batch_size=5000)


def timed(client, path: str, n: int) -> tuple[float, float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(path)  # warm
    times = []
    for _ in range(n):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    times.sort()
    return statistics.median(times), times[max(0, round(0.95 * n) - 1)], len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    setup()
    from django.db import connection
    from django.test import Client

    from scoring.review import queues

    maker, ann, bob, submission, labels = seed(args.items)
    started = time.perf_counter()
    queue = queues.build_queue(submission, "blind", maker, reviewers=[ann, bob], double_blind=True)
    made = (time.perf_counter() - started) * 1000
    print(f"made a double-blind queue of {queue.items.count():,} runs in {made:.0f} ms")
    decide_everything(queue, labels)
    with connection.cursor() as cursor:
        for table in ("scoring_queueitem", "scoring_blinddecision", "scoring_blinddecision_labels"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    client = Client()
    client.force_login(maker)
    print(f"\n{args.requests} requests each; server time in ms (the test client, in process)")
    print(f"{'page':<28}{'median':>8}{'p95':>8}{'queries':>9}  status")
    fast = True
    for name, path in (
        ("queue page (κ, to resolve)", queue.get_absolute_url()),
        ("queue API", f"/api/queues/{queue.pk}/"),
    ):
        median, p95, n_queries = timed(client, path, args.requests)
        fast &= p95 < TARGET_MS
        status = "ok" if p95 < TARGET_MS else "SLOW"
        print(f"{name:<28}{median:>8.1f}{p95:>8.1f}{n_queries:>9}  {status}", flush=True)
    print(f"\n{'every page' if fast else 'NOT every page'} under {TARGET_MS} ms at p95")


if __name__ == "__main__":
    main()
