"""Cases drafted from recorded runs (docs/review.md#cases-from-runs): a τ-bench run's calls,
as a case, pass that run and judge the other trials of its task by their calls."""

from collections import Counter

from cases.drafting import draft_case, draft_revision
from scoring.importers import to_canonical
from scoring.matcher import PASS, load_run, load_suite, score
from tests.support.tau_bench import RECORDS, run_line


def canonical(record):
    return to_canonical(run_line(record))


def test_a_case_from_a_tau_bench_run_passes_it_and_judges_the_other_trials():
    # Each task's first rewarded trial, drafted as a case: it passes that trial; another
    # trial that lacks one of its calls fails; and trials of one task are told apart.
    def calls(run):
        return Counter(call["name"] for batch in run["batches"] for call in batch)

    mixed = 0
    for task in sorted({r["task_id"] for r in RECORDS}):
        trials = [r for r in RECORDS if r["task_id"] == task]
        source_record = next((r for r in trials if r["reward"] == 1), None)
        if source_record is None:
            continue
        source = canonical(source_record)
        case = draft_case(source, "drafted", tools=[])
        assert all(
            set(call) == {"name", "required_args", "ordered", "depends_on_result"}
            for call in case["expected_calls"]
        )
        drafted = load_suite({"name": "drafts", "cases": [case]}).case("drafted")
        assert score(drafted, load_run({**source, "case": "drafted"})).verdict == PASS
        verdicts = set()
        for record in trials:
            if record is source_record:
                continue
            run = canonical(record)
            verdict = score(drafted, load_run({**run, "case": "drafted"})).verdict
            if calls(source) - calls(run):
                assert verdict != PASS
            verdicts.add(verdict)
        mixed += len(verdicts) > 1
    assert mixed > 0


def test_batches_become_order_and_free_text_is_loosened_per_the_catalog():
    run = {
        "case": "c",
        "trial": 2,
        "batches": [
            [{"id": "1", "name": "search", "arguments": {"query": "cheap flights", "n": 3}}],
            [
                {"id": "2", "name": "book", "arguments": {"note": "window seat", "cls": "eco"}},
                {"id": "3", "name": "pay", "arguments": {"card": {"$x": 1}}, "result": "ok"},
            ],
        ],
        "transcript": [
            {"role": "system", "text": "be nice"},
            {"role": "user", "text": "Book me a flight"},
        ],
    }
    tools = [
        {"name": "search", "parameters": {"properties": {"query": {"type": "string"}}}},
        {
            "name": "book",
            "parameters": {"properties": {"cls": {"type": "string", "enum": ["eco"]}}},
        },
    ]
    case = draft_case(run, "k", tools)
    assert case["prompt"] == "Book me a flight"
    assert case["title"] == "From trial 2 of c"
    assert case["expected_calls"] == [
        {
            "name": "search",
            "required_args": {
                "query": {
                    "$text": {"value": "cheap flights", "ignore": ["case", "space", "punctuation"]}
                },
                "n": 3,
            },
            "ordered": True,
            "depends_on_result": False,
        },
        {
            "name": "book",
            "required_args": {"note": "window seat", "cls": "eco"},
            "ordered": True,
            "depends_on_result": True,
        },
        {
            "name": "pay",
            "required_args": {"card": {"$literal": {"$x": 1}}},
            "ordered": True,
            "depends_on_result": False,
        },
    ]
    load_suite({"name": "s", "cases": [case]})


def test_a_draft_revision_keeps_the_case_and_takes_the_drafted_calls():
    current = {
        "key": "k",
        "title": "kept",
        "tags": ["t"],
        "expected_calls": [{"name": "old"}],
        "expectations": [{"type": "no_error"}],
        "extra_calls": "forbid",
    }
    drafted = {"key": "k", "prompt": "from the run", "expected_calls": [{"name": "new"}]}
    revision = draft_revision(current, drafted)
    assert revision == current | {"expected_calls": [{"name": "new"}], "prompt": "from the run"}
    assert draft_revision(current | {"prompt": "mine"}, drafted)["prompt"] == "mine"
    assert current["expected_calls"] == [{"name": "old"}]  # the case itself is untouched
