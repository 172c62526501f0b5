"""The audit (docs/audit.md): every kind found on a suite planted with it, nothing on a
clean suite, the demo suite or τ-bench's airline suite beyond its idle passes, and the
rules that keep each problem reported once, in the matcher's words. No database."""

import copy
import json
from pathlib import Path

import pytest

from scoring.audit import (
    KINDS,
    Audit,
    CaseHistory,
    Problem,
    Unchecked,
    audit_case,
    audit_document,
    audit_suite,
    history_notes,
)
from scoring.environments import EnvironmentLimits, SandboxReplayer
from scoring.matcher import load_suite, parse_suite_document
from tests.support import audit_suites
from tests.support.environments import ENVIRONMENTS

DEMO = Path(__file__).resolve().parents[2] / "cases/demo/assistant.suite.json"


@pytest.fixture(scope="module")
def replayer():
    replayer = SandboxReplayer(EnvironmentLimits(wall_seconds=30), ENVIRONMENTS)
    yield replayer
    replayer.close()


def kinds_by_case(audit: Audit) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in audit.problems:
        found.setdefault(problem.case, []).append(problem.kind)
    return found


def suite_of(*cases, **top):
    return load_suite({"name": "s", "cases": list(cases), **top})


def test_every_kind_is_found_on_the_case_planted_with_it(replayer):
    audit = audit_suite(load_suite(audit_suites.PLANTED), replayer)
    assert kinds_by_case(audit) == audit_suites.PLANTED_KINDS
    assert {kind for kinds in audit_suites.PLANTED_KINDS.values() for kind in kinds} == set(KINDS)
    assert audit.unchecked == ()
    assert audit.cases == len(audit_suites.PLANTED_CASES)


def test_nothing_is_flagged_on_a_clean_suite(replayer):
    audit = audit_suite(load_suite(audit_suites.CLEAN), replayer)
    assert audit.problems == ()
    assert audit.unchecked == ()


def test_nothing_is_flagged_on_the_demo_suite(replayer):
    document = parse_suite_document(DEMO.read_bytes(), DEMO.name)
    audit = audit_suite(load_suite(document), replayer)
    assert audit.to_dict() == {"cases": len(document["cases"]), "problems": []}


def test_messages_say_what_fails_in_the_matchers_words(replayer):
    audit = audit_suite(load_suite(audit_suites.PLANTED), replayer)
    said = {problem.case: problem.message for problem in audit.problems}
    assert said["count-contradicts"] == (
        "its reference run fails “called get_weather at most once”: get_weather was called "
        "2 times; expected at most once"
    )
    assert said["regex-matches-nothing"] == (
        "expected call #0: no value satisfies city: /Par^is/ matches no text"
    )
    assert "did you mean `get_weather`?" in said["unknown-tool"]
    assert "unit: 'K' is not one of ['C', 'F']" in said["schema-refuses"]
    assert 'delete(key="zzz"): "no key \'zzz\'"' in said["replay-refused"]
    assert (
        said["state-mismatch"] == "state at b is 3: after the expected calls, b: expected 3, got 2"
    )
    assert "as case `first`" in said["repeats-first"]


def test_the_json_is_cases_and_problems_each_case_kind_message():
    audit = audit_suite(suite_of({"key": "a"}))
    assert audit.to_dict() == {
        "cases": 1,
        "problems": [
            {
                "case": "a",
                "kind": "passes_idle",
                "message": "it has no expected calls and no expectations: any run passes it",
            }
        ],
    }
    assert Audit.from_dict(audit.to_dict()) == audit


def test_passes_idle_is_a_warning_unless_strict():
    audit = audit_suite(suite_of({"key": "a"}))
    assert not audit.has_problems()
    assert audit.has_problems(strict=True)


