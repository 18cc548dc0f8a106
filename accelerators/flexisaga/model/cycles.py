"""The fast FlexiSAGA cycle model (docs/flexisaga.md, "Cycle model").

Closed-form per tile and vectorised over slices; it depends only on the array parameters,
the weights' zero pattern and N, never on values. It reproduces the step model
(:mod:`accelerators.flexisaga.model.array`) cycle for cycle: every logical step costs
``max(1, ceil(reads/P), ceil(writes/P))``, bookkeeping phases (sparse metadata, OS tile
store, zero fill of skipped output rows) ``max(1, ceil(words/P))``, plus ``mem_latency``
per tile. The step model is the reference; sweeps use this one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from accelerators.flexisaga.model.config import DATAFLOWS, FAMILY, SPARSE, ArrayConfig
from accelerators.flexisaga.model.formats import column_masks, greedy_merge


@dataclass(frozen=True)
class CycleReport:
    """Cost of one GEMM on one array with one dataflow."""

    dataflow: str
    cycles: int
    steps: int
    macs: int
    dense_macs: int
    reads: int
    writes: int
    tiles: int
    rows: int
    cols: int

    @property
    def macs_skipped(self) -> int:
        return self.dense_macs - self.macs

    @property
    def utilisation(self) -> float:
        """Dense MACs over what the grid could have done in ``cycles``."""
        return self.dense_macs / (self.rows * self.cols * self.cycles) if self.cycles else 0.0


class _Acc:
    """Running totals."""

    def __init__(self) -> None:
        self.cycles = self.steps = self.macs = self.reads = self.writes = self.tiles = 0

    def phase(self, cfg: ArrayConfig, reads: int, writes: int, times: int = 1) -> None:
        if reads or writes:
            self.cycles += times * cfg.cost(reads, writes)
            self.reads += times * reads
            self.writes += times * writes


def _cost_sum(cfg: ArrayConfig, reads: np.ndarray) -> int:
    """Sum of ``max(1, ceil(reads/P))`` over a vector of load steps."""
    return int(np.maximum(1, -(-reads // cfg.mem_ports)).sum())


def _splits(total: int, size: int) -> list[tuple[int, int]]:
    """(extent, how many) of the full and the tail tiles along one dimension."""
    full, tail = divmod(total, size)
    out = [(size, full)] if full else []
    if tail:
        out.append((tail, 1))
    return out


def estimate(dataflow: str, w: np.ndarray, n: int, cfg: ArrayConfig) -> CycleReport:
    """Cycles and traffic of ``O = W @ I`` with ``I`` having ``n`` columns."""
    if dataflow not in DATAFLOWS:
        raise ValueError(f"flexisaga: dataflow {dataflow!r} is not one of {', '.join(DATAFLOWS)}")
    nzm = np.asarray(w) != 0
    if nzm.ndim != 2 or 0 in nzm.shape or n < 1:
        raise ValueError(f"flexisaga: empty or non-matrix GEMM (W {nzm.shape}, N {n})")
    acc = _Acc()
    fam, sparse = FAMILY[dataflow], dataflow in SPARSE
    if fam == "OS":
        _os(acc, cfg, nzm, n, sparse)
    elif fam == "csOS":
        _csos(acc, cfg, nzm, n)
    elif fam == "WS":
        _ws(acc, cfg, nzm, n, sparse)
    else:
        _is(acc, cfg, nzm, n, sparse)
    m, k = nzm.shape
    return CycleReport(dataflow, acc.cycles, acc.steps, acc.macs, m * k * n, acc.reads, acc.writes,
                       acc.tiles, cfg.rows, cfg.cols)


def _meta(cfg: ArrayConfig, bits: int) -> int:
    return math.ceil(bits / cfg.word_bits)


def _tile_end(acc: _Acc, cfg: ArrayConfig, times: int) -> None:
    acc.cycles += times * cfg.mem_latency
    acc.tiles += times


def _os(acc: _Acc, cfg: ArrayConfig, nzm: np.ndarray, n: int, sparse: bool) -> None:
    m, k = nzm.shape
    prop = cfg.rows + cfg.cols - 1
    for m0 in range(0, m, cfg.rows):
        rr = min(cfg.rows, m - m0)
        if sparse:
            counts = nzm[m0:m0 + rr].sum(axis=0)
            wr = counts[counts > 0]
            meta = _meta(cfg, k) + _meta(cfg, rr * wr.size)
        else:
            wr = np.full(k, rr)
            meta = 0
        for cc, times in _splits(n, cfg.cols):
            acc.phase(cfg, meta, 0, times)
            acc.cycles += times * (_cost_sum(cfg, wr + cc) + wr.size * prop)
            acc.steps += times * wr.size * (1 + prop)
            acc.reads += times * int((wr + cc).sum())
            acc.macs += times * wr.size * rr * cc
            acc.phase(cfg, 0, rr * cc, times)
            _tile_end(acc, cfg, times)


@lru_cache(maxsize=65536)
def _passes(idx: tuple[int, ...]) -> tuple[int, ...]:
    """Depths (deepest row reached) of the csOS passes over one merged column whose slots
    name input rows ``idx`` (-1: empty slot; only which slots are equal matters, so
    callers label the columns of a group 0, 1, ... and share the cache)."""
    rr = len(idx)
    done = [False] * rr
    depths = []
    while True:
        top = next((r for r in range(rr) if not done[r] and idx[r] >= 0), None)
        if top is None:
            return tuple(depths)
        kk = idx[top]
        deepest = top
        for r in range(top, rr):
            if not done[r] and (idx[r] == kk or idx[r] < 0):
                done[r] = True
                deepest = r
        for r in range(top):  # -1 rows above the first named row
            if not done[r]:
                done[r] = True
        depths.append(deepest)


def csos_strip(strip: np.ndarray) -> tuple[list[int], list[int]]:
    """(filled slots per merged column, depth of every pass) of one R-row csOS strip."""
    rr = strip.shape[0]
    masks = column_masks(strip)
    full = (1 << rr) - 1
    vals: list[int] = []
    depths: list[int] = []
    for g in greedy_merge(masks):
        if len(g) == 1 and masks[g[0]] == full:  # one dense column: one pass to the bottom
            vals.append(rr)
            depths.append(rr - 1)
            continue
        idx = [-1] * rr
        for label, c in enumerate(g):
            m = masks[c]
            while m:
                low = m & -m
                idx[low.bit_length() - 1] = label
                m ^= low
        vals.append(rr - idx.count(-1))
        depths.extend(_passes(tuple(idx)))
    return vals, depths


def _csos(acc: _Acc, cfg: ArrayConfig, nzm: np.ndarray, n: int) -> None:
    m, _ = nzm.shape
    for m0 in range(0, m, cfg.rows):
        rr = min(cfg.rows, m - m0)
        strip = nzm[m0:m0 + rr]
        vlist, dlist = csos_strip(strip)
        idxw = _meta(cfg, rr * cfg.csb_index_bits)
        vals = np.asarray(vlist, dtype=np.int64)
        d = np.asarray(dlist, dtype=np.int64)
        nnz = int(strip.sum())
        groups = len(vlist)
        for cc, times in _splits(n, cfg.cols):
            acc.phase(cfg, 1, 0, times)
            acc.cycles += times * (_cost_sum(cfg, vals + idxw) + d.size * cfg.cost(cc) + int(d.sum()))
            acc.steps += times * (groups + int((d + 1).sum()))
            acc.reads += times * (int((vals + idxw).sum()) + d.size * cc)
            acc.macs += times * nnz * cc
            acc.phase(cfg, 0, rr * cc, times)
            _tile_end(acc, cfg, times)


def _ws(acc: _Acc, cfg: ArrayConfig, nzm: np.ndarray, n: int, sparse: bool) -> None:
    m, k = nzm.shape
    prop = cfg.rows + cfg.cols - 1
    for k0 in range(0, k, cfg.cols):
        cw = min(cfg.cols, k - k0)
        strip = nzm[:, k0:k0 + cw]
        if sparse:
            rowsnz = strip.sum(axis=1)
            kept = rowsnz[rowsnz > 0]
            acc.phase(cfg, _meta(cfg, m) + _meta(cfg, kept.size * cw), 0)
            if k0 == 0:
                acc.phase(cfg, 0, (m - kept.size) * n)
        else:
            kept = np.full(m, cw)
        if not kept.size:
            continue
        starts = np.arange(0, kept.size, cfg.rows)
        stat = np.add.reduceat(kept, starts)
        rr = np.minimum(cfg.rows, kept.size - starts)
        per = cw + (rr if k0 > 0 else 0)
        p = cfg.mem_ports
        acc.cycles += int((np.maximum(1, -(-(stat + per) // p)) + (n - 1) * np.maximum(1, -(-per // p))).sum()
                          + starts.size * n * prop)
        acc.reads += int((stat + n * per).sum())
        acc.writes += n * kept.size
        acc.steps += starts.size * n * (1 + prop)
        acc.macs += n * kept.size * cw
        _tile_end(acc, cfg, starts.size)


def _is(acc: _Acc, cfg: ArrayConfig, nzm: np.ndarray, n: int, sparse: bool) -> None:
    m, k = nzm.shape
    prop = cfg.rows + cfg.cols - 1
    for cc, times in _splits(n, cfg.cols):
        for k0 in range(0, k, cfg.rows):
            rh = min(cfg.rows, k - k0)
            strip = nzm[:, k0:k0 + rh]
            if sparse:
                rowsnz = strip.sum(axis=1)
                wr = rowsnz[rowsnz > 0]
                acc.phase(cfg, _meta(cfg, m) + _meta(cfg, wr.size * rh), 0, times)
                if k0 == 0:
                    acc.phase(cfg, 0, (m - wr.size) * cc, times)
            else:
                wr = np.full(m, rh)
            if not wr.size:
                continue
            per = wr + (cc if k0 else 0)
            first = per.copy()
            first[0] += rh * cc  # the stationary input tile loads with the first weight row
            acc.cycles += times * (_cost_sum(cfg, first) + wr.size * prop)
            acc.reads += times * int(first.sum())
            acc.writes += times * wr.size * cc
            acc.steps += times * wr.size * (1 + prop)
            acc.macs += times * wr.size * rh * cc
            _tile_end(acc, cfg, times)


def best_dataflow(w: np.ndarray, n: int, cfg: ArrayConfig,
                  dataflows: tuple[str, ...] = DATAFLOWS) -> CycleReport:
    """The fastest dataflow for one operator (ties: the earlier in ``dataflows``)."""
    reports = [estimate(df, w, n, cfg) for df in dataflows]
    return min(reports, key=lambda r: r.cycles)
