"""The one error type of the matcher: invalid input, with every problem and where it is."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the input.

    ``path`` is a JSON path into the document (``cases[3].expected_calls[1].name``), empty
    for the document as a whole; ``line`` is the 1-based line of a run file, when known.
    """

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = [f"line {self.line}"] if self.line is not None else []
        if self.path:
            where.append(self.path)
        return f"{', '.join(where)}: {self.message}" if where else self.message

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "message": self.message}
        if self.line is not None:
            data["line"] = self.line
        return data


class InvalidInput(ValueError):
    """A suite or run that breaks the formats of docs/formats.md; ``problems`` lists them all."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems: tuple[Problem, ...] = tuple(problems)
        # The message is written when asked for: a file of junk raises one per line.
        super().__init__(self.problems)

    def __str__(self) -> str:
        return "\n".join(map(str, self.problems))

    @classmethod
    def single(cls, path: str, message: str) -> InvalidInput:
        return cls([Problem(path, message)])

    def at_line(self, line: int) -> InvalidInput:
        """The same problems, located on ``line`` of a run file."""
        return InvalidInput(Problem(p.path, p.message, line) for p in self.problems)


class Problems:
    """Collects problems while a document is validated, so all of them are reported at once."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(Problem(path, message))

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise InvalidInput(self.items)


def field_path(path: str, key: str | int) -> str:
    """``field_path("cases[0]", "key")`` is ``cases[0].key``; an int appends ``[i]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key
