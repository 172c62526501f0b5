"""Finding installed environments: the entry points of the ``casebook.environments`` group
(docs/environments.md#installing-an-environment)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points

GROUP = "casebook.environments"


class UnknownEnvironment(LookupError):
    """No installed environment has the name."""


def installed_environments() -> list[str]:
    """The names of the installed environments, sorted."""
    return sorted({point.name for point in entry_points(group=GROUP)})


def load_environment(name: str, overrides: Mapping[str, str] | None = None) -> type:
    """The class of environment ``name``: from ``overrides`` (``{name: "module:Class"}``)
    when it names it, else from the installed entry points."""
    if overrides and name in overrides:
        module, _, attribute = overrides[name].partition(":")
        return getattr(importlib.import_module(module), attribute)
    for point in entry_points(group=GROUP, name=name):
        return point.load()
    known = ", ".join(installed_environments()) or "none is installed"
    raise UnknownEnvironment(f"no environment named {name!r} is installed ({known})")
