"""The ``casebook`` wheel as a CI job installs it (docs/ci.md): built from this tree,
installed in a fresh virtualenv with its own requirements only (pip may fetch them), where
Django is not importable; ``casebook score`` then gives what ``manage.py score`` gives.
Marked ``pipeline``: it builds and installs, tens of seconds."""

import subprocess
import sys
import venv

import pytest

from tests.support.commands import DEMO_RUNS, DEMO_SUITE, ROOT, run_score

pytestmark = pytest.mark.pipeline


def run(*args, cwd):
    return subprocess.run(
        [str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The bin directory of a fresh virtualenv holding the wheel built from this tree."""
    where = tmp_path_factory.mktemp("wheel")
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", where, ROOT, cwd=where)
    assert built.returncode == 0, built.stderr
    (wheel,) = where.glob("casebook-*.whl")
    venv.create(where / "venv", with_pip=True)
    bin_dir = where / "venv" / "bin"
    done = run(bin_dir / "pip", "install", "--quiet", wheel, cwd=where)
    assert done.returncode == 0, done.stderr
    return bin_dir


def test_its_requirements_hold_no_web_framework_nor_database_driver(installed, tmp_path):
    listed = run(installed / "pip", "list", "--format=freeze", cwd=tmp_path).stdout.lower()
    assert "casebook==0.1.0" in listed
    for name in ("django", "djangorestframework", "celery", "psycopg", "redis"):
        assert f"\n{name}==" not in f"\n{listed}"
    probe = run(installed / "python", "-c", "import django", cwd=tmp_path)
    assert "No module named 'django'" in probe.stderr


@pytest.mark.parametrize("options", [(), ("--json", "--jobs", "2")])
def test_casebook_score_gives_what_manage_py_score_gives(installed, tmp_path, options):
    ours = run(installed / "casebook", "score", DEMO_SUITE, DEMO_RUNS, *options, cwd=tmp_path)
    theirs = run_score(DEMO_SUITE, DEMO_RUNS, *options)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    assert ours.returncode == 1
    assert ours.stdout.strip()
