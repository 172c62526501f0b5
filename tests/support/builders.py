"""Builders the database tests share."""

import io
import json
from pathlib import Path

from django.test import TestCase

from cases import services, tokens
from cases.models import Membership, ReviewLabel, Role, Team, User
from scoring.ingest.pipeline import create_submission
from scoring.models import ModelPrice
from scoring.review.queues import build_queue

ROLES = ("anonymous", "outsider", "viewer", "editor", "admin")
DEMO = json.loads((Path(__file__).parents[2] / "cases/demo/assistant.suite.json").read_text())


def make_team(name: str, **members: User) -> Team:
    """A team; ``members`` maps each role name to a user (``admin=alice``)."""
    team = Team.objects.create(name=name, slug=Team.unique_slug(name))
    for role, user in members.items():
        Membership.objects.create(team=team, user=user, role=Role(role))
    return team


# One call, which the run page can make an expectation of.
RUN_FILE = b'{"case": "greeting", "batches": [[{"name": "wave"}]], "final_text": "Hello!"}\n'


class World:
    """A private suite of team ``agents`` with one member per role, and an outsider who is
    admin of a team of their own."""

    def __init__(self, password):
        self.password = password
        self.users = {name: User.objects.create_user(name, password=password) for name in ROLES[1:]}
        self.team = Team.objects.create(name="Agents", slug="agents")
        for role in (Role.VIEWER, Role.EDITOR, Role.ADMIN):
            Membership.objects.create(team=self.team, user=self.users[role], role=role)
        other = Team.objects.create(name="Others", slug="others")
        Membership.objects.create(team=other, user=self.users["outsider"], role=Role.ADMIN)
        User.objects.create_user("newcomer", password=password)
        admin = self.users["admin"]
        self.suite = services.create_suite(self.team, DEMO, admin)
        self.case = self.suite.cases.get(key="greeting")
        document = services.case_document(self.case) | {"title": "second version"}
        services.save_case(self.suite, document, admin, case=self.case)
        self.case.refresh_from_db()
        self.viewer_membership = Membership.objects.get(team=self.team, user=self.users["viewer"])
        with TestCase.captureOnCommitCallbacks(execute=True):  # ingest and score it now
            self.submission = create_submission(self.suite, admin, io.BytesIO(RUN_FILE))
        self.run = self.submission.runs.get()
        self.queue = build_queue(self.submission, "all runs", admin)
        self.label = ReviewLabel.objects.create(team=self.team, name="wrong tool", key="w")
        self.price = ModelPrice.objects.create(
            team=self.team, model="house-llama", input_per_mtok=0.2, output_per_mtok=0.4
        )
        reviewers = [self.users["editor"], admin]
        self.blind_queue = build_queue(
            self.submission, "blind", admin, reviewers=reviewers, double_blind=True
        )
        self.suite_token, _ = tokens.create(self.users["editor"], "agent", suite=self.suite)

    def ids(self):
        return {
            "team": self.team.slug,
            "suite": self.suite.pk,
            "case": self.case.pk,
            "key": self.case.key,
            "membership": self.viewer_membership.pk,
            "submission": self.submission.pk,
            "run": self.run.pk,
            "queue": self.queue.pk,
            "label": self.label.pk,
            "price": self.price.pk,
            "blind_queue": self.blind_queue.pk,
            "blind_item": self.blind_queue.items.get().pk,
            "suite_token": self.suite_token.pk,
        }
