"""The submission's runs table and what hangs off it (docs/review.md#runs-table): each filter
alone and together, sorting, pagination that keeps the filters, htmx swaps and the address bar,
failure groups and their counts, bulk review of a filter or a group and who may do it, the CSV
and JUnit exports, and query counts that do not grow with the runs."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection

from cases import services
from scoring.models import PredicateResult, Review, ReviewEvent, ReviewStatus, Run
from scoring.results.filtersets import RunFilterSet
from scoring.results.tables import failure_groups
from scoring.review import decisions
from scoring.views import submission as submission_views
from tests.support.pages import HX, escaped, small_document, text
from tests.support.runs import TRIALS, many_runs, run_keys, url

TOKYO = 'get_weather(city="Tokyo")'
TABLE = HX | {"HX-Target": "runs"}
SECTION = HX | {"HX-Target": "runs-section"}


@pytest.fixture
def scored(suite, submit):
    """TRIALS against the demo suite: greeting pass, pass, fail; weather-two-cities pass,
    fail, fail; delete-if-exists fail, fail."""
    return submit(suite, TRIALS, label="model-a")


def table(html: str) -> str:
    return html[html.index('<div id="runs">') :]


def keys(client, submission, query: dict, headers=TABLE) -> list[tuple[str, str]]:
    """(case key, verdict) of the table's rows under ``query``."""
    return run_keys(text(client.get(url(submission), query, headers=headers)))


def mark(submission, status: str, *, case: str, user) -> None:
    decisions.set_status(submission.runs.filter(case_key=case), status, user)


# --- filters --------------------------------------------------------------------------------

GREETINGS = [("greeting", "pass"), ("greeting", "pass"), ("greeting", "fail")]
WEATHER = [("weather-two-cities", "pass"), ("weather-two-cities", "fail")]
WEATHER += [("weather-two-cities", "fail")]
DELETES = [("delete-if-exists", "fail")] * 2


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"verdict": "pass"}, [GREETINGS[0], GREETINGS[1], WEATHER[0]]),
        ({"case": "greeting"}, GREETINGS),
        ({"tag": "files"}, DELETES),
        ({"tag": "parallel"}, WEATHER),
        ({"predicate": TOKYO}, WEATHER[1:]),
        ({"tool": "get_weather"}, WEATHER),
        ({"tool": "get_weathe"}, []),  # a whole tool name, not a part of one
        ({"text": "tokyo"}, WEATHER[:1]),  # "Tokyo" in the final answer, any case
        ({"text": "%"}, []),  # typed text, not a pattern
    ],
    ids=lambda v: "-".join(f"{k}={v}" for k, v in v.items()) if isinstance(v, dict) else "",
)
def test_each_filter_narrows_the_table(as_user, viewer, scored, query, expected):
    assert keys(as_user(viewer), scored, query) == expected


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL index (pg_trgm)")
def test_text_in_the_final_answer_is_found_through_the_trigram_index(scored):
    """At 100,000 runs a scan of the runs took 580 ms (bench/pages.py); the index answers
    the expression Django writes for the filter (``UPPER(final_text) LIKE UPPER(...)``)."""
    runs = Run.objects.filter(final_text__icontains="tokyo")
    assert runs.count() == 1
    sql, params = runs.order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        # A few rows: any plan would do. Scans of the table or of a whole other index off,
        # the text can only be found through an index that answers it.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "run_final_text_trigrams" in plan, plan


def test_review_status_filter_counts_runs_never_reviewed_as_untriaged(
    as_user, viewer, editor, scored
):
    mark(scored, ReviewStatus.FLAKY, case="weather-two-cities", user=editor)
    mark(scored, ReviewStatus.UNTRIAGED, case="delete-if-exists", user=editor)  # set back
    client = as_user(viewer)
    assert keys(client, scored, {"review": "flaky"}) == WEATHER
    assert keys(client, scored, {"review": "untriaged"}) == GREETINGS + DELETES
    assert keys(client, scored, {"review": "regression"}) == []


