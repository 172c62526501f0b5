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
- ``expectations``: each output as ``final_text_contains``, ignoring case; then, for each
  tool that writes (of those the file's actions call), no more calls than the case expects
  (``tool_call_count`` with ``max``, or ``did_not_call_tool``): a write beyond the ground
  truth's leaves another database, which τ-bench's reward fails.

Which tools only read is the author's call: ``proposed_roles`` proposes it from the suite's
tool catalog (MCP's ``annotations.readOnlyHint``) and otherwise from the tool's name.

The file is streamed element by element (``json_array``): memory holds one element and the
tasks. Every trial of a task repeats the task; they must agree, as a case holds one ground
truth, and an element that does not is a problem naming where it differs.
"""

from __future__ import annotations

from collections import Counter
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
    stream: BinaryIO, *, max_item_bytes: int | None = None, max_depth: int | None = None
) -> Results:
    """The tasks of τ-bench's results file (a binary stream), each element read and checked
    as it comes; an element past ``max_item_bytes`` or nested deeper than ``max_depth`` is a
    problem. Raises ``InvalidInput`` with every problem (up to ``MAX_PROBLEMS``), each by the
    element's path (``[3].info.task.actions[0].name: required``)."""
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
    reading = _Reading()
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
    """The tasks read so far, the first element of each, and the problems found."""

    def __init__(self):
        self.tasks: dict[str, tuple[int, Task]] = {}
        self.problems: list[Problem] = []
        self.runs = self.crashed = 0

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
    actions = _actions(task.get("actions"), problems)
    outputs = task.get("outputs") if task.get("outputs") is not None else []
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        problems.append(Problem("info.task.outputs", "must be a list of strings"))
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
    return {
        "schema": SUITE_SCHEMA,
        "name": name,
        "tags": [TAG],
        "cases": suite_cases(results, read_only),
    }


def suite_cases(results: Results, read_only: Iterable[str]) -> list[dict]:
    """A case per task; the actions of tools in ``read_only`` are left out, and the others
    are the only writes each case allows."""
    reads = set(read_only)
    writes = [tool for tool in results.tools if tool not in reads]
    return [_case(task, writes) for task in results.tasks]


def _case(task: Task, writes: list[str]) -> dict:
    case: dict[str, Any] = {"key": task.key, "prompt": task.instruction}
    calls = [
        {"name": action["name"], "required_args": _arguments(action["kwargs"]), "ordered": True}
        for action in task.actions
        if action["name"] in writes
    ]
    if calls:
        case["expected_calls"] = calls
    expected = Counter(call["name"] for call in calls)
    expectations = [
        {"type": "final_text_contains", "text": output, "case_insensitive": True}
        for output in task.outputs
    ]
    expectations += [
        {"type": "tool_call_count", "tool": tool, "max": expected[tool]}
        if expected[tool]
        else {"type": "did_not_call_tool", "tool": tool}
        for tool in writes
    ]
    if expectations:
        case["expectations"] = expectations
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
