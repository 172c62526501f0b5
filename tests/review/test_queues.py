"""Review queues (docs/review.md#review-queues): built from a filter or a failure group, shared
out among reviewers, worked through with "next item" that reserves each run to one reviewer,
progress per reviewer; and their pages, with the suite's permissions."""

from __future__ import annotations

import io
import re
import threading
import time
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import connection, connections
from django.utils import timezone
from django.utils.html import escape

from cases import services
from cases.models import Membership, Role, User
from scoring.ingest.pipeline import create_submission, rescore
from scoring.models import (
    PredicateResult,
    QueueItem,
    Result,
    Review,
    ReviewQueue,
    ReviewStatus,
    Run,
)
from scoring.results.filtersets import RunFilterSet
from scoring.review import decisions, queues
from tests.support.builders import make_team
from tests.support.pages import HX, jsonl, text
from tests.support.runs import DELETE_FAIL, GREETING_FAIL, GREETING_PASS, TRIALS, cells

# The demo suite's runs: TRIALS (3 pass, 5 fail) and three more failing greetings.
RUNS = [*TRIALS, GREETING_FAIL, GREETING_FAIL, GREETING_FAIL]
FAILED = 8


@pytest.fixture
def second_editor(make_user, team):
    user = make_user("eve-editor")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    return user


