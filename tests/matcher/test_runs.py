"""Run files (docs/formats.md#run-files): validating one canonical run, and numbering
trials."""

import pytest

from scoring.matcher import InvalidInput, Run, TrialNumbering, load_run, parse_json

from .builders import call, null_call, problem_paths, run_doc, score_case


def run_paths(document):
    return problem_paths(load_run, document)


def assert_path_reported(document, path):
    paths = run_paths(document)
    assert any(p == path or p.startswith((path + ".", path + "[")) for p in paths), paths


def test_the_example_run_of_the_design_loads_with_batches_and_positions():
    text = (
        '{"case": "delete-if-exists", "trial": 0,'
        ' "batches": ['
        '   [{"id": "c1", "name": "file_exists", "arguments": {"path": "notes.txt"}, '
        '"result": "true"}],'
        '   [{"id": "c2", "name": "delete_file", "arguments": {"path": "notes.txt"}}]'
        " ],"
        ' "final_text": "Deleted notes.txt.", "error": null, "meta": {"model": "m-1"}}'
    )
    run = load_run(parse_json(text))
    assert isinstance(run, Run)
    assert run.case == "delete-if-exists"
    assert run.trial == 0
    assert run.final_text == "Deleted notes.txt."
    assert run.error is None
    assert [[c.name for c in batch] for batch in run.batches] == [["file_exists"], ["delete_file"]]
    second = run.batches[1][0]
    assert (second.batch, second.position, second.id) == (1, 0, "c2")
    assert run.batches[0][0].result == "true"
    assert dict(second.arguments) == {"path": "notes.txt"}


def test_flat_call_log_is_batches_in_order_then_calls_in_order():
    run = load_run(run_doc([[call("a"), call("b")], [call("c")], [call("d"), call("e")]]))
    assert [(c.name, c.batch, c.position) for c in run.calls] == [
        ("a", 0, 0),
        ("b", 0, 1),
        ("c", 1, 0),
        ("d", 2, 0),
        ("e", 2, 1),
    ]


@pytest.mark.parametrize(
    "result", [None, "text", 3, 2.5, True, [1, {"a": None}], {"nested": {"deep": [1, 2]}}]
)
def test_a_call_result_may_be_any_json(result):
    run = load_run(run_doc([[call("f", result=result)]]))
    assert run.batches[0][0].result == result


def test_is_error_true_is_kept():
    run = load_run(run_doc([[call("f", is_error=True, id="x")]]))
    assert run.batches[0][0].is_error is True


def test_arguments_null_with_arguments_raw_is_accepted_and_has_no_arguments():
    run = load_run(run_doc([[null_call("f", raw='{"path": "no')]]))
    (only,) = run.batches[0]
    assert only.arguments is None
    assert only.arguments_raw == '{"path": "no'


def test_unknown_run_and_call_fields_are_ignored():
    run = load_run(
        run_doc([[call("f", {"a": 1}, latency_ms=12, extra={"x": 1})]], provider="p", cost=1.5)
    )
    assert run.batches[0][0].name == "f"


def test_meta_is_kept():
    run = load_run(run_doc(meta={"model": "m-1", "seed": 7}))
    assert dict(run.meta) == {"model": "m-1", "seed": 7}


def test_final_text_and_error_may_be_null():
    run = load_run(run_doc(final_text=None, error=None))
    assert run.final_text is None
    assert run.error is None


def test_error_may_be_the_empty_string_and_is_kept_as_such():
    run = load_run(run_doc(error=""))
    assert run.error == ""


def test_error_string_is_kept():
    assert load_run(run_doc(error="timeout after 60s")).error == "timeout after 60s"


