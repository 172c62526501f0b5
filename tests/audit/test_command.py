"""``manage.py audit SUITE_FILE [--json] [--strict]`` as a user runs it
(docs/command-line.md#audit): no database, its exit statuses and its JSON."""

import json

from tests.support import audit_suites
from tests.support.commands import DEMO_SUITE, manage


def audit(*args):
    return manage("audit", *args, text=True)


def written(tmp_path, document, name="suite.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_a_planted_suite_gives_every_kind_and_exit_status_1(tmp_path):
    done = audit(written(tmp_path, audit_suites.PLANTED_IN_BFCL), "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert set(found) == {"cases", "problems"}
    assert found["cases"] == len(audit_suites.PLANTED_IN_BFCL["cases"])
    kinds: dict[str, list[str]] = {}
    for problem in found["problems"]:
        assert set(problem) == {"case", "kind", "message"}
        kinds.setdefault(problem["case"], []).append(problem["kind"])
    assert kinds == audit_suites.PLANTED_IN_BFCL_KINDS
    refused = next(p for p in found["problems"] if p["kind"] == "replay_refused")
    assert "got an unexpected keyword argument 'colour'" in refused["message"]


def test_the_demo_suite_has_no_problems_exit_status_0():
    done = audit(DEMO_SUITE, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"cases": 4, "problems": []}


def test_text_output_lists_each_problem_then_the_counts(tmp_path):
    done = audit(written(tmp_path, audit_suites.PLANTED))
    lines = done.stdout.splitlines()
    assert lines[0].startswith("count-contradicts: contradiction: its reference run fails")
    assert lines[-1] == (
        "11 cases: 8 problems (4 contradiction, 1 passes_idle, 1 unknown_tool, 1 schema, "
        "1 duplicate)"
    )
    # The tests' own Store environment is not installed: said, never silently clean.
    assert "replay-refused: not checked: the reference calls of expectation #0 could not be " in (
        done.stderr
    )


def test_passes_idle_alone_exits_0_unless_strict(tmp_path):
    path = written(tmp_path, {"name": "s", "cases": [audit_suites.PLANTED_CASES[4]]})
    done = audit(path, "--json")
    assert done.returncode == 0
    assert [p["kind"] for p in json.loads(done.stdout)["problems"]] == ["passes_idle"]
    assert audit(path, "--strict").returncode == 1


def test_an_invalid_suite_exits_2_with_its_error(tmp_path):
    path = written(tmp_path, {"name": "s", "cases": [{"key": "a", "extra_calls": "sometimes"}]})
    done = audit(path, "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "error": f'{path}: invalid suite file: cases[0].extra_calls: must be one of "allow", '
        '"forbid"'
    }
    done = audit(path)
    assert done.returncode == 2
    assert "invalid suite file: cases[0].extra_calls" in done.stderr


def test_a_missing_file_exits_2(tmp_path):
    done = audit(tmp_path / "nothing.json", "--json")
    assert done.returncode == 2
    assert "cannot read it: No such file or directory" in json.loads(done.stdout)["error"]
