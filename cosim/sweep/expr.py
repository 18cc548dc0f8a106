"""Sweep constraints: a small expression language over a point's parameters (docs/sweeps.md).

A constraint is parsed with :mod:`ast` and checked against an allow-list of node types; it is
then evaluated by walking the tree, never by ``eval``. Every value stays bounded: literals are
integers with ``|x| < 2**63``, finite floats, short texts, ``True``/``False``/``None``;
arithmetic takes numbers only (no ``%`` formatting, no repetition or concatenation of texts
and lists, no ``**``) and every result is checked against the same bounds, so a hostile
constraint cannot allocate more than its own text and the point's values.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable

from tlm.params import suggest

#: integers stay within a signed 64-bit word (a sweep parameter never needs more)
INT_BOUND = 2**63
#: how deeply operations may nest (the evaluator recurses once per level)
MAX_DEPTH = 64

_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
          ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Compare,
          ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Constant,
          ast.List, ast.Tuple, ast.Name, ast.Attribute, ast.Load, ast.IfExp, ast.Call, ast.Subscript)
_ARITH: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv), ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod)}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
FUNCS = ("len", "min", "max", "abs", "sum")
_HELP = "comparisons, and/or/not, arithmetic on numbers, in, literals, len/min/max/abs/sum"


class ConstraintError(ValueError):
    """A constraint that is refused or cannot be evaluated; the caller adds file, line and key."""


def chain(node: ast.AST) -> str | None:
    """``pmu.operating_point`` (an attribute chain) as the dotted name it spells."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id] + parts[::-1])
    return None


#: a compiled constraint: a function of one point's parameters
Constraint = Callable[[dict[str, Any]], Any]


def compile_constraint(text: str, params: list[str]) -> Constraint:
    """Parse ``text``, check it uses only the allowed constructs, bounded literals and the
    space's parameters (by path), and turn it into nested closures (one per node: a sweep
    evaluates it on up to a million points)."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise ConstraintError(f"not an expression: {getattr(e, 'msg', e)} in {text!r}") from None
    depth: dict[ast.AST, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ConstraintError(f"{type(node).__name__} is not allowed in a constraint ({_HELP})")
        for child in ast.iter_child_nodes(node):
            depth[child] = depth.get(node, 0) + 1
        if depth.get(node, 0) > MAX_DEPTH:
            raise ConstraintError(f"the constraint nests deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            _literal(node.value)
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in FUNCS and not node.keywords):
                raise ConstraintError(f"only {', '.join(FUNCS)} may be called in a constraint")
            continue
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = chain(node)
            if name is None:
                raise ConstraintError("attributes are parameter paths such as pmu.operating_point")
            if name in FUNCS and isinstance(node, ast.Name):
                continue
            if not any(p == name or p.startswith(name + ".") for p in params):
                raise ConstraintError(f"{name!r} is not a parameter of the space{suggest(name, params)}; "
                                      f"parameters: {', '.join(params)}")
    return _build(tree.body)


def _literal(value: Any) -> None:
    """A literal is a bounded number, a text, a boolean or None (no bytes, complex, ...)."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, (int, float)):
        _bounded(value, "literal")
        return
    raise ConstraintError(f"{type(value).__name__} literals are not allowed in a constraint")


def _bounded(value: Any, what: str = "result") -> Any:
    """``value`` itself when it is within the bounds a constraint computes in."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and not -INT_BOUND < value < INT_BOUND:
        raise ConstraintError(f"{what} out of range: integers are bounded by |x| < 2^63")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConstraintError(f"{what} is not a finite number")
    return value


def _number(value: Any, what: str) -> Any:
    if not isinstance(value, (int, float)):
        raise ConstraintError(f"{what} takes numbers, not {type(value).__name__} {_short(value)} "
                              "(a constraint does no text formatting, concatenation or repetition)")
    return _bounded(value, "a value")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def evaluate(constraint: Constraint, env: dict[str, Any]) -> bool:
    """The truth of a compiled constraint for one point's parameters ``env``."""
    try:
        return bool(constraint(env))
    except ConstraintError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, KeyError, IndexError, OverflowError,
            RecursionError) as e:
        raise ConstraintError(f"{type(e).__name__}: {e}" if isinstance(e, KeyError) else str(e)) from None


def _build(node: ast.AST) -> Constraint:
    """The closure that evaluates ``node`` (checked by :func:`compile_constraint`)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return lambda env: value
    if isinstance(node, (ast.Name, ast.Attribute)):
        path = chain(node)
        return lambda env: _bounded(env[path], "a parameter's value")
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_build(e) for e in node.elts]
        return lambda env: [f(env) for f in items]
    if isinstance(node, ast.BoolOp):
        terms = [_build(v) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda env: all(f(env) for f in terms)
        return lambda env: any(f(env) for f in terms)
    if isinstance(node, ast.UnaryOp):
        operand = _build(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda env: not operand(env)
        sign = -1 if isinstance(node.op, ast.USub) else 1
        return lambda env: _bounded(sign * _number(operand(env), "unary -/+"))
    if isinstance(node, ast.BinOp):
        what, fn = _ARITH[type(node.op)]
        what = f"`{what}`"
        left, right = _build(node.left), _build(node.right)
        return lambda env: _bounded(fn(_number(left(env), what), _number(right(env), what)))
    if isinstance(node, ast.Compare):
        first = _build(node.left)
        chain_ = [(_COMPARE[type(op)], _build(c)) for op, c in zip(node.ops, node.comparators)]

        def compare(env: dict[str, Any]) -> bool:
            a = first(env)
            for test, operand in chain_:
                b = operand(env)
                if not test(a, b):
                    return False
                a = b
            return True
        return compare
    if isinstance(node, ast.IfExp):
        test, body, orelse = _build(node.test), _build(node.body), _build(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)
    if isinstance(node, ast.Call):
        name, args = node.func.id, [_build(a) for a in node.args]  # type: ignore[attr-defined]
        return lambda env: _call(name, [f(env) for f in args])
    if isinstance(node, ast.Subscript):
        value, index = _build(node.value), _build(node.slice)
        return lambda env: value(env)[index(env)]
    raise ConstraintError(f"{type(node).__name__} is not allowed in a constraint ({_HELP})")


def _call(name: str, args: list[Any]) -> Any:
    """``len``, ``min``, ``max``, ``abs`` and ``sum`` (one list of numbers: no start value)."""
    if name == "len":
        if len(args) != 1:
            raise ConstraintError("len takes one value")
        return len(args[0])
    if name in ("min", "max"):
        return (min if name == "min" else max)(*args)
    if len(args) != 1:
        raise ConstraintError(f"{name} takes one value" if name == "abs" else "sum takes one list of numbers")
    if name == "abs":
        return _bounded(abs(_number(args[0], "abs")))
    if not isinstance(args[0], list):
        raise ConstraintError("sum takes a list of numbers")
    return _bounded(sum(_number(v, "sum") for v in args[0]))
