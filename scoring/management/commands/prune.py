"""``manage.py prune [--dry-run] [--suite ID]``: remove the runs that outlived their suite's
retention now, as the daily task does, or with ``--dry-run`` only say what would go
(docs/command-line.md#prune, docs/operations.md#retention)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.template.defaultfilters import pluralize

from scoring.retention import pruning


class Command(BaseCommand):
    help = "Remove runs past their suite's retention (or, with --dry-run, list them)."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="remove nothing")
        parser.add_argument("--suite", type=int, help="only this suite (its id)")

    def handle(self, *args, dry_run=False, suite=None, **options):
        result = pruning.expired(suite_id=suite) if dry_run else pruning.prune(suite_id=suite)
        verb = "would remove" if dry_run else "removed"
        for each in result.submissions:
            submission = each.submission
            kind = f"live {submission.live_day}" if submission.live_day else "upload"
            self.stdout.write(
                f"suite {submission.suite_id} submission #{submission.pk} ({kind}, "
                f"{each.days} day{pluralize(each.days)}): {each.runs} runs, "
                f"{each.reviewed_runs} reviewed, "
                f"{each.upload_chunks} upload chunks"
            )
        summary = (
            f"{verb} {len(result.submissions)} submissions' runs: {result.runs} runs "
            f"({result.reviewed_runs} reviewed), {result.orphan_traces} traces that made no run"
        )
        if not dry_run:
            summary += f"; {result.rows} rows, at most {result.largest_batch} a transaction"
        self.stdout.write(summary)
