"""docs/ci.md against what it documents: its YAML examples parse, the workflow uses the
action with inputs the action has, and every input of ``action.yml`` is documented."""

import re

import yaml

from tests.support.commands import ROOT

PAGE = (ROOT / "docs/ci.md").read_text()
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def examples() -> list[dict]:
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", PAGE, re.S)]


def test_the_examples_parse_and_the_workflow_gives_only_the_actions_inputs():
    workflow, gitlab = examples()
    (used,) = [s for s in workflow["jobs"]["agent"]["steps"] if "casebook" in s.get("uses", "")]
    assert set(used["with"]) <= set(ACTION["inputs"])
    required = {name for name, spec in ACTION["inputs"].items() if spec.get("required")}
    assert required <= set(used["with"])
    script = " ".join(gitlab["agent"]["script"])
    assert "casebook submit runs.jsonl" in script
    assert "--wait --fail-on regressions" in script
    assert gitlab["agent"]["script"][-1] == "exit $status"


def test_every_input_of_the_action_is_documented():
    for name in ACTION["inputs"]:
        assert f"`{name}`" in PAGE, name
