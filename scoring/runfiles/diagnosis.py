"""What a run file that gave no valid run looks like, and what to change
(docs/pipeline.md#files-that-yield-nothing).

A file with no valid run ends ``failed`` with one message instead of thousands of invalid
lines. ``diagnose`` reads the file's first bytes (what kind of document it is, the keys
of its first record) and the problems of its first invalid records (why they were
refused), and says which of the usual mistakes it is: a pretty-printed document where JSON
lines were expected, records in no format Casebook reads, runs that name their case in
another field, a file that is not JSON at all.

A file whose runs are read, but none of a case the suite has, scores nothing either:
``no_known_case`` says which cases the runs name and which the suite has (a τ-bench file's
``"0"``, ``"1"`` against a suite keyed ``task-0``, ``task-1``).
"""

from __future__ import annotations

import io
import re
from typing import Any

import ijson

from scoring.importers import streaming
from scoring.matcher import InvalidInput, json_type, parse_json
from scoring.runfiles.reader import MAX_DEPTH

HEAD_BYTES = 1 << 16  # how much of the file is looked at
FIRST_PROBLEMS = 5  # how many problems the caller keeps for ``diagnose``

UPLOAD, COMMAND = "upload", "command"

# Fields that name a case in the logs people have, most telling first.
_CASE_FIELDS = (
    "task_id",
    "case_id",
    "sample_id",
    "instance_id",
    "question_id",
    "example_id",
    "id",
    "key",
    "name",
    "metadata.case",
    "metadata.task_id",
    "metadata.id",
)
# The problem a run with no case has: the field missing, or null where an importer put it.
_NO_CASE = re.compile(r"(^|[\s.\]])case: (required|must be [^;]*, not null)")
_NO_FORMAT = "unrecognised run format"
_ZIP = b"PK\x03\x04"
_BOM = b"\xef\xbb\xbf"
_KEYS_SHOWN = 8
_CASES_SHOWN = 3
# Case keys kept of runs of no case in the suite (a submission's list, the command's), at
# most; their runs are all counted, and ``no_known_case`` says when the list is cut short.
CASES_KEPT = 1000
UNKNOWN_LINES_KEPT = 5  # line numbers listed per unknown case
_AFFIX_CHECKED = 20  # run keys checked for a prefix or suffix the suite's keys add


def note_unknown_case(unknown: dict[str, dict[str, Any]], case_key: str, line: int) -> None:
    """Note a run of a case the suite lacks, in ``unknown`` (case key → its runs and first
    lines): the rule both ``manage.py score`` and a submission (``scoring.ingest.store``)
    keep their list by, at most ``CASES_KEPT`` keys with ``UNKNOWN_LINES_KEPT`` lines each."""
    entry = unknown.get(case_key)
    if entry is None:
        if len(unknown) >= CASES_KEPT:
            return
        entry = unknown[case_key] = {"runs": 0, "lines": []}
    entry["runs"] += 1
    if len(entry["lines"]) < UNKNOWN_LINES_KEPT:
        entry["lines"].append(line)


