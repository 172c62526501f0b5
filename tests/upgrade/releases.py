"""The releases docs/upgrading.md describes, read from the page itself: each release's
migrations, and the upgrade paths with the downtime each needs. The tests check the page
against the migrations on disk and in git (test_upgrading_doc.py), and upgrade from each
path's old release (test_upgrade.py); an old release's code is taken from the clone's
history with ``git archive``."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs/upgrading.md"
APPS = ("cases", "scoring")  # the apps whose migrations are ours
UNRELEASED = "Unreleased"

MIGRATION_LINE = re.compile(r"^\s*- `(?P<app>\w+)` `(?P<name>\d{4}_\w+)`", re.MULTILINE)
RELEASE_HEADING = re.compile(r"^## (?P<title>.+)$", re.MULTILINE)
PIN = re.compile(r"^(?P<package>[\w.-]+)(\[[\w,]+\])?==(?P<version>[^\s#;]+)", re.MULTILINE)
COMMIT = re.compile(r"\b(?P<commit>[0-9a-f]{7,40})\b")


@dataclass
class Release:
    title: str
    commit: str  # empty for the unreleased one
    migrations: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class UpgradePath:
    old: str  # the commit of the release upgraded from
    new: str  # the title of the release upgraded to (a commit, or "Unreleased")
    downtime: bool
    why: str


@cache
def releases() -> list[Release]:
    """The page's release sections, newest first, each with the migrations it lists."""
    text = PAGE.read_text()
    headings = list(RELEASE_HEADING.finditer(text))
    found = []
    for heading, after in zip(headings, [*headings[1:], None], strict=True):
        title = heading["title"].strip()
        commit = COMMIT.search(title)
        if title != UNRELEASED and not (commit and title.startswith(commit["commit"])):
            continue  # a section that is not a release
        body = text[heading.end() : after.start() if after else len(text)]
        migrations = [(m["app"], m["name"]) for m in MIGRATION_LINE.finditer(body)]
        found.append(Release(title, commit["commit"] if commit else "", migrations))
    return found


@cache
def upgrade_paths() -> list[UpgradePath]:
    """The rows of the page's table of upgrade paths: | from | to | downtime | why |."""
    rows = []
    for line in PAGE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not line.startswith("|"):
            continue
        old, new, downtime, why = cells
        commit = COMMIT.search(old)
        if commit is None or downtime.strip("*") not in ("none", "needed"):
            continue  # the header row and its rule
        rows.append(
            UpgradePath(commit["commit"], new.strip("`"), downtime.strip("*") == "needed", why)
        )
    return rows


def migrations_on_disk() -> set[tuple[str, str]]:
    return {
        (app, path.stem)
        for app in APPS
        for path in (ROOT / app / "migrations").glob("[0-9][0-9][0-9][0-9]_*.py")
    }


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def has_commit(commit: str) -> bool:
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True
    )
    return found.returncode == 0


def is_ancestor(older: str, newer: str) -> bool:
    found = subprocess.run(["git", "merge-base", "--is-ancestor", older, newer], cwd=ROOT)
    return found.returncode == 0


def require_commit(commit: str) -> None:
    """Skip, or in CI fail, when the clone lacks an old release's commit (a shallow clone:
    ``git fetch --unshallow`` brings the history; .ci/run does it)."""
    if has_commit(commit):
        return
    reason = f"commit {commit} is not in this clone's history (shallow?): git fetch --unshallow"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def migrations_at(commit: str) -> set[tuple[str, str]]:
    listed = git("ls-tree", "--name-only", commit, *(f"{app}/migrations/" for app in APPS))
    return {
        (path.split("/")[0], Path(path).stem)
        for path in listed.split()
        if re.fullmatch(r"\w+/migrations/\d{4}_\w+\.py", path)
    }


def unmet_pins(commit: str) -> list[str]:
    """The old release's pinned requirements that this virtualenv lacks at their version: the
    upgrade tests run the old code with this virtualenv's packages."""
    unmet = []
    for requirements in ("requirements.txt", "requirements-nodeps.txt"):
        if not git("ls-tree", "--name-only", commit, requirements).strip():
            continue
        for pin in PIN.finditer(git("show", f"{commit}:{requirements}")):
            try:
                installed = metadata.version(pin["package"])
            except metadata.PackageNotFoundError:
                installed = "none"
            if installed != pin["version"]:
                unmet.append(f"{pin['package']}=={pin['version']} (installed: {installed})")
    return unmet


def checkout(commit: str, into: Path) -> Path:
    """The release's files (``git archive``), unpacked in ``into``/``commit``."""
    tree = into / commit
    if not (tree / "manage.py").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True, check=True
        )
        archive_path = into / f"{commit}.tar"
        archive_path.write_bytes(archive.stdout)
        with tarfile.open(archive_path) as tar:
            tar.extractall(tree, filter="data")
        archive_path.unlink()
    return tree
