"""Natural order of case keys: ``task-2`` before ``task-10``.

One key serves both sides: Python sorts by it, and the runs table sorts in the database by
a column that holds it (``Run.case_order``), so pages split anywhere stay in one order.
"""

import re

_DIGITS = re.compile(r"\d+")
_LONGEST = 99  # digits a run of them is ordered by (a longer one is cut, ties stay close)


def natural_key(text: str) -> str:
    """``text`` with every run of digits written as its length (two digits) then its value
    without leading zeros, so that plain string comparison orders the numbers by value:
    ``task-2`` → ``task-012``, ``task-10`` → ``task-0210``."""
    return _DIGITS.sub(_numbered, text)


def _numbered(match: re.Match) -> str:
    digits = match.group().lstrip("0")[:_LONGEST] or "0"
    return f"{len(digits):02d}{digits}"


def natural_sorted(items, key=lambda item: item):
    """``items`` sorted by the natural order of ``key(item)`` (a case key), exact text
    breaking ties (``a01`` and ``a1``)."""
    return sorted(items, key=lambda item: (natural_key(key(item)), key(item)))
