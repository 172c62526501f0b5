"""A suite from τ-bench's results file (docs/benchmarks.md#a-suite-from-the-results-file).
Pure functions (no Django): the suite pages, the API and ``manage.py import_tau_bench`` use
them.

τ-bench's results file is one JSON array of ``{task_id, trial, reward, info, traj}``; each
element's ``info.task`` is the task it ran: ``instruction`` (what the simulated user was
told), ``actions`` (the ground truth, ``{name, kwargs}`` calls in order) and ``outputs``
(what the agent must say). Each task becomes one case:

- ``key``: the task id, as the run importer names the case (``scoring.importers.tau_bench``);
- ``prompt``: the instruction;
- ``expected_calls``: the actions that write, in order (``ordered``), ``required_args`` their
  ``kwargs`` as given. Read-only actions are left out: τ-bench's reward compares the database
  the agent's calls leave with the one the ground truth's leave, which lookups never change,
  so an agent may look things up any way it likes;
- ``expectations``: each output as ``final_text_contains``, ignoring case.

The suite itself carries one rule for every case, ``no_calls_beyond_expected`` over the
tools that write (of those the file's actions call), counting the calls that succeeded: no
more of each than the case expects, none of one it does not. A write beyond the ground
truth's leaves another database, which τ-bench's reward fails; a write the tool refused
(``Error: …``) leaves it as it was. One rule, not one per case per tool: a thousand tasks
each writing with its own tool made a million rows that way.

Which tools only read is the author's call: ``proposed_roles`` proposes it from the suite's
tool catalog (MCP's ``annotations.readOnlyHint``) and otherwise from the tool's name.

The file is streamed element by element (``json_array``): memory holds one element and the
tasks, whose actions and outputs together are bounded (``max_rows``: each may become a row of
the suite). Every trial of a task repeats the task; they must agree, as a case holds one ground
truth, and an element that does not is a problem naming where it differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, BinaryIO

from scoring.importers import object_at, streaming, tau_bench
from scoring.matcher import SUITE_SCHEMA, InvalidInput, Problem, field_path, is_matcher, json_equal

TAG = "tau-bench"
MAX_TASKS = 10_000
MAX_PROBLEMS = 50  # listed of a bad file; the reading stops there
_BOM = b"\xef\xbb\xbf"

# The proposal when the catalog says nothing: names that read, as τ-bench's domains name
# their lookups (get_user_details, find_user_id_by_email, list_all_airports,
# search_direct_flight), its helpers that touch no data (calculate, think), and the tool that
# ends the conversation (transfer_to_human_agents), which τ-bench's reward leaves out of the
# ground truth it replays.
READ_ONLY_PREFIXES = ("get_", "find_", "list_", "search_", "lookup_")
READ_ONLY_NAMES = frozenset({"calculate", "think", "transfer_to_human_agents"})

# Where a tool's role comes from.
CATALOG = "catalog"  # the suite's catalog: MCP's annotations.readOnlyHint
NAME = "name"  # a guess from the tool's name, for the author to confirm
GIVEN = "given"  # the caller's list (the command's --read-only, the API's read_only)
SOURCES = {
    CATALOG: "the tool catalog's readOnlyHint",
    NAME: "guessed from the name",
    GIVEN: "as given",
}


@dataclass(frozen=True)
class Task:
    key: str
    instruction: str
    actions: list  # of {"name", "kwargs"}, in order
    outputs: list  # of strings


@dataclass(frozen=True)
class Results:
    """The tasks of a results file, by task id (numbers in their order, then other ids)."""

    tasks: list[Task]
    runs: int  # elements read
    crashed: int  # elements without their task: runs that crashed before τ-bench kept it

    @property
    def tools(self) -> list[str]:
        """The tools the ground-truth actions call, by name."""
        return sorted({action["name"] for task in self.tasks for action in task.actions})

    def as_data(self) -> dict:
        """The tasks as JSON data, to carry from a preview to its confirmation."""
        return {
            "tasks": [asdict(task) for task in self.tasks],
            "runs": self.runs,
            "crashed": self.crashed,
        }

    @classmethod
    def from_data(cls, data: Mapping) -> Results:
        return cls([Task(**task) for task in data["tasks"]], data["runs"], data["crashed"])


@dataclass(frozen=True)
class ToolRole:
    name: str
    read_only: bool
    source: str  # CATALOG, NAME or GIVEN

    @property
    def said(self) -> str:
        return SOURCES[self.source]


def read_results(
    stream: BinaryIO,
    *,
    max_item_bytes: int | None = None,
    max_depth: int | None = None,
    max_rows: int | None = None,
) -> Results:
    """The tasks of τ-bench's results file (a binary stream), each element read and checked
    as it comes; an element past ``max_item_bytes`` or nested deeper than ``max_depth`` is a
    problem, and so are tasks whose cases, actions and outputs would pass ``max_rows`` rows
    of a suite (``CASEBOOK_MAX_SUITE_ROWS``). Raises ``InvalidInput`` with every problem (up
    to ``MAX_PROBLEMS``), each by the element's path (``[3].info.task.actions[0].name:
    required``)."""
    head = stream.read(streaming.CHUNK).removeprefix(_BOM)
    start = head.lstrip()[:1]
    if start != b"[":
        found = "it is empty" if not start else f"it starts with {start.decode('latin-1')!r}"
        raise InvalidInput.single(
            "",
            "not τ-bench's results file: that is one JSON array of results ({task_id, trial,"
            f" reward, info, traj}}), and {found}",
        )
    elements = streaming.json_array(
        streaming.ByteStream(head, stream), max_item_bytes=max_item_bytes, max_depth=max_depth
    )
    reading = _Reading(max_rows)
    for position, element in elements:
        reading.add(position - 1, element)
        if len(reading.problems) >= MAX_PROBLEMS:
            reading.problems.append(Problem("", f"the first {MAX_PROBLEMS} problems are listed"))
            break
    if reading.problems:
        raise InvalidInput(reading.problems)
    if not reading.tasks:
        raise InvalidInput.single("", "no result in the file carries its task (info.task)")
    tasks = sorted((task for _, task in reading.tasks.values()), key=_task_order)
    return Results(tasks, reading.runs, reading.crashed)


class _Reading:
    """The tasks read so far, the first element of each, the rows their cases may take (a
    case, and a row per action and output at most), and the problems found."""

    def __init__(self, max_rows: int | None):
        self.tasks: dict[str, tuple[int, Task]] = {}
        self.problems: list[Problem] = []
        self.runs = self.crashed = 0
        self.rows = 0
        self.max_rows = max_rows

    def add(self, index: int, element: Any) -> None:
        where = f"[{index}]"
        self.runs += 1
        try:
            if isinstance(element, InvalidInput):
                raise element
            task = _task_of(object_at(element, ""))
        except InvalidInput as exc:
            self.problems += [
                Problem(field_path(where, p.path) if p.path else where, p.message)
                for p in exc.problems
            ]
            return
        if task is None:
            self.crashed += 1
            return
        if task.key not in self.tasks:
            if len(self.tasks) == MAX_TASKS:
                raise InvalidInput.single(where, f"more than {MAX_TASKS:,} tasks, the limit")
            self.rows += 1 + len(task.actions) + len(task.outputs)
            if self.max_rows is not None and self.rows > self.max_rows:
                raise InvalidInput.single(
                    where,
                    f"the tasks so far hold {self.rows:,} cases, actions and outputs, each a "
                    f"row of the suite: over the limit, CASEBOOK_MAX_SUITE_ROWS = "
                    f"{self.max_rows:,}",
                )
            self.tasks[task.key] = (index, task)
            return
        first_index, first = self.tasks[task.key]
        differs = _first_difference(first, task)
        if differs:
            self.problems.append(
                Problem(
                    f"{where}.info.task.{differs}",
                    f"differs from task {task.key}'s in [{first_index}]: every trial of a task"
                    " must run the same task, as its case holds one ground truth",
                )
            )


def _task_of(element: Mapping) -> Task | None:
    """The task an element ran; None for a run that crashed (``info.error``, no task)."""
    key = tau_bench.case_key(element)
    info = element.get("info")
    if not isinstance(info, Mapping):
        raise InvalidInput.single("info", "required: an object holding the task (info.task)")
    task = info.get("task")
    if task is None and isinstance(info.get("error"), str):
        return None
    if not isinstance(task, Mapping):
        raise InvalidInput.single(
            "info.task", "required: the task τ-bench ran (instruction, actions, outputs)"
        )
    problems: list[Problem] = []
    instruction = task.get("instruction")
    if not isinstance(instruction, str):
        problems.append(Problem("info.task.instruction", "required: a string"))
        instruction = ""  # never used: the problem is raised below
    actions = _actions(task.get("actions"), problems)
    outputs = task.get("outputs") if task.get("outputs") is not None else []
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        problems.append(Problem("info.task.outputs", "must be a list of strings"))
        outputs = []  # never used: the problem is raised below
    if problems:
        raise InvalidInput(problems)
    return Task(key, instruction, actions, outputs)


def _actions(value: Any, problems: list[Problem]) -> list:
    """The ground-truth actions, each ``{"name", "kwargs"}``; their problems added."""
    path = "info.task.actions"
    if not isinstance(value, list):
        problems.append(Problem(path, "required: a list of actions ({name, kwargs})"))
        return []
    actions = []
    for index, action in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(action, Mapping):
            problems.append(Problem(where, "must be an action object ({name, kwargs})"))
            continue
        name, kwargs = action.get("name"), action.get("kwargs", {})
        if not isinstance(name, str) or not name:
            problems.append(Problem(f"{where}.name", "required: the tool's name"))
        if not isinstance(kwargs, Mapping):
            problems.append(Problem(f"{where}.kwargs", "must be an object of arguments"))
        actions.append({"name": name, "kwargs": kwargs})
    return actions


def _first_difference(first: Task, other: Task) -> str | None:
    if first.instruction != other.instruction:
        return "instruction"
    if not json_equal(first.actions, other.actions):
        return "actions"
    if first.outputs != other.outputs:
        return "outputs"
    return None


def _task_order(task: Task) -> tuple:
    """Task ids that are numbers in their order (2 before 10), then the others."""
    key = task.key
    return (0, int(key), "") if key.isdecimal() else (1, 0, key)


# --- which tools only read -----------------------------------------------------------------


def looks_read_only(name: str) -> bool:
    return name in READ_ONLY_NAMES or name.startswith(READ_ONLY_PREFIXES)


def proposed_roles(tools: Iterable[str], catalog: list) -> list[ToolRole]:
    """Each tool's role as proposed to the author: the catalog's ``annotations.readOnlyHint``
    where its tool of that name gives one (true or false), else a guess from the name."""
    hints = {}
    for tool in catalog:
        annotations = tool.get("annotations") if isinstance(tool, Mapping) else None
        if isinstance(annotations, Mapping) and isinstance(annotations.get("readOnlyHint"), bool):
            hints[tool.get("name")] = annotations["readOnlyHint"]
    return [
        ToolRole(name, hints[name], CATALOG)
        if name in hints
        else ToolRole(name, looks_read_only(name), NAME)
        for name in tools
    ]


def roles_for(
    tools: list[str], given: Iterable[str] | None, catalog: list, path: str
) -> list[ToolRole]:
    """The caller's list of read-only tools when given (``given_roles``), else the proposal."""
    return proposed_roles(tools, catalog) if given is None else given_roles(tools, given, path)


