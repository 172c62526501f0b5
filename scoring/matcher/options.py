"""Match options: how names and nulls compare (docs/formats.md#match-options)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import Problems
from .fields import FieldReader

TOOL_NAME_RULES = ("exact", "ignore_case")
ARG_NAME_RULES = ("exact", "ignore_case")
NULL_ARG_RULES = ("must_be_null", "absent_or_null")


@dataclass(frozen=True, slots=True)
class MatchOptions:
    tool_names: str = "exact"
    arg_names: str = "exact"
    null_args: str = "must_be_null"

    @property
    def ignore_tool_case(self) -> bool:
        return self.tool_names == "ignore_case"

    @property
    def ignore_arg_case(self) -> bool:
        return self.arg_names == "ignore_case"

    @property
    def absent_is_null(self) -> bool:
        return self.null_args == "absent_or_null"

    def tool_key(self, name: str) -> str:
        """The form of a tool name that two names share when they match under these options."""
        return name.casefold() if self.ignore_tool_case else name

    def arg_key(self, name: str) -> str:
        return name.casefold() if self.ignore_arg_case else name

    def to_dict(self) -> dict[str, str]:
        return {
            "tool_names": self.tool_names,
            "arg_names": self.arg_names,
            "null_args": self.null_args,
        }


LENIENT = MatchOptions("ignore_case", "ignore_case", "absent_or_null")
DEFAULT = MatchOptions()


def read_match_options(
    data: Mapping[str, Any],
    key: str,
    reader: FieldReader,
    problems: Problems,
    inherited: MatchOptions,
) -> MatchOptions:
    """The ``match`` field of a suite or case: an object overriding ``inherited`` key by key,
    or the preset ``"lenient"``."""
    value = data.get(key)
    if value is None:
        return inherited
    if value == "lenient":
        return LENIENT
    if not isinstance(value, Mapping):
        problems.add(reader.at(key), 'must be an object or "lenient"')
        return inherited
    fields = FieldReader(value, reader.at(key), problems)
    return MatchOptions(
        fields.choice("tool_names", TOOL_NAME_RULES, default=inherited.tool_names),
        fields.choice("arg_names", ARG_NAME_RULES, default=inherited.arg_names),
        fields.choice("null_args", NULL_ARG_RULES, default=inherited.null_args),
    )