def diagnose(head: bytes, problems: list[str], *, invalid: int, via: str = UPLOAD) -> str:
    """One message for a file that gave no valid run: what it looks like, what to change.

    ``head``: the file's first ``HEAD_BYTES`` (decompressed); ``problems``: the first
    invalid records' reasons (``FIRST_PROBLEMS`` of them, in order); ``invalid``: how many
    records were invalid; ``via``: ``UPLOAD`` or ``COMMAND``, to name the right option."""
    head = head.removeprefix(_BOM)
    first = problems[0] if problems else "none"
    text = head.lstrip()
    if not text:
        if problems:
            return f"No run could be read from the file: {first}"
        return "The file holds no run: it is empty, or only blank lines."
    if head.startswith(_ZIP):
        if "not a readable zip archive" in first:
            return (
                "This is a zip archive Casebook cannot read: it reads Inspect AI .eval logs as"
                f" they are, and no other archive (upload the run file inside). {first}"
            )
        return f"This is an Inspect AI .eval archive, and no run could be read from it: {first}"
    if text.startswith(b"["):
        keys = _first_keys(text, "item")
        what = f"one JSON array of {invalid:,} element{'s' if invalid != 1 else ''}"
        return _records_advice(what, "its elements", keys, problems, via)
    end = text.find(b"\n")
    first_line = (text if end < 0 else text[:end]).strip()
    # A first line longer than the head is judged by its start: a JSON-lines record.
    whole = end >= 0 or len(head) < HEAD_BYTES
    try:
        value = parse_json(first_line) if whole else {}
    except InvalidInput as exc:
        if text.startswith(b"{") and end >= 0:
            return _document_advice(text, first)
        shown = first_line[:60].decode("utf-8", "replace")
        said = exc.problems[0].message.removeprefix("not JSON: ")
        return (
            f"This is not JSON lines: the first line is not JSON ({said});"
            f" it starts {shown!r}. A run file holds one JSON object per line, one JSON array"
            " of runs, or an Inspect AI log."
        )
    if not isinstance(value, dict):
        return (
            f"The lines are JSON {json_type(value)}s, not objects: each line of a run file is"
            f" one run, a JSON object. {first}"
        )
    keys = _first_keys(first_line, "")
    what = f"a file of {invalid:,} JSON line{'s' if invalid != 1 else ''}"
    return _records_advice(what, "the lines", keys, problems, via)


def _document_advice(text: bytes, first: str) -> str:
    """For a JSON object spread over lines: a pretty-printed run, or a log with no runs."""
    keys = _first_keys(text, "")
    shown = f" (its keys: {_listed(keys)})" if keys else ""
    if "samples" in keys:
        return f"This is a pretty-printed JSON object{shown} from which no run was read. {first}"
    return (
        f"This is a pretty-printed JSON object{shown}, not JSON lines: a run file holds one run"
        " per line, each a whole JSON object on one line, or one JSON array of runs, or an"
        " Inspect AI log (with samples). Write each run on one line (e.g. jq -c), or put the"
        " runs in an array."
    )


def _records_advice(what: str, they: str, keys: list[str], problems: list[str], via: str) -> str:
    first = problems[0] if problems else "none"
    if any(_NO_CASE.search(p) for p in problems):
        field = next((f for f in _CASE_FIELDS if f in keys), None)
        if field is not None:
            parts = field.split(".")
            beside = [k for k in keys if k != field and k not in parts][:3]
            has = " and ".join(f"`{k}`" for k in [field, *beside])
            return (
                f"This is {what}: {they} have {has} but no `case`: {_case_field_hint(field, via)},"
                " or add `case` to each."
            )
        return (
            f"This is {what}: {they} name no `case` (keys: {_listed(keys)}): add `case` to each,"
            f" or name the field that holds it ({_case_field_hint('PATH', via)})."
        )
    if any(_NO_FORMAT in p for p in problems):
        return (
            f"This is {what}, but {they} are runs in no format Casebook reads (keys:"
            f" {_listed(keys)}). A run has `batches` (canonical), `messages` (OpenAI Chat,"
            " Anthropic, Inspect), `output` (OpenAI Responses), `contents` (Gemini), `spans`"
            " (OpenTelemetry), `result` (BFCL) or `traj` (τ-bench), beside its `case`."
        )
    return f"This is {what}, and none holds a valid run; the first problem: {first}"


def _case_field_hint(field: str, via: str) -> str:
    if via == COMMAND:
        return f"add --case-field {field}"
    return f"add ?case_field={field} to the upload (the form's Case field)"


def _first_keys(text: bytes, prefix: str) -> list[str]:
    """The keys of the first object at ``prefix`` (``""`` the document, ``"item"`` an
    array's first element), with ``metadata``'s as ``metadata.KEY``; read from ``text``
    as far as it goes (the head of a longer file), and no deeper than ``MAX_DEPTH``.

    ``basic_parse`` builds no prefix per event: one as long as the depth would cost
    quadratic memory on a head of brackets (docs/pipeline.md#limits)."""
    depth_of_object = 1 if prefix == "" else 2
    keys: list[str] = []
    depth = 0
    key_at: dict[int, str] = {}  # the last key read in the object at each depth
    try:
        stream = streaming.BoundedValues(io.BytesIO(text), None)
        for event, value in ijson.basic_parse(stream, multiple_values=True):
            if event == "start_map" or event == "start_array":
                depth += 1
                if depth > MAX_DEPTH:
                    break
            elif event == "end_map" or event == "end_array":
                if depth == depth_of_object:
                    break
                depth -= 1
            elif event == "map_key":
                key_at[depth] = value
                if depth == depth_of_object:
                    keys.append(value)
                elif depth == depth_of_object + 1 and key_at.get(depth_of_object) == "metadata":
                    keys.append(f"metadata.{value}")
    except (ijson.JSONError, InvalidInput, ArithmeticError):
        # The head ends inside the document (or is no JSON, or holds a number no Decimal
        # holds): the keys seen so far.
        pass
    return keys


