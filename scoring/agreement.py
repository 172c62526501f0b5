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
from collections.abc import Hashable, Iterable


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's κ of two reviewers' decisions, one ``(first's, second's)`` pair per item.

    None where κ is not defined: no items, or both reviewers gave one and the same category
    to every item (chance agreement is then total, and so is theirs: 0/0)."""
    firsts: Counter = Counter()
    seconds: Counter = Counter()
    agreed = total = 0
    for first, second in pairs:
        firsts[first] += 1
        seconds[second] += 1
        agreed += first == second
        total += 1
    if total == 0:
        return None
    observed = agreed / total
    chance = sum(firsts[category] * seconds[category] for category in firsts) / total**2
    if chance == 1:
        return None
    return (observed - chance) / (1 - chance)


def observed_agreement(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """The share of items the two reviewers agree on (None with no items)."""
    pairs = list(pairs)
    if not pairs:
        return None
    return sum(first == second for first, second in pairs) / len(pairs)
