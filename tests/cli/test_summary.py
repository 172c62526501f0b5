"""The Markdown summary of ``casebook submit --summary`` (docs/ci.md#the-summary): untrusted
text (case keys, labels, tools) shown as text, never as markup or HTML."""

import re

from scoring.cli.summary import Outcome, markdown_summary

HOSTILE = "<img src=x onerror=alert(1)>|[click](https://evil.example)"


def side(passed: int, run: int) -> dict:
    return {
        "runs": 1,
        "passed": passed,
        "html_url": f"https://cb.example/submissions/1/runs/{run}/",
    }


def outcome() -> Outcome:
    submission = {
        "id": 2,
        "label": HOSTILE,
        "scored": 1,
        "counts": {"pass": 0, "fail": 1, "error": 0},
        "pass_rate": 0.0,
        "html_url": "https://cb.example/submissions/2/",
    }
    regression = {"case": HOSTILE, "baseline": side(1, 1), "candidate": side(0, 2), "delta": -1.0}
    comparison = {
        "baseline": {"id": 1, "label": "main", "pass_rate": 1.0},
        "counts": {"regressed": 1, "fixed": 0, "still_failing": 0},
        "regressions": [regression],
        "fixes": [],
        "html_url": "https://cb.example/suites/1/compare/?baseline=1&candidate=2",
    }
    suite = {"team": "agents", "slug": "gated", "name": "gated"}
    return Outcome(suite, submission, comparison, "regressions", "latest")


def test_case_keys_labels_and_tools_are_text_not_markup():
    groups = [{"kind": "unexpected_call", "tool": "<b>rm</b>", "runs": 1, "cases": 1}]
    written = markdown_summary(outcome(), groups)
    assert not re.search(r"(?<!\\)[<>]", written)  # no tag left unescaped
    assert not re.search(r"(?<!\\)\]\(https://evil", written)  # no link of theirs
    shown = r"\<img src=x onerror=alert(1)\>\|\[click\](https://evil.example)"
    assert f"| {shown} | [1/1 passed](https://cb.example/submissions/1/runs/1/) |" in written
    assert f"## ❌ Casebook: agents/gated · {shown}" in written
    assert r"| unexpected\_call | \<b\>rm\</b\> | 1 | 1 |" in written
