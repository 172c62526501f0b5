"""The ``casebook`` wheel as a CI job installs it: the repository's action (``action.yml``,
docs/ci.md) run step by step as GitHub runs it: its install step builds the wheel from this
tree into a fresh virtualenv, with the wheel's own requirements only (pip may fetch them),
where Django is not importable; ``casebook score`` there gives what ``manage.py score``
gives; its submit step against a live server fails on a planted regression, passes a clean
run, and writes the job summary. Marked ``pipeline``: it builds and installs, about 30 s."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cases import services, tokens
from tests.support.commands import DEMO_RUNS, DEMO_SUITE, ROOT, run_score

pytestmark = pytest.mark.pipeline

STEPS = {
    step.get("name"): step
    for step in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
}


def run(*args, cwd, env=None):
    return subprocess.run(
        [str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


def step(name: str, runner_temp: Path, **env):
    """The action's step ``name``, its script run by bash as the runner runs it."""
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # setup-python's
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_ACTION_PATH": str(ROOT),
        **env,
    }
    environment.pop("VIRTUAL_ENV", None)
    return run("bash", "-e", "-c", STEPS[name]["run"], cwd=runner_temp, env=environment)


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory):
    """The runner's temporary directory once the action's install step ran."""
    where = tmp_path_factory.mktemp("runner")
    done = step("Install casebook", where)
    assert done.returncode == 0, done.stderr
    return where


def test_the_wheel_requires_no_web_framework_nor_database_driver(runner_temp):
    bin_dir = runner_temp / "casebook" / "bin"
    listed = run(bin_dir / "pip", "list", "--format=freeze", cwd=runner_temp).stdout.lower()
    assert "casebook==0.1.0" in listed
    for name in ("django", "djangorestframework", "celery", "psycopg", "redis"):
        assert f"\n{name}==" not in f"\n{listed}"
    probe = run(bin_dir / "python", "-c", "import django", cwd=runner_temp)
    assert "No module named 'django'" in probe.stderr
    where = run(bin_dir / "python", "-c", "import scoring; print(scoring.__file__)", cwd="/")
    assert "site-packages" in where.stdout  # the installed copy, not this tree


@pytest.mark.parametrize("options", [(), ("--json", "--jobs", "2")])
def test_casebook_score_gives_what_manage_py_score_gives(runner_temp, options):
    casebook = runner_temp / "casebook" / "bin" / "casebook"
    ours = run(casebook, "score", DEMO_SUITE, DEMO_RUNS, *options, cwd=runner_temp)
    theirs = run_score(DEMO_SUITE, DEMO_RUNS, *options)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    assert ours.returncode == 1
    assert ours.stdout.strip()


def runs(path: Path, passing: dict[str, bool]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"case": key, "batches": [], "final_text": "ok" if ok else "nope"}) + "\n"
            for key, ok in passing.items()
        )
    )
    return path


def test_the_actions_submit_step_gates_on_regressions(
    runner_temp, live_server, team, admin, editor, tmp_path
):
    cases = [
        {"key": key, "expectations": [{"type": "final_text_contains", "text": "ok"}]}
        for key in ("steady", "fragile")
    ]
    suite = services.create_suite(
        team, {"schema": "casebook.suite/1", "name": "gated", "cases": cases}, admin
    )
    summary = tmp_path / "step-summary.md"
    inputs = {
        "CASEBOOK_TOKEN": tokens.create(editor, "ci")[1],
        "SERVER": live_server.url,
        "SUITE": f"{team.slug}/{suite.slug}",
        "FAIL_ON": "regressions",
        "BASELINE": "main",
        "JUNIT": "",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    assert set(STEPS["Submit the runs"]["env"]) == {*inputs, "RUNS", "LABEL"} - {
        "GITHUB_STEP_SUMMARY"
    }

    def submit(label: str, passing: dict[str, bool]):
        file = runs(tmp_path / f"{label}.jsonl", passing)
        return step("Submit the runs", runner_temp, RUNS=str(file), LABEL=label, **inputs)

    assert submit("main", {"steady": True, "fragile": True}).returncode == 0
    planted = submit("pr-1", {"steady": True, "fragile": False})
    assert planted.returncode == 1, planted.stderr
    assert "regressed: fragile" in planted.stdout
    clean = submit("pr-2", {"steady": True, "fragile": True})
    assert clean.returncode == 0, clean.stderr
    written = summary.read_text()
    assert "## ❌ Casebook: " in written
    assert "| fragile | [1/1 passed](" in written
    assert written.rstrip().count("## ✅ Casebook: ") == 2
