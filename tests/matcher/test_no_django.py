"""The matcher and the run importers are pure Python: ``manage.py score`` and anyone using them
as a library load no Django, Celery, DRF or web app. Checked in a fresh interpreter, where
nothing else has loaded those already."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = ("django", "celery", "kombu", "rest_framework", "cases", "evalsite")

# Imports every module of the packages named, then prints the loaded modules of the web app
# and its frameworks: any of FOREIGN, and any part of ``scoring`` but its pure packages.
PROBE = """
import importlib, json, pkgutil, sys

for name in sys.argv[1:]:
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(getattr(package, "__path__", []), name + "."):
        importlib.import_module(module.name)
print(json.dumps(sorted(
    loaded for loaded in sys.modules
    if loaded.split(".")[0] in FOREIGN
    or (loaded.split(".")[0] == "scoring" and loaded.split(".")[:2] not in PURE)
)))
"""
PURE = [["scoring"], ["scoring", "matcher"], ["scoring", "importers"], ["scoring", "audit"]]


def foreign_modules_loaded_by(*packages: str) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", f"FOREIGN = {FOREIGN!r}\nPURE = {PURE!r}\n{PROBE}", *packages],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_matcher_and_the_importers_load_nothing_of_django_celery_drf_or_the_app():
    assert foreign_modules_loaded_by("scoring.matcher", "scoring.importers") == []


def test_the_audit_loads_nothing_but_the_matcher():
    assert foreign_modules_loaded_by("scoring.audit") == []


def test_the_check_sees_a_module_that_uses_django():
    # The JSON field of the web app's models: Django, and the app itself.
    loaded = foreign_modules_loaded_by("cases.fields")
    assert "django.db.models" in loaded
    assert "cases.fields" in loaded
