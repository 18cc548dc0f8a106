"""Independent references for the Voyager tests: exact rational arithmetic with a
round-to-nearest-even oracle (no ml_dtypes, no round-to-odd), and scalar loops."""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np

#: (significand bits incl. hidden, min normal exponent, max finite) of the float formats
FMT = {"bf16": (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
       "e4m3": (4, -6, 448.0), "e5m2": (3, -14, 57344.0), "fp32": (24, -126, float(np.finfo(np.float32).max))}


def oracle(v: Fraction, fmt: str) -> float:
    """Exact round-to-nearest-even of the rational ``v`` (e4m3 saturates, others overflow to inf)."""
    p, emin, mx = FMT[fmt]
    if v == 0:
        return 0.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - p + 1)
    q = a / ulp
    m = int(q)
    r = q - m
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and m % 2):
        m += 1
    exact = m * ulp
    out = (mx if fmt == "e4m3" else float("inf")) if exact > Fraction(mx) else float(exact)
    return -out if v < 0 else out


def F(x: float) -> Fraction:
    return Fraction(float(x))


def ref_gemm_float(x: np.ndarray, w: np.ndarray, ic: int, pe_fmt: str, buf_fmt: str,
                   bias: np.ndarray | None = None, order: list[int] | None = None) -> np.ndarray:
    """Scalar reference of the array's float GEMM: per reduction tile (in ``order``) a
    chain of fused MACs over its rows in ``pe_fmt``, added into a ``buf_fmt`` accumulator."""
    p, k = x.shape
    n = w.shape[1]
    tiles = order if order is not None else list(range(-(-k // ic)))
    out = np.zeros((p, n))
    for i in range(p):
        for j in range(n):
            acc = oracle(F(bias[j]), buf_fmt) if bias is not None else 0.0
            for t in tiles:
                ps = 0.0
                for r in range(t * ic, min(k, (t + 1) * ic)):
                    ps = oracle(F(ps) + F(x[i, r]) * F(w[r, j]), pe_fmt)
                acc = oracle(F(acc) + F(ps), buf_fmt)
            out[i, j] = acc
    return out


def ref_posit_encode(x: float, n: int, es: int) -> int:
    """Bit-level encoder written from the standard: build the unbounded pattern of |x|, cut
    to n-1 bits, round to nearest even on the pattern, clamp to [minpos, maxpos]."""
    if x == 0:
        return 0
    if not np.isfinite(x):
        return 1 << (n - 1)
    a = Fraction(abs(x))
    t = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** t > a:
        t -= 1
    k, e = t >> es, t - ((t >> es) << es)
    frac = a / Fraction(2) ** t - 1                          # in [0, 1)
    regime = "1" * (k + 1) + "0" if k >= 0 else "0" * (-k) + "1"
    bits = regime + format(e, f"0{es}b") if es else regime
    fb = ""
    for _ in range(80):
        frac *= 2
        fb += "1" if frac >= 1 else "0"
        frac -= int(frac)
    sticky_tail = frac != 0
    pat = bits + fb
    keep, guard, rest = pat[:n - 1], pat[n - 1:n], pat[n:]
    c = int(keep.ljust(n - 1, "0"), 2)
    if guard == "1" and ("1" in rest or sticky_tail or c & 1):
        c += 1
    c = min(max(c, 1), (1 << (n - 1)) - 1)
    return (-c) & ((1 << n) - 1) if x < 0 else c
