"""Values of ``mmio`` writes without a generator script: integer expressions and register
images from files (docs/scenarios.md, "mmio").

* ``value: {expr: "(3 << 16) | N_ITER"}`` — an integer expression, parsed with :mod:`ast`
  and evaluated by walking the tree: integer literals, ``+ - * // % << >> & | ^``, unary
  ``- + ~``, parentheses, and names: the task's ``constants`` and the values of earlier
  reads named with ``as:`` (in this task or an earlier ``mmio`` task). Nothing else is
  accepted (no calls, attributes, comparisons, ``**``), so no code runs; operands and
  results are bounded so that no expression can take long.
* ``values: {file: image.npy | image.bin, dtype: uint32}`` — one register write per
  element, at consecutive 32-bit addresses from ``write``.

:func:`prepare` checks both when the scenario is loaded (located errors: file, line, key)
and replaces each image by its words; :func:`evaluate` runs an expression in the host.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Mapping

import numpy as np

#: at most this many registers from one image (256 KiB of 32-bit words)
MAX_IMAGE_WORDS = 1 << 16
#: |intermediate values| stay below this (no 10**10**10 by repeated multiplication)
MAX_MAGNITUDE = 1 << 64
#: shift amounts above this are refused (1 << 10**9 would take the memory)
MAX_SHIFT = 64
IMAGE_DTYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32")

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift,
        ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
        ast.BitXor: operator.xor}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


class ExprError(ValueError):
    """An expression that is not allowed, or that fails (division by zero, unknown name)."""


def parse(text: str) -> ast.Expression:
    """The checked tree of ``text``; :class:`ExprError` names what is not allowed."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"expression {text!r} is not valid: {e.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) not in _BIN or \
                isinstance(node, ast.UnaryOp) and type(node.op) not in _UNARY:
            raise ExprError(f"expression {text!r}: the operator in '{ast.unparse(node)}' is "
                            "not allowed (+ - * // % << >> & | ^ ~ only)")
        if isinstance(node, (ast.Expression, ast.Load, ast.BinOp, ast.UnaryOp, ast.Name)) or \
                type(node) in _BIN or type(node) in _UNARY:
            continue
        if isinstance(node, ast.Constant) and type(node.value) is int:
            continue
        what = (f"the literal {node.value!r}" if isinstance(node, ast.Constant)
                else f"'{ast.unparse(node)}'" if isinstance(node, ast.expr)
                else type(node).__name__)
        raise ExprError(f"expression {text!r}: {what} is not allowed (integers, names, "
                        "+ - * // % << >> & | ^ ~ and parentheses only)")
    return tree


def names(tree: ast.Expression) -> list[str]:
    """The names an expression uses, in order of appearance."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in out:
            out.append(node.id)
    return out


def evaluate(text: str, env: Mapping[str, int]) -> int:
    """The value of ``text`` with the names of ``env``, as a 32-bit word (a negative value
    is its two's complement); results outside [-2**31, 2**32) are an :class:`ExprError`."""
    value = _eval(parse(text).body, env, text)
    if not -(1 << 31) <= value < 1 << 32:
        raise ExprError(f"expression {text!r} = {value} does not fit a 32-bit register")
    return value & 0xFFFFFFFF


def _eval(node: ast.expr, env: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant):
        value = int(node.value)
    elif isinstance(node, ast.Name):
        if node.id not in env:
            known = ", ".join(sorted(env)) or "none"
            raise ExprError(f"expression {text!r}: {node.id!r} is neither a constant of the "
                            f"task nor an earlier read named with 'as' (known: {known})")
        value = int(env[node.id])
    elif isinstance(node, ast.UnaryOp):
        value = _UNARY[type(node.op)](_eval(node.operand, env, text))
    elif isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env, text), _eval(node.right, env, text)
        op = type(node.op)
        if op in (ast.FloorDiv, ast.Mod) and b == 0:
            raise ExprError(f"expression {text!r}: division by zero in '{ast.unparse(node)}'")
        if op in (ast.LShift, ast.RShift) and not 0 <= b <= MAX_SHIFT:
            raise ExprError(f"expression {text!r}: shift by {b} in '{ast.unparse(node)}' "
                            f"(0 .. {MAX_SHIFT})")
        value = _BIN[op](a, b)
    else:       # parse() lets no other node through
        raise ExprError(f"expression {text!r}: '{ast.unparse(node)}' is not allowed")
    if abs(value) >= MAX_MAGNITUDE:
        raise ExprError(f"expression {text!r}: '{ast.unparse(node)}' = {value} exceeds 2**64")
    return value