def test_a_state_the_replay_contradicts_is_a_state_mismatch_not_also_a_contradiction(replayer):
    case = {
        "key": "c",
        "environment": audit_suites.STORE,
        "expected_calls": [audit_suites.call("put", key="b", value=2)],
        "expectations": [
            {"type": "state_path_equals", "path": "b", "value": 3},
            {"type": "end_state_matches", "reference_calls": [
                {"name": "put", "arguments": {"key": "b", "value": 2}}]},
        ],
    }  # fmt: skip
    assert kinds_by_case(audit_suite(suite_of(case), replayer)) == {"c": ["state_mismatch"]}


def test_expected_calls_that_leave_another_state_than_the_reference_calls_contradict(replayer):
    case = {
        "key": "c",
        "environment": audit_suites.STORE,
        "expected_calls": [audit_suites.call("put", key="b", value=2)],
        "expectations": [{"type": "end_state_matches", "reference_calls": [
            {"name": "put", "arguments": {"key": "b", "value": 3}}]}],
    }  # fmt: skip
    audit = audit_suite(suite_of(case), replayer)
    assert [p.kind for p in audit.problems] == ["contradiction"]
    assert "b: run 2, reference 3" in audit.problems[0].message


def test_unknown_tool_covers_expectations_and_reference_calls():
    case = {
        "key": "c",
        "environment": audit_suites.STORE,
        "expectations": [
            {"type": "did_not_call_tool", "tool": "format_disk"},
            {"type": "called_tools_in_order", "tools": ["get_weather", "get_wether"]},
            {"type": "end_state_matches", "reference_calls": [
                {"name": "pot", "arguments": {}}, {"name": "pot", "arguments": {}}]},
        ],
    }  # fmt: skip
    audit = audit_suite(suite_of(case, tools=audit_suites.TOOLS))
    messages = [p.message for p in audit.problems if p.kind == "unknown_tool"]
    assert len(messages) == 3
    assert "names `format_disk`, which the tool catalog lacks; as written it holds" in messages[0]
    assert "`get_wether`" in messages[1]
    assert "call `pot` (2 calls)" in messages[2]


def test_schema_checks_literals_and_each_one_of_alternative_not_other_matchers():
    case = {
        "key": "c",
        "expected_calls": [
            audit_suites.call(
                "get_weather",
                city={"$regex": ".*"},
                unit={"$one_of": ["C", "kelvin", {"$regex": "x"}]},
                days="three",
            ),
            audit_suites.call("get_weather", city="Oslo", citty={"$regex": "O.*"}),
        ],
        "expectations": [{"type": "final_text_contains", "text": "x"}],
    }
    audit = audit_suite(suite_of(case, tools=audit_suites.TOOLS))
    messages = [p.message for p in audit.problems]
    assert [p.kind for p in audit.problems] == ["schema"] * 3
    assert 'unit (alternative 1 of $one_of) = "kelvin"' in messages[0]
    assert 'days = "three"' in messages[1]
    assert "is not of type 'integer'" in messages[1]
    assert "citty" in messages[2]
    assert "unexpected" in messages[2]


def test_an_argument_that_may_be_left_out_is_not_refused_for_its_name():
    case = {
        "key": "c",
        "expected_calls": [
            audit_suites.call(
                "get_weather", city="Oslo", debug={"$absent": True}, x={"$optional": 1}
            )
        ],
        "expectations": [{"type": "final_text_contains", "text": "x"}],
    }
    assert audit_suite(suite_of(case, tools=audit_suites.TOOLS)).problems == ()


def test_a_count_min_adds_calls_only_where_extra_calls_are_allowed():
    allowed = {"key": "a", "expectations": [{"type": "tool_call_count", "tool": "f", "min": 2}]}
    forbidden = {**allowed, "key": "b", "prompt": "other", "extra_calls": "forbid"}
    audit = audit_suite(suite_of(allowed, forbidden))
    assert kinds_by_case(audit) == {"b": ["contradiction"]}
    assert "f was called 0 times; expected at least 2 times" in audit.problems[0].message


