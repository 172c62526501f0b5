"""What a run cost, as its recording says (docs/formats.md#usage): tokens, model calls, models
and wall time, read from each provider's convention into one meaning, and summed over a run's
model calls by one rule (``run_usage``).

Whatever the provider's convention, ``input_tokens`` counts every input token, those read
from or written to a cache included (``cached_input_tokens`` is the part read from a
cache), and ``output_tokens`` every output token, reasoning included (``reasoning_tokens``
is that part). What was not recorded is None, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from scoring.matcher import USAGE_KEYS

TOKEN_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")
# Where a run used more than one model, its tokens by model, for pricing each apart.
BY_MODEL = "by_model"

Call = dict[str, Any]


def count(value: Any) -> int | None:
    """A token count as recorded: a whole number ≥ 0 (OTLP/JSON writes 64-bit integers as
    text); None for anything else, which is not a count."""
    kind = type(value)
    if kind is int:
        return value if value >= 0 else None
    if kind is float and value.is_integer() and value >= 0:
        return int(value)
    if kind is Decimal and value.is_finite() and value == value.to_integral_value() and value >= 0:
        return int(value)  # a document read as a stream (ijson) gives its numbers so
    if kind is str and value.isdigit():
        return int(value)
    return None


def _plus(*parts: int | None) -> int | None:
    """The sum of the parts recorded; None when none was."""
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def call(
    model: Any = None,
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cached_input_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    duration_ms: float | None = None,
) -> Call:
    """One model call's usage, in this module's meaning."""
    return {
        "model": model if type(model) is str and model else None,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": cached_input_tokens,
        "reasoning_tokens": reasoning_tokens,
        "duration_ms": duration_ms,
    }


# A call that recorded nothing: shared, and never changed (``run_usage`` only reads calls).
NOTHING: Call = call()


def turn_figures(made: Call) -> dict[str, Any]:
    """What a transcript's assistant turn says of the model call that gave it
    (docs/formats.md#usage): its tokens, where any was recorded, and its time, where
    recorded; nothing of what was not."""
    figures: dict[str, Any] = {}
    if any(made[key] is not None for key in TOKEN_KEYS):
        figures["usage"] = {key: made[key] for key in TOKEN_KEYS}
    if made["duration_ms"] is not None:
        figures["duration_ms"] = made["duration_ms"]
    return figures


def _details(usage: Mapping[str, Any], key: str, field: str) -> int | None:
    details = usage.get(key)
    return count(details.get(field)) if isinstance(details, Mapping) else None


def openai_call(usage: Any, model: Any = None) -> Call:
    """A call of OpenAI's Chat Completions (``prompt_tokens``, ``completion_tokens``) or
    Responses (``input_tokens``, ``output_tokens``): input includes cached tokens and output
    includes reasoning already."""
    if not isinstance(usage, Mapping):
        return call(model) if model else NOTHING
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return call(
            model,
            input_tokens=count(usage.get("prompt_tokens")),
            output_tokens=count(usage.get("completion_tokens")),
            cached_input_tokens=_details(usage, "prompt_tokens_details", "cached_tokens"),
            reasoning_tokens=_details(usage, "completion_tokens_details", "reasoning_tokens"),
        )
    return call(
        model,
        input_tokens=count(usage.get("input_tokens")),
        output_tokens=count(usage.get("output_tokens")),
        cached_input_tokens=_details(usage, "input_tokens_details", "cached_tokens"),
        reasoning_tokens=_details(usage, "output_tokens_details", "reasoning_tokens"),
    )


def anthropic_call(usage: Any, model: Any = None) -> Call:
    """A call of Anthropic's Messages API: its ``input_tokens`` leave out the tokens read
    from and written to the cache, which are added in."""
    if not isinstance(usage, Mapping):
        return call(model) if model else NOTHING
    read = count(usage.get("cache_read_input_tokens"))
    written = count(usage.get("cache_creation_input_tokens"))
    given = count(usage.get("input_tokens"))
    return call(
        model,
        input_tokens=_plus(given, read, written) if given is not None else None,
        output_tokens=count(usage.get("output_tokens")),
        cached_input_tokens=read,
    )


def gemini_call(metadata: Any, model: Any = None) -> Call:
    """A call of Gemini's API (``usageMetadata``, camelCase or snake_case): its thoughts
    are counted apart from the candidates' tokens, and added in."""
    if not isinstance(metadata, Mapping):
        return call(model) if model else NOTHING

    def field(camel: str, snake: str) -> int | None:
        return count(metadata.get(camel, metadata.get(snake)))

    thoughts = field("thoughtsTokenCount", "thoughts_token_count")
    candidates = field("candidatesTokenCount", "candidates_token_count")
    return call(
        model,
        input_tokens=field("promptTokenCount", "prompt_token_count"),
        output_tokens=_plus(candidates, thoughts) if candidates is not None else None,
        cached_input_tokens=field("cachedContentTokenCount", "cached_content_token_count"),
        reasoning_tokens=thoughts,
    )


def inspect_call(usage: Any, model: Any = None) -> Call:
    """A model's usage in an Inspect sample (``model_usage``): Inspect passes each
    provider's counts on, so its input leaves out the cache where the provider's does
    (Anthropic's), and its output the reasoning where the provider's does (Gemini's); which
    is told by what adds up to ``total_tokens``."""
    if not isinstance(usage, Mapping):
        return call(model) if model else NOTHING
    given, output = count(usage.get("input_tokens")), count(usage.get("output_tokens"))
    read = count(usage.get("input_tokens_cache_read"))
    written = count(usage.get("input_tokens_cache_write"))
    reasoning = count(usage.get("reasoning_tokens"))
    total = count(usage.get("total_tokens"))
    cache = (read or 0) + (written or 0)
    if given is not None and output is not None and total is not None:
        if cache and total in (given + cache + output, given + cache + output + (reasoning or 0)):
            given += cache
        if reasoning and total == given + output + reasoning:
            output += reasoning
    return call(
        model,
        input_tokens=given,
        output_tokens=output,
        cached_input_tokens=read,
        reasoning_tokens=reasoning,
    )


def run_usage(
    calls: Iterable[Call] | None,
    *,
    duration_ms: float | None = None,
    tool_duration_ms: float | None = None,
    model_calls: int | None = None,
    requested: Any = None,
) -> dict[str, Any]:
    """A run's usage from its model calls, each given once: each token count summed over the
    calls that recorded it (None when none did), ``model_calls`` the number of calls (None
    when the recording shows no model call at all: ``calls`` is None), the models named in
    order of first use (the model the request named, ``requested``, where no response
    names one). A format that records usage by model rather than by call gives a call per
    model and the number of calls apart (``model_calls``). ``duration_ms`` is the run's
    wall time where the recording gives it, ``tool_duration_ms`` its time in tools
    (``tool_time``). Where more than one model was used, their
    tokens apart too (``by_model``), to price each; the cost is left for
    ``scoring.importers.costs``."""
    usage: dict[str, Any] = dict.fromkeys(USAGE_KEYS)
    usage["models"] = []
    usage["duration_ms"] = _milliseconds(duration_ms)
    usage["tool_duration_ms"] = _milliseconds(tool_duration_ms)
    if calls is None:
        return usage
    made = list(calls)
    usage["model_calls"] = len(made) if model_calls is None else model_calls
    if all(each is NOTHING for each in made):  # a plain message list: nothing to sum
        usage["models"] = [requested] if type(requested) is str and requested else []
        return usage
    by_model: dict[str, dict[str, int | None]] = {}
    for each in made:
        model = each.get("model")
        tokens = by_model.setdefault(model, dict.fromkeys(TOKEN_KEYS)) if model else None
        for key in TOKEN_KEYS:
            value = each.get(key)
            if value is not None:
                usage[key] = (usage[key] or 0) + value
                if tokens is not None:
                    tokens[key] = (tokens[key] or 0) + value
    usage["models"] = list(by_model) or (
        [requested] if type(requested) is str and requested else []
    )
    if len(by_model) > 1:
        usage[BY_MODEL] = by_model
    return usage


def tool_time(batches: Iterable[Iterable[Mapping[str, Any]]]) -> float | None:
    """A run's time in tools: the sum of its calls' ``duration_ms`` where recorded; None
    when no call recorded one."""
    took = [
        c["duration_ms"] for batch in batches for c in batch if c.get("duration_ms") is not None
    ]
    return sum(took) if took else None


def _milliseconds(value: float | None) -> float | None:
    if value is None or value < 0:
        return None
    return round(value, 3)  # microseconds: what span times give, and no float noise


# OTLP times are fixed64 (protobuf); OTLP/JSON writes them as text, of any length.
_TIME_LIMIT = 2**64


def nanoseconds_to_ms(start: int, end: int) -> float | None:
    """The milliseconds from ``start`` to ``end`` (nanoseconds since the epoch), None when
    either is unknown (0), the end comes first, or a time is past what OTLP can hold."""
    if not start or not end or end < start or end >= _TIME_LIMIT:
        return None
    return (end - start) / 1_000_000
