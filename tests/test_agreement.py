"""Cohen's κ (``scoring.agreement``), from contingency tables (first reviewer's decision,
second's) → items, against textbook values and at its edges."""

from __future__ import annotations

from collections import Counter

import pytest

from scoring.agreement import cohen_kappa, observed_agreement


def pairs(*decided: tuple) -> Counter:
    """The table of a list of pairs of decisions, one per item."""
    return Counter(decided)


# Wikipedia, "Cohen's kappa", worked example: 50 proposals read by A and B.
def test_the_worked_example_gives_point_four():
    worked = {("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15}
    assert observed_agreement(worked) == pytest.approx(0.7)
    assert cohen_kappa(worked) == pytest.approx(0.4)


# Wikipedia, "Same percentages but different numbers": both agree on 60 of 100 items, yet
# κ differs with how the disagreements fall.
def test_equal_agreement_gives_different_kappa_with_the_marginals():
    symmetric = {("y", "y"): 45, ("y", "n"): 15, ("n", "y"): 25, ("n", "n"): 15}
    skewed = {("y", "y"): 25, ("y", "n"): 35, ("n", "y"): 5, ("n", "n"): 35}
    assert observed_agreement(symmetric) == observed_agreement(skewed) == pytest.approx(0.6)
    assert cohen_kappa(symmetric) == pytest.approx(0.1304, abs=1e-4)
    assert cohen_kappa(skewed) == pytest.approx(0.2593, abs=1e-4)


def test_three_categories():
    # p_o = (10+8+7)/30; marginals A 12/10/8, B 11/11/8:
    # p_e = (12*11 + 10*11 + 8*8)/900 = 306/900 = 0.34; κ = (25/30 - 0.34)/0.66 ≈ 0.7475.
    three = {
        ("flaky", "flaky"): 10,
        ("flaky", "regression"): 2,
        ("regression", "regression"): 8,
        ("regression", "flaky"): 1,
        ("regression", "wont_fix"): 1,
        ("wont_fix", "wont_fix"): 7,
        ("wont_fix", "regression"): 1,
    }
    assert sum(three.values()) == 30
    assert cohen_kappa(three) == pytest.approx(0.7475, abs=1e-4)


def test_perfect_agreement_is_one():
    assert cohen_kappa(pairs(("a", "a"), ("b", "b"), ("c", "c"), ("a", "a"))) == 1.0


def test_agreeing_no_more_than_chance_is_zero_and_less_is_negative():
    assert cohen_kappa({("y", "y"): 1, ("y", "n"): 1, ("n", "y"): 1, ("n", "n"): 1}) == 0
    assert cohen_kappa(pairs(("y", "n"), ("n", "y"))) == pytest.approx(-1.0)


def test_one_category_for_everything_has_no_kappa():
    # Both said "flaky" every time: chance agreement is total, κ is 0/0.
    assert cohen_kappa({("flaky", "flaky"): 5}) is None
    assert observed_agreement({("flaky", "flaky"): 5}) == 1.0


def test_one_reviewer_using_one_category_gives_zero_not_an_error():
    assert cohen_kappa(pairs(("flaky", "flaky"), ("flaky", "fixed"))) == 0.0


def test_no_items_has_no_kappa():
    assert cohen_kappa({}) is None
    assert observed_agreement({}) is None
    assert cohen_kappa({("a", "a"): 0, ("a", "b"): 0}) is None


def test_booleans_work_as_categories():
    assert cohen_kappa(pairs((True, True), (False, False), (True, False))) == pytest.approx(0.4)


def test_a_negative_count_is_an_error():
    with pytest.raises(ValueError, match="negative count"):
        cohen_kappa({("a", "a"): 3, ("a", "b"): -1})