def test_filters_combine(as_user, viewer, editor, scored):
    mark(scored, ReviewStatus.REGRESSION, case="greeting", user=editor)
    client = as_user(viewer)
    assert keys(client, scored, {"verdict": "fail", "tag": "parallel"}) == WEATHER[1:]
    assert keys(client, scored, {"verdict": "pass", "tool": "get_weather"}) == WEATHER[:1]
    assert keys(client, scored, {"verdict": "fail", "review": "regression"}) == GREETINGS[2:]
    both = {"predicate": TOKYO, "text": "paris", "tag": "weather", "verdict": "fail"}
    assert keys(client, scored, both) == WEATHER[1:]
    assert keys(client, scored, both | {"case": "greeting"}) == []


def test_the_form_shows_every_filter_of_the_address(as_user, viewer, scored):
    query = {"verdict": "fail", "tag": "files", "review": "flaky", "case": "c", "tool": "t"}
    html = text(as_user(viewer).get(url(scored), query | {"text": "x y"}))
    assert '<option value="fail" selected>' in html
    assert '<option value="files" selected>' in html
    assert '<option value="flaky" selected>' in html
    for name, value in (("case", "c"), ("tool", "t"), ("text", "x y")):
        assert f'name="{name}" value="{value}"' in html
    # The tag filter offers the tags of the version scored against, sorted.
    tags = re.search(r'<select name="tag".*?</select>', html, re.S).group(0)
    assert re.findall(r'<option value="([^"]*)"', tags) == [
        "",
        "chat",
        "files",
        "orders",
        "parallel",
        "weather",
        "writes",
    ]


def test_tags_come_from_the_version_scored_against(as_user, viewer, editor, suite, scored):
    case = suite.cases.get(key="greeting")
    document = services.case_document(case) | {"tags": ["renamed"]}
    services.save_case(suite, document, editor, case=case)
    client = as_user(viewer)
    html = text(client.get(url(scored)))
    assert '">chat</a>' in html
    assert "renamed" not in html
    assert keys(client, scored, {"tag": "chat"}) == GREETINGS


def test_typed_filters_are_escaped(as_user, viewer, scored):
    payload = '"><script>alert(1)</script>'
    html = text(as_user(viewer).get(url(scored), {"tool": payload, "text": payload}))
    assert "<script>alert(1)" not in html
    assert f'name="tool" value="{escaped(payload)}"' in html
    assert f'name="text" value="{escaped(payload)}"' in html


# --- htmx and the address bar ---------------------------------------------------------------


def test_typing_a_filter_swaps_only_the_table_and_sets_a_clean_address(as_user, viewer, scored):
    query = {"verdict": "fail", "case": "", "tag": "parallel", "tool": "", "text": ""}
    response = as_user(viewer).get(url(scored), query, headers=TABLE)
    html = text(response)
    assert "<form" not in html  # the form being typed in stays as it is
    assert run_keys(html) == WEATHER[1:]
    assert response["HX-Push-Url"] == f"{url(scored)}?verdict=fail&tag=parallel"
    assert "HX-Target" in response["Vary"]


def test_links_that_change_the_filters_swap_the_whole_section(as_user, viewer, scored):
    response = as_user(viewer).get(url(scored), {"predicate": TOKYO}, headers=SECTION)
    html = text(response)
    assert "<html" not in html
    assert '<form id="run-filters"' in html
    assert '<input type="hidden" name="predicate" value="get_weather(city=&quot;Tokyo&quot;)">' in (
        html
    )
    assert run_keys(table(html)) == WEATHER[1:]
    assert response["HX-Push-Url"] == f"{url(scored)}?predicate=get_weather%28city%3D%22Tokyo%22%29"


def test_the_back_button_gets_the_whole_page_when_htmx_has_no_copy(as_user, viewer, scored):
    headers = TABLE | {"HX-History-Restore-Request": "true"}
    response = as_user(viewer).get(url(scored), {"verdict": "pass"}, headers=headers)
    html = text(response)
    assert "<html" in html
    assert '<option value="pass" selected>' in html
    assert "HX-History-Restore-Request" in response["Vary"]
    # htmx keeps no copy of this page: its copy would hold the form as first loaded.
    assert '<section id="runs-section" aria-label="Runs" hx-history="false"' in html


