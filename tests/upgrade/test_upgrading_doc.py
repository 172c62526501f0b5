"""docs/upgrading.md is checked against the migrations: each migration file is listed once,
under the release that added it (each release's commit in git says which it has), so a new
migration fails here until its line is added under "Unreleased"."""

import itertools
from collections import Counter

from tests.upgrade.releases import (
    PAGE,
    ROOT,
    UNRELEASED,
    is_ancestor,
    migrations_at,
    migrations_on_disk,
    releases,
    require_commit,
    upgrade_paths,
)


def listed() -> list[tuple[str, str]]:
    return [migration for release in releases() for migration in release.migrations]


def test_every_migration_is_listed_once_and_every_listed_one_exists():
    on_disk, counted = migrations_on_disk(), Counter(listed())
    missing = sorted(on_disk - set(counted))
    assert missing == [], (
        f"not in {PAGE.relative_to(ROOT)}: {missing}; add a line for each under"
        f" '## {UNRELEASED}': - `app` `name`: what it does, and whether the release"
        " before runs on it"
    )
    assert sorted(set(counted) - on_disk) == [], "listed, but no such migration file"
    assert [m for m, n in counted.items() if n > 1] == [], "listed twice"


def test_the_page_has_the_unreleased_section_first_then_releases_newest_first():
    titles = [release.title for release in releases()]
    assert titles[0] == UNRELEASED
    commits = [release.commit for release in releases()[1:]]
    assert len(commits) >= 2
    for newer, older in itertools.pairwise(commits):
        require_commit(newer)
        require_commit(older)
        assert is_ancestor(older, newer), f"{older} is listed after {newer}, but is not older"
        assert is_ancestor(newer, "HEAD"), f"{newer} is not in this branch's history"


def test_each_release_lists_the_migrations_its_commit_added():
    released = releases()[1:]
    for release, older in zip(released, [*released[1:], None], strict=True):
        require_commit(release.commit)
        before = migrations_at(older.commit) if older else set()
        added = migrations_at(release.commit) - before
        assert sorted(release.migrations) == sorted(added), release.title


def test_unreleased_lists_what_the_newest_release_lacks():
    unreleased, newest = releases()[0], releases()[1]
    require_commit(newest.commit)
    assert sorted(unreleased.migrations) == sorted(
        migrations_on_disk() - migrations_at(newest.commit)
    )


def test_upgrading_from_the_newest_release_needs_no_downtime():
    """The promise of each release: the one before it keeps running while it migrates. A
    path that needs downtime says why."""
    newest = releases()[1].commit
    paths = {(path.old, path.new): path for path in upgrade_paths()}
    assert (newest, UNRELEASED) in paths, f"no row from {newest} to {UNRELEASED}"
    assert not paths[newest, UNRELEASED].downtime
    release_commits = {release.commit for release in releases()}
    for path in upgrade_paths():
        assert path.old in release_commits, f"{path.old} has no section on the page"
        assert path.why, f"{path.old} to {path.new}: say why"


def test_the_page_is_linked_from_the_docs_index_and_operations():
    for page in ("docs/README.md", "docs/operations.md"):
        assert "upgrading.md" in (ROOT / page).read_text(), page
