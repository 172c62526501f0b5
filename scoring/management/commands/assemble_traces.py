"""``manage.py assemble_traces``: make every live trace that is due into its run now (what
Celery beat's sweep does), e.g. after the embedded server stopped with traces pending."""

from django.core.management.base import BaseCommand

from scoring.live import assembly


class Command(BaseCommand):
    help = "Make the OpenTelemetry traces whose grace period is over into runs, and score them."

    def handle(self, **options):
        made = assembly.assemble_due()
        self.stdout.write(f"{made} trace(s) made into runs")
