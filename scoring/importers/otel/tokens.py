"""A model call's usage as its span records it (docs/formats.md#usage): the token counts,
the model and the span's duration, in whichever convention wrote them.

- OpenTelemetry's GenAI conventions (and OpenLLMetry, LiteLLM, the others' fallback):
  ``gen_ai.usage.input_tokens`` / ``output_tokens``, ``prompt_tokens`` /
  ``completion_tokens`` in the older ones; cache reads as ``gen_ai.usage.cache_read.
  input_tokens`` (OpenLLMetry: ``gen_ai.usage.cache_read_input_tokens``); reasoning as
  ``gen_ai.usage.reasoning.output_tokens`` (or ``reasoning_tokens``). The model is
  ``gen_ai.response.model``, else ``gen_ai.request.model``.
- OpenInference: ``llm.token_count.prompt`` / ``completion``, ``llm.token_count.
  prompt_details.cache_read``, ``llm.token_count.completion_details.reasoning``; the
  model ``llm.model_name``.
- The Vercel AI SDK: ``ai.usage.inputTokens`` / ``outputTokens`` (``promptTokens`` /
  ``completionTokens`` before v5), ``ai.usage.cachedInputTokens``,
  ``ai.usage.reasoningTokens``; the model ``ai.response.model``, else ``ai.model.id``.

- LangSmith: LangChain's ``usage_metadata`` as JSON text (``langsmith.metadata.
  usage_metadata``: ``input_tokens``, ``output_tokens``, ``input_token_details.cache_read``,
  ``output_token_details.reasoning``).
- LiteLLM's callback: the provider's usage as Python's text of a dict
  (``llm.openai.usage``: ``{'prompt_tokens': 50, ...}``), the model ``llm.openai.model``.

Input counts include cached tokens and output counts reasoning, as these conventions
define them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput, parse_json

from .. import usage
from .spans import Span

LANGSMITH_USAGE = "langsmith.metadata.usage_metadata"
LITELLM = "litellm"  # the scope of LiteLLM's own callback
# LiteLLM's provider usage, ``llm.<provider>.usage``, and its whole numbers by name.
_PROVIDER_USAGE = re.compile(r"llm\.[a-z_]+\.usage")
_PROVIDER_MODEL = re.compile(r"llm\.[a-z_]+\.model")
_NAMED_COUNT = re.compile(r"'(prompt_tokens|completion_tokens)': (\d{1,18})\b")
_FROM_PROVIDER = {"prompt_tokens": "input_tokens", "completion_tokens": "output_tokens"}

# Each figure's attributes, the first recorded read.
_FIGURES = {
    "input_tokens": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
        "ai.usage.inputTokens",
        "ai.usage.promptTokens",
    ),
    "output_tokens": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
        "ai.usage.outputTokens",
        "ai.usage.completionTokens",
    ),
    "cached_input_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "llm.token_count.prompt_details.cache_read",
        "ai.usage.cachedInputTokens",
    ),
    "reasoning_tokens": (
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
        "ai.usage.reasoningTokens",
    ),
}
_MODEL = (
    "gen_ai.response.model",
    "ai.response.model",
    "llm.model_name",
    "gen_ai.request.model",
    "ai.model.id",
)


def span_call(span: Span, also: Span | None = None) -> usage.Call:
    """The usage of the model call ``span`` records; a figure it lacks is read from
    ``also``, the same call's span from another instrumentation, where there is one."""
    figures = {key: _first(span, names, also) for key, names in _FIGURES.items()}
    if figures["input_tokens"] is None and figures["output_tokens"] is None:
        figures.update(_written_apart(span))
    model = _model(span) or (_model(also) if also is not None else None)
    return usage.call(model, duration_ms=span_ms(span), **figures)


def _written_apart(span: Span) -> dict[str, int | None]:
    """The figures of a span that writes usage as one text: LangSmith's JSON, LiteLLM's
    Python dict."""
    attributes = span.attributes
    if isinstance(attributes.get(LANGSMITH_USAGE), str):
        try:
            metadata: Any = parse_json(attributes[LANGSMITH_USAGE])
        except InvalidInput:
            return {}
        if not isinstance(metadata, Mapping):
            return {}
        inputs, outputs = metadata.get("input_token_details"), metadata.get("output_token_details")
        return {
            "input_tokens": usage.count(metadata.get("input_tokens")),
            "output_tokens": usage.count(metadata.get("output_tokens")),
            "cached_input_tokens": usage.count(inputs.get("cache_read"))
            if isinstance(inputs, Mapping)
            else None,
            "reasoning_tokens": usage.count(outputs.get("reasoning"))
            if isinstance(outputs, Mapping)
            else None,
        }
    if span.scope.startswith(LITELLM):  # the only writer of these: other spans not scanned
        for key, value in attributes.items():
            if isinstance(value, str) and _PROVIDER_USAGE.fullmatch(key):
                return {_FROM_PROVIDER[name]: int(n) for name, n in _NAMED_COUNT.findall(value)}
    return {}


def span_ms(span: Span) -> float | None:
    return usage.nanoseconds_to_ms(span.start, span.end)


def _first(span: Span, names: tuple[str, ...], also: Span | None) -> int | None:
    for each in (span, also):
        if each is None:
            continue
        attributes = each.attributes
        for name in names:
            if name in attributes:
                found = usage.count(attributes[name])
                if found is not None:
                    return found
    return None


def _model(span: Span) -> str | None:
    for name in _MODEL:
        value = span.attributes.get(name)
        if isinstance(value, str) and value:
            return value
    if span.scope.startswith(LITELLM):
        for key, value in span.attributes.items():
            if isinstance(value, str) and value and _PROVIDER_MODEL.fullmatch(key):
                return value
    return None
