"""The nesting-depth limit on uploaded lines: ``nested_deeper_than`` reads the JSON text,
so strings holding brackets, quotes and backslashes must not fool it."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.matcher.jsonvalue import json_containers, nested_deeper_than

TRICKY_TEXT = st.text(alphabet='[]{}"\\ab\n\t/', max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=30,
)


def depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@given(VALUES, st.integers(min_value=0, max_value=12), st.booleans())
def test_agrees_with_the_depth_of_the_parsed_value(value, limit, spaced):
    text = json.dumps(value, indent=1 if spaced else None, ensure_ascii=False).encode()
    assert nested_deeper_than(text, limit) == (depth(value) > limit)


@pytest.mark.parametrize(
    ("text", "limit", "deeper"),
    [
        (b"1", 0, False),
        (b"[]", 0, True),
        (b"[]", 1, False),
        (b'{"a": [{}]}', 2, True),
        (b'{"a": [{}]}', 3, False),
        (b'["[[[[", "]]]"]', 1, False),  # brackets in strings do not count
        (rb'["\\", "[[["]', 1, False),  # an escaped backslash ends no string early
        (rb'["\"[[[", 1]', 1, False),  # an escaped quote opens no string
        (b"[" * 65 + b"]" * 65, 64, True),
        (b"[" * 64 + b"]" * 64, 64, False),
    ],
)
def test_examples(text, limit, deeper):
    assert nested_deeper_than(text, limit) is deeper


def containers(value) -> int:
    if isinstance(value, dict):
        return 1 + sum(map(containers, value.values()))
    if isinstance(value, list):
        return 1 + sum(map(containers, value))
    return 0


@given(VALUES, st.booleans())
def test_json_containers_agrees_with_the_parsed_value(value, spaced):
    """Objects and arrays outside strings only, whatever brackets, quotes and backslashes
    the strings hold; past ``enough`` counted exactly, within it an upper bound."""
    text = json.dumps(value, indent=1 if spaced else None, ensure_ascii=False).encode()
    assert json_containers(text, 0) == containers(value)
    assert json_containers(text, 10**6) >= containers(value)
