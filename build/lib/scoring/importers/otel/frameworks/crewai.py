"""CrewAI (crewai 1.15) under OpenInference (openinference-instrumentation-crewai) and
OpenLLMetry (opentelemetry-instrumentation-crewai). Neither records the model calls when
CrewAI calls the model's SDK itself (its native providers): the crew's result is then the
only record of the final text, ``raw`` in the output of OpenInference's ``Crew_<id>.kickoff``
span (its agents' ``AGENT`` spans hold their task's output, JSON), ``crewai.crew.result`` on
OpenLLMetry's ``crewai.workflow`` span.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import openinference, openllmetry
from ..spans import Span
from ..turns import ModelTurn, ToolRun

SCOPES = ("openinference.instrumentation.crewai", "opentelemetry.instrumentation.crewai")
CREW_RESULT = "crewai.crew.result"
KICKOFF = ".kickoff"


def model_turn(span: Span) -> ModelTurn | None:
    attributes = span.attributes
    if isinstance(attributes.get(CREW_RESULT), str):
        return openllmetry.agent_turn(span, answer=attributes[CREW_RESULT])
    kind = attributes.get(openinference.KIND)
    if kind == "AGENT":  # its output is its task's, as JSON: the crew's result is the answer
        return ModelTurn(span, agent=True)
    if kind == "CHAIN" and span.name.endswith(KICKOFF) and not span.parent_id:
        output = span.json("output.value")
        raw = output.get("raw") if isinstance(output, Mapping) else None
        return openinference.agent_turn(span, answer=raw if isinstance(raw, str) else None)
    return None


def tool_run(span: Span) -> ToolRun | None:
    return None
