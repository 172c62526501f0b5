"""Berkeley Function Calling Leaderboard (BFCL) categories as Casebook suites
(docs/benchmarks.md#bfcl).

A BFCL category is two JSON-lines files: questions (``id``, ``question`` turns,
``function`` docs) and possible answers (``id``, ``ground_truth``: one ``{function:
{parameter: [acceptable values]}}`` per expected call). Each id becomes a case with one
expected call per ground-truth call, written with argument matchers so that Casebook
accepts what BFCL's AST checker accepts:

- a parameter's acceptable values become ``$one_of`` the values;
- strings are compared as BFCL normalises them: ``$text`` ignoring case, space and
  punctuation (inside lists too, as BFCL's list checker does; inside dictionaries only
  strings are normalised, lists there compare exactly, as in its dict checker);
- ``""`` among them makes the parameter ``$optional``, unless the function's documentation
  lists it as required (BFCL enforces those regardless); for a string parameter ``""``
  also stays an acceptable value, since BFCL's string check accepts it;
- dictionaries of acceptable-value lists (and lists of them) become nested values holding
  the same matchers;
- a parameter the function's documentation does not list, which BFCL's checker refuses
  whatever the possible answer says, is ``$absent`` when it may be left out;
- ``exact_args``: no parameter beyond those named; ``extra_calls: forbid``: the number of
  calls must match.

Categories without possible answers are judged by BFCL on whether any call decodes:
``irrelevance`` (and ``live_irrelevance``) cases expect no call (``no_tool_calls``, with
``extra_calls: forbid``), ``live_relevance`` cases at least one.

``multi_turn_*`` categories are judged as BFCL judges them, by end state
(docs/benchmarks.md#multi-turn-categories): each case names the ``bfcl`` environment (BFCL's
own backends) with the entry's ``involved_classes`` and ``initial_config``, and one
``end_state_matches`` replays the ground truth turn by turn, the results of each turn's
reference calls required among the run's (BFCL's response check). Their function docs come
from BFCL's package (``multi_turn_func_doc``), given as ``function_docs``.

Model results (``{"id", "result": [{"function": arguments}]}``) are read by the ``bfcl``
run importer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cases.tool_catalog import bfcl_tools
from scoring.importers.python_calls import Undecodable, decode_calls
from scoring.matcher import SUITE_SCHEMA, InvalidInput, Problem, field_path, is_matcher
from scoring.runfiles.reader import json_lines

NO_FUNCTION_DOCS = (
    "a multi_turn category: its function docs come from BFCL's package (bfcl-eval's "
    "multi_turn_func_doc), which was not given"
)
BFCL_ENVIRONMENT = "bfcl"
NO_ANSWERS = (
    "no possible-answer file: only the irrelevance and relevance categories come without one; "
    "give this category's possible-answer file"
)
ALL_IGNORED = ["case", "space", "punctuation"]
_STRING_TYPES = ("string", "any")


def read_records(lines: Iterable[bytes], source: str) -> list[tuple[int, Any]]:
    """A BFCL file's (line, record) pairs. Lines that are not JSON stop the import: every one
    is a problem of ``source`` (``questions`` or ``answers``), with its line."""
    records = list(json_lines(lines))
    bad = [
        Problem(source, problem.message, problem.line)
        for _, value in records
        if isinstance(value, InvalidInput)
        for problem in value.problems
    ]
    if bad:
        raise InvalidInput(bad)
    return records


def text(value: str) -> dict:
    return {"$text": {"value": value, "ignore": list(ALL_IGNORED)}}


def suite_from_bfcl(
    questions: Iterable[tuple[int, Any]],
    answers: Iterable[tuple[int, Any]] | None,
    *,
    name: str,
    underscore_dots: bool = False,
    function_docs: Mapping[str, list] | None = None,
) -> dict:
    """A suite document for a BFCL category, from its (line, record) pairs.

    ``answers`` is None for the categories that have no possible answers (``irrelevance``,
    ``live_relevance``). ``underscore_dots`` writes function names with ``.`` as ``_``, as
    BFCL does for models whose APIs refuse dots (OpenAI, Mistral, Google). Raises
    ``InvalidInput`` whose problems carry the line and field of every bad record (the path
    starts with the file: ``questions`` or ``answers``). ``function_docs`` holds the docs of
    the multi-turn classes, by class name; without them a multi_turn file is refused with one
    problem, at its first question.
    """
    problems: list[Problem] = []
    by_id: dict[str, tuple[int, Mapping]] = {}
    for line, record in answers or ():
        key = _record_id(record, line, "answers", problems)
        if key is not None:
            by_id[key] = (line, record)
    cases = []
    seen: set[str] = set()
    for line, question in questions:
        key = _record_id(question, line, "questions", problems)
        if key is None:
            continue
        multi_turn = _is_multi_turn(key, question)
        if multi_turn and function_docs is None:
            raise _bad("questions", NO_FUNCTION_DOCS, line)
        if key in seen:
            problems.append(Problem("questions.id", f"duplicate id {key!r}", line))
            continue
        seen.add(key)
        if answers is None:
            expectation = _answerless_expectation(key)
            if expectation is None:
                raise _bad("questions", NO_ANSWERS, line)
            cases.append(_answerless_case(key, question, line, expectation))
            continue
        if key not in by_id:
            problems.append(Problem("questions.id", f"no possible answer for id {key!r}", line))
            continue
        answer_line, answer = by_id[key]
        try:
            if multi_turn and function_docs is not None:  # without docs it was refused above
                cases.append(
                    _multi_turn_case(key, question, line, (answer_line, answer), function_docs)
                )
            else:
                cases.append(_case(key, question, line, answer, answer_line, underscore_dots))
        except InvalidInput as exc:
            problems.extend(exc.problems)
    unanswered = sorted(set(by_id) - seen)
    for key in unanswered:
        problems.append(Problem("answers.id", f"no question for id {key!r}", by_id[key][0]))
    if problems:
        raise InvalidInput(problems)
    tools = bfcl_tools([doc for case in cases for doc in case["tools"]])
    if underscore_dots:
        for tool in tools:
            tool["name"] = tool["name"].replace(".", "_")
    return {
        "schema": SUITE_SCHEMA,
        "name": name,
        "description": f"Imported from the BFCL category {name}: {len(cases)} cases.",
        "tools": tools,
        "cases": cases,
    }


def _record_id(record: Any, line: int, source: str, problems: list[Problem]) -> str | None:
    if not isinstance(record, Mapping):
        problems.append(Problem(source, "must be a JSON object", line))
        return None
    key = record.get("id")
    if not isinstance(key, str) or not key:
        problems.append(Problem(f"{source}.id", "must be a non-empty string", line))
        return None
    return key


def _is_multi_turn(key: str, question: Mapping) -> bool:
    return key.startswith("multi_turn") or "involved_classes" in question


def _category(key: str) -> str:
    return key.rsplit("_", 1)[0]


def _answerless_expectation(key: str) -> dict | None:
    """What BFCL asks of a category without possible answers: no call decoded
    (irrelevance), or some call (relevance); None for any other category."""
    category = _category(key)
    if "irrelevance" in category:
        return {"type": "no_tool_calls"}
    if "relevance" in category:
        return {"type": "tool_call_count", "min": 1}
    return None


def _answerless_case(key: str, question: Mapping, line: int, expectation: dict) -> dict:
    case = {**_case_base(key, question, line), "expectations": [expectation]}
    if expectation["type"] == "no_tool_calls":
        case["extra_calls"] = "forbid"
    return case


def _case_base(key: str, question: Mapping, line: int) -> dict:
    functions = question.get("function")
    if not isinstance(functions, list) or not all(map(_is_function_doc, functions)):
        raise _bad("questions.function", "must be a list of function docs, each named", line)
    # The docs are kept for reviewers (unknown fields are preserved).
    return {**_case_fields(key, question), "tools": functions}


def _is_function_doc(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("name"), str) and bool(doc["name"])


def _case_fields(key: str, question: Mapping) -> dict:
    """What every case made of a BFCL question holds: its id, prompt and tags."""
    return {
        "key": key,
        "title": key,
        "prompt": _prompt(question.get("question")),
        "tags": ["bfcl", _category(key)],
        "expected_calls": [],
    }


def _case(
    key: str,
    question: Mapping,
    line: int,
    answer: Mapping,
    answer_line: int,
    underscore_dots: bool,
) -> dict:
    case = _case_base(key, question, line)
    docs = {f.get("name"): f for f in case["tools"]}
    ground_truth = answer.get("ground_truth")
    if not isinstance(ground_truth, list):
        raise _bad("answers.ground_truth", "must be a list of calls", answer_line)
    expected_calls = [
        _expected_call(item, field_path("answers.ground_truth", i), answer_line, docs)
        for i, item in enumerate(ground_truth)
    ]
    if underscore_dots:
        for call in expected_calls:
            call["name"] = call["name"].replace(".", "_")
    return {**case, "expected_calls": expected_calls, "extra_calls": "forbid"}


def _expected_call(item: Any, where: str, line: int, docs: Mapping) -> dict:
    if not isinstance(item, Mapping) or len(item) != 1:
        raise _bad(where, "must be an object with one function", line)
    ((function, parameters),) = item.items()
    if not isinstance(parameters, Mapping):
        raise _bad(field_path(where, function), "must be an object of parameters", line)
    schema = _object(_object(docs.get(function)).get("parameters"))
    listed = schema.get("required")
    required = (
        {name for name in listed if isinstance(name, str)} if isinstance(listed, list) else set()
    )
    properties = _object(schema.get("properties"))
    required_args = {}
    for parameter, values in parameters.items():
        if not isinstance(values, list):
            path = field_path(field_path(where, function), parameter)
            raise _bad(path, "must be a list of acceptable values", line)
        if parameter not in properties and "" in values:
            # BFCL refuses a parameter the function does not document, whatever the
            # possible answer says: if it may be left out, it must be.
            required_args[parameter] = {"$absent": True}
            continue
        is_string = _object(properties.get(parameter)).get("type") in _STRING_TYPES
        required_args[parameter] = _parameter(values, parameter in required, is_string)
    return {"name": function, "required_args": required_args, "exact_args": True}


def _multi_turn_case(
    key: str, question: Mapping, line: int, numbered: tuple[int, Mapping], docs: Mapping
) -> dict:
    """A multi-turn entry as a case judged by end state
    (docs/benchmarks.md#multi-turn-categories); ``numbered`` is its answer and that
    answer's line."""
    answer_line, answer = numbered
    classes = question.get("involved_classes")
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise _bad("questions.involved_classes", "must be a list of class names", line)
    unknown = [name for name in classes if name not in docs]
    if unknown:
        message = f"no function docs for {', '.join(unknown)}"
        raise _bad("questions.involved_classes", message, line)
    config = question.get("initial_config", {})
    if not isinstance(config, Mapping):
        raise _bad("questions.initial_config", "must be an object", line)
    functions = [doc for name in classes for doc in docs[name]]
    parameters = {
        doc["name"]: list(_object(_object(doc.get("parameters")).get("properties")))
        for doc in functions
    }
    ground_truth = answer.get("ground_truth")
    if not isinstance(ground_truth, list) or not all(isinstance(t, list) for t in ground_truth):
        raise _bad("answers.ground_truth", "must be a list of turns (lists of calls)", answer_line)
    turns = [
        _reference_turn(turn, field_path("answers.ground_truth", t), answer_line, parameters)
        for t, turn in enumerate(ground_truth)
    ]
    state = {
        "involved_classes": classes,
        "initial_config": config,
        "long_context": "long_context" in _category(key),
    }
    return {
        **_case_fields(key, question),
        "environment": {"name": BFCL_ENVIRONMENT, "initial_state": state},
        "expectations": [
            {
                "type": "end_state_matches",
                "reference_turns": turns,
                "results_include_reference": True,
            }
        ],
        "tools": functions,
    }


def _reference_turn(turn: list, where: str, line: int, parameters: Mapping) -> list[dict]:
    """A ground-truth turn's call strings (``cd(folder='x')``, positional arguments named
    by the function docs) as reference calls."""
    calls = []
    for index, text in enumerate(turn):
        path = field_path(where, index)
        if not isinstance(text, str):
            raise _bad(path, "must be a call, written as Python", line)
        try:
            decoded, _ = decode_calls(text, parameters)
        except Undecodable as exc:
            raise _bad(path, f"not a call: {exc}", line) from None
        for call in decoded:
            ((name, arguments),) = call.items()
            calls.append({"name": name, "arguments": arguments})
    return calls


def _object(value: Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _bad(path: str, message: str, line: int) -> InvalidInput:
    return InvalidInput([Problem(path, message, line)])


def _parameter(values: list, required: bool, is_string: bool) -> dict:
    optional = "" in values
    alternatives = [_top_level_value(value) for value in values if value != ""]
    if optional and is_string:
        alternatives.append(text(""))
    if not alternatives:
        return {"$absent": True}
    matcher = {"$one_of": alternatives}
    return {"$optional": matcher} if optional and not required else matcher


def _top_level_value(value: Any) -> Any:
    """One acceptable value, compared the way BFCL's checker compares a parameter's value."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return _dictionary(value)
    if isinstance(value, list):
        return [_list_item(item) for item in value]
    return value


def _list_item(item: Any) -> Any:
    if isinstance(item, str):
        return text(item)
    if isinstance(item, Mapping):
        return _dictionary(item)
    return _literal(item)


def _literal(value: Any) -> Any:
    """``value`` as a literal, even when it looks like a matcher (an object of $ keys)."""
    if isinstance(value, list):
        return {"$literal": value} if any(is_matcher(item) for item in value) else value
    return {"$literal": value} if is_matcher(value) else value


def _dictionary(acceptable: Mapping) -> dict:
    """A dictionary of acceptable-value lists, as BFCL's dict checker reads it: every key
    known, a key left out only when ``""`` is acceptable, strings normalised."""
    nested = {}
    for key, values in acceptable.items():
        values = values if isinstance(values, list) else [values]
        alternatives = [text(v) if isinstance(v, str) else _literal(v) for v in values if v != ""]
        matcher: Any = {"$one_of": alternatives} if alternatives else {"$absent": True}
        nested[key] = {"$optional": matcher} if "" in values and alternatives else matcher
    return nested


def _prompt(turns: Any) -> str:
    """The user messages of the question, in order."""
    if not isinstance(turns, list):
        return ""
    messages = [m for turn in turns if isinstance(turn, list) for m in turn]
    return "\n\n".join(
        m["content"]
        for m in messages
        if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), str)
    )
