"""``manage.py summarize``: store the summaries the pages read (failures by cause, failing
runs by signature, runs case by case) for every scored submission that has none: those
scored before a release added them, which the pages otherwise count run by run on every
request. Run once after upgrading; running it again does nothing (a summary made once is
not made again)."""

from django.core.management.base import BaseCommand

from scoring.models import Status, Submission
from scoring.results.failures import summarize_when_scored


class Command(BaseCommand):
    help = "Store the failure, problem and case summaries of scored submissions that lack them."

    def handle(self, **options):
        scored = Submission.objects.filter(status=Status.DONE).order_by("pk")
        checked = 0
        for pk in scored.values_list("pk", flat=True).iterator():
            summarize_when_scored(pk)
            checked += 1
        self.stdout.write(f"{checked} scored submission(s) summarized or already summarized")
