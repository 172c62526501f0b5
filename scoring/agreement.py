"""Agreement between two reviewers beyond chance: Cohen's κ (kappa).

Pure Python, no Django: it takes pairs of decisions and returns a number, so that it is
tested against textbook values on its own. For each category the chance that both
reviewers pick it is the product of how often each picks it; κ is how much of the
agreement that chance leaves room for was reached:

    κ = (p_o - p_e) / (1 - p_e)

with p_o the share of items they agree on and p_e the sum of those products.
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
    if total == 0:
        return None
    observed = agreed / total
    chance = sum(firsts[category] * seconds[category] for category in firsts) / total**2
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


def observed_agreement(table: Table) -> float | None:
    """The share of items the two reviewers agree on (None with no items)."""
    total = sum(table.values())
    if not total:
        return None
    return sum(n for (first, second), n in table.items() if first == second) / total
