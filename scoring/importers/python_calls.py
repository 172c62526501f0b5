"""Python call syntax, as BFCL's prompting models write their answers
(docs/benchmarks.md#prompting-models-results).

``"[calculate_triangle_area(base=10, height=5), math.factorial(number=5)]"`` reads as
``[{"calculate_triangle_area": {"base": 10, "height": 5}}, {"math.factorial": {"number": 5}}]``,
the way BFCL's default decoder (``default_decode_ast_prompting`` and ``ast_parse`` in
``bfcl_eval/model_handler/utils.py``) reads it: backticks, newlines and spaces stripped from
both ends, ``[``/``]`` added where missing, every element a call, keyword arguments only
(positional ones are dropped, as BFCL drops them), dotted names joined.

The text is parsed with ``ast`` and never evaluated. Where BFCL's decoder calls ``eval``
(arithmetic such as ``rate=0.05/12``) the operators are applied here to number literals
alone, with their size bounded, and so are integer literals (4,096 bits: a hexadecimal one
is not held to Python's limit on decimal digits). Length and nesting are bounded before
``ast.parse`` sees the text, so a huge or deeply nested string costs little.

Values read as BFCL reads them: literals as themselves, tuples as lists, a bare name as its
text (``unit=celsius`` is ``"celsius"``), a call without keywords as its source text, a call
with keywords as ``{name: arguments}``, a subscript as its source text, ``...`` as ``"..."``.
Deliberate differences, all rare: ``+5`` is 5 (BFCL reads -5); what JSON cannot hold
(bytes, complex numbers, dictionary keys that are not strings, ``**kwargs``) does not
decode, nor does arithmetic BFCL's ``eval`` would run on anything but number literals and
two strings (``[1] + [2]``, ``'ab' * 2``, ``f() + 1``).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any

MAX_CHARS = 100_000
MAX_DEPTH = 100

_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")
_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_MAX_INT_BITS = 4096


class Undecodable(ValueError):
    """The text is not Python call syntax BFCL's decoder reads; the message says why."""


def decode_calls(
    text: str, parameters: Mapping[str, Sequence[str]] | None = None
) -> tuple[list[dict[str, dict[str, Any]]], list[str]]:
    """The calls ``text`` writes, as ``[{name: arguments}]``, and notes on what was dropped.

    With ``parameters`` (a function's parameter names, in order, by function name),
    positional arguments are named by them, as Python would bind them; otherwise they are
    dropped, as BFCL's AST decoder drops them. Raises ``Undecodable`` when BFCL's decoder
    would fail on it (or, for what JSON cannot hold, when it could not be carried
    faithfully)."""
    if len(text) > MAX_CHARS:
        raise Undecodable(f"the text is {len(text):,} characters; the limit is {MAX_CHARS:,}")
    source = text.strip("`\n ")
    if not source.startswith("["):
        source = "[" + source
    if not source.endswith("]"):
        source = source + "]"
    _check_nesting(source)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise Undecodable(f"not Python syntax: {exc.msg}") from None
    except (RecursionError, MemoryError):  # CPython's parser on long operator chains
        raise Undecodable("nested too deeply to parse") from None
    except ValueError as exc:  # NUL bytes
        raise Undecodable(f"not Python syntax: {exc}") from None
    _check_depth(tree)
    body = tree.body
    elements = body.elts if isinstance(body, ast.List | ast.Tuple | ast.Set) else None
    if elements is None:
        raise Undecodable("not a list of calls")
    notes: list[str] = []
    calls = []
    for element in elements:
        if not isinstance(element, ast.Call):
            raise Undecodable(f"{_snippet(element)} is not a call")
        calls.append(_call(element, notes, parameters or {}))
    return calls, notes


def _check_nesting(source: str) -> None:
    """Brackets nested deeper than ``MAX_DEPTH`` (counted in strings too: a cheap, safe
    over-estimate) refuse the text before the parser recurses into them."""
    depth = deepest = 0
    for char in source:
        if char in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSERS:
            depth -= 1
    if deepest > MAX_DEPTH:
        raise Undecodable(f"nested more than {MAX_DEPTH} levels deep")


