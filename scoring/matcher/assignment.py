"""Crediting expected calls to distinct recorded calls (docs/matcher.md#the-assignment).

The search sees only integers. Slot ``i`` (an expected call) may take recorded call ``r``
when ``r`` is in ``candidates[i]`` (sorted, so batches never decrease); ``batch_of[r]`` is
the batch of ``r``. Among the slots credited together:

- every slot has its own recorded call;
- ordered slots ``i < j``: ``batch(i) <= batch(j)``;
- a slot that depends on the result of the one before: ``batch(j) > batch(j - 1)``, and
  ``j - 1`` must itself be credited.

Greedy first-fit is wrong here (an early recorded call can fit two expected calls), and
plain backtracking explodes on identical calls, so ``find_assignment`` prunes in three ways:
batch bounds propagated along the order and dependency chains, a bipartite matching bound,
and a search over *kinds* of recorded calls (same batch, same slots served) rather than
calls, with dead states remembered.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Slot:
    ordered: bool
    depends: bool  # on the result of the slot just before it


def credit(
    slots: Sequence[Slot], candidates: Sequence[Sequence[int]], batch_of: Sequence[int]
) -> dict[int, int]:
    """Slot → recorded call for the lexicographically first maximal set of creditable slots.

    Slots are taken in order; each is credited when it can be together with every slot
    credited before it, so an earlier expected call is never given up for a later one.
    When a complete assignment exists, every slot is credited.
    """
    assignment: dict[int, int] = {}
    used: set[int] = set()
    last_ordered_batch = 0  # ordered batches never decrease, so the latest is the bound
    for i, slot in enumerate(slots):
        if not candidates[i] or (slot.depends and i - 1 not in assignment):
            continue
        # Cheap path: extend the current assignment with the first call that fits.
        low = last_ordered_batch if slot.ordered else 0
        if slot.depends:
            low = max(low, batch_of[assignment[i - 1]] + 1)
        for r in candidates[i]:
            if r not in used and batch_of[r] >= low:
                break
        else:
            r = None
        if r is not None:
            assignment[i] = r
            used.add(r)
            if slot.ordered:
                last_ordered_batch = batch_of[r]
            continue
        found = find_assignment(slots, candidates, batch_of, [*sorted(assignment), i])
        if found is not None:
            assignment, used = found, set(found.values())
            last_ordered_batch = max(
                (batch_of[r] for j, r in found.items() if slots[j].ordered), default=0
            )
    return assignment


def find_assignment(
    slots: Sequence[Slot],
    candidates: Sequence[Sequence[int]],
    batch_of: Sequence[int],
    members: Sequence[int],
) -> dict[int, int] | None:
    """An assignment crediting exactly the slots in ``members`` (ascending, each depending
    slot's predecessor included), or None when there is none."""
    member_set = set(members)
    domains = _narrow(slots, candidates, batch_of, members, member_set)
    if domains is None:
        return None
    matching = _match(members, domains, set())
    if len(matching) < len(members):
        return None
    constrained = [
        i
        for i in members
        if slots[i].ordered or slots[i].depends or (i + 1 in member_set and slots[i + 1].depends)
    ]
    if not constrained:
        return {slot: r for r, slot in matching.items()}
    constrained_set = set(constrained)
    free = [i for i in members if i not in constrained_set]
    # Recursion depth grows with the number of expected calls; Python-to-Python calls do
    # not use the C stack, so a higher limit is safe for long cases.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * len(members) + 500))
    return _Search(slots, domains, batch_of, constrained, free).run()


def _narrow(
    slots: Sequence[Slot],
    candidates: Sequence[Sequence[int]],
    batch_of: Sequence[int],
    members: Sequence[int],
    member_set: set[int],
) -> dict[int, list[int]] | None:
    """Candidates cut to the batches each slot can reach given the chains it sits in."""
    domains: dict[int, list[int]] = {}
    earliest: dict[int, int] = {}
    previous_ordered = None
    for i in members:
        bound = 0
        if slots[i].ordered and previous_ordered is not None:
            bound = earliest[previous_ordered]
        if slots[i].depends:
            bound = max(bound, earliest[i - 1] + 1)
        domain = [r for r in candidates[i] if batch_of[r] >= bound]
        if not domain:
            return None
        domains[i] = domain
        earliest[i] = batch_of[domain[0]]
        if slots[i].ordered:
            previous_ordered = i
    latest: dict[int, int] = {}
    next_ordered = None
    for i in reversed(members):
        bound = sys.maxsize
        if slots[i].ordered and next_ordered is not None:
            bound = latest[next_ordered]
        if i + 1 in member_set and slots[i + 1].depends:
            bound = min(bound, latest[i + 1] - 1)
        domain = [r for r in domains[i] if batch_of[r] <= bound]
        if not domain:
            return None
        domains[i] = domain
        latest[i] = batch_of[domain[-1]]
        if slots[i].ordered:
            next_ordered = i
    return domains


def _match(slots: Sequence[int], domains: dict[int, list[int]], used: set[int]) -> dict[int, int]:
    """A maximum bipartite matching (Kuhn's augmenting paths): recorded call → slot."""
    owner: dict[int, int] = {}
    for i in slots:
        _augment(i, domains, used, owner, set())
    return owner


def _augment(
    i: int, domains: dict[int, list[int]], used: set[int], owner: dict[int, int], seen: set[int]
) -> bool:
    for r in domains[i]:
        if r in used or r in seen:
            continue
        seen.add(r)
        holder = owner.get(r)
        if holder is None or _augment(holder, domains, used, owner, seen):
            owner[r] = i
            return True
    return False


# A search state the search found fruitless: at a leaf (depth, calls taken per kind), or
# within (depth, last ordered batch, predecessor's batch, calls taken per kind).
_State = tuple[int, tuple[int, ...]] | tuple[int, int, int | None, tuple[int, ...]]


class _Search:
    """Depth-first search over the constrained slots, in order; free slots are matched at
    the leaves. Recorded calls of one kind (same batch, same slots served) are
    interchangeable, so the search takes the first unused call of each kind and a state is
    (depth, last ordered batch, predecessor's batch, calls taken per kind)."""

    def __init__(
        self,
        slots: Sequence[Slot],
        domains: dict[int, list[int]],
        batch_of: Sequence[int],
        constrained: list[int],
        free: list[int],
    ) -> None:
        self.slots = slots
        self.domains = domains
        self.batch_of = batch_of
        self.constrained = constrained
        self.free = free
        served: dict[int, list[int]] = {}
        for i in (*constrained, *free):
            for r in domains[i]:
                served.setdefault(r, []).append(i)
        kinds: dict[tuple[int, tuple[int, ...]], list[int]] = {}
        for r in sorted(served):
            kinds.setdefault((batch_of[r], tuple(served[r])), []).append(r)
        self.kinds = list(kinds.values())
        kind_of = {r: k for k, calls in enumerate(self.kinds) for r in calls}
        self.slot_kinds = {
            i: list(dict.fromkeys(kind_of[r] for r in domains[i])) for i in constrained
        }
        self.taken = [0] * len(self.kinds)
        self.chosen: list[int] = []
        self.dead: set[_State] = set()
        self.result: dict[int, int] | None = None

    def run(self) -> dict[int, int] | None:
        self._extend(0, 0)
        return self.result

    def _extend(self, depth: int, last_ordered_batch: int) -> bool:
        if depth == len(self.constrained):
            leaf = (depth, tuple(self.taken))
            if leaf not in self.dead and self._finish():
                return True
            self.dead.add(leaf)
            return False
        i = self.constrained[depth]
        slot = self.slots[i]
        # The predecessor of a depending slot is constrained too, so it was chosen just before.
        after = self.batch_of[self.chosen[-1]] if slot.depends else None
        state = (depth, last_ordered_batch, after, tuple(self.taken))
        if state in self.dead:
            return False
        for k in self.slot_kinds[i]:
            calls = self.kinds[k]
            if self.taken[k] == len(calls):
                continue
            r = calls[self.taken[k]]
            batch = self.batch_of[r]
            if (slot.ordered and batch < last_ordered_batch) or (
                after is not None and batch <= after
            ):
                continue
            self.taken[k] += 1
            self.chosen.append(r)
            if self._extend(depth + 1, batch if slot.ordered else last_ordered_batch):
                return True
            self.taken[k] -= 1
            self.chosen.pop()
        self.dead.add(state)
        return False

    def _finish(self) -> bool:
        used = set(self.chosen)
        matching = _match(self.free, self.domains, used)
        if len(matching) < len(self.free):
            return False
        self.result = dict(zip(self.constrained, self.chosen, strict=True))
        self.result.update((slot, r) for r, slot in matching.items())
        return True
