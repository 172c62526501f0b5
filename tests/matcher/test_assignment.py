"""The assignment search against a brute-force reference, and on adversarial shapes."""

import itertools
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.matcher.assignment import Slot, credit, find_assignment


def satisfies(slots, candidates, batch_of, assignment):
    """Whether ``assignment`` (slot → call) meets every rule among the slots it credits."""
    if len(set(assignment.values())) != len(assignment):
        return False
    for i, r in assignment.items():
        if r not in candidates[i]:
            return False
        if slots[i].depends and (
            i - 1 not in assignment or batch_of[r] <= batch_of[assignment[i - 1]]
        ):
            return False
    ordered = sorted(i for i in assignment if slots[i].ordered)
    return all(
        batch_of[assignment[a]] <= batch_of[assignment[b]] for a, b in itertools.pairwise(ordered)
    )


def brute_feasible(slots, candidates, batch_of, members):
    calls = range(len(batch_of))
    for chosen in itertools.permutations(calls, len(members)):
        if satisfies(slots, candidates, batch_of, dict(zip(members, chosen, strict=True))):
            return True
    return False


def brute_credited(slots, candidates, batch_of):
    credited = []
    for i in range(len(slots)):
        if brute_feasible(slots, candidates, batch_of, [*credited, i]):
            credited.append(i)
    return credited


@st.composite
def problems(draw):
    n_calls = draw(st.integers(0, 6))
    batch_of = sorted(draw(st.lists(st.integers(0, 3), min_size=n_calls, max_size=n_calls)))
    n_slots = draw(st.integers(1, 5))
    slots = [Slot(draw(st.booleans()), i > 0 and draw(st.booleans())) for i in range(n_slots)]
    candidates = [
        sorted(draw(st.sets(st.integers(0, n_calls - 1), max_size=n_calls))) if n_calls else []
        for _ in range(n_slots)
    ]
    return slots, candidates, batch_of


@settings(max_examples=600, deadline=None)
@given(problems())
def test_credit_finds_what_brute_force_finds(problem):
    slots, candidates, batch_of = problem
    assignment = credit(slots, candidates, batch_of)
    assert satisfies(slots, candidates, batch_of, assignment)
    assert sorted(assignment) == brute_credited(slots, candidates, batch_of)


@settings(max_examples=600, deadline=None)
@given(problems())
def test_find_assignment_agrees_with_brute_force_on_every_slot(problem):
    slots, candidates, batch_of = problem
    members = [i for i in range(len(slots)) if not slots[i].depends or i - 1 >= 0]
    members = [i for i in members if not slots[i].depends or (i - 1) in members]
    found = find_assignment(slots, candidates, batch_of, members)
    expected = brute_feasible(slots, candidates, batch_of, members)
    assert (found is not None) == expected
    if found is not None:
        assert sorted(found) == members
        assert satisfies(slots, candidates, batch_of, found)


def test_greedy_trap_is_escaped():
    # Slot 0 accepts calls 0 and 1, slot 1 only call 0: first-fit would give 0 to slot 0.
    slots = [Slot(False, False), Slot(False, False)]
    assert credit(slots, [[0, 1], [0]], [0, 0]) == {0: 1, 1: 0}


def identical(n_slots, batches, *, ordered, depends):
    batch_of = [b for b, size in enumerate(batches) for _ in range(size)]
    slots = [Slot(ordered, depends and i > 0) for i in range(n_slots)]
    return slots, [list(range(len(batch_of)))] * n_slots, batch_of


def test_adversarial_identical_calls_are_fast():
    worst = 0.0
    for ordered, depends in itertools.product((False, True), repeat=2):
        for count in (39, 41):
            for batches in ([1] * count, [count], [2] * (count // 2) + [1]):
                slots, candidates, batch_of = identical(
                    40, batches, ordered=ordered, depends=depends
                )
                start = time.perf_counter()
                credit(slots, candidates, batch_of)
                worst = max(worst, time.perf_counter() - start)
    assert worst < 0.05


def test_dependent_chain_with_a_shared_batch_has_no_assignment_and_is_fast():
    slots, candidates, batch_of = identical(
        25, [1] * 10 + [2] + [1] * 13, ordered=False, depends=True
    )
    start = time.perf_counter()
    assignment = credit(slots, candidates, batch_of)
    assert time.perf_counter() - start < 0.05
    assert sorted(assignment) == list(range(24))
