"""Cohen's and Fleiss' κ (``scoring.review.agreement``), from contingency tables (first reviewer's
decision, second's) → items, against textbook values and at their edges."""

from __future__ import annotations

from collections import Counter

import pytest

from scoring.review.agreement import cohen_kappa, fleiss_kappa, observed_agreement


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


# --- Fleiss' κ: two decisions an item, by any two of several reviewers ---------------------


def fleiss_from_items(items: list[tuple]) -> float:
    """Fleiss' κ as Fleiss (1971) writes it, item by item: P_i = Σ_j n_ij (n_ij - 1) /
    (n (n - 1)), P̄ their mean, p_j the share of all decisions in category j, P̄_e = Σ p_j².
    A second way to the number, to check the table-based one against."""
    n = 2
    categories = {category for item in items for category in item}
    shares = {c: sum(item.count(c) for item in items) / (n * len(items)) for c in categories}
    agreement = [
        sum(item.count(c) * (item.count(c) - 1) for c in categories) / (n * (n - 1))
        for item in items
    ]
    observed = sum(agreement) / len(items)
    chance = sum(share * share for share in shares.values())
    return (observed - chance) / (1 - chance)


def test_fleiss_on_the_worked_example():
    # Pooled: "yes" 25 + 30 of 100 decisions, "no" 45: p_e = 0.55² + 0.45² = 0.505;
    # p_o = 0.7; κ = 0.195 / 0.495 ≈ 0.3939 (Scott's π, which Fleiss' κ is for two raters).
    worked = {("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15}
    assert fleiss_kappa(worked) == pytest.approx(0.3939, abs=1e-4)


@pytest.mark.parametrize(
    "table",
    [
        {("y", "y"): 45, ("y", "n"): 15, ("n", "y"): 25, ("n", "n"): 15},
        {("y", "y"): 25, ("y", "n"): 35, ("n", "y"): 5, ("n", "n"): 35},
        {
            ("a", "a"): 10,
            ("a", "b"): 2,
            ("b", "b"): 8,
            ("b", "a"): 1,
            ("b", "c"): 1,
            ("c", "c"): 7,
            ("c", "b"): 1,
        },
        {(True, False): 3, (False, True): 4, (True, True): 1},
    ],
)
def test_fleiss_from_the_table_is_fleiss_item_by_item(table):
    items = [pair for pair, n in table.items() for _ in range(n)]
    assert fleiss_kappa(table) == pytest.approx(fleiss_from_items(items))


def test_fleiss_does_not_care_which_of_a_pair_is_first_where_cohen_does():
    table = {("y", "y"): 25, ("y", "n"): 35, ("n", "y"): 5, ("n", "n"): 35}
    turned = {("y", "y"): 25, ("y", "n"): 20, ("n", "y"): 20, ("n", "n"): 35}
    assert fleiss_kappa(table) == pytest.approx(fleiss_kappa(turned))
    assert cohen_kappa(table) != pytest.approx(cohen_kappa(turned))


def test_fleiss_is_undefined_where_cohen_is():
    assert fleiss_kappa({}) is None
    assert fleiss_kappa({("flaky", "flaky"): 5}) is None
    assert fleiss_kappa(pairs(("a", "a"), ("b", "b"))) == 1.0
    with pytest.raises(ValueError, match="negative count"):
        fleiss_kappa({("a", "a"): 3, ("a", "b"): -1})
