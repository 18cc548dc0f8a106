"""Integer requantisation that reproduces ONNX QuantizeLinear bit for bit.

ONNX computes ``q = RNE(v * M) + zp`` (round half to even) from an exact integer ``v`` and
a rational ``M`` (a ratio of float32 scales). The cluster cores compute
``floor((v * P + B) / 2**S)``. With ``P = round(M * 2**S)`` and ``B = 2**(S-1) + zp * 2**S``
this is ``floor(v * M + 1/2 + e)`` with ``|e| <= |v| * |P / 2**S - M|``. It equals RNE(v M)
for every ``|v| <= A`` when

1. ``M``'s denominator ``d`` (in lowest terms) is odd: then ``v M`` is never a half-integer
   (no ties, so half-to-even and half-up agree) and its distance from one is ``>= 1/(2d)``;
2. ``A * |P / 2**S - M| < 1/(2d)``: the fixed-point error never crosses a rounding boundary;

or when ``M`` is dyadic (``p / 2**n``), so ``P = M * 2**S`` is exact, and the accumulator
carries a half-unit offset (a bias that is an odd multiple of ``s_x s_w / 2``): then
``(acc + off) * M`` is never a half-integer either.

onnxruntime evaluates the QDQ graph in float32; its result is the exact ``RNE(v M)`` when
every partial sum is exact (a multiple of ``s_x s_w / 2`` whose multiplier times the odd
factor of ``s_x s_w`` stays below ``2**24``) and ``d < 2**14`` (the float32 division
``y / s_y`` then errs by less than ``1/(2d)``). ``proven`` reports whether all of this
holds for the worst-case accumulator.
"""
from __future__ import annotations

from fractions import Fraction
from math import lcm
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .ir import QTensor

INT32 = (1 << 31) - 1


def frac(x: float) -> Fraction:
    """The exact value of a float32 scale."""
    return Fraction(float(np.float32(x)))


def _tie_free_exact(m: Fraction, p: int, shift: int, off: Fraction) -> bool:
    """``P / 2**S == M`` exactly and ``(acc + off) * M`` is never a half-integer: ``M =
    p / 2**n`` (p odd) with ``n == 0``, or ``off`` an odd multiple of 1/2 (a half-unit bias)."""
    if Fraction(p, 1 << shift) != m:
        return False
    n = m.denominator.bit_length() - 1
    return n == 0 or off.denominator == 2


def odd_part(f: Fraction) -> int:
    """The odd factor of a dyadic rational's numerator (a float's significand, trimmed)."""
    n = abs(f.numerator)
    while n and n % 2 == 0:
        n //= 2
    return n


def _proven(ms: list[Fraction], ps: list[int], shift: int, bounds: list[int],
            offsets: list[Fraction], units: list[Fraction]) -> bool:
    for m, p, a, off, u in zip(ms, ps, bounds, offsets, units):
        # onnxruntime's float32 partial sums are multiples of u / 2 (u = s_x * s_w): exact
        # while the multiple, 2 a times u's odd factor, has at most 24 significant bits
        if 2 * a * odd_part(u) >= 1 << 24:
            return False
        d = m.denominator
        if d & (d - 1) == 0:                        # dyadic: exact multiplier, ties decide
            if not _tie_free_exact(m, p, shift, off):
                return False
            continue
        if d % 2 == 0 or d >= 1 << 14 or off.denominator != 1:
            return False
        if a * abs(Fraction(p, 1 << shift) - m) * 2 * d >= 1:
            return False
    return True


def conv_requant(ms: list[Fraction], offsets: list[Fraction], zp_out: int, bounds: list[int],
                 units: list[Fraction] | None = None, max_shift: int = 47, max_scale: int = INT32) -> dict:
    """Per output channel ``c``: ``y = RNE((acc + offsets[c]) * ms[c]) + zp_out`` as the
    conv2d kernel's ``(scale[c] * acc + bias[c]) >> shift`` (scale and bias int32).
    ``bounds[c]`` bounds ``|acc + offsets[c]|``; ``units[c]`` is the float value of one
    accumulator unit, ``s_x * s_w`` (default 1). ``max_shift`` and ``max_scale`` bound the
    shift and the multiplier (the cores: 47 and int32; the RBE: 31 and 16 bits unsigned).
    Raises ValueError if no shift fits."""
    units = units or [Fraction(1)] * len(ms)
    best = None
    for s in range(max_shift + 1):
        ps = [round(m * (1 << s)) for m in ms]
        bs = [o * p + (1 << s >> 1) + zp_out * (1 << s) for o, p in zip(offsets, ps)]
        if max(ps) > max_scale or max(abs(b) for b in bs) > INT32:
            break
        if all(Fraction(b).denominator == 1 for b in bs):
            best = (s, ps, [round(b) for b in bs])
    if best is None or min(best[1]) < 1:
        raise ValueError("the requantisation scale does not fit the cores' int32 "
                         f"multiplier and bias (scale ratio {float(min(ms)):.3g}..{float(max(ms)):.3g})")
    s, ps, bs = best
    return {"shift": s, "scale": np.array(ps, np.int64), "bias": np.array(bs, np.int64),
            "proven": _proven(ms, ps, s, bounds, offsets, units)}