def test_the_filter_form_works_without_javascript(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    form = re.search(r'<form id="run-filters".*?>', html, re.S).group(0)
    assert 'method="get"' in form
    assert f'action="{url(scored)}#runs-section"' in form
    assert '<button type="submit">Filter</button>' in html


# --- sorting and pagination -----------------------------------------------------------------


def test_sorting_by_each_column_both_ways(as_user, viewer, editor, scored):
    client = as_user(viewer)
    in_file_order = GREETINGS + WEATHER + DELETES
    assert keys(client, scored, {}) == in_file_order
    assert keys(client, scored, {"sort": "-line"}) == in_file_order[::-1]
    by_case = keys(client, scored, {"sort": "case"})
    assert [key for key, _ in by_case] == sorted(key for key, _ in in_file_order)
    by_verdict = keys(client, scored, {"sort": "-verdict"})
    assert [verdict for _, verdict in by_verdict] == ["pass"] * 3 + ["fail"] * 5
    mark(scored, ReviewStatus.WONT_FIX, case="greeting", user=editor)
    mark(scored, ReviewStatus.REGRESSION, case="delete-if-exists", user=editor)
    # The workflow's order: untriaged, regression, expectation wrong, flaky, won't fix.
    assert keys(client, scored, {"sort": "review"}) == WEATHER + DELETES + GREETINGS
    assert keys(client, scored, {"sort": "-review"}) == GREETINGS + DELETES + WEATHER


def test_sortable_headers_say_how_the_table_is_sorted_and_flip_it(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored), {"sort": "case", "verdict": "fail"}))
    headers = re.findall(r'<th[^>]*aria-sort="(\w+)">.*?>(\w+)</a></th>', html)
    assert sorted(headers) == [
        ("ascending", "Case"),
        ("none", "Line"),
        ("none", "Review"),
        ("none", "Verdict"),
    ]
    case_header = re.search(r'aria-sort="ascending">.*?href="([^"]+)"', html).group(1)
    assert parse_qs(urlsplit(case_header.replace("&amp;", "&")).query) == {
        "sort": ["-case"],
        "verdict": ["fail"],
    }
    # Filtering keeps the sort: it travels in the form.
    assert '<input type="hidden" name="sort" value="case">' in html


def test_unknown_sorts_and_filters_are_dropped(as_user, viewer, scored):
    client = as_user(viewer)
    assert keys(client, scored, {"sort": "nonsense", "verdict": "maybe"}) == (
        GREETINGS + WEATHER + DELETES
    )


def test_pagination_keeps_the_filters_and_the_sort(as_user, viewer, scored, monkeypatch):
    monkeypatch.setattr(submission_views, "RUNS_PER_PAGE", 2)
    client = as_user(viewer)
    query = {"verdict": "fail", "sort": "-line"}
    first = text(client.get(url(scored), query, headers=TABLE))
    assert run_keys(first) == DELETES
    assert "Page 1 of 3" in first
    link = re.search(r'<a href="([^"]+)"[^>]*>Next', first).group(1).replace("&amp;", "&")
    assert parse_qs(urlsplit(link).query) == {"verdict": ["fail"], "sort": ["-line"], "page": ["2"]}
    response = client.get(url(scored), query | {"page": 2}, headers=TABLE)
    assert run_keys(text(response)) == [WEATHER[2], WEATHER[1]]
    assert response["HX-Push-Url"] == f"{url(scored)}?verdict=fail&sort=-line&page=2"


def test_links_to_a_run_carry_the_filters(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored), {"verdict": "fail", "tag": "files"}))
    run_ids = scored.runs.filter(case_key="delete-if-exists").values_list("pk", flat=True)
    for pk in run_ids:
        assert f'href="/submissions/{scored.pk}/runs/{pk}/?verdict=fail&amp;tag=files"' in html
    # ... which the run page reads back as the same filters.
    assert RunFilterSet({"verdict": "fail", "tag": "files"}).querystring == (
        "verdict=fail&tag=files"
    )