def test_transcript_and_notes_are_kept():
    transcript = [
        {"role": "system", "text": "Be brief."},
        {"role": "user", "text": "Delete notes.txt"},
        {"role": "assistant", "text": None, "batch": 0},
        {"role": "tool", "text": "true", "batch": 0},
        {"role": "assistant", "text": "Done."},
    ]
    run = load_run(
        run_doc([[call("f")]], transcript=transcript, notes=["arguments were not captured"])
    )
    assert run.transcript == tuple(transcript)
    assert run.notes == ("arguments were not captured",)


def test_transcript_and_notes_are_optional():
    run = load_run(run_doc())
    assert (run.transcript, run.notes) == ((), ())


def test_the_report_carries_the_runs_notes_and_ignores_its_transcript():
    case = {"expected_calls": [{"name": "f"}]}
    plain = score_case(case, [[call("f")]])
    noted = score_case(
        case,
        [[call("f")]],
        notes=["tool arguments were not captured"],
        transcript=[{"role": "user", "text": "hi"}],
    )
    assert plain.to_dict()["notes"] == []
    assert noted.to_dict()["notes"] == ["tool arguments were not captured"]
    assert noted.to_dict()["predicates"] == plain.to_dict()["predicates"]


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"transcript": {"role": "user"}}, "transcript"),
        ({"transcript": ["hello"]}, "transcript[0]"),
        ({"transcript": [{"role": "robot", "text": "x"}]}, "transcript[0].role"),
        ({"transcript": [{"text": "x"}]}, "transcript[0].role"),
        ({"transcript": [{"role": "user", "text": ["x"]}]}, "transcript[0].text"),
        ({"transcript": [{"role": "tool", "text": "x", "batch": "0"}]}, "transcript[0].batch"),
        ({"transcript": [{"role": "tool", "text": "x", "batch": True}]}, "transcript[0].batch"),
        ({"transcript": [{"role": "tool", "text": "x", "batch": 1}]}, "transcript[0].batch"),
        ({"transcript": [{"role": ["tool"], "text": "x"}]}, "transcript[0].role"),
        ({"notes": "not captured"}, "notes"),
        ({"notes": ["ok", 3]}, "notes[1]"),
    ],
)
def test_bad_transcript_and_notes_are_problems_by_path(fields, path):
    assert path in run_paths(run_doc([[call("f")]], **fields))


# --- validation errors, by field -------------------------------------------------------------


@pytest.mark.parametrize("error", [1, 0, True, False, [], {}, ["crash"], {"message": "x"}])
def test_error_must_be_null_or_a_string(error):
    assert_path_reported(run_doc(error=error), "error")


@pytest.mark.parametrize("final_text", [1, True, [], {"text": "x"}])
def test_final_text_must_be_null_or_a_string(final_text):
    assert_path_reported(run_doc(final_text=final_text), "final_text")


@pytest.mark.parametrize("case", [None, 3, ["c"], {}])
def test_case_must_be_a_string(case):
    document = run_doc()
    document["case"] = case
    assert_path_reported(document, "case")


def test_case_is_required():
    document = run_doc()
    del document["case"]
    assert_path_reported(document, "case")


@pytest.mark.parametrize("trial", ["0", True, 1.5, [0]])
def test_trial_must_be_an_integer(trial):
    assert_path_reported(run_doc(trial=trial), "trial")


@pytest.mark.parametrize("batches", ["[]", {"0": []}, 3])
def test_batches_must_be_a_list(batches):
    assert_path_reported(run_doc(batches), "batches")


def test_a_batch_must_be_a_list_of_calls():
    assert_path_reported(run_doc([[call("f")], {"name": "g"}]), "batches[1]")


def test_a_call_must_be_an_object():
    assert_path_reported(run_doc([[call("f"), "g()"]]), "batches[0][1]")


def test_a_call_name_missing_is_reported_at_its_path():
    assert_path_reported(run_doc([[call("f"), {"arguments": {}}]]), "batches[0][1].name")


@pytest.mark.parametrize("name", [3, None, ["f"], {"f": 1}])
def test_a_call_name_must_be_a_string(name):
    assert_path_reported(
        run_doc([[call("f")], [call("g"), {"name": name, "arguments": {}}]]), "batches[1][1].name"
    )