def image_words(path: Any, dtype: str | None, npy: bool | None = None) -> list[int]:
    """The 32-bit words of a register image: a .npy array (any shape, C order, an integer
    dtype of at most 32 bits; ``dtype`` if given must match) or a raw little-endian .bin
    of ``dtype`` (default uint32). Signed values become their two's complement. ``npy``:
    which of the two (default: by the suffix of ``path``). Read through tlm.files."""
    from pathlib import Path

    from tlm.files import FileAccessError, load_npy, read_bytes
    path = Path(path)
    if npy is None:
        npy = path.suffix.lower() == ".npy"
    if npy:
        try:
            arr = load_npy(path, "data")
        except FileAccessError as e:
            raise ExprError(f"cannot read {path.name}: {e.reason}") from None
        if arr.dtype.kind not in "iu" or arr.dtype.itemsize > 4:
            raise ExprError(f"{path.name} holds {arr.dtype}: a register image needs integers "
                            f"of at most 32 bits ({', '.join(IMAGE_DTYPES)})")
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            raise ExprError(f"{path.name} holds {arr.dtype.name}, but dtype says {dtype}")
        arr = arr.reshape(-1)
    else:
        dt = np.dtype(dtype or "uint32").newbyteorder("<")
        try:
            raw = read_bytes(path, "data")
        except FileAccessError as e:
            raise ExprError(f"cannot read {path.name}: {e.reason}") from None
        if len(raw) % dt.itemsize:
            raise ExprError(f"{path.name} has {len(raw)} bytes, not a whole number of "
                            f"{dt.name} values ({dt.itemsize} bytes each)")
        arr = np.frombuffer(raw, dtype=dt)
    if arr.size == 0:
        raise ExprError(f"{path.name} holds no values")
    if arr.size > MAX_IMAGE_WORDS:
        raise ExprError(f"{path.name} holds {arr.size} values; an image writes at most "
                        f"{MAX_IMAGE_WORDS} registers")
    return [int(v) & 0xFFFFFFFF for v in arr.astype(np.int64)]


def prepare(sc: Any) -> None:
    """Check every ``mmio`` task's expressions and images (located errors) and give the
    host each image as words (``sc.tasks`` gets copies; the scenario's data is unchanged)."""
    named: set[str] = set()
    for i, t in enumerate(sc.tasks):
        if t.get("op") != "mmio":
            continue
        key = ("workload", "tasks", i)
        consts = dict(t.get("constants") or {})
        accesses = []
        for j, a in enumerate(t["accesses"]):
            akey = key + ("accesses", j)
            a = dict(a)
            if "as" in a:
                if a["as"] in consts:
                    raise sc.error(f"'as: {a['as']}' hides the task's constant of that name",
                                   akey + ("as",))
                named.add(a["as"])
            v = a.get("value")
            if isinstance(v, dict):
                try:
                    used = names(parse(v["expr"]))
                except ExprError as e:
                    raise sc.error(str(e), akey + ("value", "expr")) from None
                unknown = [n for n in used if n not in consts and n not in named]
                if unknown:
                    raise sc.error(f"expression {v['expr']!r}: {unknown[0]!r} is neither a "
                                   "constant of the task ('constants') nor an earlier read "
                                   "named with 'as'", akey + ("value", "expr"))
            if "values" in a:
                src = a["values"]
                path = sc.resolve_file(src["file"], akey + ("values", "file"))
                try:
                    a["words"] = image_words(path, src.get("dtype"), str(src["file"]).lower().endswith(".npy"))
                except (ExprError, OSError) as e:
                    raise sc.error(str(e), akey + ("values",)) from None
            accesses.append(a)
        sc.tasks[i] = {**t, "accesses": accesses}