def test_the_filters_in_words_name_each_one_set_without_the_address_syntax():
    every = {
        "verdict": "error",
        "case": "12",
        "tag": "airline",
        "predicate": "no call",
        "cause": "argument_value:update_reservation_flights",
        "argument": "reservation_id",
        "problem": "0" * 32,
        "tool": "calculate",
        "review": "expectation_wrong",
        "label": "wrong tool",
        "text": "refund",
        "sort": "-review",
        "columns": "model",
    }
    assert RunFilterSet(every).in_words() == (
        "errored, case 12, tag “airline”, failing “no call”, failing "
        "update_reservation_flights: wrong argument value (reservation_id), one known failure, "
        "called calculate, status “expectation wrong”, label “wrong tool”, final answer "
        "containing “refund”, by review status, reversed"
    )
    assert RunFilterSet({"sort": "line", "columns": "model"}).in_words() == ""


def test_rows_show_tags_failing_predicates_and_reviews(as_user, viewer, editor, scored):
    weather = scored.runs.filter(case_key="weather-two-cities")
    decisions.set_status(weather, ReviewStatus.EXPECTATION_WRONG, editor)
    decisions.assign(weather, editor, editor)
    html = table(text(as_user(viewer).get(url(scored), {"tag": "weather", "verdict": "fail"})))
    row = re.findall(r"<tr data-run-row>(.*?)</tr>", html, re.S)[1]
    assert re.findall(r'<a class="tag"[^>]*>(\w+)</a>', row) == ["weather", "parallel"]
    assert '<code class="call">get_weather(city=&quot;Tokyo&quot;)</code>' in row
    assert '<span class="review expectation_wrong">expectation wrong</span>' in row
    assert "→ eddie-editor" in row


# --- failure groups -------------------------------------------------------------------------


def group_rows(html: str) -> list[tuple[str, int]]:
    """(exact predicate, runs) as the failure groups page lists them under their causes."""
    rows = re.findall(
        r'<a href="[^"]*\?predicate=[^"]*#runs-section"><code class="call">([^<]*)</code></a> '
        r'<span class="muted small">(\d+) runs?</span>',
        html,
    )
    return [(label.replace("&quot;", '"'), int(runs)) for label, runs in rows]


def cause_heads(html: str) -> int:
    return html.count('<tr class="group-head">')


def test_failure_groups_list_every_failing_predicate_with_its_runs(
    as_user, viewer, scored, monkeypatch
):
    monkeypatch.setattr(submission_views, "GROUPS_PER_PAGE", 2)
    client = as_user(viewer)
    first = text(client.get(url(scored, "failures/")))
    second = text(client.get(url(scored, "failures/"), {"page": 2}))
    shown = group_rows(first) + group_rows(second)
    assert "Page 1 of 2" in first
    assert cause_heads(first) == 2
    # Every failing predicate under its cause, with as many runs as the table lists for it.
    stored = PredicateResult.objects.filter(submission=scored)
    labels = sorted(set(stored.values_list("label", flat=True)))
    assert sorted(label for label, _ in shown) == labels
    for label, runs in shown:
        assert len(keys(client, scored, {"predicate": label})) == runs
    assert (TOKYO, 2) in shown


