"""Agent frameworks whose instrumentations write a convention of ``otel/`` with quirks of
their own (docs/live-traces.md#frameworks). Each module reads the spans of its ``SCOPES``
(scope names, or their prefixes up to a dot) before the conventions do: ``model_turn`` and
``tool_run`` give what they make of a span, or None to leave it to the conventions.
"""

from . import agno, crewai, dspy, langchain, llamaindex, semantic_kernel, smolagents

FRAMEWORKS = (agno, crewai, dspy, langchain, llamaindex, semantic_kernel, smolagents)
