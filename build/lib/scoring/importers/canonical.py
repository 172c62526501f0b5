"""The canonical format itself (docs/formats.md#run-files): ``batches`` of calls."""

from collections.abc import Mapping

NAME = "canonical"
SIGNATURE = "batches"


def detect(line: Mapping) -> bool:
    return "batches" in line


def convert(line: Mapping) -> Mapping:
    return line
