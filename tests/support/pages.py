"""What the page tests share: suite documents, run files and uploads, and reading the HTML a
page answers (the fixtures that make suites and submissions are in tests/conftest.py)."""

from __future__ import annotations

import copy
import html
import json
import re
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from cases.editor_forms import TYPE_FIELDS
from cases.models import Suite, SuiteVersion

ROOT = Path(__file__).resolve().parents[2]
DEMO_SUITE = ROOT / "cases" / "demo" / "assistant.suite.json"
BFCL = ROOT / "tests" / "fixtures" / "bfcl"

HX = {"HX-Request": "true"}


def demo_document() -> dict:
    """The demo suite file (four cases); a fresh copy each call."""
    return json.loads(DEMO_SUITE.read_text())


def small_document(name: str, *, tool: str = "get_weather", case_tag: str = "misc") -> dict:
    """A valid one-case suite file."""
    return {
        "schema": "casebook.suite/1",
        "name": name,
        "cases": [
            {
                "key": "only-case",
                "tags": [case_tag],
                "expected_calls": [{"name": tool, "required_args": {"city": "Paris"}}],
                "expectations": [{"type": "called_tool", "tool": tool}],
            }
        ],
    }


def normalized(cases: list[dict]) -> list[dict]:
    """Cases as an export writes them: the defaults of docs/formats.md#suite-files spelled out."""
    out = []
    for case in copy.deepcopy(cases):
        case.setdefault("extra_calls", "allow")
        case.setdefault("expectations", [])
        calls = case.setdefault("expected_calls", [])
        for call in calls:
            call.setdefault("required_args", {})
            call.setdefault("ordered", False)
            call.setdefault("depends_on_result", False)
        out.append(case)
    return out


def jsonl(lines) -> bytes:
    """A run file: each line a JSON object, or a string written as it is."""
    return "".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines).encode()


def upload(name: str, content: str | bytes) -> SimpleUploadedFile:
    data = content.encode() if isinstance(content, str) else content
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def text(response) -> str:
    return response.content.decode()


def confirm_field(response) -> str:
    """The signed file a suite import's preview page sends back to confirm it."""
    found = re.search(r'name="file" value="([^"]+)"', text(response))
    assert found, "the preview offers no confirm form"
    return html.unescape(found.group(1))


def confirmed(client, url: str, data: dict, **options):
    """An import through its two pages: ``data`` posted to ``url``, whose preview must offer
    the confirm form, then that form posted to ``url`` + ``confirm/``."""
    previewed = client.post(url, data)
    assert previewed.status_code == 200, previewed.status_code
    form = {"file": confirm_field(previewed)}
    team = re.search(r'name="team" value="(\d+)"', text(previewed))
    if team:
        form["team"] = team.group(1)
    return client.post(f"{url}confirm/", form, **options)


def import_into(client, suite, name: str, content: str):
    """Import a suite file into the suite through its two pages: preview, then confirm."""
    url = f"/suites/{suite.pk}/import/"
    previewed = client.post(url, {"file": upload(name, content)})
    return client.post(f"{url}confirm/", {"file": confirm_field(previewed)})


def counts() -> tuple[int, int, int]:
    """How many suites, cases and versions exist: an import that fails must not move them."""
    from cases.models import Case

    return Suite.objects.count(), Case.objects.count(), SuiteVersion.objects.count()


def suite_ids(html: str) -> set[int]:
    """The suites a page links to (``/suites/<id>/``)."""
    return {int(n) for n in re.findall(r'href="/suites/(\d+)/"', html)}


def escaped(value: str) -> str:
    return str(escape(value))


# --- editor form data -----------------------------------------------------------------------

EXPECTATION_FIELD_ORDER = (
    "tool",
    "args",
    "min",
    "max",
    "tools",
    "text",
    "case_insensitive",
    "regex",
    "value",
    "tolerance",
)


# The fields of a case, an expected call and an expectation that the editor shows; it keeps
# any other (an environment, reference calls) in the row's hidden ``extra``, as JSON.
CASE_FIELDS_SHOWN = ("key", "title", "prompt", "tags", "extra_calls", "match")
CALL_FIELDS_SHOWN = ("name", "required_args", "ordered", "depends_on_result", "exact_args")


def _extra(item: dict, shown) -> str:
    return json.dumps({key: value for key, value in item.items() if key not in shown})


def editor_data(case: dict, revision: int | None = None, action: str = "save") -> dict:
    """The case editor's POST for a case as a suite file writes it
    (docs/formats.md#suite-files)."""
    data: dict[str, str] = {
        "key": case.get("key", ""),
        "title": case.get("title", ""),
        "prompt": case.get("prompt", ""),
        "tags": ", ".join(case.get("tags") or []),
        "extra_calls": case.get("extra_calls") or "allow",
        "action": action,
        "extra": _extra(case, (*CASE_FIELDS_SHOWN, "expected_calls", "expectations")),
    }
    match = case.get("match")
    if match == "lenient":
        data["match_preset"] = "lenient"
    elif isinstance(match, dict):
        data["match_preset"] = "custom"
        data.update({f"match_{k}": v for k, v in match.items()})
    else:
        data["match_preset"] = ""
    if revision is not None:
        data["revision"] = str(revision)
    for i, call in enumerate(case.get("expected_calls") or []):
        data[f"call-{i}-name"] = call["name"]
        data[f"call-{i}-required_args"] = json.dumps(call.get("required_args") or {})
        for flag in ("ordered", "depends_on_result", "exact_args"):
            if call.get(flag):
                data[f"call-{i}-{flag}"] = "on"
        data[f"call-{i}-extra"] = _extra(call, CALL_FIELDS_SHOWN)
    for i, item in enumerate(case.get("expectations") or []):
        shown = TYPE_FIELDS.get(item["type"], EXPECTATION_FIELD_ORDER)
        data[f"exp-{i}-type"] = item["type"]
        data[f"exp-{i}-extra"] = _extra(item, ("type", *shown))
        for name in EXPECTATION_FIELD_ORDER:
            if name not in item or name not in shown:
                continue
            value = item[name]
            if name == "args":
                value = json.dumps(value)
            elif name == "tools":
                value = ", ".join(value)
            elif name == "case_insensitive":
                if not value:
                    continue
                value = "on"
            else:
                value = str(value)
            data[f"exp-{i}-{name}"] = value
    return data
