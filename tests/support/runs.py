"""The demo suite's runs that the submission, results table, queue and browser tests submit,
and readers of what the submission pages show."""

from __future__ import annotations

import re

from scoring.models import Submission

# Runs of the demo suite (cases/demo/assistant.suite.json), in the canonical format.
GREETING_PASS = {"case": "greeting", "batches": [], "final_text": "Hello!"}
GREETING_FAIL = {"case": "greeting", "batches": [], "final_text": "Bye"}
PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
TOKYO = {"name": "get_weather", "arguments": {"city": "Tokyo"}}
WEATHER_PASS = {"case": "weather-two-cities", "batches": [[PARIS, TOKYO]], "final_text": "Tokyo"}
WEATHER_FAIL = {"case": "weather-two-cities", "batches": [[PARIS]], "final_text": "Paris only"}
DELETE_FAIL = {"case": "delete-if-exists", "batches": [], "final_text": "nope"}

# Three cases with several trials: greeting 2 of 3 pass, weather 1 of 3, delete 0 of 2.
TRIALS = [
    GREETING_PASS,
    GREETING_PASS,
    GREETING_FAIL,
    WEATHER_PASS,
    WEATHER_FAIL,
    WEATHER_FAIL,
    DELETE_FAIL,
    DELETE_FAIL,
]

# A run with everything the run page shows: two batches (the first of two parallel calls),
# results, a tool error, arguments the agent garbled, final text, a run error, meta.
FULL_RUN = {
    "case": "weather-two-cities",
    "batches": [
        [
            {
                "id": "call_a1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": {"temp_c": 18},
            },
            {
                "id": "call_b2",
                "name": "get_weather",
                "arguments": None,
                "arguments_raw": '{"city": "Tok',
                "result": "timeout after 30s",
                "is_error": True,
            },
        ],
        [{"name": "get_weather", "arguments": {"city": "Tokyo"}, "result": {"temp_c": 25}}],
    ],
    "final_text": "Paris is 18°C and Tokyo 25°C.",
    "error": "max turns reached",
    "meta": {"model": "gpt-test", "temperature": 0.5},
}


def url(submission: Submission, suffix: str = "") -> str:
    return f"/submissions/{submission.pk}/{suffix}"


def cells(html: str) -> list[list[str]]:
    """The text of the cells of each body row (tags stripped), for tables of numbers."""
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in row] for row in rows if row]


def run_keys(html: str) -> list[tuple[str, str]]:
    """(case key, verdict) of each row of the runs table, in order."""
    rows = re.findall(
        r'<td><span class="verdict \w+">(\w+)</span>(?: <span class="reward[^>]*>[^<]*</span>)?'
        r"</td>\s*"
        r'<td><a href="[^"]*"[^>]*><code class="case-key">([^<]+)</code></a></td>',
        html,
    )
    return [(key, verdict) for verdict, key in rows]


def many_runs(count: int) -> list[dict]:
    """``count`` runs over the four demo cases, with passes and failures, a few invalid lines
    and runs of an unknown case."""
    kinds = [GREETING_PASS, GREETING_FAIL, WEATHER_PASS, DELETE_FAIL, FULL_RUN]
    runs = [kinds[i % len(kinds)] for i in range(count)]
    return [*runs, "not json", {"case": "unknown", "batches": []}]


def reads_documents(queries) -> bool:
    """Whether any query read a stored run or a suite version's document: the large JSON
    texts the submission pages have no use for."""
    columns = ('"scoring_run"."document"', '"cases_suiteversion"."document"')
    return any(column in query["sql"] for query in queries for column in columns)
