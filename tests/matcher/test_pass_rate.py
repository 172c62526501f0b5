"""The pass rate as every page and ``manage.py score`` write it (``pass_rate_text``)."""

import pytest

from scoring.matcher import pass_rate_text


@pytest.mark.parametrize(
    ("passed", "runs", "text"),
    [
        (4, 7, "57.1%"),
        (3, 8, "37.5%"),
        (2, 5, "40%"),
        (5, 5, "100%"),
        (0, 5, "0%"),
        (0, 0, "—"),
        # Rounding never says all passed, or none, when that is not so.
        (1999, 2000, "99.9%"),
        (1, 2000, "0.1%"),
    ],
)
def test_the_pass_rate_is_written_to_one_decimal_at_most(passed, runs, text):
    assert pass_rate_text(passed, runs) == text
