"""The layout rules that reach into tests and benchmarks, read from the source (every module
parsed, nothing imported but the matcher's public API). The rules of the application's own
packages are import-linter's contracts (pyproject.toml, ``make lint``):

- No test module imports another (shared test data lives in modules that are not tests).
- The matcher is used only through ``scoring/matcher/__init__.py``: outside
  ``scoring/matcher/`` (and the tests of its internals, ``tests/matcher/``), no module imports
  one of its submodules, or a name its ``__all__`` does not export.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import scoring.matcher

ROOT = Path(__file__).resolve().parents[1]
MATCHER = "scoring.matcher"


def modules(*folders: str, skip: tuple[str, ...] = ()) -> list[Path]:
    found = [
        path
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "migrations" not in path.parts
    ]
    return [p for p in found if not any(p.is_relative_to(ROOT / s) for s in skip)]


def imports(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """Each import of the module as (line, module imported from, name or None): ``import
    a.b`` is ("a.b", None), ``from a import b`` is ("a", "b"), relative ones made absolute."""
    package = path.relative_to(ROOT).parts[:-1]  # what a relative import starts from
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            for alias in node.names:
                yield node.lineno, module, alias.name


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_nothing_outside_the_matcher_reaches_past_its_public_api():
    public = set(scoring.matcher.__all__)
    wrong = []
    outside = modules(
        "scoring", "cases", "evalsite", "bench", "tests", skip=("scoring/matcher", "tests/matcher")
    )
    assert len(outside) > 100  # the scan sees the code
    for path in outside:
        for line, module, name in imports(path):
            if module == "scoring" and name == "matcher":
                continue
            if within(module, MATCHER) and module != MATCHER:
                wrong.append(f"{where(path, line)}: {module}")
            elif module == MATCHER and name is not None and name not in public:
                wrong.append(f"{where(path, line)}: {module}.{name}")
    assert wrong == []


@pytest.mark.parametrize("name", scoring.matcher.__all__)
def test_every_name_of_the_public_api_exists(name):
    assert hasattr(scoring.matcher, name)


def test_no_test_module_imports_another():
    """Shared test data lives in modules that are not tests (``tests/support/builders.py`` and the
    like), so that a test module can be read, moved or deleted on its own."""
    wrong = []
    for path in modules("tests"):
        for line, module, name in imports(path):
            target = f"{module}.{name}" if name else module
            if any(part.startswith("test_") for part in target.split(".")[1:]):
                wrong.append(f"{where(path, line)}: {target}")
    assert wrong == []


def excused_from_types() -> list[str]:
    import tomllib

    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    return [m for o in overrides if o.get("ignore_errors") for m in o["module"]]


def test_no_module_is_excused_from_type_checks():
    """docs/development.md#types: mypy checks every module; a module's types are fixed,
    never excused (``ignore_errors``)."""
    assert excused_from_types() == []


VIEW_LINES_AT_MOST = 40  # docs/architecture.md: a view only calls the rules it applies


@pytest.mark.parametrize("path", modules("cases/views", "scoring/views"), ids=str)
def test_every_view_is_short(path):
    long = [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and node.end_lineno - node.lineno + 1 > VIEW_LINES_AT_MOST
    ]
    assert not long, f"views over {VIEW_LINES_AT_MOST} lines in {path.name}: {long}"