@pytest.fixture
def submission(suite, admin, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        made = create_submission(suite, admin, io.BytesIO(jsonl(RUNS)), label="model-a")
    made.refresh_from_db()
    return made


def failing(submission) -> RunFilterSet:
    return RunFilterSet({"verdict": "fail"})


def greeting_label(submission) -> str:
    """The label of the predicate the failing greetings fail (read, not hard-coded)."""
    return (
        PredicateResult.objects.filter(submission=submission, result__run__case_key="greeting")
        .values_list("label", flat=True)
        .first()
    )


def run_ids(queue: ReviewQueue) -> list[int]:
    return list(queue.items.order_by("position").values_list("run_id", flat=True))


def triage(item: QueueItem, user, status=ReviewStatus.FLAKY) -> None:
    decisions.set_status(Run.objects.filter(pk=item.run_id), status, user)


def expire(item: QueueItem) -> None:
    QueueItem.objects.filter(pk=item.pk).update(
        reserved_until=timezone.now() - timedelta(seconds=1)
    )


# --- building -------------------------------------------------------------------------------


def test_a_queue_from_a_filter_holds_its_runs_in_the_tables_order(submission, editor):
    filters = RunFilterSet({"verdict": "fail", "sort": "-case"})
    queue = queues.build_queue(submission, "failures", editor, filters=filters)
    expected = list(filters.results(submission).values_list("run_id", flat=True))
    assert len(expected) == FAILED
    assert run_ids(queue) == expected
    assert list(queue.items.values_list("position", flat=True)) == list(range(1, FAILED + 1))
    assert (queue.filter_query, queue.group) == ("verdict=fail&sort=-case", "")
    assert queue.runs_url() == f"/submissions/{submission.pk}/?verdict=fail&sort=-case#runs-section"


def test_a_queue_from_a_failure_group_holds_the_runs_failing_that_predicate(submission, editor):
    label = greeting_label(submission)
    queue = queues.build_queue(submission, "greetings", editor, group=label)
    greetings = submission.runs.filter(case_key="greeting", result__verdict="fail")
    assert set(run_ids(queue)) == set(greetings.values_list("pk", flat=True))
    assert len(run_ids(queue)) == 4
    assert (queue.group, queue.filter_query) == (label, "")
    # A filter that is just that failing predicate is the same group.
    same = queues.build_queue(
        submission, "again", editor, filters=RunFilterSet({"predicate": label})
    )
    assert same.group == label
    assert run_ids(same) == run_ids(queue)


def test_nothing_to_review_makes_no_queue(submission, editor):
    with pytest.raises(queues.NothingToReview):
        queues.build_queue(
            submission, "none", editor, filters=RunFilterSet({"case": "no-such-case"})
        )
    assert not ReviewQueue.objects.exists()


def test_ten_thousand_runs_make_a_queue_in_bulk(
    submission, editor, second_editor, django_assert_max_num_queries
):
    first = submission.runs.order_by("-seq").first()
    runs = Run.objects.bulk_create(
        Run(
            submission=submission,
            seq=first.seq + i,
            line=first.line + i,
            case_key="greeting",
            trial=100 + i,
            document={"case": "greeting", "batches": []},
        )
        for i in range(1, 10_001)
    )
    Result.objects.bulk_create(
        Result(run=run, submission=submission, verdict="fail", report={"predicates": []})
        for run in runs
    )
    started = time.perf_counter()
    with django_assert_max_num_queries(12):
        queue = queues.build_queue(
            submission,
            "big",
            editor,
            filters=failing(submission),
            reviewers=[editor, second_editor],
        )
    elapsed = time.perf_counter() - started
    print(f"built a queue of 10,008 runs in {elapsed:.3f} s")
    assert queue.items.count() == 10_000 + FAILED
    assert elapsed < 5, f"{elapsed:.2f} s"  # about 0.3 s on PostgreSQL here
    shares = {share.assignee: share.total for share in queues.progress(queue).shares}
    assert shares == {"eddie-editor": 5004, "eve-editor": 5004}


def test_reviewers_get_the_runs_in_turn_and_finished_ones_stay_put(
    submission, admin, editor, second_editor
):
    queue = queues.build_queue(submission, "q", admin, filters=failing(submission))
    assert set(queue.items.values_list("assignee", flat=True)) == {None}  # a shared pool
    done = queue.items.get(position=1)
    triage(done, admin)
    queues.deal_out(queue, [editor, second_editor, admin])
    by_position = dict(queue.items.values_list("position", "assignee__username"))
    assert by_position[1] is None  # reviewed before: not shared out
    assert [by_position[p] for p in range(2, FAILED + 1)] == [
        "alice-admin" if p % 3 == 2 else "eddie-editor" if p % 3 == 0 else "eve-editor"
        for p in range(2, FAILED + 1)
    ]


# --- next item, reservations ----------------------------------------------------------------


def test_next_item_reserves_a_run_to_one_reviewer_and_gives_it_back_to_them(
    submission, editor, second_editor, settings
):
    settings.CASEBOOK_REVIEW_RESERVATION_SECONDS = 120
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    first = queues.next_item(queue, editor)
    assert first.position == 1
    assert first.reserved_by == editor
    assert timedelta(seconds=115) < first.reserved_until - timezone.now() <= timedelta(seconds=120)
    # Asked again before finishing it, the reviewer gets the same run back.
    assert queues.next_item(queue, editor).pk == first.pk
    # Someone else meanwhile gets another one.
    other = queues.next_item(queue, second_editor)
    assert other.position == 2
    assert queues.holder(first, second_editor) == editor
    assert queues.holder(first, editor) is None
    # Once it is triaged, the next one comes.
    triage(first, editor)
    assert queues.next_item(queue, editor).position == 3


def test_a_lapsed_reservation_lets_another_reviewer_have_the_run(submission, editor, second_editor):
    queue = queues.build_queue(
        submission, "q", editor, filters=failing(submission), reviewers=[editor]
    )
    first = queues.next_item(queue, editor)
    # While it is held, the colleague helping out is given the next one.
    helping = queues.next_item(queue, second_editor)
    assert helping.position == 2
    triage(helping, second_editor)
    expire(first)
    assert queues.holder(QueueItem.objects.get(pk=first.pk), second_editor) is None
    taken = queues.next_item(queue, second_editor)
    assert taken.pk == first.pk
    assert (taken.reserved_by, taken.assignee) == (second_editor, second_editor)
    assert queues.next_item(queue, editor).position == 3


def test_own_share_first_then_the_unreserved_runs_of_others(
    submission, admin, editor, second_editor
):
    queue = queues.build_queue(
        submission, "q", admin, filters=failing(submission), reviewers=[editor, second_editor]
    )
    mine = queue.items.filter(assignee=editor).order_by("position")
    assert mine.count() == FAILED // 2
    for expected in mine:
        item = queues.next_item(queue, editor)
        assert item.pk == expected.pk
        triage(item, editor)
    # Their share done, they help with their colleague's: the first one not reserved.
    held = queues.next_item(queue, second_editor)
    helped = queues.next_item(queue, editor)
    assert helped.pk != held.pk
    assert helped.assignee == editor
    progress = {s.assignee: (s.done, s.total) for s in queues.progress(queue).shares}
    assert progress == {"eddie-editor": (4, 5), "eve-editor": (0, 3)}


def test_when_the_rest_is_reserved_nothing_is_given_and_the_queue_is_not_finished(
    submission, editor, second_editor
):
    label = greeting_label(submission)
    queue = queues.build_queue(submission, "q", editor, group=label)
    held = [queues.next_item(queue, second_editor)]
    for item in queue.items.exclude(pk=held[0].pk):
        triage(item, editor)
    assert queues.next_item(queue, editor) is None
    assert not queues.progress(queue).finished
    triage(held[0], second_editor)
    assert queues.next_item(queue, second_editor) is None
    assert queues.progress(queue).finished


def test_moving_on_from_an_undecided_run_skips_it_until_the_others_are_done(
    submission, editor, second_editor
):
    queue = queues.build_queue(
        submission, "q", editor, filters=failing(submission), reviewers=[editor]
    )
    first = queues.next_item(queue, editor)
    assert first.position == 1
    # Moving on leaves the first undecided: the next is the second, not the first again,
    # and the first is no longer reserved (a colleague may take it).
    second = queues.next_item(queue, editor, after=first)
    assert second.position == 2
    assert queues.holder(QueueItem.objects.get(pk=first.pk), second_editor) is None
    # On from each in turn, to the last; then round again to the first, skipped.
    item = second
    for position in range(3, FAILED + 1):
        item = queues.next_item(queue, editor, after=item)
        assert item.position == position
    assert queues.next_item(queue, editor, after=item).pk == first.pk


def test_a_run_set_back_to_untriaged_is_back_in_the_queue(submission, editor):
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    first = queues.next_item(queue, editor)
    triage(first, editor)
    assert queues.progress(queue).done == 1
    triage(first, editor, ReviewStatus.UNTRIAGED)
    assert queues.progress(queue).done == 0
    assert queues.next_item(queue, editor).pk == first.pk


def test_progress_per_reviewer_is_one_query(
    submission, admin, editor, second_editor, django_assert_num_queries
):
    queue = queues.build_queue(
        submission, "q", admin, filters=failing(submission), reviewers=[editor, second_editor]
    )
    for _ in range(3):
        triage(queues.next_item(queue, editor), editor)
    triage(queues.next_item(queue, second_editor), second_editor)
    with django_assert_num_queries(1):
        progress = queues.progress(queue)
    assert [(s.assignee, s.done, s.total, s.left) for s in progress.shares] == [
        ("eddie-editor", 3, 4, 1),
        ("eve-editor", 1, 4, 3),
    ]
    assert (progress.done, progress.total, progress.finished) == (4, 8, False)


def test_a_queue_outlives_a_rescore(submission, suite, editor, django_capture_on_commit_callbacks):
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    triage(queues.next_item(queue, editor), editor)
    services.save_case(suite, {"key": "extra", "expected_calls": [{"name": "f"}]}, editor)
    with django_capture_on_commit_callbacks(execute=True):
        rescore(submission, suite.versions.get(number=2))
    assert queue.items.count() == FAILED
    assert queues.progress(queue).done == 1


@pytest.mark.django_db(transaction=True)
def test_reviewers_asking_at_once_never_get_the_same_run(suite, admin, team):
    """Eight reviewers in eight threads (eight connections) work through the queue at the
    same moment, each triaging what they are given: every run is handed out exactly once."""
    if connection.vendor != "postgresql":
        pytest.skip("needs row locks and concurrent connections: PostgreSQL")
    lines = [DELETE_FAIL if i % 2 else GREETING_PASS for i in range(240)]
    with_trials = [line | {"trial": trial} for trial, line in enumerate(lines)]
    submission = create_submission(suite, admin, io.BytesIO(jsonl(with_trials)))
    assert submission.runs.count() == 240
    queue = queues.build_queue(submission, "q", admin)
    reviewers = []
    for n in range(8):
        user = User.objects.create_user(f"reviewer-{n}")
        Membership.objects.create(team=team, user=user, role=Role.EDITOR)
        reviewers.append(user)
    given: dict[int, list[int]] = {user.pk: [] for user in reviewers}
    start = threading.Barrier(len(reviewers))
    failures = []

    def work(user):
        try:
            start.wait()
            while (item := queues.next_item(queue, user)) is not None:
                given[user.pk].append(item.run_id)
                triage(item, user)
        except Exception as exc:  # reported below: a thread's exception is otherwise lost
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(user,)) for user in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    handed = [run_id for runs in given.values() for run_id in runs]
    assert len(handed) == len(set(handed)) == 240
    assert sum(1 for runs in given.values() if runs) > 1  # they did work side by side
    assert queues.progress(queue).finished


