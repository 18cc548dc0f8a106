"""A numpy reference of Tensil's fixed-point arithmetic, written apart from the model's
(:mod:`components.tensil.fixed`) so that each checks the other: rounding by floor
division instead of bit tests."""
from __future__ import annotations

from typing import Any

import numpy as np


def rne_div(t: Any, frac: int) -> Any:
    """``t / 2^frac`` rounded to nearest, ties to even (int64)."""
    t = np.asarray(t, dtype=np.int64)
    q, r = np.divmod(t, np.int64(1) << frac)
    half = 1 << (frac - 1)
    return q + ((r > half) | ((r == half) & (q % 2 == 1)))


def sat(x: Any, width: int) -> Any:
    return np.clip(x, -(1 << (width - 1)), (1 << (width - 1)) - 1)


def lane_chain(x: Any, w: Any, b: Any, width: int, frac: int) -> Any:
    """One array pass: rows ``x`` (M, N) through weights ``w`` (out N, in N) from bias
    ``b``: p_-1 = b[r], p_j = sat(rne(x[j] * w[r][j] + p_{j-1} * 2^F)), input lanes in order."""
    x = np.asarray(x, dtype=np.int64)
    p = np.broadcast_to(np.asarray(b, dtype=np.int64), (x.shape[0], len(b))).copy()
    for j in range(x.shape[1]):
        p = sat(rne_div(x[:, j:j + 1] * np.asarray(w, dtype=np.int64)[None, :, j] + (p << frac), frac), width)
    return p


def dense(x: Any, w: Any, b: Any, n: int, width: int, frac: int) -> Any:
    """``x`` (M, K) times ``w`` (O, K) plus ``b`` (O) as the compiler schedules it: K in
    blocks of n (zero-padded), bias on the last block, blocks added with saturation."""
    x, w, b = (np.asarray(a, dtype=np.int64) for a in (x, w, b))
    M, K = x.shape
    n_out = w.shape[0]
    kb, ob = -(-K // n), -(-n_out // n)
    xp = np.zeros((M, kb * n), dtype=np.int64)
    xp[:, :K] = x
    wp = np.zeros((ob * n, kb * n), dtype=np.int64)
    wp[:n_out, :K] = w
    bp = np.zeros(ob * n, dtype=np.int64)
    bp[:n_out] = b
    out = np.zeros((M, ob * n), dtype=np.int64)
    for o in range(ob):
        acc = None
        for k in range(kb):
            bias = bp[o * n:(o + 1) * n] if k == kb - 1 else np.zeros(n, dtype=np.int64)
            part = lane_chain(xp[:, k * n:(k + 1) * n], wp[o * n:(o + 1) * n, k * n:(k + 1) * n],
                              bias, width, frac)
            acc = part if acc is None else sat(acc + part, width)
        out[:, o * n:(o + 1) * n] = acc
    return out[:, :n_out]
