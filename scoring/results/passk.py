"""pass@k and pass^k over several trials of each case.

For a case with ``n`` trials of which ``c`` passed, the unbiased estimates are

- pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k trials drawn
  without replacement passes (Chen et al., 2021);
- pass^k = C(c, k) / C(n, k): the chance that all k of them pass (τ-bench's reliability
  measure, Yao et al., 2024).

A suite's figure is the mean over the cases that have at least k trials.

The ratios of binomials are computed through ``lgamma`` (a relative error near 1e-12):
exact ``comb`` on a case of 2,000 trials makes integers of hundreds of digits, and the
results page took seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import exp, lgamma


def pass_at_k(n: int, c: int, k: int) -> float:
    _check(n, c, k)
    return 1 - _binomial_ratio(n - c, n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    _check(n, c, k)
    return _binomial_ratio(c, n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"need 0 < k ≤ n and 0 ≤ c ≤ n, got n={n} c={c} k={k}")


def _binomial_ratio(a: int, n: int, k: int) -> float:
    """C(a, k) / C(n, k) for 0 ≤ a ≤ n."""
    if a < k:
        return 0.0
    return exp(lgamma(a + 1) - lgamma(a - k + 1) - lgamma(n + 1) + lgamma(n - k + 1))


@dataclass(frozen=True)
class KFigures:
    k: int
    cases: int  # the cases with at least k trials, which the means are over
    pass_at_k: float
    pass_hat_k: float


def suite_figures(trials: Iterable[tuple[int, int]], ks: Iterable[int] | None = None):
    """For each k in ``ks`` (by default every k from 1 to the most trials any case has):
    the mean pass@k and pass^k over the cases with at least k trials. ``trials`` is (n, c)
    per case."""
    trials = [(n, c) for n, c in trials if n]
    most = max((n for n, _ in trials), default=0)
    figures: list[KFigures] = []
    for k in range(1, most + 1) if ks is None else ks:
        counted = [(n, c) for n, c in trials if n >= k]
        figures.append(
            KFigures(
                k,
                len(counted),
                sum(pass_at_k(n, c, k) for n, c in counted) / len(counted),
                sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted),
            )
        )
    return figures
