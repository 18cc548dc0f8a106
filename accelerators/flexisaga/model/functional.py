"""FlexiSAGA's functional model, vectorised: the same values as the step model
(:mod:`accelerators.flexisaga.model.array`) bit for bit, at numpy speed (docs/flexisaga.md,
"Functional model").

Each output accumulates, from +0.0 (or 0), one float32 multiply and one float32 add per
term (two roundings), or wraps to ``word_bits`` in integer mode. The terms and their order:

* dOS, dWS, dIS: every k, ascending (WS/IS chain K blocks through memory: same order);
* sOS: per R-row strip, the k of its non-zero columns, ascending, zeros inside them
  multiplied (the DecU's zeros);
* sWS, sIS: per K block (C resp. R wide), the rows of W non-zero in that block take every
  k of the block (zeros multiplied); the other rows skip the block;
* csOS: per R-row strip, the merged columns in order; each row adds the one term of its
  slot, a -1 slot adds nothing.
"""
from __future__ import annotations

import numpy as np

from accelerators.flexisaga.model.config import FAMILY, ArrayConfig, check_gemm
from accelerators.flexisaga.model.formats import encode_csb


def _add_term(acc: np.ndarray, w: np.ndarray, i: np.ndarray, cfg: ArrayConfig) -> np.ndarray:
    """``acc + w[:, None] * i`` (``i`` one row for all, or one row per row of ``acc``)
    with the PEs' rounding or wrap."""
    if cfg.pe_dtype == "fp32":
        return acc + w[:, None].astype(np.float32) * i.astype(np.float32)
    half, mod = 1 << (cfg.word_bits - 1), 1 << cfg.word_bits
    prod = (w[:, None].astype(np.int64) * i.astype(np.int64) + half) % mod - half
    return (acc + prod + half) % mod - half


def gemm(dataflow: str, w: np.ndarray, i: np.ndarray, cfg: ArrayConfig) -> np.ndarray:
    """``O = W @ I`` as the array computes it with ``dataflow``."""
    w = np.asarray(w)
    i = np.asarray(i)
    check_gemm(cfg, dataflow, w, i)
    dt = cfg.dtype
    if cfg.pe_dtype == "int":
        w = np.array([[cfg.wrap(x) for x in row] for row in w.astype(np.int64)], dtype=np.int64)
        i = np.array([[cfg.wrap(x) for x in row] for row in i.astype(np.int64)], dtype=np.int64)
    w, i = w.astype(dt), i.astype(dt)
    m, k = w.shape
    out = np.zeros((m, i.shape[1]), dtype=dt)
    fam = FAMILY[dataflow]
    with np.errstate(invalid="ignore", over="ignore"):
        if dataflow in ("dOS", "dWS", "dIS"):
            for kk in range(k):
                out = _add_term(out, w[:, kk], i[kk][None, :], cfg)
        elif dataflow == "sOS":
            for m0 in range(0, m, cfg.rows):
                sl = slice(m0, m0 + cfg.rows)
                acc = out[sl]
                for kk in np.flatnonzero((w[sl] != 0).any(axis=0)):
                    acc = _add_term(acc, w[sl, kk], i[kk][None, :], cfg)
                out[sl] = acc
        elif fam in ("WS", "IS"):
            step = cfg.cols if fam == "WS" else cfg.rows
            for k0 in range(0, k, step):
                rows = np.flatnonzero((w[:, k0:k0 + step] != 0).any(axis=1))
                acc = out[rows]
                for kk in range(k0, min(k, k0 + step)):
                    acc = _add_term(acc, w[rows, kk], i[kk][None, :], cfg)
                out[rows] = acc
        else:  # csOS
            for m0 in range(0, m, cfg.rows):
                strip = w[m0:m0 + cfg.rows]
                enc = encode_csb(strip)
                acc = out[m0:m0 + strip.shape[0]]
                for g in range(enc.merged):
                    idx = enc.col_index[:, g]
                    r = np.flatnonzero(idx >= 0)
                    acc[r] = _add_term(acc[r], strip[r, idx[r]], i[idx[r]], cfg)
                out[m0:m0 + strip.shape[0]] = acc
    return out
