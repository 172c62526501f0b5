"""Trial numbering (docs/formats.md#trials) against a plain model of the rule: explicit trials
kept, missing ones numbered in file order skipping taken numbers, a taken trial refused."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.matcher import InvalidInput, Run, TrialNumbering

LINES = st.lists(
    st.tuples(st.sampled_from("abc"), st.none() | st.integers(min_value=0, max_value=12)),
    max_size=60,
)


def model(lines):
    taken: dict[str, set[int]] = {}
    seen: dict[str, int] = {}
    out = []
    for case, trial in lines:
        numbers = taken.setdefault(case, set())
        if trial is None:
            trial = seen.get(case, 0)
            while trial in numbers:
                trial += 1
        elif trial in numbers:
            out.append("refused")
            continue
        numbers.add(trial)
        seen[case] = seen.get(case, 0) + 1
        out.append(trial)
    return out


def numbered(lines):
    numbering = TrialNumbering()
    out = []
    for case, trial in lines:
        try:
            out.append(numbering.number(Run(case=case, batches=(), trial=trial)).trial)
        except InvalidInput:
            out.append("refused")
    return out


@settings(max_examples=500, deadline=None)
@given(LINES)
def test_numbering_follows_the_rule(lines):
    assert numbered(lines) == model(lines)


def test_examples():
    lines = [("a", None), ("a", 2), ("a", None), ("a", None), ("a", 1), ("b", 0), ("a", 0)]
    # The third run of "a" starts from 2 (two runs seen), taken, so 3; then 4.
    assert numbered(lines) == [0, 2, 3, 4, 1, 0, "refused"]