def test_final_text_expectations_are_met_together_when_they_can_be():
    case = {
        "key": "a",
        "expectations": [
            {"type": "final_text_matches", "regex": r"^Total: \d+"},
            {"type": "final_text_contains", "text": "EUR"},
            {"type": "final_number_equals", "value": -3.5},
        ],
    }
    contradicting = {
        "key": "b",
        "prompt": "b",
        "expectations": [
            {"type": "final_text_equals", "text": "yes"},
            {"type": "final_text_contains", "text": "no"},
        ],
    }
    audit = audit_suite(suite_of(case, contradicting))
    assert kinds_by_case(audit) == {"b": ["contradiction"]}


def test_a_regex_the_audit_cannot_read_is_unchecked_never_a_problem():
    case = {"key": "a", "expected_calls": [audit_suites.call("f", name={"$regex": r"\pL+"})]}
    audit = audit_suite(suite_of(case))
    assert audit.problems == ()
    assert [u.message for u in audit.unchecked] == [
        r"expected call #0 not tried: name: /\pL+/: no example could be built (syntax beyond "
        "Python's re)"
    ]


def test_an_environment_that_cannot_run_leaves_the_case_unchecked_not_clean(replayer):
    case = copy.deepcopy(audit_suites.PLANTED_CASES[7])  # replay-refused
    case["environment"]["name"] = "Missing"
    audit = audit_suite(suite_of(case), replayer)
    assert audit.problems == ()
    assert "could not be replayed: no environment named 'Missing' is installed" in (
        audit.unchecked[0].message
    )
    without = audit_suite(suite_of(case))
    assert without.unchecked[0].message == "not replayed: no environment runner is configured"


def test_an_agent_doing_nothing_passes_what_the_reference_calls_leave_unchanged(replayer):
    case = {
        "key": "lookup",
        "environment": audit_suites.STORE,
        "expectations": [{"type": "end_state_matches", "reference_calls": [
            {"name": "get", "arguments": {"key": "a"}}]}],
    }  # fmt: skip
    assert kinds_by_case(audit_suite(suite_of(case), replayer)) == {"lookup": ["passes_idle"]}


def test_duplicates_compare_by_json_meaning_and_defaults():
    first = {"key": "a", "prompt": "p", "expected_calls": [
        {"name": "f", "required_args": {"x": 1, "y": {"b": 2, "a": 1}}}]}  # fmt: skip
    again = {"name": "f", "required_args": {"y": {"a": 1.0, "b": 2}, "x": 1.0}, "ordered": False}
    second = {"key": "b", "title": "t", "tags": ["x"], "prompt": "p", "expected_calls": [again]}
    other = {**second, "key": "c", "prompt": "q"}
    audit = audit_suite(suite_of(first, second, other))
    assert kinds_by_case(audit) == {"b": ["duplicate"]}


def test_one_case_is_audited_against_the_rest_of_its_suite():
    suite = load_suite(audit_suites.PLANTED)
    edited = suite.case("first")
    others = [case for case in audit_suites.PLANTED_CASES if case["key"] != "first"]
    audit = audit_case(edited, others=others)
    assert [(p.case, p.kind) for p in audit.problems] == [("first", "duplicate")]
    assert "`repeats-first`" in audit.problems[0].message


def test_tau_bench_airline_cases_that_write_nothing_and_say_nothing_pass_idle():
    from cases.tau_bench import proposed_roles, read_results, suite_document
    from cases.tool_catalog import tools_from_any
    from tests.support.tau_bench import RESULTS_FILE, TOOLS_FILE

    with RESULTS_FILE.open("rb") as file:
        results = read_results(file)
    read_only = [role.name for role in proposed_roles(results.tools, []) if role.read_only]
    document = suite_document(results, name="airline", read_only=read_only)
    document["tools"] = tools_from_any(json.loads(TOOLS_FILE.read_text())).tools
    audit = audit_suite(load_suite(document))
    idle = [p.case for p in audit.problems if p.kind == "passes_idle"]
    assert [p.kind for p in audit.problems] == ["passes_idle"] * len(idle)
    quiet = [
        task.key
        for task in results.tasks
        if not task.outputs and {a["name"] for a in task.actions} <= set(read_only)
    ]
    assert idle == quiet
    assert len(idle) == 19  # of 50: the ABC study's 38%


