"""Filters for showing recorded runs and their results."""

import math
from collections.abc import Mapping
from datetime import timedelta
from html import escape  # Django's adds a lazy-string wrapper per call: slow on a long run

import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from scoring.matcher import InvalidInput, dump_json, parse_json, pass_rate_text, pretty_json
from scoring.results import usage
from scoring.runfiles.runmeta import reward_agrees

register = template.Library()

# CommonMark and its tables, raw HTML in the text left as text (``html`` off); what it
# makes is sanitised again (nh3: no script, no event handler, no javascript: link), as the
# text is the agent's, and the agent's is untrusted.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
MARKDOWN_LIMIT = 100_000  # characters rendered; a longer text is shown as it is

# Nodes of a result shown as a tree, and levels; the rest of a larger or deeper one is
# shown as JSON text, so a page's time and stack stay bounded whatever a tool answered.
TREE_NODES = 2000
TREE_DEPTH = 32
TOO_DEEP = "(nested too deeply to show)"  # as indented text


@register.simple_tag
def run_name(case_key: str, trial, verdict: str | None) -> str:
    """A link to a run named in full for a screen reader, where the page shows only the case
    key's chip and colours the verdict: "Case 4, trial 0: fail"
    (docs/review.md#keyboard-and-screen-readers)."""
    case = f"Case {case_key}" if case_key else "Unassigned run"
    return f"{case}, trial {trial}: {verdict or 'not scored'}"


@register.filter
def markdown(text) -> SafeString:
    """``text|markdown``: an assistant's Markdown as safe HTML (docs/review.md#run-page)."""
    if not isinstance(text, str) or len(text) > MARKDOWN_LIMIT:
        return mark_safe(f'<div class="turn-text">{escape(str(text or ""))}</div>')
    html = nh3.clean(_MARKDOWN.render(text), link_rel="noopener noreferrer nofollow")
    return mark_safe(f'<div class="markdown">{html}</div>')  # sanitised by nh3


@register.filter
def agrees_with_reward(verdict: str | None, reward) -> bool | None:
    """``verdict|agrees_with_reward:reward``: whether Casebook's verdict agrees with the
    file's own reward (``runmeta.reward_agrees``); None without a reward or a verdict."""
    if verdict is None:
        return None
    return reward_agrees(verdict == "pass", reward)


@register.filter
def tool_error_at(at, errors) -> bool:
    """``at|tool_error_at:errors``: whether the call at ``at`` (a report's ``[batch,
    position]``) is among ``errors``, the calls whose tool returned an error."""
    if not isinstance(at, list | tuple) or len(at) != 2:
        return False
    return any(call.at == (at[0], at[1]) for call in errors or ())


@register.filter
def json_pretty(value) -> str:
    """A JSON value as indented text (escaped by the template like any other text)."""
    try:
        return pretty_json(value).decode().rstrip("\n")
    except RecursionError:  # deeper than any run read today: an older run, say
        return TOO_DEEP


@register.filter
def as_text(value) -> str:
    """A tool result as people read it: a string as it is (tools mostly answer with text,
    often JSON text, which quoting would bury under escapes), anything else as JSON."""
    return value if isinstance(value, str) else json_pretty(value)


@register.filter
def percent(passed, runs) -> str:
    """``passed|percent:runs``: the pass rate as ``pass_rate_text`` writes it everywhere."""
    return pass_rate_text(passed, runs)


@register.filter
def clip(value, length: int) -> str:
    """``truncatechars`` for text repeated many times on a page (predicate labels): the same
    cut, an ellipsis as the last of ``length`` characters, without Django's scan of every
    character for combining marks, which made up a fifth of a page of drafts."""
    text = str(value)
    return text if len(text) <= length else f"{text[: length - 1]}…"


@register.filter
def duration(value) -> str:
    """A timedelta as people say it: ``3.5 s``, ``4 min 12 s``, ``2 h 5 min``."""
    seconds = value.total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@register.filter
def json_tree(value) -> SafeString:
    """A tool result as collapsible, indented JSON: each object and array a ``<details>``
    (open) that folds to one line. A string holding a JSON object or array (as most tools
    answer) is read as one; any other string is shown as it is. Every text is escaped."""
    if isinstance(value, str):
        try:
            parsed = parse_json(value)
        except InvalidInput:
            parsed = None
        if not isinstance(parsed, Mapping | list):
            return mark_safe(f'<pre class="code">{escape(value)}</pre>')
        value = parsed
    budget = [TREE_NODES]
    return mark_safe(f'<div class="jtree">{_tree(value, "", budget, 0)}</div>')


