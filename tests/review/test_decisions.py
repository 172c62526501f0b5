"""The review service (scoring/review/decisions.py): statuses, assignees and comments on one
run and on thousands at once, untriaged runs that have no row, history, and reviews
outliving a re-score. On the database the tests are given (PostgreSQL in CI)."""

from __future__ import annotations

import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases import services
from cases.models import Membership, Role, Team, User
from scoring.ingest.pipeline import create_submission, rescore
from scoring.models import (
    Review,
    ReviewEvent,
    ReviewStatus,
    Run,
    Submission,
    Verdict,
    with_review_status,
)
from scoring.review import decisions

DEMO_CASES = ("greeting", "weather-two-cities", "delete-if-exists")
MANY = 3000


@pytest.fixture
def reviewer(db, password):
    return User.objects.create_user("rita", password=password)


@pytest.fixture
def other(db, password):
    return User.objects.create_user("otto", password=password)


@pytest.fixture
def suite(reviewer):
    from tests.support.pages import demo_document

    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=reviewer, role=Role.EDITOR)
    return services.create_suite(team, demo_document(), reviewer)


@pytest.fixture
def submission(suite, reviewer, django_capture_on_commit_callbacks):
    """Three scored runs of the demo suite: greeting passes, the other two fail."""
    lines = [
        {"case": "greeting", "batches": [], "final_text": "Hello!"},
        {"case": "weather-two-cities", "batches": [], "final_text": "no idea"},
        {"case": "delete-if-exists", "batches": [], "final_text": "nope"},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    with django_capture_on_commit_callbacks(execute=True):
        made = create_submission(suite, reviewer, io.BytesIO(data))
    made.refresh_from_db()
    return made


@pytest.fixture
def many_runs(submission) -> Submission:
    """The submission with MANY more (unscored) runs, stored in bulk: reviews need no result."""
    Run.objects.bulk_create(
        Run(
            submission=submission,
            seq=4 + i,
            line=4 + i,
            case_key="greeting",
            trial=1 + i,
            document={"case": "greeting", "batches": []},
        )
        for i in range(MANY)
    )
    return submission


def run_of(submission: Submission, case: str) -> Run:
    return submission.runs.get(case_key=case, trial=0)


# --- one run --------------------------------------------------------------------------------


def test_a_run_nobody_reviewed_has_no_row_and_is_untriaged(submission):
    runs = submission.runs.all()
    assert not Review.objects.exists()
    assert with_review_status(runs, ReviewStatus.UNTRIAGED).count() == 3
    assert not with_review_status(runs, ReviewStatus.FLAKY).exists()


def test_setting_a_status_makes_the_review_and_an_event(submission, reviewer):
    run = run_of(submission, "greeting")
    changed = decisions.set_status(submission.runs.filter(pk=run.pk), ReviewStatus.FLAKY, reviewer)
    assert changed == 1
    review = Review.objects.get()
    assert (review.run, review.submission, review.status, review.assignee) == (
        run,
        submission,
        ReviewStatus.FLAKY,
        None,
    )
    event = ReviewEvent.objects.get()
    assert (event.run, event.author, event.kind, event.status) == (
        run,
        reviewer,
        ReviewEvent.Kind.STATUS,
        ReviewStatus.FLAKY,
    )
    runs = submission.runs.all()
    assert list(with_review_status(runs, ReviewStatus.FLAKY)) == [run]
    assert with_review_status(runs, ReviewStatus.UNTRIAGED).count() == 2


def test_setting_the_status_a_run_already_has_changes_nothing(submission, reviewer):
    runs = submission.runs.filter(case_key="greeting")
    decisions.set_status(runs, ReviewStatus.REGRESSION, reviewer)
    assert decisions.set_status(runs, ReviewStatus.REGRESSION, reviewer) == 0
    # Untriaged is what a run without a row already is: no row, no event.
    others = submission.runs.exclude(case_key="greeting")
    assert decisions.set_status(others, ReviewStatus.UNTRIAGED, reviewer) == 0
    assert Review.objects.count() == ReviewEvent.objects.count() == 1


def test_a_run_set_back_to_untriaged_is_untriaged_again(submission, reviewer):
    runs = submission.runs.filter(case_key="greeting")
    decisions.set_status(runs, ReviewStatus.WONT_FIX, reviewer)
    assert decisions.set_status(runs, ReviewStatus.UNTRIAGED, reviewer) == 1
    assert with_review_status(submission.runs.all(), ReviewStatus.UNTRIAGED).count() == 3
    assert not with_review_status(submission.runs.all(), ReviewStatus.WONT_FIX).exists()


def test_an_unknown_status_is_refused(submission, reviewer):
    with pytest.raises(ValueError, match="meh"):
        decisions.set_status(submission.runs.all(), "meh", reviewer)
    assert not Review.objects.exists()


def test_assigning_keeps_the_status_and_setting_a_status_keeps_the_assignee(
    submission, reviewer, other
):
    runs = submission.runs.filter(case_key="greeting")
    decisions.set_status(runs, ReviewStatus.FLAKY, reviewer)
    assert decisions.assign(runs, other, reviewer) == 1
    review = Review.objects.get()
    assert (review.status, review.assignee) == (ReviewStatus.FLAKY, other)
    decisions.set_status(runs, ReviewStatus.REGRESSION, reviewer)
    review.refresh_from_db()
    assert (review.status, review.assignee) == (ReviewStatus.REGRESSION, other)


def test_assigning_to_the_same_person_or_unassigning_nobody_changes_nothing(
    submission, reviewer, other
):
    runs = submission.runs.all()
    assert decisions.assign(runs, None, reviewer) == 0  # nobody was assigned
    assert decisions.assign(runs, other, reviewer) == 3
    assert decisions.assign(runs, other, reviewer) == 0
    assert decisions.assign(runs.filter(case_key="greeting"), None, reviewer) == 1
    assert ReviewEvent.objects.filter(kind=ReviewEvent.Kind.ASSIGNEE).count() == 4
    assert Review.objects.filter(assignee=other).count() == 2
    # Assigning made rows, but no run left untriaged.
    assert with_review_status(runs, ReviewStatus.UNTRIAGED).count() == 3


def test_a_comment_is_an_event_and_needs_text(submission, reviewer):
    run = run_of(submission, "greeting")
    event = decisions.comment(run, "  looks <b>flaky</b>  ", reviewer)
    assert (event.kind, event.text, event.author) == (
        ReviewEvent.Kind.COMMENT,
        "looks <b>flaky</b>",
        reviewer,
    )
    with pytest.raises(ValueError, match="needs some text"):
        decisions.comment(run, "   ", reviewer)
    assert ReviewEvent.objects.count() == 1
    assert not Review.objects.exists()  # a comment does not triage the run


def test_history_is_oldest_first_with_who_did_what(submission, reviewer, other):
    run = run_of(submission, "greeting")
    one = submission.runs.filter(pk=run.pk)
    decisions.set_status(one, ReviewStatus.FLAKY, reviewer)
    decisions.comment(run, "seen it before", other)
    decisions.assign(one, other, reviewer)
    decisions.set_status(one, ReviewStatus.EXPECTATION_WRONG, other)
    decisions.comment(run_of(submission, "delete-if-exists"), "another run", other)
    with CaptureQueriesContext(connection) as queries:
        events = list(decisions.history(run))
        said = [(e.kind, e.author.username, e.status, e.assignee and e.assignee.username, e.text)
                for e in events]  # fmt: skip
    assert len(queries) == 1  # authors and assignees come with the events
    assert said == [
        ("status", "rita", "flaky", None, ""),
        ("comment", "otto", "", None, "seen it before"),
        ("assignee", "rita", "", "otto", ""),
        ("status", "otto", "expectation_wrong", None, ""),
    ]


# --- thousands of runs ----------------------------------------------------------------------


def test_a_bulk_status_change_is_one_transaction_with_an_event_a_run(many_runs, reviewer):
    runs = many_runs.runs.all()
    decisions.set_status(runs.filter(case_key="weather-two-cities"), ReviewStatus.FLAKY, reviewer)
    with CaptureQueriesContext(connection) as queries:
        changed = decisions.set_status(runs, ReviewStatus.FLAKY, reviewer)
    assert changed == MANY + 2  # the run that was flaky already is left alone
    assert len(queries) < MANY / 20  # in batches, not a query a run
    assert Review.objects.filter(status=ReviewStatus.FLAKY).count() == MANY + 3
    assert ReviewEvent.objects.count() == MANY + 3
    weather = run_of(many_runs, "weather-two-cities")
    assert ReviewEvent.objects.filter(run=weather).count() == 1


def test_a_bulk_change_that_fails_half_way_leaves_nothing_behind(many_runs, reviewer, monkeypatch):
    """The events go in after each batch of reviews; a failure in a later batch must undo
    the earlier ones (one transaction), not leave half a filter triaged."""
    real = ReviewEvent.objects.bulk_create
    calls = []

    def failing_second_time(objs, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("database went away")
        return real(objs, *args, **kwargs)

    monkeypatch.setattr(ReviewEvent.objects, "bulk_create", failing_second_time)
    with pytest.raises(RuntimeError):
        decisions.set_status(many_runs.runs.all(), ReviewStatus.REGRESSION, reviewer)
    assert not Review.objects.exists()
    assert not ReviewEvent.objects.exists()


def test_bulk_assignment_then_status_of_a_filter(many_runs, reviewer, other):
    runs = many_runs.runs.filter(case_key="greeting")
    assert decisions.assign(runs, other, reviewer) == MANY + 1
    assert decisions.set_status(runs.filter(trial__lt=10), ReviewStatus.WONT_FIX, other) == 10
    assert Review.objects.filter(assignee=other, status=ReviewStatus.WONT_FIX).count() == 10
    untriaged = with_review_status(many_runs.runs.all(), ReviewStatus.UNTRIAGED)
    assert untriaged.count() == MANY + 3 - 10


# --- re-scoring -----------------------------------------------------------------------------


def test_reviews_and_history_survive_a_rescore(
    submission, suite, reviewer, django_capture_on_commit_callbacks
):
    weather = run_of(submission, "weather-two-cities")
    decisions.set_status(submission.runs.filter(pk=weather.pk), ReviewStatus.EXPECTATION_WRONG,
                       reviewer)  # fmt: skip
    decisions.comment(weather, "the case wants two cities, the prompt one", reviewer)
    assert weather.result.verdict == Verdict.FAIL
    # The reviewer fixes the suite (a new version where the case expects nothing) and
    # re-scores against it.
    document = services.case_document(suite.cases.get(key="weather-two-cities"))
    document |= {"expected_calls": [], "expectations": []}
    services.save_case(suite, document, reviewer, case=suite.cases.get(key="weather-two-cities"))
    with django_capture_on_commit_callbacks(execute=True):
        rescore(submission, suite.versions.get(number=2))
    weather.refresh_from_db()
    assert weather.result.verdict == Verdict.PASS
    review = Review.objects.get(run=weather)
    assert review.status == ReviewStatus.EXPECTATION_WRONG
    assert [e.kind for e in decisions.history(weather)] == ["status", "comment"]
    assert list(with_review_status(submission.runs.all(), ReviewStatus.EXPECTATION_WRONG)) == [
        weather
    ]


def test_a_filter_that_joins_may_name_a_run_twice_and_it_changes_once(submission, reviewer):
    """A run with two comments comes twice out of a join through its events (as one failing
    two predicates of the same label would through its predicates)."""
    run = run_of(submission, "greeting")
    decisions.comment(run, "first", reviewer)
    decisions.comment(run, "second", reviewer)
    commented = submission.runs.filter(review_events__kind=ReviewEvent.Kind.COMMENT)
    assert commented.count() == 2
    assert decisions.set_status(commented, ReviewStatus.FLAKY, reviewer) == 1
    assert decisions.assign(commented, reviewer, reviewer) == 1
    assert ReviewEvent.objects.exclude(kind=ReviewEvent.Kind.COMMENT).count() == 2