def test_history_names_cases_never_passed_and_saturated():
    notes = history_notes(
        ["a", "b", "c", "d"],
        {
            "a": CaseHistory(scored_in=3, passed=0, clean_in_window=0),
            "b": CaseHistory(scored_in=12, passed=40, clean_in_window=10),
            "c": CaseHistory(scored_in=10, passed=39, clean_in_window=9),
        },
        submissions=12,
    )
    assert notes.never_passed == ["a"]
    assert notes.saturated == ["b"]
    few = {"b": CaseHistory(scored_in=9, passed=36, clean_in_window=9)}
    assert history_notes(["b"], few, submissions=9).saturated == []


def test_a_new_version_audits_again_only_the_cases_that_changed():
    document = {"name": "s", "cases": [
        {"key": "same", "prompt": "a"},
        {"key": "edited", "prompt": "b", "expectations": [{"type": "no_error"}]},
        {"key": "unsure", "prompt": "c", "expectations": [{"type": "no_error"}]},
    ]}  # fmt: skip
    earlier = audit_document(document)
    # What the earlier audit said of "same" is kept as it was: here a marker shows it.
    marker = Audit(3, (Problem("same", "passes_idle", "kept from the earlier audit"),),
                   (Unchecked("unsure", "not replayed: a limit was reached"),))  # fmt: skip
    edited = copy.deepcopy(document)
    edited["cases"][1]["expectations"] = []
    edited["cases"].append({"key": "again", "prompt": "a"})
    audit = audit_document(edited, earlier=(document, marker))
    said = {(p.case, p.kind): p.message for p in audit.problems}
    assert said[("same", "passes_idle")] == "kept from the earlier audit"
    assert ("edited", "passes_idle") in said  # audited again: no expectation left
    assert ("unsure", "passes_idle") in said  # unchecked before: audited again
    assert "as case `same`" in said[("again", "duplicate")]  # across every case
    assert audit.cases == 4
    assert earlier.for_case("same")[0].message != "kept from the earlier audit"


def test_a_changed_catalog_or_match_audits_every_case_again():
    document = {"name": "s", "cases": [{"key": "a", "prompt": "a"}]}
    stale = Audit(1, (Problem("a", "schema", "stale"),))
    renamed = {**document, "name": "t", "description": "d"}
    kept = audit_document(renamed, earlier=(document, stale))
    assert [p.message for p in kept.problems] == ["stale"]
    for changed in ({"match": "lenient"}, {"tools": audit_suites.TOOLS}):
        again = audit_document({**document, **changed}, earlier=(document, stale))
        assert [p.kind for p in again.problems] == ["passes_idle"]


def test_replays_stop_when_the_audits_time_for_them_is_spent(replayer):
    cases = [
        {**copy.deepcopy(audit_suites.PLANTED_CASES[8]), "key": f"mismatch-{n}", "prompt": str(n)}
        for n in range(3)
    ]
    audit = audit_suite(suite_of(*cases), replayer, replay_seconds=0)
    assert audit.problems == ()
    assert {u.case for u in audit.unchecked} == {"mismatch-0", "mismatch-1", "mismatch-2"}
    assert "(CASEBOOK_AUDIT_REPLAY_SECONDS)" in audit.unchecked[0].message
    unbounded = audit_suite(suite_of(*cases), replayer)
    assert [p.kind for p in unbounded.problems] == ["state_mismatch"] * 3