def _listed(keys: list[str]) -> str:
    top = [k for k in keys if "." not in k]
    if not top:
        return "none"
    more = f", … ({len(top)} in all)" if len(top) > _KEYS_SHOWN else ""
    return ", ".join(top[:_KEYS_SHOWN]) + more


def no_known_case(
    run_cases: list[str],
    runs: int,
    suite_cases: list[str],
    *,
    suite: str = "the suite",
    more: bool = False,
    via: str = UPLOAD,
) -> str:
    """One message for runs that were read but none of a case ``suite`` has, so nothing was
    scored: the cases they name (``run_cases``, in file order; ``more`` when that list was
    cut short), the suite's, how the two differ when the suite's keys are the runs' with a
    fixed prefix or suffix, and what to change."""
    if len(run_cases) == 1 and not more:
        named = f"case {run_cases[0]!r}"
    else:
        named = f"{len(run_cases):,}{' or more' if more else ''} cases ({_cases(run_cases)})"
    has = f"its cases are {_cases(suite_cases)}" if suite_cases else "it has no cases"
    affix = _affix(run_cases, set(suite_cases))
    if via == COMMAND:
        advice = (
            "Score against a suite that has these cases, or give the runs the suite's"
            " keys (--case-field PATH reads them from another field)."
        )
    else:
        advice = (
            "Re-score against a version that has these cases, or upload the runs with the"
            " suite's keys (the Case field, ?case_field=PATH, reads them from another field)."
        )
    opening = (
        f"The file's one run is of no case in {suite}: it names"
        if runs == 1
        else f"None of the {runs:,} runs is of a case in {suite}: they name"
    )
    return f"{opening} {named}, and {has}{affix}. {advice}"


def _cases(keys: list[str]) -> str:
    shown = ", ".join(repr(key) for key in keys[:_CASES_SHOWN])
    return shown + (", …" if len(keys) > _CASES_SHOWN else "")


def _affix(run_cases: list[str], suite_cases: set[str]) -> str:
    """``"; its keys are the runs' with 'task-' before them"`` (or the runs' keys the
    suite's with something added) when the one prefix or suffix holds for every run key
    checked; else ``""``."""
    checked = run_cases[:_AFFIX_CHECKED]
    if not checked or not suite_cases:
        return ""
    first = checked[0]
    for key in suite_cases:
        if key == first:
            continue
        # (the added text, where, whether the suite's keys are the longer, the key it makes)
        if key.endswith(first):
            added, where, longer = key[: -len(first)], "before", True
        elif key.startswith(first):
            added, where, longer = key[len(first) :], "after", True
        elif first.endswith(key):
            added, where, longer = first[: -len(key)], "before", False
        elif first.startswith(key):
            added, where, longer = first[len(key) :], "after", False
        else:
            continue
        if all(_with(added, where, run_case, longer) in suite_cases for run_case in checked):
            if longer:
                return f"; its keys are the runs' with {added!r} {where} them"
            return f"; the runs' keys are its keys with {added!r} {where} them"
    return ""


def _with(added: str, where: str, run_case: str, longer: bool) -> str:
    """The suite key ``run_case`` stands for, when the suite's keys are the runs' with
    ``added`` (``longer``), or the runs' are the suite's with ``added``."""
    if longer:
        return added + run_case if where == "before" else run_case + added
    if where == "before":
        return run_case.removeprefix(added) if run_case.startswith(added) else ""
    return run_case.removesuffix(added) if run_case.endswith(added) else ""