# --- pages ----------------------------------------------------------------------------------


def test_the_new_queue_page_says_how_many_runs_of_the_filter_it_will_hold(
    as_user, editor, submission
):
    html = text(as_user(editor).get(f"/submissions/{submission.pk}/queues/new/?verdict=fail"))
    assert "8 runs" in html
    assert "The runs that match “failed”" in html
    assert 'value="Failed"' in html  # the name it suggests
    # Reviewers are the team's editors and admins, not its viewers.
    assert "eddie-editor" in html
    assert "alice-admin" in html
    assert "vera-viewer" not in html


def test_making_a_queue_of_a_filter_shares_it_out_and_opens_it(
    as_user, editor, admin, viewer, submission
):
    client = as_user(editor)
    response = client.post(
        f"/submissions/{submission.pk}/queues/new/?verdict=fail&case=greeting",
        {"name": "Greetings that fail", "reviewers": [editor.pk, admin.pk]},
    )
    queue = ReviewQueue.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/queues/{queue.pk}/"
    assert (queue.name, queue.created_by, queue.filter_query) == (
        "Greetings that fail",
        editor,
        "verdict=fail&case=greeting",
    )
    assert queue.items.count() == 4
    assert sorted(queue.items.values_list("assignee__username", flat=True)) == [
        "alice-admin",
        "alice-admin",
        "eddie-editor",
        "eddie-editor",
    ]
    html = text(client.get(f"/queues/{queue.pk}/"))
    assert "Start reviewing" in html
    assert "0 of 4 runs reviewed" in html


