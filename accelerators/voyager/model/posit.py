"""posit<n, es> codec (no well-kept posit library installs here, so our own).

Decoding follows the posit standard: sign, regime (a run of equal bits ended by its
complement), ``es`` exponent bits, fraction with hidden 1; 0 is all zeros, NaR is
``1000...0``. Encoding rounds *on the bit pattern*: the exact value's unbounded encoding is
cut to ``n`` bits and rounded to nearest, ties to the even pattern; a non-zero value never
rounds to 0 (it becomes ±minpos) and a finite value never to NaR (it saturates to ±maxpos).

The rounding boundary between two neighbouring positive patterns ``c`` and ``c+1`` of
posit<n, es> is the value of pattern ``2c+1`` of posit<n+1, es> (the same bits with a 1
appended), so encoding is a search over a table of boundaries (vectorised).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


def decode_pattern(code: int, n: int, es: int) -> float:
    """The value of the n-bit pattern ``code`` (NaR -> nan), exact in float64 for n <= 16."""
    mask = (1 << n) - 1
    code &= mask
    if code == 0:
        return 0.0
    if code == 1 << (n - 1):
        return float("nan")
    neg = bool(code >> (n - 1))
    if neg:
        code = (-code) & mask
    bits = [(code >> i) & 1 for i in range(n - 2, -1, -1)]  # after the sign, MSB first
    first = bits[0]
    run = 1
    while run < len(bits) and bits[run] == first:
        run += 1
    k = run - 1 if first else -run
    rest = bits[run + 1:]                                    # skip the regime terminator
    exp_bits = rest[:es] + [0] * (es - len(rest[:es]))       # missing exponent bits are 0
    e = 0
    for b in exp_bits:
        e = (e << 1) | b
    frac_bits = rest[es:]
    f = 0
    for b in frac_bits:
        f = (f << 1) | b
    mant = 1.0 + (f / (1 << len(frac_bits)) if frac_bits else 0.0)
    v = float(np.ldexp(mant, k * (1 << es) + e))
    return -v if neg else v


@lru_cache(maxsize=None)
def value_table(n: int, es: int) -> np.ndarray:
    """Values of all 2**n patterns, indexed by pattern (float64; NaR -> nan)."""
    return np.array([decode_pattern(c, n, es) for c in range(1 << n)], dtype=np.float64)


@lru_cache(maxsize=None)
def _boundaries(n: int, es: int) -> np.ndarray:
    """Rounding boundaries between positive patterns c and c+1 (c = 1 .. maxpos-1)."""
    wide = value_table(n + 1, es)
    return np.array([wide[2 * c + 1] for c in range(1, (1 << (n - 1)) - 1)], dtype=np.float64)


def encode(x: np.ndarray, n: int, es: int) -> np.ndarray:
    """Round float64 values ``x`` to n-bit posit patterns (uint; nan/inf -> NaR)."""
    x = np.asarray(x, dtype=np.float64)
    mag = np.abs(x)
    bnd = _boundaries(n, es)
    # positive patterns 1..maxpos: number of boundaries strictly below |x| picks the pattern
    lo = np.searchsorted(bnd, mag, side="left")               # boundaries < |x|
    hi = np.searchsorted(bnd, mag, side="right")              # boundaries <= |x|
    code = 1 + lo
    tie = hi > lo                                             # |x| sits exactly on a boundary
    # a tie between c and c+1: the even pattern wins
    code = np.where(tie & (code % 2 == 1), code + 1, code)
    code = code.astype(np.int64)
    code = np.where(mag == 0, 0, code)
    mask = (1 << n) - 1
    code = np.where(x < 0, (-code) & mask, code)
    code = np.where(~np.isfinite(x), 1 << (n - 1), code)
    return code.astype(np.uint16 if n > 8 else np.uint8)


def decode(codes: np.ndarray, n: int, es: int) -> np.ndarray:
    """Values of posit patterns (float64, exact; NaR -> nan)."""
    return value_table(n, es)[np.asarray(codes, dtype=np.int64) & ((1 << n) - 1)]
