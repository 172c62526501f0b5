"""Bad input across the board, where the existing tests left gaps: run files through the API
upload with invalid UTF-8, NaN and Infinity, numbers of a thousand digits and NUL characters
(each a clear reason naming the line, and the field where there is one; the valid neighbours
kept), suite files through the import with the same and with nesting deeper than any parser's
stack, and catastrophic regexes that RE2 scores in linear time.

Covered elsewhere: lines over the line limit, nesting too deep, gzip bombs and broken gzip
(tests/ingest/pipeline/test_ingest.py); NaN and Infinity in suite files and regexes RE2 cannot
compile (tests/matcher/test_suite_loading.py, test_verdicts.py).
"""

from __future__ import annotations

import json
import time

import pytest
from django.test import TestCase
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases import services
from cases.models import Suite
from scoring.models import Run, Submission
from tests.ingest.pipeline.conftest import assert_consistent, jsonl, upload

pytestmark = pytest.mark.django_db

GREETING = {"case": "greeting", "batches": [], "final_text": "Hello!"}
THOUSAND_DIGITS = "9" * 1000


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def post_run_file(api, suite, body: bytes) -> dict:
    """Upload through the API, run what it enqueues, and answer the submission's status."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = api.post(
            f"/api/suites/{suite.pk}/submissions/", data=body, content_type="application/x-ndjson"
        )
    assert response.status_code == 202, response.content
    return api.get(response.json()["status_url"]).json()


def test_broken_run_lines_are_named_and_their_neighbours_kept(api, demo_suite):
    weather = {"name": "get_weather", "arguments": {"city": "Paris"}}
    lines = [
        GREETING,  # 1
        b'{"case": "greeting", "batches": [], "final_text": "caf\xe9 \xff"}',  # 2: Latin-1
        GREETING,  # 3
        b'{"case": "greeting", "batches": [], "final_text": "x", "meta": {"t": NaN}}',  # 4
        b'{"case": "greeting", "batches": [], "final_text": "x", "meta": {"t": -Infinity}}',
        GREETING,  # 6
        # 7: a number of a thousand digits is JSON, kept to the digit
        f'{{"case": "weather-two-cities", "batches": [[{json.dumps(weather)[:-2]}, '
        f'"n": {THOUSAND_DIGITS}}}}}]], "final_text": "ok"}}'.encode(),
        # 8: NUL is valid JSON in a string: kept, in the text and in the JSON
        {"case": "greeting", "batches": [], "final_text": "a\x00b", "meta": {"k\x00": "v\x00"}},
        b"\xef\xbb\xbf" + json.dumps(GREETING).encode(),  # 9: a BOM mid-file
    ]
    status = post_run_file(api, demo_suite, jsonl(lines))

    reasons = {item["line"]: item["reason"] for item in status["invalid_lines"]}
    assert set(reasons) == {2, 4, 5, 9}, reasons
    assert "utf-8" in reasons[2].lower()
    # NaN and Infinity are not JSON: the reason says where on the line
    assert reasons[4].startswith("invalid JSON")
    assert reasons[5].startswith("invalid JSON")
    assert "column" in reasons[4]
    assert all(reason.strip() for reason in reasons.values())
    submission = Submission.objects.get(pk=status["id"])
    assert_consistent(submission)
    assert list(Run.objects.filter(submission=submission).values_list("line", flat=True)) == [
        1,
        3,
        6,
        7,
        8,
    ]
    big = Run.objects.get(submission=submission, line=7)
    assert big.document["batches"][0][0]["arguments"]["n"] == int(THOUSAND_DIGITS)
    nul = Run.objects.get(submission=submission, line=8)
    assert nul.document["final_text"] == "a\x00b"  # the JSON text keeps it exactly
    assert nul.final_text == "a\ufffdb"  # PostgreSQL text cannot hold it


# --- suite files ---------------------------------------------------------------------------


def import_suite(api, team, body: bytes, content_type="application/json"):
    return api.post(f"/api/suites/import/?team={team.slug}", data=body, content_type=content_type)


def suite_file(**case_fields) -> dict:
    case = {"key": "c", "expected_calls": [{"name": "f"}], "expectations": []} | case_fields
    return {"schema": "casebook.suite/1", "name": "bad input", "cases": [case]}


def problems_of(response) -> dict[str, str]:
    assert response.status_code == 400, response.content[:300]
    return {problem["path"]: problem["message"] for problem in response.json()["problems"]}


def test_a_suite_file_that_is_not_utf8_is_one_problem(api, team):
    body = json.dumps(suite_file(title="café")).encode().replace(b"caf\\u00e9", b"caf\xe9")
    [message] = problems_of(import_suite(api, team, body)).values()
    assert "utf-8" in message.lower()
    assert not Suite.objects.exists()


@pytest.mark.parametrize("content_type", ["application/json", "application/yaml"])
def test_a_suite_file_nested_past_any_stack_is_refused_not_crashed(api, team, content_type):
    deep = "[" * 100_000 + "]" * 100_000
    body = json.dumps(suite_file()).replace('"expectations": []', f'"expectations": {deep}')
    response = import_suite(api, team, body.encode(), content_type)
    assert response.status_code == 400, response.content[:300]
    assert not Suite.objects.exists()


def test_nul_in_a_suite_file_is_refused_by_path(api, team):
    document = suite_file(expected_calls=[{"name": "f\x00", "required_args": {"a\x00": 1}}])
    problems = problems_of(import_suite(api, team, json.dumps(document).encode()))
    assert "cases[0].expected_calls[0].name" in problems
    assert "cases[0].expected_calls[0].required_args.a\\u0000" in problems
    assert "NUL" in problems["cases[0].expected_calls[0].name"]
    assert not Suite.objects.exists()


def test_nul_in_a_case_through_the_api_is_refused_by_path(api, demo_suite):
    case = {"key": "nul", "title": "t\x00", "expected_calls": [{"name": "f"}], "expectations": []}
    response = api.post(f"/api/suites/{demo_suite.pk}/cases/", case, format="json")
    assert problems_of(response) == {
        "title": "holds the NUL character (U+0000), which cannot be stored"
    }


def test_a_thousand_digit_number_in_a_suite_is_kept_to_the_digit(api, team):
    body = json.dumps(
        suite_file(expectations=[{"type": "final_number_equals", "value": 0}])
    ).replace('"value": 0', f'"value": {THOUSAND_DIGITS}')
    response = import_suite(api, team, body.encode())
    assert response.status_code == 201, response.content[:300]
    exported = api.get(f"/api/suites/{response.json()['id']}/export/").content
    assert THOUSAND_DIGITS.encode() in exported


# --- catastrophic regexes --------------------------------------------------------------------

CATASTROPHIC = ["(a+)+$", "(a|aa)+$", "(a|a?)+$", "^(([a-z])+.)+[A-Z]([a-z])+$", "(x+x+)+y"]


def test_catastrophic_regexes_score_in_linear_time(demo_suite, team, user):
    document = suite_file(
        expected_calls=[{"name": "echo", "required_args": {"s": {"$regex": CATASTROPHIC[0]}}}],
        expectations=[{"type": "final_text_matches", "regex": regex} for regex in CATASTROPHIC],
    )
    suite = services.create_suite(team, document, user)
    evil = "a" * 100_000 + "!"  # seconds to hours for a backtracking engine at 30 characters
    run = {
        "case": "c",
        "batches": [[{"name": "echo", "arguments": {"s": evil}}]],
        "final_text": evil,
    }
    started = time.perf_counter()
    submission = upload(suite, jsonl([run] * 20))
    elapsed = time.perf_counter() - started
    assert_consistent(submission)
    assert submission.failed == 20
    assert elapsed < 10, f"{elapsed:.1f} s"


def test_a_regex_re2_refuses_is_a_problem_at_its_path_on_import(api, team):
    document = suite_file(expectations=[{"type": "final_text_matches", "regex": r"(a)\1"}])
    problems = problems_of(import_suite(api, team, json.dumps(document).encode()))
    assert list(problems) == ["cases[0].expectations[0].regex"]


# --- NUL in every text of a run ---------------------------------------------------------------

NUL = "\x00"


def test_nul_in_every_text_of_an_uploaded_run_is_stored_scored_and_shown(demo_suite, user, client):
    """JSON holds U+0000, PostgreSQL's text and jsonb do not: a run's texts are stored with
    it as U+FFFD (its document keeps it exactly), and a case key holding it is that line's
    problem; nothing else of the upload is lost."""
    call = {"name": f"get_{NUL}weather", "arguments": {f"ci{NUL}ty": f"Pa{NUL}ris"}}
    lines = [
        {
            "case": "weather-two-cities",
            "batches": [[call, {"name": "get_weather", "arguments": {"city": f"To{NUL}kyo"}}]],
            "final_text": f"sun{NUL}ny",
            "error": f"e{NUL}",
            "meta": {f"m{NUL}": f"v{NUL}", "model": f"g{NUL}"},
            "transcript": [{"role": "user", "content": f"hi{NUL}"}],
            "notes": [f"n{NUL}"],
        },
        GREETING,
        {"case": f"gree{NUL}ting", "batches": []},
    ]
    submission = upload(demo_suite, jsonl(lines))

    assert_consistent(submission)
    assert (submission.stored_runs, submission.invalid) == (2, 1)
    (invalid,) = submission.invalid_lines.all()
    assert (invalid.line, "case: holds the NUL character" in invalid.reason) == (3, True)
    run = Run.objects.get(submission=submission, line=1)
    assert set(run.tools.split()) == {"get_weather", "get_\ufffdweather"}
    client.force_login(user)
    for page in (
        submission.get_absolute_url(),
        f"/submissions/{submission.pk}/failures/",
        f"/submissions/{submission.pk}/runs/{run.pk}/",
        demo_suite.get_absolute_url(),
    ):
        assert client.get(page).status_code == 200, page


def test_nul_in_the_texts_of_a_live_trace_made_into_a_run_again(
    demo_suite, api, settings, monkeypatch
):
    """A late span makes the run again: its texts are written as a new run's are (this
    failed on PostgreSQL, which refuses NUL in text, and the trace stayed pending)."""
    from scoring.live import assembly
    from tests.support.otlp_data import FIXTURE_SPANS, TOKYO_SPAN, assemble_due, export, post

    settings.CASEBOOK_TRACE_GRACE_SECONDS = 0
    monkeypatch.setattr(assembly.embedded_timer, "wake_in", lambda seconds: None)

    def with_nul(request):
        for span in request.resource_spans[0].scope_spans[0].spans:
            for attribute in span.attributes:
                text = attribute.value.string_value
                if attribute.key != "casebook.case" and text:
                    nul = "\\u0000" if text[0] in "{[" else NUL  # inside JSON text, escaped
                    attribute.value.string_value = text.replace("Paris", f"Pa{nul}ris")
        return request

    first = set(range(len(FIXTURE_SPANS))) - {TOKYO_SPAN}
    post(api, with_nul(export(demo_suite.pk, case="weather-two-cities", spans=first)))
    assert assemble_due() == 1
    post(api, with_nul(export(demo_suite.pk, case="weather-two-cities", spans={TOKYO_SPAN})))
    assert assemble_due() == 1
    run = Run.objects.get()
    assert "Pa\ufffdris" in run.final_text
    assert "Pa\x00ris" in run.document["final_text"]  # the document keeps it exactly
