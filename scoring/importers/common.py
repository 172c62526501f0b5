"""What every run format shares."""

from collections.abc import Mapping


def envelope_fields(line: Mapping) -> dict:
    """The fields every format shares: the case key, trial, meta and run-level error."""
    out = {"case": line.get("case")}
    for key in ("trial", "meta", "error"):
        if key in line:
            out[key] = line[key]
    return out