def _check_depth(tree: ast.AST) -> None:
    """The syntax tree no deeper than ``MAX_DEPTH`` (operator chains such as ``1+1+…+1``
    nest without brackets), walked without recursion."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Undecodable(f"nested more than {MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _call(
    node: ast.Call, notes: list[str], parameters: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, Any]]:
    name = _function_name(node.func)
    arguments: dict[str, Any] = {}
    names = parameters.get(name)
    if node.args and names is not None:
        if len(node.args) > len(names):
            raise Undecodable(f"{name}: {len(node.args)} positional arguments, more than it has")
        for parameter, value in zip(names, node.args, strict=False):
            arguments[parameter] = _value(value, notes)
    elif node.args:
        notes.append(
            f"{name}: {len(node.args)} positional argument(s) dropped "
            "(BFCL reads keyword arguments only)"
        )
    for keyword in node.keywords:
        if keyword.arg is None:
            raise Undecodable(f"{name}: **{_snippet(keyword.value)} cannot be read as arguments")
        arguments[keyword.arg] = _value(keyword.value, notes)
    return {name: arguments}


def _function_name(node: ast.expr) -> str:
    """The dotted name; as in BFCL, what precedes the attributes counts only when it is a
    name (``a().b(x=1)`` calls ``b``)."""
    function = node
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    if not parts:
        raise Undecodable(f"{_snippet(function)} does not name a function")
    return ".".join(reversed(parts))


def _value(node: ast.expr, notes: list[str]) -> Any:
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(item, notes) for item in node.elts]
    if isinstance(node, ast.Dict):
        return _dictionary(node, notes)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.UnaryOp):
        return _signed(node)
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    if isinstance(node, ast.Call):
        return _call(node, notes, {}) if node.keywords else ast.unparse(node)
    if isinstance(node, ast.Subscript):
        return f"{ast.unparse(node.value)}[{ast.unparse(node.slice)}]"
    raise Undecodable(f"{_snippet(node)}: {type(node).__name__} is not a value BFCL reads")


def _constant(value: Any) -> Any:
    if value is Ellipsis:
        return "..."
    if isinstance(value, int):
        return _within_bits(value)
    if isinstance(value, bytes | complex):
        raise Undecodable(f"{value!r} has no JSON value")
    if isinstance(value, float) and not math.isfinite(value):
        raise Undecodable(f"{value!r} has no JSON value")
    return value


def _dictionary(node: ast.Dict, notes: list[str]) -> dict[str, Any]:
    out = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            raise Undecodable(f"**{_snippet(value)} cannot be read as a dictionary")
        name = _value(key, notes)
        if not isinstance(name, str):
            raise Undecodable(f"dictionary key {_snippet(key)} is not a string")
        out[name] = _value(value, notes)
    return out


def _number(node: ast.expr) -> int | float:
    value: object = _signed(node) if isinstance(node, ast.UnaryOp) else None
    if isinstance(node, ast.BinOp):
        value = _arithmetic(node)
    elif isinstance(node, ast.Constant):
        value = node.value
    if type(value) is int:
        return _within_bits(value)
    if type(value) is float:
        return value
    raise Undecodable(f"{_snippet(node)} is not a number")


def _within_bits(value: int) -> int:
    """An integer literal, no larger than arithmetic may make one: a hexadecimal literal of
    5,000 digits is read without Python's limit on decimal digits, and then could not be
    written as JSON (nor its line stored)."""
    if value.bit_length() > _MAX_INT_BITS:
        raise Undecodable(f"an integer of {value.bit_length():,} bits is too large to read")
    return value


def _signed(node: ast.UnaryOp) -> int | float:
    if not isinstance(node.op, ast.USub | ast.UAdd):
        raise Undecodable(f"{_snippet(node)}: only - and + signs are read")
    value = _number(node.operand)
    return -value if isinstance(node.op, ast.USub) else value


def _arithmetic(node: ast.BinOp) -> Any:
    """Arithmetic on literals (``0.05/12``), which BFCL's decoder evaluates: applied to numbers
    alone (and ``+`` to two strings), results bounded in size."""
    apply = _OPERATORS.get(type(node.op))
    if apply is None:
        raise Undecodable(f"{_snippet(node)}: operator {type(node.op).__name__} is not read")
    left, right = _operand(node.left), _operand(node.right)
    if isinstance(left, str) or isinstance(right, str):
        if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
            return left + right
        raise Undecodable(f"{_snippet(node)}: only numbers and joined strings are computed")
    if isinstance(node.op, ast.Pow) and _power_too_large(left, right):
        raise Undecodable(f"{_snippet(node)}: the power is too large")
    try:
        result = apply(left, right)
    except (ArithmeticError, ValueError) as exc:
        raise Undecodable(f"{_snippet(node)}: {exc}") from None
    if isinstance(result, complex) or (isinstance(result, float) and not math.isfinite(result)):
        raise Undecodable(f"{_snippet(node)} has no JSON value")
    if isinstance(result, int) and result.bit_length() > _MAX_INT_BITS:
        raise Undecodable(f"{_snippet(node)}: the result is too large")
    return result


def _operand(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    return _number(node)


def _power_too_large(base: int | float, exponent: int | float) -> bool:
    if isinstance(base, float) or isinstance(exponent, float):
        return False  # floats overflow into an error, not into memory
    return abs(base) > 1 and exponent * abs(base).bit_length() > _MAX_INT_BITS


def _snippet(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except ValueError:  # an integer past Python's limit on decimal digits
        return "an expression holding an integer too large to write"
    return text if len(text) <= 60 else text[:57] + "..."