def test_a_queue_is_named_and_listed_by_its_filters_in_words(as_user, editor, submission):
    """Not in the address's syntax (``cause=argument_value%3A...``): the words the runs
    table's chips and the failures by cause use."""
    failed = PredicateResult.objects.filter(submission=submission)
    cause = failed.exclude(cause_tool="").first()
    query = {"verdict": "fail", "cause": f"{cause.cause_kind}:{cause.cause_tool}", "sort": "-case"}
    client = as_user(editor)
    page = text(client.get(f"/submissions/{submission.pk}/queues/new/", query))
    words = f"failed, failing {RunFilterSet(query).cause_words}, by case, last first"
    assert f"The runs that match “{words}”" in page
    assert f'value="F{words[1:]}"' in page  # the name it suggests
    client.post(
        f"/submissions/{submission.pk}/queues/new/?{urlencode(query)}",
        {"name": "q", "reviewers": [editor.pk]},
    )
    queue = ReviewQueue.objects.get()
    for html in (
        text(client.get(f"/submissions/{submission.pk}/queues/")),
        text(client.get(f"/queues/{queue.pk}/")),
    ):
        assert f'runs: <a href="{escape(queue.runs_url())}">{words}</a>' in html
        assert "cause=" not in html.replace(escape(queue.runs_url()), "")


def test_a_viewer_may_not_pick_reviewers_among_viewers(as_user, editor, viewer, submission):
    response = as_user(editor).post(
        f"/submissions/{submission.pk}/queues/new/", {"name": "q", "reviewers": [viewer.pk]}
    )
    assert response.status_code == 422
    assert "Select a valid choice" in text(response)
    assert not ReviewQueue.objects.exists()


def test_making_a_queue_of_nothing_says_so(as_user, editor, submission):
    response = as_user(editor).post(
        f"/submissions/{submission.pk}/queues/new/?case=nope", {"name": "q"}
    )
    assert response.status_code == 422
    assert "nothing to review" in text(response)


def test_making_a_queue_of_a_failure_group(as_user, editor, submission):
    label = greeting_label(submission)
    client = as_user(editor)
    url = f"/submissions/{submission.pk}/queues/new/"
    html = text(client.get(url, {"group": label}))
    assert "The runs of the failure group" in html
    assert "4 runs" in html
    client.post(f"{url}?{urlencode({'predicate': label})}", {"name": "group"})
    queue = ReviewQueue.objects.get()
    assert queue.group == label
    html = text(client.get(f"/submissions/{submission.pk}/queues/"))
    assert "failure group" in html
    assert "0 / 4" in html


