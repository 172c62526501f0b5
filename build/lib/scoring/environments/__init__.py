"""Environments: simulated worlds an agent's calls are replayed in, to judge a run by the
state it leaves (docs/environments.md, docs/matcher.md#end-state).

A library (no Django): an environment is a class an operator installs, found through the
``casebook.environments`` entry points; ``SandboxReplayer`` replays calls in one, in a
separate process with limits, and is the ``Replayer`` that ``scoring.matcher.score`` takes.

    replayer = replayer_for(EnvironmentLimits.from_settings(settings))
    report = score(case, run, replayer=replayer)
"""

from scoring.environments.base import Environment
from scoring.environments.registry import GROUP, installed_environments
from scoring.environments.replayer import EnvironmentLimits, SandboxReplayer, replayer_for

__all__ = [
    "GROUP",
    "Environment",
    "EnvironmentLimits",
    "SandboxReplayer",
    "installed_environments",
    "replayer_for",
]