def add_requant(ma: Fraction, mb: Fraction, za: int, zb: int, zp_out: int) -> dict:
    """``y = RNE(ma (a - za) + mb (b - zb)) + zp_out`` as the add_int8 kernel's
    ``(m1 a + m2 b + bias) >> shift`` (m1, m2 < 2**16, shift <= 31, bias int32)."""
    best = None
    for s in range(32):
        m1, m2 = round(ma * (1 << s)), round(mb * (1 << s))
        b = -m1 * za - m2 * zb + (1 << s >> 1) + zp_out * (1 << s)
        if max(m1, m2) > 0xFFFF or abs(b) > INT32:
            break
        best = (s, m1, m2, b)
    if best is None or min(best[1], best[2]) < 1:
        raise ValueError(f"the input/output scale ratios ({float(ma):.3g}, {float(mb):.3g}) do not fit "
                         "the add kernel's 16-bit multipliers")
    s, m1, m2, b = best
    d = lcm(ma.denominator, mb.denominator)
    err = (abs(Fraction(m1, 1 << s) - ma) + abs(Fraction(m2, 1 << s) - mb)) * 255
    proven = d % 2 == 1 and d < 1 << 14 and err * 2 * d < 1
    return {"shift": s, "m1": m1, "m2": m2, "bias": b, "proven": proven}


def leaky_onnx(x: "QTensor", y: "QTensor", alpha: float) -> np.ndarray:
    """What onnxruntime computes for DequantizeLinear -> LeakyRelu -> QuantizeLinear, in int8
    storage, for every int8 storage value of ``x`` (-128..127): float32 throughout
    (``(x - zp) * s_x``, ``alpha * v`` below 0, ``/ s_y``), round half to even, saturate."""
    f = np.float32
    d = np.arange(-128, 128, dtype=np.int64) - x.zp
    v = d.astype(f) * f(x.scale)
    v = np.where(v >= 0, v, f(alpha) * v).astype(f)
    q = np.rint((v / f(y.scale)).astype(f)).astype(np.int64) + y.zp
    return np.clip(q, -128, 127)


def leaky_requant(x: "QTensor", y: "QTensor", alpha: float) -> dict:
    """ONNX's DequantizeLinear -> LeakyRelu -> QuantizeLinear on the cores, exactly.

    The ``leaky_int8`` kernel: ``rne((x - zp) * m / 2^shift) + zp_out`` with ``m = m_pos ~
    s_x / s_y`` above the zero point and ``m_neg ~ alpha s_x / s_y`` below (16-bit
    multipliers, ``shift <= 31``, rounding half to even like QuantizeLinear). An int8 input
    has 256 values, so exactness is checked exhaustively against :func:`leaky_onnx`: the
    largest shift that reproduces it wins (exact when ``alpha s_x / s_y`` is a short dyadic
    fraction, e.g. alpha 1/8 or 1/16). When none does (alpha 0.1: onnxruntime's float32
    product rounds ``0.1 * 5`` to the tie 0.5, which no fixed-point multiplier reproduces),
    the ``lut_int8`` kernel reads :func:`leaky_onnx`'s 256 values as a table."""
    from components.cluster.ops import leaky_requant as kernel
    want = leaky_onnx(x, y, alpha)
    ratio = frac(x.scale) / frac(y.scale)
    xs = np.arange(-128, 128, dtype=np.int64)
    for s in range(31, -1, -1):
        mp, mn = round(ratio * (1 << s)), round(ratio * frac(alpha) * (1 << s))
        if max(mp, mn) > 0xFFFF or min(mp, mn) < 0:
            continue
        rq = {"zp": x.zp, "m_pos": mp, "m_neg": mn, "shift": s, "zp_out": y.zp}
        if np.array_equal(kernel(xs, **rq), want):
            return {"kernel": "leaky_int8", "args": rq}
    return {"kernel": "lut_int8", "table": want}