def test_the_submission_page_links_to_a_queue_of_its_current_filter(
    as_user, editor, viewer, submission
):
    html = text(as_user(editor).get(f"/submissions/{submission.pk}/?verdict=fail"))
    assert f'href="/submissions/{submission.pk}/queues/new/?verdict=fail"' in html
    html = text(as_user(viewer).get(f"/submissions/{submission.pk}/"))
    assert "/queues/new/" not in html
    assert f'href="/submissions/{submission.pk}/queues/"' in html


def test_next_opens_the_run_page_with_the_queue_and_reserves_the_run(
    as_user, editor, second_editor, submission, client, django_user_model
):
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    first = queue.items.get(position=1)
    response = as_user(editor).post(f"/queues/{queue.pk}/next/")
    assert response.status_code == 302
    assert (
        response["Location"]
        == f"/submissions/{submission.pk}/runs/{first.run_id}/?queue={queue.pk}"
    )
    # The other reviewer sees it reserved to the first, and is given the second run.
    client.force_login(second_editor)
    html = text(client.get(f"/queues/{queue.pk}/"))
    assert "reserved to eddie-editor" in html
    response = client.post(f"/queues/{queue.pk}/next/")
    second = queue.items.get(position=2)
    assert response["Location"].endswith(f"/runs/{second.run_id}/?queue={queue.pk}")
    assert "open by you" in text(client.get(f"/queues/{queue.pk}/"))


def test_next_in_queue_on_an_undecided_run_opens_another_and_says_when_none_is_left(
    as_user, editor, submission
):
    queue = queues.build_queue(submission, "q", editor, group=greeting_label(submission))
    client = as_user(editor)
    first, second, *others, last = queue.items.order_by("position")
    client.post(f"/queues/{queue.pk}/next/")  # reserves the first
    response = client.post(f"/queues/{queue.pk}/next/", {"after": first.run_id})
    assert response["Location"] == (
        f"/submissions/{submission.pk}/runs/{second.run_id}/?queue={queue.pk}"
    )
    # The last run left undecided: next stays on it, and says so.
    for item in [first, second, *others]:
        triage(item, editor)
    response = client.post(f"/queues/{queue.pk}/next/", {"after": last.run_id}, follow=True)
    assert response.redirect_chain == [
        (f"/submissions/{submission.pk}/runs/{last.run_id}/?queue={queue.pk}", 302)
    ]
    assert "Nothing else left in this queue: only this run is still to review." in text(response)
    assert QueueItem.objects.get(pk=last.pk).reserved_by == editor  # still theirs
    # An id that is no run of the queue moves on from nothing.
    response = client.post(f"/queues/{queue.pk}/next/", {"after": "9" * 30})
    assert response["Location"].endswith(f"/runs/{last.run_id}/?queue={queue.pk}")


def test_a_get_of_next_reserves_nothing_and_opens_the_queue_page(as_user, editor, submission):
    """A link (on any site) to "next" must not hand a run to whoever follows it."""
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    response = as_user(editor).get(f"/queues/{queue.pk}/next/", follow=True)
    assert response.redirect_chain == [(f"/queues/{queue.pk}/", 302)]
    assert not queue.items.filter(reserved_by__isnull=False).exists()
    # The page's button posts, with the CSRF token.
    assert re.search(
        rf'<form method="post" action="/queues/{queue.pk}/next/"><input type="hidden" '
        r'name="csrfmiddlewaretoken"',
        text(response),
    )


def test_a_finished_queue_says_so(as_user, editor, submission):
    queue = queues.build_queue(submission, "q", editor, group=greeting_label(submission))
    decisions.set_status(submission.runs.all(), ReviewStatus.WONT_FIX, editor)
    client = as_user(editor)
    response = client.post(f"/queues/{queue.pk}/next/", follow=True)
    assert response.redirect_chain == [(f"/queues/{queue.pk}/", 302)]
    html = text(response)
    assert "Queue finished" in html
    assert "This queue is finished" in html
    assert "Start reviewing" not in html
    assert "Continue reviewing" not in html


def test_next_when_the_rest_is_reserved_by_others(as_user, editor, second_editor, submission):
    queue = queues.build_queue(submission, "q", editor, group=greeting_label(submission))
    held = queues.next_item(queue, second_editor)
    decisions.set_status(
        submission.runs.exclude(pk=held.run_id), ReviewStatus.REGRESSION, second_editor
    )
    html = text(as_user(editor).post(f"/queues/{queue.pk}/next/", follow=True))
    assert "being reviewed by others" in html
    assert "Continue reviewing" in html


