"""Numbers in final text (docs/matcher.md#numbers-in-final-text) and exact tolerance checks."""

from __future__ import annotations

import decimal
import re
from decimal import Decimal

from .jsonvalue import to_decimal

# A sign counts only when not glued to a preceding ASCII letter or digit ("x-1" reads 1,
# "2024-01-15" reads 15). Digits are ASCII only; a comma continues the number only when
# exactly three digits and then a non-digit follow; "42." is 42 (sentence punctuation).
_NUMBER = re.compile(
    r"""
    (?P<sign>(?<![A-Za-z0-9])[-+\u2212])?
    (?P<mantissa>
        [0-9]+(?:,[0-9]{3}(?![0-9]))*(?:\.[0-9]+)?
      | \.[0-9]+
    )
    (?P<exponent>[eE][-+]?[0-9]+)?
    """,
    re.VERBOSE,
)


# Every character a number can be written with. A number never spans anything else, so
# scanning can start at the run of these characters around the text's last digit.
_NUMBER_CHARACTERS = frozenset("0123456789,.eE+-\u2212")
_DIGIT = re.compile("[0-9]")


def last_number(text: str) -> Decimal | None:
    """The last number written in ``text``, exactly as written, or None if there is none."""
    # The last number holds the last digit, and numbers never cross a character outside
    # _NUMBER_CHARACTERS, so scanning that digit's run finds the same numbers a scan of the
    # whole text would, in a fraction of the time on long texts.
    last_digit = _DIGIT.search(text[::-1])
    if last_digit is None:
        return None
    start = len(text) - 1 - last_digit.start()
    while start and text[start - 1] in _NUMBER_CHARACTERS:
        start -= 1
    found = _NUMBER.findall(text, start)  # (sign, mantissa, exponent); lookbehind sees text
    sign, mantissa, exponent = found[-1]
    sign = "-" if sign in ("-", "\u2212") else ""
    return Decimal(f"{sign}{mantissa.replace(',', '')}{exponent}")


def _last_number_by_full_scan(text: str) -> Decimal | None:
    """The plain definition, kept for the tests to check the fast one against."""
    found = _NUMBER.findall(text)
    if not found:
        return None
    sign, mantissa, exponent = found[-1]
    sign = "-" if sign in ("-", "\u2212") else ""
    return Decimal(f"{sign}{mantissa.replace(',', '')}{exponent}")


# Bounds are computed exactly; a precision this large means value and tolerance are
# absurdly far apart in magnitude, which authoring refuses rather than spend the memory.
MAX_BOUND_DIGITS = 2000


class Tolerance:
    """The closed interval ``[value - tolerance, value + tolerance]``, in exact decimals."""

    __slots__ = ("high", "low", "tolerance", "value")

    def __init__(self, value: int | float | Decimal, tolerance: int | float | Decimal = 0):
        self.value = to_decimal(value)
        self.tolerance = to_decimal(tolerance)
        if not self.tolerance:
            self.low = self.high = self.value
            return
        context = decimal.Context(prec=bound_digits(self.value, self.tolerance))
        self.low = context.subtract(self.value, self.tolerance)
        self.high = context.add(self.value, self.tolerance)

    def __contains__(self, number: Decimal) -> bool:
        return self.low <= number <= self.high

    def describe(self) -> str:
        if not self.tolerance:
            return _plain(self.value)
        return f"{_plain(self.value)} ± {_plain(self.tolerance)}"


def bound_digits(value: Decimal, tolerance: Decimal) -> int:
    """Digits of precision that make ``value ± tolerance`` exact."""
    lowest = min(value.as_tuple().exponent, tolerance.as_tuple().exponent)
    highest = max(value.adjusted(), tolerance.adjusted())
    return max(highest - int(lowest) + 2, 1)


def _plain(number: Decimal) -> str:
    text = str(number)
    return text if "E" not in text or abs(number.adjusted()) > 20 else format(number, "f")
