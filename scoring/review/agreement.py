"""Agreement between reviewers beyond chance: Cohen's κ (kappa), and Fleiss' κ.

Pure Python, no Django: it takes pairs of decisions and returns a number, so that it is
tested against textbook values on its own. κ is how much of the agreement that chance
leaves room for was reached:

    κ = (p_o - p_e) / (1 - p_e)

with p_o the share of items the pair agrees on and p_e the chance that two decisions agree.
Cohen's κ compares two reviewers, each with their own habits: p_e sums, over the
categories, the product of how often each picks it. When the items' pairs of reviewers
differ (three reviewers or more, two to an item) there is no "first reviewer" whose habits
to count: Fleiss' κ (with two decisions an item) takes how often a category is picked by
anyone, and p_e sums its squares.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping

Table = Mapping[tuple[Hashable, Hashable], int]  # (first's, second's) decision → items


def cohen_kappa(table: Table) -> float | None:
    """Cohen's κ of two reviewers' decisions, given as a contingency table: how many items
    got each ``(first's, second's)`` pair of decisions (``Counter(pairs)`` makes one from a
    list of pairs).

    None where κ is not defined: no items, or both reviewers gave one and the same category
    to every item (chance agreement is then total, and so is theirs: 0/0)."""
    firsts, seconds, agreed, total = _margins(table)
    if total == 0:
        return None
    chance = sum(firsts[category] * seconds[category] for category in firsts) / total**2
    return _kappa(agreed / total, chance)


def fleiss_kappa(table: Table) -> float | None:
    """Fleiss' κ of items decided twice each, by any two of several reviewers, given as the
    same table as ``cohen_kappa`` (which of a pair is "first" does not matter here).

    None where κ is not defined: no items, or one category given to every item."""
    firsts, seconds, agreed, total = _margins(table)
    if total == 0:
        return None
    picked = firsts + seconds
    chance = sum(count * count for count in picked.values()) / (2 * total) ** 2
    return _kappa(agreed / total, chance)


def _margins(table: Table) -> tuple[Counter, Counter, int, int]:
    """How often the first and the second of the pairs gave each category, how many items
    they agree on, and how many items there are."""
    firsts: Counter = Counter()
    seconds: Counter = Counter()
    agreed = total = 0
    for (first, second), n in table.items():
        if n < 0:
            raise ValueError(f"a negative count of items: {n} for {(first, second)!r}")
        firsts[first] += n
        seconds[second] += n
        agreed += n if first == second else 0
        total += n
    return firsts, seconds, agreed, total


def _kappa(observed: float, chance: float) -> float | None:
    return None if chance == 1 else (observed - chance) / (1 - chance)


def observed_agreement(table: Table) -> float | None:
    """The share of items the two reviewers agree on (None with no items)."""
    total = sum(table.values())
    if not total:
        return None
    return sum(n for (first, second), n in table.items() if first == second) / total