def test_the_queue_page_shows_progress_per_reviewer(
    as_user, viewer, admin, editor, second_editor, submission
):
    queue = queues.build_queue(
        submission, "q", admin, filters=failing(submission), reviewers=[editor, second_editor]
    )
    for _ in range(3):
        triage(queues.next_item(queue, editor), editor)
    html = text(as_user(viewer).get(f"/queues/{queue.pk}/"))
    assert "3 of 8 runs reviewed" in html
    shares = {row[0]: row[1:] for row in cells(html) if row[0].endswith("editor")}
    assert shares == {"eddie-editor": ["3 / 4", "1", "75%"], "eve-editor": ["0 / 4", "4", "0%"]}
    # A viewer reads it but is offered no work.
    assert "Start reviewing" not in html
    assert "Continue reviewing" not in html
    assert "/assign/" not in html


def test_reassigning_shares_the_rest_out_again(as_user, admin, editor, second_editor, submission):
    queue = queues.build_queue(
        submission, "q", admin, filters=failing(submission), reviewers=[editor]
    )
    triage(queues.next_item(queue, editor), editor)
    client = as_user(admin)
    # The form starts from whoever has unreviewed runs now.
    html = text(client.get(f"/queues/{queue.pk}/"))
    assert re.findall(
        r'<input type="checkbox" name="reviewers" value="(\d+)"[^>]*checked', html
    ) == [str(editor.pk)]
    client.post(f"/queues/{queue.pk}/assign/", {"reviewers": [second_editor.pk]})
    shares = {s.assignee: (s.done, s.total) for s in queues.progress(queue).shares}
    assert shares == {"eddie-editor": (1, 1), "eve-editor": (0, 7)}


def test_the_items_table_pages_through_htmx_in_bounded_queries(
    as_user, viewer, editor, submission, django_assert_max_num_queries
):
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    QueueItem.objects.filter(queue=queue).update(reserved_by=editor)  # users are joined, too
    client = as_user(viewer)
    with django_assert_max_num_queries(10):
        client.get(f"/queues/{queue.pk}/")
    with django_assert_max_num_queries(8):
        response = client.get(f"/queues/{queue.pk}/", headers=HX)
    html = text(response)
    assert "<html" not in html
    assert html.count("<tr") == FAILED + 1


def test_queue_pages_answer_outsiders_404_and_viewers_403_on_changes(
    as_user, outsider, viewer, editor, submission
):
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    client = as_user(outsider)
    for url in [
        f"/submissions/{submission.pk}/queues/",
        f"/submissions/{submission.pk}/queues/new/",
        f"/queues/{queue.pk}/",
        f"/queues/{queue.pk}/next/",
    ]:
        assert client.get(url).status_code == 404
    client = as_user(viewer)
    assert client.post(f"/queues/{queue.pk}/next/").status_code == 403
    assert client.post(f"/queues/{queue.pk}/assign/", {}).status_code == 403
    assert not queue.items.filter(reserved_by__isnull=False).exists()


def test_queue_names_are_shown_escaped(as_user, editor, submission):
    queue = queues.build_queue(
        submission, "<script>alert(1)</script>", editor, filters=failing(submission)
    )
    for url in (f"/queues/{queue.pk}/", f"/submissions/{submission.pk}/queues/"):
        html = text(as_user(editor).get(url))
        assert "<script>alert(1)</script>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_an_outsiders_team_does_not_make_them_a_reviewer(as_user, editor, outsider, submission):
    make_team("Third", editor=outsider)
    html = text(as_user(editor).get(f"/submissions/{submission.pk}/queues/new/"))
    assert "olga-outsider" not in html


def test_deleting_a_queue_keeps_the_reviews_made_through_it(as_user, viewer, editor, submission):
    queue = queues.build_queue(submission, "q", editor, filters=failing(submission))
    triage(queues.next_item(queue, editor), editor)
    assert as_user(viewer).post(f"/queues/{queue.pk}/delete/").status_code == 403
    response = as_user(editor).post(f"/queues/{queue.pk}/delete/")
    assert response.status_code == 302
    assert response["Location"] == f"/submissions/{submission.pk}/queues/"
    assert not ReviewQueue.objects.filter(pk=queue.pk).exists()
    assert not QueueItem.objects.filter(queue_id=queue.pk).exists()
    assert Review.objects.filter(submission=submission).exclude(status="untriaged").count() == 1
