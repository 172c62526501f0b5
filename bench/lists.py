"""Lists on a large submission: what keeping the earlier result costs a re-score, and the
server time of the pages that sort case keys naturally or read the kept result.

    python bench/lists.py                  # seed 100,000 runs, then measure
    python bench/lists.py --runs 20000
    python bench/lists.py --reuse          # measure the submission seeded last time

Seeds a database of its own, ``casebook_benchlists``, as ``bench/pages.py`` seeds its own
(``bench.datagen``'s realistic runs, read and scored by the real code), adds a second version
of the suite, and times:

- ``keep_earlier``: copying every result of the submission to ``EarlierResult`` (one
  ``INSERT ... SELECT``), the part of a re-score that keeping the earlier result adds; rolled
  back, so it can be measured again;
- the runs table sorted by case (natural order, from the ``run_natural_order`` index), on its
  first page and on a page in the middle;
- the earlier result's page (``/submissions/N/versions/1/``), once the submission is
  re-scored against version 2.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages as page_bench  # noqa: E402

DATABASE = "casebook_benchlists"


def timed(action, repeat: int) -> tuple[float, float]:
    """Median and worst of ``repeat`` runs of ``action``, in ms."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def keep_earlier_once(submission, version) -> None:
    from django.db import transaction

    from scoring.ingest.conductor import keep_earlier
    from scoring.models import Submission

    with transaction.atomic():
        locked = Submission.objects.select_for_update().get(pk=submission.pk)
        keep_earlier(locked, version)
        transaction.set_rollback(True)


def second_version(submission):
    from cases import services

    suite = submission.suite
    if suite.versions.count() < 2:
        services.update_settings(suite, submission.uploader, message="v2", description="v2")
    return suite.versions.get(number=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=10, help="per page")
    parser.add_argument("--reuse", action="store_true", help="keep the last seeded database")
    args = parser.parse_args()
    page_bench.DATABASE = DATABASE
    if not args.reuse:
        page_bench.recreate_database()
    page_bench.configure()
    user, submission = page_bench.existing() if args.reuse else page_bench.seed(args.runs)
    page_bench.settle(False)
    from django.test import Client

    from scoring.ingest import pipeline

    version = second_version(submission)
    other = submission.suite.versions.exclude(pk=submission.version_id).first()
    runs = submission.scored
    median, worst = timed(lambda: keep_earlier_once(submission, other), 3)
    print(f"\nkeep_earlier on {runs:,} results: median {median:.0f} ms, max {worst:.0f} ms")
    client = Client()
    client.force_login(user)
    base = submission.get_absolute_url()
    middle = max(1, runs // 50 // 2)
    measured = {
        "sorted by case, page 1": (base, {"sort": "case"}),
        f"sorted by case, page {middle}": (base, {"sort": "case", "page": middle}),
        "sorted by case, descending": (base, {"sort": "-case"}),
    }
    if not submission.earlier_scores.exists():
        started = time.perf_counter()
        pipeline.rescore(submission, version)  # Celery eager: scored here
        print(f"re-scored against v2 in {time.perf_counter() - started:.0f} s")
        submission.refresh_from_db()
    if submission.earlier_scores.exists():
        measured["earlier result, page 1"] = (f"{base}versions/1/", {})
        measured["earlier result, failing"] = (f"{base}versions/1/", {"verdict": "fail"})
    print(f"\n{args.requests} requests per page; server time in ms (the test client)")
    print(f"{'page':<30}{'median':>8}{'max':>8}")
    for name, (path, query) in measured.items():
        assert client.get(path, query).status_code == 200, name

        def get(path=path, query=query):
            client.get(path, query)

        median, worst = timed(get, args.requests)
        print(f"{name:<30}{median:>8.1f}{worst:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
