"""``manage.py demo``: a demo user, team and suite, with a scored upload of runs, to try the
app with (idempotent)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import transaction

import cases
from cases import services
from cases.models import Membership, Role, Suite, Team, User
from scoring.ingest.pipeline import create_submission

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "casebook-demo"
DEMO = Path(cases.__file__).resolve().parent / "demo"
DEMO_SUITE = DEMO / "assistant.suite.json"
DEMO_RUNS = DEMO / "assistant.runs.jsonl"


class Command(BaseCommand):
    help = (
        "Create the demo user, team and suite with a scored submission (and reset the "
        "password) to try the app."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--address",
            default="http://127.0.0.1:8000/",
            help="where the server that will serve the demo listens, to print (make dev and "
            "bin/stack give theirs)",
        )

    @transaction.atomic
    def handle(self, *, address="http://127.0.0.1:8000/", **options):
        user, _ = User.objects.get_or_create(username=DEMO_USERNAME)
        user.set_password(DEMO_PASSWORD)
        user.is_staff = user.is_superuser = True
        user.save()
        team, _ = Team.objects.get_or_create(slug="demo", defaults={"name": "Demo team"})
        Membership.objects.update_or_create(team=team, user=user, defaults={"role": Role.ADMIN})
        document = json.loads(DEMO_SUITE.read_text())
        suite = Suite.objects.filter(team=team, name=document["name"]).first()
        if suite is None:
            suite = services.create_suite(team, document, user, message="Demo suite")
        if not suite.submissions.exists():
            # Scored once this transaction commits: in-process without REDIS_URL, else by
            # a worker.
            with DEMO_RUNS.open("rb") as runs:
                create_submission(suite, user, runs, filename=DEMO_RUNS.name, label="demo agent")
        login = f"{DEMO_USERNAME} / {DEMO_PASSWORD}"
        self.stdout.write(self.style.SUCCESS(f"Demo ready. Sign in at {address} as {login}"))