def test_the_summary_links_to_the_groups_and_each_group_to_its_runs(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    assert f'<a href="/submissions/{scored.pk}/failures/">Every failure group →</a>' in html
    groups = text(as_user(viewer).get(url(scored, "failures/")))
    assert (
        f'<a href="/submissions/{scored.pk}/?predicate=get_weather%28city%3D%22Tokyo%22%29'
        '#runs-section">' in groups
    )
    assert (
        f'<a href="/submissions/{scored.pk}/?cause=missing_call%3Aget_weather'
        '#runs-section" class="group-title">' in groups
    )


def test_failure_groups_count_runs_not_predicate_rows(scored):
    counts = {row["label"]: row["runs"] for row in failure_groups(scored)}
    for label, runs in counts.items():
        assert RunFilterSet({"predicate": label}).results(scored).count() == runs


def test_the_summary_says_how_long_scoring_took(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    assert re.search(r"and all done in \d+\.\d s from the upload\.", html)


def test_triage_summary_counts_runs_per_review_status(as_user, viewer, editor, scored):
    mark(scored, ReviewStatus.FLAKY, case="weather-two-cities", user=editor)
    html = text(as_user(viewer).get(url(scored)))
    box = html[html.index('aria-label="Triage"') :]
    box = box[: box.index("</section>")]
    assert "3 of 8 reviewed" in box
    counts = dict(re.findall(r'\?review=(\w+)#runs-section">[^<]+</a></dt><dd>(\d+)</dd>', box))
    assert counts == {
        "untriaged": "5",
        "regression": "0",
        "expectation_wrong": "0",
        "flaky": "3",
        "wont_fix": "0",
        "fixed": "0",
    }


# --- bulk review ----------------------------------------------------------------------------


def statuses(submission) -> dict[str, set[str]]:
    """Case key → the review statuses of its runs."""
    out: dict[str, set[str]] = {}
    for run in submission.runs.select_related("review"):
        review = getattr(run, "review", None)
        out.setdefault(run.case_key, set()).add(review.status if review else "untriaged")
    return out


def test_editors_set_a_status_on_every_run_of_the_filter(as_user, editor, scored):
    client = as_user(editor)
    data = {"verdict": "fail", "tag": "parallel", "status": "flaky", "back": "runs"}
    response = client.post(url(scored, "review/"), data)
    assert response.status_code == 302
    assert response["Location"] == f"{url(scored)}?verdict=fail&tag=parallel#runs-section"
    assert statuses(scored) == {
        "greeting": {"untriaged"},
        "weather-two-cities": {"untriaged", "flaky"},
        "delete-if-exists": {"untriaged"},
    }
    flaky = Review.objects.filter(status="flaky").values_list(
        "run__case_key", "run__result__verdict"
    )
    assert sorted(flaky) == [("weather-two-cities", "fail")] * 2
    assert ReviewEvent.objects.filter(kind="status", status="flaky", author=editor).count() == 2
    page = text(client.get(response["Location"]))
    assert "Status “flaky”: 2 of 2 runs changed." in page


def test_bulk_review_through_htmx_answers_the_section_with_what_changed(as_user, editor, scored):
    client = as_user(editor)
    data = {"predicate": TOKYO, "status": "regression", "assignee": str(editor.pk)}
    html = text(client.post(url(scored, "review/"), data, headers=HX))
    assert "<html" not in html
    assert "Status “regression”: 2 of 2 runs changed." in html
    assert "Assigned to eddie-editor: 2 of 2 runs changed." in html
    assert html.count('<span class="review regression">regression</span>') == 2
    # The triage counts above the table follow, swapped out of band.
    assert '<section class="card" id="triage" aria-label="Triage" hx-swap-oob="true">' in html
    assert "2 of 8 reviewed" in html
    again = text(client.post(url(scored, "review/"), data, headers=HX))
    assert "Status “regression”: 0 of 2 runs changed." in again
    unassign = {"predicate": TOKYO, "assignee": "nobody"}
    assert "Assigned to nobody: 2 of 2 runs changed." in text(
        client.post(url(scored, "review/"), unassign, headers=HX)
    )
    assert not Review.objects.filter(assignee__isnull=False).exists()


def test_editors_set_a_status_on_a_failure_group_from_its_page(as_user, admin, scored):
    client = as_user(admin)
    groups = text(client.get(url(scored, "failures/")))
    assert groups.count('class="bulk-review') == cause_heads(groups)
    data = {"predicate": TOKYO, "status": "expectation_wrong", "back": "failures"}
    response = client.post(url(scored, "review/"), data)
    assert response["Location"] == url(scored, "failures/")
    assert statuses(scored)["weather-two-cities"] == {"untriaged", "expectation_wrong"}
    assert statuses(scored)["delete-if-exists"] == {"untriaged"}


def test_the_bulk_form_says_how_many_runs_it_changes(as_user, editor, scored):
    html = text(as_user(editor).get(url(scored), {"verdict": "fail"}))
    form = html[html.index('<form class="bulk-review') :]
    form = form[: form.index("</form>")]
    assert "Review the 5 runs of this filter:" in form
    assert "Apply to 5 runs" in form
    assert 'data-confirm="Change the review of 5 runs?"' in form
    assert '<input type="hidden" name="verdict" value="fail">' in form
    # Editors and admins of the suite's team may be assigned.
    assignees = re.findall(r'<option value="\d+">([^<]+)</option>', form)
    assert assignees == ["alice-admin", "eddie-editor"]


def test_a_bulk_review_without_a_status_or_an_assignee_changes_nothing(as_user, editor, scored):
    response = as_user(editor).post(url(scored, "review/"), {"verdict": "fail"}, follow=True)
    assert "Choose a status, an assignee or a label to set." in text(response)
    assert not Review.objects.exists()


def test_viewers_see_no_review_controls_and_may_not_post(as_user, viewer, scored):
    client = as_user(viewer)
    assert "bulk-review" not in text(client.get(url(scored)))
    assert "bulk-review" not in text(client.get(url(scored, "failures/")))
    response = client.post(url(scored, "review/"), {"status": "flaky"})
    assert response.status_code == 403
    assert not Review.objects.exists()


# --- exports --------------------------------------------------------------------------------


def csv_rows(response) -> list[dict]:
    assert response.streaming
    body = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


USAGE_COLUMNS = ("input tokens", "output tokens", "cached input tokens", "reasoning tokens",
                 "model calls", "duration ms", "tool duration ms", "cost usd")  # fmt: skip


def test_csv_lists_the_filtered_runs_with_the_table_columns(as_user, viewer, editor, scored):
    decisions.set_status(scored.runs.filter(case_key="weather-two-cities"), "flaky", editor)
    decisions.assign(scored.runs.filter(case_key="weather-two-cities"), editor, editor)
    response = as_user(viewer).get(url(scored, "runs.csv"), {"verdict": "fail", "tag": "weather"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="submission-{scored.pk}-runs.csv"'
    )
    rows = csv_rows(response)
    runs = scored.runs.filter(case_key="weather-two-cities").order_by("seq")[1:]
    assert rows == [
        {
            "line": str(run.line),
            "case": "weather-two-cities",
            "trial": str(run.trial),
            "verdict": "fail",
            "reward": "",
            "tags": "weather parallel",
            "failing predicates": f'{TOKYO}\nfinal text contains "Tokyo"',
            "reasons": "1 call of get_weather, credited to another expected call (#0); "
            'none left for this one\nthe final text does not contain it: "Paris only"',
            "cause kinds": "missing_call\nfinal_text",
            "cause tools": "get_weather\n",
            "cause arguments": "\n",
            "review": "flaky",
            "labels": "",
            "assignee": "eddie-editor",
            "comments": "",
            **dict.fromkeys(USAGE_COLUMNS, ""),  # the canonical runs record no usage
            "url": f"http://testserver/submissions/{scored.pk}/runs/{run.pk}/",
        }
        for run in runs
    ]


def test_csv_without_filters_has_every_scored_run(as_user, viewer, scored):
    rows = csv_rows(as_user(viewer).get(url(scored, "runs.csv"), {"sort": "-line"}))
    assert [(row["case"], row["verdict"]) for row in rows] == (GREETINGS + WEATHER + DELETES)[::-1]


def test_csv_cells_cannot_run_as_spreadsheet_formulas(as_user, team, admin, viewer, submit):
    document = small_document("formulas", tool="@SUM", case_tag="+tag")
    document["cases"][0]["key"] = '=HYPERLINK("http://evil")'
    suite = services.create_suite(team, document, admin)
    meta = {"=HYPERLINK(1)": "-x", "@SUM(1)": 1, "+plus": 2, "-minus": 3}
    run = {"case": '=HYPERLINK("http://evil")', "batches": [], "final_text": "-1", "meta": meta}
    submission = submit(suite, [run])
    columns = ",".join(meta)
    [row] = csv_rows(as_user(viewer).get(url(submission, "runs.csv"), {"columns": columns}))
    assert row["case"] == '\'=HYPERLINK("http://evil")'
    # Meta keys name the columns: the header's cells are neutralised like the others.
    assert {name: row[f"'{name}"] for name in meta} == {
        "=HYPERLINK(1)": "'-x",
        "@SUM(1)": "1",
        "+plus": "2",
        "-minus": "3",
    }
    assert row["tags"] == "'+tag"
    assert row["failing predicates"].startswith("'@SUM(city=")
    assert row["verdict"] == "fail"


def test_the_export_links_keep_the_filters(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored), {"verdict": "fail", "tool": "get_weather"}))
    assert (
        f'href="/submissions/{scored.pk}/runs.csv?verdict=fail&amp;tool=get_weather" download'
        in html
    )
    assert f'href="/submissions/{scored.pk}/junit.xml" download' in html


def test_junit_is_valid_xml_with_a_test_case_per_run(as_user, viewer, suite, submit):
    error_run = {"case": "greeting", "batches": [], "final_text": "Hi", "error": "boom <&>"}
    submission = submit(suite, [*TRIALS, error_run])
    response = as_user(viewer).get(url(submission, "junit.xml"))
    assert response["Content-Type"] == "application/xml; charset=utf-8"
    root = ET.fromstring(b"".join(response.streaming_content))
    [testsuite] = root.findall("testsuite")
    assert testsuite.get("name") == "assistant-basics"
    for element in (root, testsuite):
        assert (element.get("tests"), element.get("failures"), element.get("errors")) == (
            "9",
            "6",
            "0",
        )
    cases = testsuite.findall("testcase")
    assert [case.get("name") for case in cases[:3]] == [f"greeting trial {i}" for i in range(3)]
    assert cases[0].get("classname") == "assistant-basics.greeting"
    assert [case.find("failure") is not None for case in cases] == [
        False,
        False,
        True,
        False,
        True,
        True,
        True,
        True,
        True,
    ]
    tokyo = cases[4].find("failure")
    assert tokyo.get("message") == "2 predicates failed"
    assert f"✗ {TOKYO}" in tokyo.text
    assert "run completed without error" in cases[8].find("failure").text
    assert "boom <&>" in cases[8].find("failure").text


def test_junit_carries_the_runs_notes_in_system_out_passing_or_not(as_user, viewer, suite, submit):
    note = "tool arguments were not captured <&>"
    passing = {"case": "greeting", "batches": [], "final_text": "Hello!", "notes": [note]}
    failing = {"case": "greeting", "batches": [], "final_text": "Bye", "notes": [note]}
    submission = submit(suite, [passing, failing, {**passing, "notes": []}])
    response = as_user(viewer).get(url(submission, "junit.xml"))
    cases = ET.fromstring(b"".join(response.streaming_content)).find("testsuite")
    assert [case.findtext("system-out") for case in cases.findall("testcase")] == [
        f"note: {note}",
        f"note: {note}",
        None,
    ]


# --- queries --------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [20, 200])
def test_table_pages_run_a_bounded_number_of_queries(
    as_user, editor, suite, submit, count, django_assert_max_num_queries
):
    submission = submit(suite, many_runs(count))
    decisions.set_status(submission.runs.filter(case_key="greeting"), "flaky", editor)
    label = failure_groups(submission)[0]["label"]
    client = as_user(editor)  # an editor sees the most: the bulk forms and their assignees
    # A whole page: 19, with the earlier decisions on its failures (known failures), the
    # results against versions scored before, the team's review labels and those on the
    # page's runs. Sorted by review, a read per status until the page is full.
    by_review = {"verdict": "fail", "tool": "get_weather", "sort": "-review"}
    pages = [
        (url(submission), {}, {}, 20),  # and the causes of the most common failures
        (url(submission), by_review, {}, 19 + len(ReviewStatus)),
        # Filtered by review: and the reviews that decide it, before and after counting.
        (url(submission), {"verdict": "fail", "review": "untriaged"}, TABLE, 14),
        (url(submission), {"predicate": label}, {}, 20),
        # Groups by cause: the page's count, the groups, their arguments, first submissions
        # and exact predicates, and the failing runs: one query each, whatever the groups.
        (url(submission, "failures/"), {}, {}, 15),  # and the team's labels, for the forms
    ]
    for path, query, headers, most in pages:
        with django_assert_max_num_queries(most):
            response = client.get(path, query, headers=headers)
        assert response.status_code == 200
        assert 'class="bulk-review' in text(response)
