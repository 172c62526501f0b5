"""The canonical format itself (docs/formats.md#run-files): ``batches`` of calls."""

from collections.abc import Mapping
from typing import Any

NAME = "canonical"
SIGNATURE = "batches"


def detect(line: Mapping[str, Any]) -> bool:
    return "batches" in line


def convert(line: Mapping[str, Any]) -> Mapping[str, Any]:
    return line
