"""What a new user runs first (README.md, docs/development.md): the README's example is the
command's output today, `make dev` serves on the port it is given, and the demo prints the
address the server really uses, under `make dev` and `bin/stack` alike."""

from __future__ import annotations

import io
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent


def readme_example() -> tuple[list[str], str]:
    """The README's example command (its arguments) and the output it shows."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"```\n\$ python (manage\.py score [^\n]+)\n(.*?)```", readme, re.S)
    assert found, "the README shows `python manage.py score …` and its output"
    return found[1].split(), found[2]


def test_the_readmes_example_output_is_what_the_command_prints():
    arguments, shown = readme_example()
    done = subprocess.run(
        [sys.executable, *arguments], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1  # some runs fail, as the example shows
    assert done.stdout == shown


def test_make_dev_serves_on_the_port_it_is_given_and_the_demo_says_so():
    done = subprocess.run(
        ["make", "-n", "dev", "PORT=8123"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "manage.py runserver 127.0.0.1:8123" in done.stdout
    assert "manage.py demo --address http://127.0.0.1:8123/" in done.stdout
    default = subprocess.run(["make", "-n", "dev"], cwd=ROOT, capture_output=True, text=True)
    assert "runserver 127.0.0.1:8000\n" in default.stdout


@pytest.mark.django_db
def test_the_demo_prints_the_address_it_is_given():
    out = io.StringIO()
    call_command("demo", address="http://127.0.0.1:8123/", stdout=out)
    assert "Sign in at http://127.0.0.1:8123/ as demo / casebook-demo" in out.getvalue()


def test_the_stack_tells_the_demo_where_gunicorn_listens(monkeypatch):
    stack = runpy.run_path(str(ROOT / "bin/stack"))
    ran = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: ran.append(command) or Done)
    env = {"DATABASE_URL": "sqlite:///unused", "HOST": "127.0.0.9", "PORT": "8124"}
    stack["prepare"](env, True)
    demo = next(command for command in ran if "demo" in command)
    assert demo[-2:] == ["--address", "http://127.0.0.9:8124/"]
