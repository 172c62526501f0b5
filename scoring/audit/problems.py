"""What an audit finds (docs/audit.md#problems): each problem's case, kind and message, and
the cases some check could not be made for, with why."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

CONTRADICTION = "contradiction"
PASSES_IDLE = "passes_idle"
UNKNOWN_TOOL = "unknown_tool"
SCHEMA = "schema"
REPLAY_REFUSED = "replay_refused"
STATE_MISMATCH = "state_mismatch"
DUPLICATE = "duplicate"
# In the order problems of one case are listed.
KINDS = (
    CONTRADICTION,
    PASSES_IDLE,
    UNKNOWN_TOOL,
    SCHEMA,
    REPLAY_REFUSED,
    STATE_MISMATCH,
    DUPLICATE,
)
# What a case of each kind does, in words after "1 case" and after "N cases".
KIND_WORDS = {
    CONTRADICTION: ("contradicts itself", "contradict themselves"),
    PASSES_IDLE: ("passes an agent that does nothing", "pass an agent that does nothing"),
    UNKNOWN_TOOL: ("names a tool the catalog lacks", "name a tool the catalog lacks"),
    SCHEMA: (
        "requires a value the tool's schema refuses",
        "require a value the tool's schema refuses",
    ),
    REPLAY_REFUSED: (
        "has reference calls the environment refuses",
        "have reference calls the environment refuses",
    ),
    STATE_MISMATCH: (
        "expects a state its reference calls do not leave",
        "expect a state their reference calls do not leave",
    ),
    DUPLICATE: ("repeats an earlier case", "repeat an earlier case"),
}
# Kinds that are warnings: a suite whose only problems are these passes ``audit``.
WARNINGS = frozenset({PASSES_IDLE})


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: the case's key, its kind (one of ``KINDS``) and what to change."""

    case: str
    kind: str
    message: str

    def to_dict(self) -> dict:
        return {"case": self.case, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True)
class Unchecked:
    """A check that could not be made for a case (an environment not installed, a regex
    the audit cannot find a text for): not a problem of the case, never silent either."""

    case: str
    message: str

    def to_dict(self) -> dict:
        return {"case": self.case, "message": self.message}


@dataclass(frozen=True, slots=True)
class Audit:
    """A suite's audit: how many cases, their problems in case order, and what could not
    be checked."""

    cases: int
    problems: tuple[Problem, ...] = ()
    unchecked: tuple[Unchecked, ...] = ()
    by_case: dict[str, list[Problem]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_case: dict[str, list[Problem]] = {}
        for problem in self.problems:
            by_case.setdefault(problem.case, []).append(problem)
        object.__setattr__(self, "by_case", by_case)

    def to_dict(self) -> dict:
        """``{"cases": N, "problems": [...]}``, and ``"unchecked"`` only when something
        could not be checked (docs/audit.md#json)."""
        data: dict = {"cases": self.cases, "problems": [p.to_dict() for p in self.problems]}
        if self.unchecked:
            data["unchecked"] = [u.to_dict() for u in self.unchecked]
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> Audit:
        return cls(
            data["cases"],
            tuple(Problem(p["case"], p["kind"], p["message"]) for p in data["problems"]),
            tuple(Unchecked(u["case"], u["message"]) for u in data.get("unchecked", ())),
        )

    def counts(self) -> dict[str, int]:
        """Problems by kind, every kind named, in ``KINDS`` order."""
        found = Counter(problem.kind for problem in self.problems)
        return {kind: found[kind] for kind in KINDS}

    def for_case(self, key: str) -> list[Problem]:
        return self.by_case.get(key, [])

    def summary(self) -> str:
        """``50 cases: 19 problems (19 passes_idle)``, or ``50 cases: no problems``."""
        cases = f"{self.cases} case{'s' if self.cases != 1 else ''}"
        counts = [f"{count} {kind}" for kind, count in self.counts().items() if count]
        if not counts:
            return f"{cases}: no problems"
        total = len(self.problems)
        return f"{cases}: {total} problem{'s' if total != 1 else ''} ({', '.join(counts)})"

    def has_problems(self, *, strict: bool = False) -> bool:
        """Whether a problem beyond the warnings (with ``strict``, any problem) was found."""
        return any(strict or p.kind not in WARNINGS for p in self.problems)


def in_case_order(keys: Iterable[str], problems: Iterable[Problem]) -> tuple[Problem, ...]:
    """``problems`` in the order of ``keys``, each case's by kind (``KINDS``)."""
    position = {key: n for n, key in enumerate(keys)}
    rank = {kind: n for n, kind in enumerate(KINDS)}
    return tuple(
        sorted(problems, key=lambda p: (position.get(p.case, len(position)), rank[p.kind]))
    )