def read_only_names(roles: Iterable[ToolRole]) -> list[str]:
    return [role.name for role in roles if role.read_only]


def given_roles(tools: list[str], read_only: Iterable[str], path: str) -> list[ToolRole]:
    """The roles the caller gave: the tools in ``read_only`` read, the others write.
    ``InvalidInput`` at ``path`` for a name no action calls (a typo would write otherwise)."""
    named = set(read_only)
    unknown = sorted(named - set(tools))
    if unknown:
        raise InvalidInput.single(
            path,
            f"{', '.join(unknown)}: no action of the tasks calls "
            f"{'it' if len(unknown) == 1 else 'them'}; the tools are {', '.join(tools)}",
        )
    return [ToolRole(name, name in named, GIVEN) for name in tools]


# --- the suite ------------------------------------------------------------------------------


def suite_document(results: Results, *, name: str, read_only: Iterable[str]) -> dict:
    """A suite file of the tasks (docs/formats.md#suite-files)."""
    document: dict[str, Any] = {"schema": SUITE_SCHEMA, "name": name, "tags": [TAG]}
    rule = writes_rule(results, read_only)
    if rule is not None:
        document["expectations"] = [rule]
    return {**document, "cases": suite_cases(results, read_only)}


def writes_rule(results: Results, read_only: Iterable[str]) -> dict | None:
    """The suite's one rule on writes: no calls of a tool that writes beyond the case's
    expected calls of it (None when no action writes), counting the calls that succeeded: a
    write the tool refused (``Error: …``, a tool error) left the database as it was."""
    reads = set(read_only)
    writes = [tool for tool in results.tools if tool not in reads]
    if not writes:
        return None
    return {"type": "no_calls_beyond_expected", "tools": writes, "succeeded_only": True}