@pytest.mark.parametrize("arguments", [[1, 2], "{'a': 1}", 3, True])
def test_call_arguments_must_be_an_object_or_null(arguments):
    assert_path_reported(
        run_doc([[{"name": "f", "arguments": arguments}]]), "batches[0][0].arguments"
    )


def test_call_is_error_must_be_a_boolean():
    assert_path_reported(run_doc([[call("f", is_error="yes")]]), "batches[0][0].is_error")


def test_a_run_that_is_not_an_object_is_rejected():
    for document in ([], "run", None, 3):
        with pytest.raises(InvalidInput):
            load_run(document)


def test_every_bad_field_of_a_run_is_reported():
    document = run_doc([[{"arguments": {}}], [call("g", arguments=[1])]], final_text=3, error=1)
    paths = run_paths(document)
    for wanted in ["batches[0][0].name", "batches[1][0].arguments", "final_text", "error"]:
        assert any(p == wanted or p.startswith(wanted + ".") for p in paths), (wanted, paths)


# --- trial numbering -------------------------------------------------------------------------


def numbered(*documents):
    numbering = TrialNumbering()
    return [numbering.number(load_run(d)).trial for d in documents]


def test_absent_trials_are_numbered_from_zero_in_file_order():
    assert numbered(run_doc(), run_doc(), run_doc()) == [0, 1, 2]


def test_absent_trials_are_numbered_per_case():
    trials = numbered(
        run_doc(case="a"),
        run_doc(case="b"),
        run_doc(case="a"),
        run_doc(case="b"),
        run_doc(case="a"),
    )
    assert trials == [0, 0, 1, 1, 2]


def test_explicit_trials_are_kept():
    assert numbered(run_doc(trial=5), run_doc(trial=2), run_doc(trial=0)) == [5, 2, 0]


def test_same_explicit_trial_on_different_cases_is_fine():
    assert numbered(run_doc(case="a", trial=0), run_doc(case="b", trial=0)) == [0, 0]


def test_second_run_of_a_case_with_the_same_explicit_trial_is_invalid():
    numbering = TrialNumbering()
    first = numbering.number(load_run(run_doc(case="a", trial=3)))
    assert first.trial == 3
    with pytest.raises(InvalidInput) as info:
        numbering.number(load_run(run_doc(case="a", trial=3)))
    assert info.value.problems


def test_after_a_repeated_trial_the_first_one_stands_and_numbering_goes_on():
    numbering = TrialNumbering()
    numbering.number(load_run(run_doc(case="a", trial=1)))
    with pytest.raises(InvalidInput):
        numbering.number(load_run(run_doc(case="a", trial=1)))
    # The first one still holds trial 1 for case a; another repeat is still refused.
    with pytest.raises(InvalidInput):
        numbering.number(load_run(run_doc(case="a", trial=1)))
    assert numbering.number(load_run(run_doc(case="a", trial=2))).trial == 2


def test_separate_numberings_are_independent():
    assert numbered(run_doc(trial=0)) == [0]
    assert numbered(run_doc(trial=0)) == [0]


def test_numbering_keeps_the_rest_of_the_run():
    run = load_run(run_doc([[call("f", {"x": 1})]], final_text="done", error=None))
    out = TrialNumbering().number(run)
    assert out.trial == 0
    assert out.final_text == "done"
    assert out.case == run.case
    assert [c.name for c in out.calls] == ["f"]


@pytest.mark.parametrize(
    "text", ['{"case": "x", "n": 1e999999999999999999999999}', "[1.0e-99999999999999999999999999]"]
)
def test_a_number_no_decimal_holds_is_invalid_json_said_not_a_crash(text):
    with pytest.raises(InvalidInput) as caught:
        parse_json(text)
    assert "is out of range" in caught.value.problems[0].message