def _tree(value, key: str, budget: list[int], depth: int) -> str:
    budget[0] -= 1
    if not isinstance(value, Mapping | list) or not value or budget[0] <= 0 or depth > TREE_DEPTH:
        text = escape(json_pretty(value) if budget[0] <= 0 else _one_line(value))
        return f'<div class="jline">{key}<span class="jv">{text}</span></div>'
    is_object = isinstance(value, Mapping)
    opening, closing = ("{", "}") if is_object else ("[", "]")
    size = f"{len(value)} {'key' if is_object else 'item'}{'s' if len(value) != 1 else ''}"
    if isinstance(value, Mapping):
        body = "".join(
            _tree(item, f'<span class="jk">{escape(_one_line(name))}</span>: ', budget, depth + 1)
            for name, item in value.items()
        )
    else:
        body = "".join(_tree(item, "", budget, depth + 1) for item in value)
    return (
        f'<details class="jnode" open><summary>{key}{opening}'
        f'<span class="jfold"> {size} {closing}</span></summary>'
        f'<div class="jbody">{body}</div><div class="jline">{closing}</div></details>'
    )


def _one_line(value) -> str:
    """``value`` as compact JSON text; past the depth a recursive writer manages under a
    page's template stack, written with a stack of its own."""
    try:
        return dump_json(value).decode()
    except RecursionError:
        pass
    parts: list[str] = []
    pending: list = [value]  # values to write, and text (closing brackets, commas) as str
    while pending:
        item = pending.pop()
        if type(item) is _Text:
            parts.append(item)
        elif isinstance(item, Mapping) and item:
            parts.append("{")
            pending.append(_Text("}"))
            for number, (key, inner) in enumerate(reversed(list(item.items()))):
                pending.extend((inner, _Text(dump_json(str(key)).decode() + ":")))
                if number < len(item) - 1:
                    pending.append(_Text(","))
        elif isinstance(item, list) and item:
            parts.append("[")
            pending.append(_Text("]"))
            for number, inner in enumerate(reversed(item)):
                pending.append(inner)
                if number < len(item) - 1:
                    pending.append(_Text(","))
        else:
            parts.append(dump_json(item).decode())
    return "".join(parts)


class _Text(str):
    """Text ``_one_line`` writes as it is, told from a string value it writes as JSON."""


@register.simple_tag
def submission_usage(submission):
    """The submission page's usage panel (``scoring.results.usage.page_summary``)."""
    return usage.page_summary(submission)


@register.simple_tag
def run_usage(run):
    """A run page's usage figures (``scoring.results.usage.run_figures``)."""
    return usage.run_figures(run)


@register.filter
def turn_figures(turn) -> str:
    """What an assistant turn's model call took, as far as recorded: ``1,234 in · 56 out ·
    1.2 s``; empty when nothing was (docs/review.md#run-page)."""
    said = []
    tokens_of = turn.usage or {}
    for key, word in (("input_tokens", "in"), ("output_tokens", "out")):
        if tokens_of.get(key) is not None:
            said.append(f"{tokens(tokens_of[key])} {word}")
    if turn.duration_ms is not None:
        said.append(seconds(turn.duration_ms))
    return " · ".join(said)


@register.simple_tag
def usage_comparison(comparison):
    """A comparison's cost and time (``scoring.results.usage.comparison_figures``)."""
    return usage.comparison_figures(comparison)


@register.filter
def figure(value, kind: str) -> str:
    """A figure of a kind (``usd``, ``tokens``, ``ms``, ``rate``), or its change when
    ``kind`` starts with ``+``: ``+$0.0012``, ``-1,200``, ``+3.1 pts``."""
    signed = kind.startswith("+")
    kind = kind.lstrip("+")
    if value is None:
        return "—"
    sign = ("+" if value >= 0 else "-") if signed else ""
    size = abs(value) if signed else value
    if kind == "rate":
        return f"{sign}{size * 100:.1f}{' pts' if signed else '%'}"
    if kind in ("usd", "cost_usd"):
        return sign + usd(size)
    if kind in ("ms", "duration_ms"):
        return sign + seconds(size)
    return sign + tokens(round(size))


@register.filter
def tokens(value) -> str:
    """A token count with thousands separated: ``12,345``; an em dash when not recorded."""
    return "—" if value is None else f"{value:,}"


@register.filter
def usd(value) -> str:
    """Dollars, as precise as small amounts need: ``$4.21``, ``$0.0041``."""
    if value is None:
        return "—"
    if value >= 1 or value == 0:
        return f"${value:,.2f}"
    if value < 0.01:  # two significant digits, never in exponent form
        return f"${value:.{min(12, 1 - math.floor(math.log10(value)))}f}"
    return f"${value:.4f}".rstrip("0")


@register.filter
def seconds(milliseconds) -> str:
    """Milliseconds as seconds: ``5.1 s``, ``820 ms``, ``4 min 12 s``; a tool's few
    milliseconds to a tenth: ``0.4 ms``."""
    if milliseconds is None:
        return "—"
    milliseconds = float(milliseconds)  # a run's document may hold an exact decimal
    if milliseconds < 10:
        return f"{milliseconds:.1f} ms"
    if milliseconds < 1000:
        return f"{milliseconds:.0f} ms"
    return duration(timedelta(milliseconds=milliseconds))