def suite_cases(results: Results, read_only: Iterable[str]) -> list[dict]:
    """A case per task; the actions of tools in ``read_only`` are left out."""
    reads = set(read_only)
    return [_case(task, reads) for task in results.tasks]


def _case(task: Task, reads: set[str]) -> dict:
    case: dict[str, Any] = {"key": task.key, "prompt": task.instruction}
    calls = [
        {"name": action["name"], "required_args": _arguments(action["kwargs"]), "ordered": True}
        for action in task.actions
        if action["name"] not in reads
    ]
    if calls:
        case["expected_calls"] = calls
    if task.outputs:
        case["expectations"] = [
            {"type": "final_text_contains", "text": output, "case_insensitive": True}
            for output in task.outputs
        ]
    return case


def _arguments(kwargs: Mapping) -> dict:
    """An action's ``kwargs`` as the expected call's ``required_args``: each argument equal
    to its value. The names are names, whatever they start with; a value that would read as
    an argument matcher is wrapped in ``$literal``."""
    return {name: _literal(value) for name, value in kwargs.items()}


def _literal(value: Any) -> Any:
    """``value`` as an expected argument equal to itself: an object that would read as an
    argument matcher (all its keys start with ``$``) is wrapped in ``$literal``."""
    if is_matcher(value):
        return {"$literal": value}
    if isinstance(value, Mapping):
        return {key: _literal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_literal(item) for item in value]
    return value
