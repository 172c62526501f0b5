"""An embedded Casebook (SQLite in a temporary file, Celery eager) in a child process, for
benchmarks that measure one request or one task of a checkout: this one, or an older one
(``--root``) for before/after figures.

``run_child(root, code)`` runs ``code`` in a fresh interpreter whose Django is set up on a
migrated database with a user ``bench`` (and token), a team and the demo suite (``SUITE``);
``code`` prints what it measures. Returns the child's stdout and its peak resident memory
(the kernel's high-water mark, from ``wait4``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SETUP = """
import json, os, sys
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from rest_framework.authtoken.models import Token
from cases import services
from cases.models import User
USER = User.objects.create_user("bench", password="bench-password")
TOKEN = Token.objects.create(user=USER).key
TEAM = services.create_team("Bench", USER)
SUITE = services.create_suite(
    TEAM, json.loads(open("cases/demo/assistant.suite.json").read()), USER
)
"""


def run_child(root: Path, code: str, **env: str) -> tuple[str, int]:
    """(stdout, peak RSS in bytes) of ``code`` run after ``SETUP`` in checkout ``root``."""
    with tempfile.TemporaryDirectory() as tmp:
        environment = {
            **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
            "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
            "DEBUG": "0",
            "SECRET_KEY": "bench-only",
            "ALLOWED_HOSTS": "testserver,127.0.0.1",
            **env,
        }
        child = subprocess.Popen(
            [sys.executable, "-c", SETUP + code],
            cwd=root,
            env=environment,
            stdout=subprocess.PIPE,
        )
        out = child.stdout.read().decode()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            raise SystemExit(f"the child failed (exit {child.returncode}):\n{out}")
        return out, usage.ru_maxrss * 1024


def megabytes(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MB"
