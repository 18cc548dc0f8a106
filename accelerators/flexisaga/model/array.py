"""The step-level FlexiSAGA array: the reference model (docs/flexisaga.md, "Dataflows").

An R x C grid of PEs with ``reg_count`` registers each. Registers used by the schedules:
``W`` (0) weight, ``I`` (1) input, ``P`` (2) accumulator / result, ``PIN`` (3) partial sum
arriving from the left (WS) or from above (IS). Every register carries a tag: empty, the
slice it belongs to, or stationary. A PE fires (one ALU operation per step) when all its
operands carry the current slice's tag and it has not fired for that slice yet; it then
writes into its right and lower neighbours. Neighbour writes land at the end of the step,
so data move one PE per step and the wavefront reaches PE(r, c) in step r + c + 1.

Load units sit on the left column and top row, store units on the bottom row and right
column; all their memory traffic goes through the decompression unit (:class:`DecU`),
which returns zeros marked by the sparse format without a read. The controller (one
function per dataflow family) drives loads, steps and stores and records every logical
step with its reads, writes and cycle cost.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from accelerators.flexisaga.model.config import FAMILY, SPARSE, ArrayConfig, check_gemm
from accelerators.flexisaga.model.formats import encode_bitmap, encode_csb

REG_W, REG_I, REG_P, REG_PIN = 0, 1, 2, 3
EMPTY, STATIONARY = -1, -2


@dataclass(frozen=True)
class Phase:
    """One logical step (``step=True``: load, prop, pass) or a bookkeeping phase (meta,
    store, zero fill, latency) of a run, with its DecU traffic and cycles."""

    kind: str
    tile: int
    reads: int
    writes: int
    cycles: int
    step: bool


@dataclass(frozen=True)
class Snapshot:
    """Register file contents after a logical step (``valid``: the register holds data)."""

    step: int
    kind: str
    regs: np.ndarray
    valid: np.ndarray
    temp_index: tuple[int, ...] = ()


@dataclass
class RunResult:
    """What a GEMM run on the step model produced and cost."""

    out: np.ndarray
    phases: list[Phase] = field(default_factory=list)
    trace: list[Snapshot] = field(default_factory=list)
    macs: int = 0
    dense_macs: int = 0
    tiles: int = 0

    @property
    def steps(self) -> int:
        return sum(1 for p in self.phases if p.step)

    @property
    def cycles(self) -> int:
        return sum(p.cycles for p in self.phases)

    @property
    def reads(self) -> int:
        return sum(p.reads for p in self.phases)

    @property
    def writes(self) -> int:
        return sum(p.writes for p in self.phases)


class Grid:
    """The PE registers and the firing rule of each dataflow family."""

    def __init__(self, cfg: ArrayConfig) -> None:
        self.cfg = cfg
        self.val = np.zeros((cfg.rows, cfg.cols, cfg.reg_count), dtype=cfg.dtype)
        self.tag = np.full((cfg.rows, cfg.cols, cfg.reg_count), EMPTY, dtype=np.int64)
        self.fired = np.full((cfg.rows, cfg.cols), EMPTY, dtype=np.int64)

    def reset(self) -> None:
        self.val[...] = 0
        self.tag[...] = EMPTY
        self.fired[...] = EMPTY

    def put(self, r: int, c: int, reg: int, value: object, tag: int) -> None:
        self.val[r, c, reg] = value
        self.tag[r, c, reg] = tag

    def has(self, r: int, c: int, reg: int, s: int) -> bool:
        t = self.tag[r, c, reg]
        return bool(t == s or t == STATIONARY)

    def step(self, family: str, s: int, store: Callable[[int, int, object], None]) -> int:
        """One propagation step of slice ``s``: every ready PE fires, neighbour writes land
        at the end. ``store(r, c, value)`` is the store unit of an edge PE. Returns MACs."""
        cfg, writes, macs = self.cfg, [], 0
        for r in range(cfg.rows):
            for c in range(cfg.cols):
                if self.fired[r, c] == s:
                    continue
                if family == "OS":
                    if not (self.has(r, c, REG_W, s) and self.has(r, c, REG_I, s)):
                        continue
                    self.val[r, c, REG_P] = cfg.mac(self.val[r, c, REG_P], self.val[r, c, REG_W],
                                                    self.val[r, c, REG_I])
                    macs += 1
                    writes.append((r, c + 1, REG_W, self.val[r, c, REG_W]))
                    writes.append((r + 1, c, REG_I, self.val[r, c, REG_I]))
                else:
                    # WS: partial sums flow right, inputs down; IS: partial sums down, weights right
                    moving = REG_I if family == "WS" else REG_W
                    resident = REG_W if family == "WS" else REG_I
                    if not self.has(r, c, REG_PIN, s):
                        continue
                    if self.tag[r, c, resident] != EMPTY:
                        if not self.has(r, c, moving, s):
                            continue
                        out = cfg.mac(self.val[r, c, REG_PIN], self.val[r, c, REG_W], self.val[r, c, REG_I])
                        macs += 1
                        if family == "WS":
                            writes.append((r + 1, c, REG_I, self.val[r, c, REG_I]))
                        else:
                            writes.append((r, c + 1, REG_W, self.val[r, c, REG_W]))
                    else:
                        out = self.val[r, c, REG_PIN]  # an unused PE moves the sum on
                    last = c == cfg.cols - 1 if family == "WS" else r == cfg.rows - 1
                    if last:
                        self.put(r, c, REG_P, out, s)
                        store(r, c, out)
                    elif family == "WS":
                        writes.append((r, c + 1, REG_PIN, out))
                    else:
                        writes.append((r + 1, c, REG_PIN, out))
                self.fired[r, c] = s
        for r, c, reg, v in writes:
            if r < cfg.rows and c < cfg.cols:
                self.put(r, c, reg, v, s)
        return macs


class DecU:
    """The decompression unit: counts the words that really cross the memory ports."""

    def __init__(self) -> None:
        self.reads = 0
        self.writes = 0

    def read(self, value: object) -> object:
        self.reads += 1
        return value

    def weight(self, value: object, stored: bool) -> object:
        """A weight: a stored word is read; a zero the format marks costs nothing."""
        if stored:
            self.reads += 1
            return value
        return 0

    def write(self) -> None:
        self.writes += 1

    def take(self) -> tuple[int, int]:
        r, w = self.reads, self.writes
        self.reads = self.writes = 0
        return r, w


class StepModel:
    """Runs a GEMM ``O = W @ I`` on the array step by step (the reference model)."""

    def __init__(self, cfg: ArrayConfig, trace: bool = False) -> None:
        self.cfg = cfg
        self.grid = Grid(cfg)
        self.decu = DecU()
        self.trace = trace

    # ---- bookkeeping ----
    def _phase(self, res: RunResult, kind: str, step: bool, temp: tuple[int, ...] = ()) -> None:
        r, w = self.decu.take()
        res.phases.append(Phase(kind, res.tiles, r, w, self.cfg.cost(r, w), step))
        if step and self.trace:
            res.trace.append(Snapshot(res.steps - 1, kind, self.grid.val.copy(),
                                      self.grid.tag != EMPTY, temp))

    def _words_phase(self, res: RunResult, kind: str, reads: int, writes: int) -> None:
        if reads or writes:
            self.decu.reads += reads
            self.decu.writes += writes
            self._phase(res, kind, False)

    def _tile_end(self, res: RunResult) -> None:
        if self.cfg.mem_latency:
            res.phases.append(Phase("latency", res.tiles, 0, 0, self.cfg.mem_latency, False))
        res.tiles += 1

    def run(self, dataflow: str, w: np.ndarray, i: np.ndarray) -> RunResult:
        """Execute ``dataflow`` on ``W`` (M x K) and ``I`` (K x N); returns the output and
        every step."""
        w = np.asarray(w)
        i = np.asarray(i)
        check_gemm(self.cfg, dataflow, w, i)
        dt = self.cfg.dtype
        wq, iq = w.astype(dt), i.astype(dt)
        res = RunResult(out=np.zeros((w.shape[0], i.shape[1]), dtype=dt),
                        dense_macs=w.shape[0] * w.shape[1] * i.shape[1])
        fam = FAMILY[dataflow]
        sparse = dataflow in SPARSE
        # IEEE results (0 * inf = nan, overflow to inf) are the specified behaviour
        with np.errstate(invalid="ignore", over="ignore"):
            if fam == "OS":
                self._os(res, wq, iq, sparse)
            elif fam == "csOS":
                self._csos(res, wq, iq)
            elif fam == "WS":
                self._ws(res, wq, iq, sparse)
            else:
                self._is(res, wq, iq, sparse)
        return res

    def _meta_words(self, bits: int) -> int:
        return math.ceil(bits / self.cfg.word_bits)

    def _propagate(self, res: RunResult, fam: str, s: int, store: Callable[[int, int, object], None]) -> None:
        for _ in range(self.cfg.rows + self.cfg.cols - 1):
            res.macs += self.grid.step(fam, s, store)
            self._phase(res, "prop", True)

    # ---- dOS / sOS ----
    def _os(self, res: RunResult, w: np.ndarray, i: np.ndarray, sparse: bool) -> None:
        cfg, g, d = self.cfg, self.grid, self.decu
        (m, k), n = w.shape, i.shape[1]
        for m0 in range(0, m, cfg.rows):
            rr = min(cfg.rows, m - m0)
            strip = w[m0:m0 + rr]
            if sparse:
                enc = encode_bitmap(strip, "col")
                meta = self._meta_words(enc.outer.size) + self._meta_words(enc.elements.size)
                cols = np.flatnonzero(enc.outer)
                ebits = enc.elements.reshape(cols.size, rr)
            else:
                meta = 0
                cols = np.arange(k)
                ebits = np.ones((k, rr), dtype=bool)
            for n0 in range(0, n, cfg.cols):
                cc = min(cfg.cols, n - n0)
                g.reset()
                self._words_phase(res, "meta", meta, 0)  # bit arrays, read for every output tile
                for s, kk in enumerate(cols):
                    for r in range(rr):
                        g.put(r, 0, REG_W, d.weight(strip[r, kk], bool(ebits[s, r])), s)
                    for c in range(cc):
                        g.put(0, c, REG_I, d.read(i[kk, n0 + c]), s)
                    self._phase(res, "load", True)
                    self._propagate(res, "OS", s, _no_store)
                res.out[m0:m0 + rr, n0:n0 + cc] = g.val[:rr, :cc, REG_P]
                self._words_phase(res, "store", 0, rr * cc)
                self._tile_end(res)

    # ---- csOS ----
    def _csos(self, res: RunResult, w: np.ndarray, i: np.ndarray) -> None:
        cfg, g, d = self.cfg, self.grid, self.decu
        (m, _), n = w.shape, i.shape[1]
        for m0 in range(0, m, cfg.rows):
            rr = min(cfg.rows, m - m0)
            strip = w[m0:m0 + rr]
            enc = encode_csb(strip)
            for n0 in range(0, n, cfg.cols):
                cc = min(cfg.cols, n - n0)
                g.reset()
                self._words_phase(res, "meta", 1, 0)
                for s in range(enc.merged):
                    idx = enc.col_index[:, s]
                    d.reads += self._meta_words(rr * cfg.csb_index_bits)
                    for r in range(rr):
                        v = d.weight(strip[r, idx[r]] if idx[r] >= 0 else 0, bool(idx[r] >= 0))
                        for c in range(cc):  # copied across the row in the load step
                            g.put(r, c, REG_W, v, s)
                    self._phase(res, "load", True)
                    done = [False] * rr
                    while not all(done):
                        top = next((r for r in range(rr) if not done[r] and idx[r] >= 0), None)
                        if top is None:
                            break
                        kk = int(idx[top])
                        finishing = [r for r in range(rr) if not done[r] and idx[r] in (kk, -1)]
                        temp = [-1] * cfg.rows
                        for j in range(max(finishing) + 1):
                            for c in range(cc):
                                if j == 0:
                                    g.put(0, c, REG_I, d.read(i[kk, n0 + c]), s)
                                else:  # the row above writes the input into this row
                                    g.put(j, c, REG_I, g.val[j - 1, c, REG_I], s)
                            temp[j] = kk
                            if j in finishing:
                                if idx[j] == kk:
                                    for c in range(cc):
                                        g.val[j, c, REG_P] = cfg.mac(g.val[j, c, REG_P], g.val[j, c, REG_W],
                                                                     g.val[j, c, REG_I])
                                    res.macs += cc
                                done[j] = True
                            self._phase(res, "pass", True, tuple(temp))
                res.out[m0:m0 + rr, n0:n0 + cc] = g.val[:rr, :cc, REG_P]
                self._words_phase(res, "store", 0, rr * cc)
                self._tile_end(res)

    def _strip(self, res: RunResult, strip: np.ndarray, sparse: bool) -> tuple[np.ndarray, np.ndarray]:
        """The rows of a weight strip that hold a term (all of them when dense) and its element
        bits; a sparse strip's two-stage bitmap words are read first."""
        if not sparse:
            return np.arange(strip.shape[0]), np.ones(strip.shape, dtype=bool)
        enc = encode_bitmap(strip, "row")
        self._words_phase(res, "meta", self._meta_words(enc.outer.size) + self._meta_words(enc.elements.size), 0)
        rows = np.flatnonzero(enc.outer)
        bits = np.zeros(strip.shape, dtype=bool)
        bits[rows] = enc.elements.reshape(rows.size, strip.shape[1])
        return rows, bits

    # ---- dWS / sWS ----
    def _ws(self, res: RunResult, w: np.ndarray, i: np.ndarray, sparse: bool) -> None:
        cfg, g, d = self.cfg, self.grid, self.decu
        (m, k), n = w.shape, i.shape[1]
        for k0 in range(0, k, cfg.cols):
            cw = min(cfg.cols, k - k0)
            strip = w[:, k0:k0 + cw]
            rows, bits = self._strip(res, strip, sparse)
            if sparse and k0 == 0:  # output rows with no term in this block start as +0.0
                zero = np.setdiff1d(np.arange(m), rows)
                res.out[zero, :] = 0
                self._words_phase(res, "zero", 0, zero.size * n)
            for c0 in range(0, rows.size, cfg.rows):
                chunk = rows[c0:c0 + cfg.rows]
                g.reset()
                for s in range(n):
                    if s == 0:
                        for r, mm in enumerate(chunk):
                            for c in range(cw):
                                g.put(r, c, REG_W, d.weight(strip[mm, c], bool(bits[mm, c])), STATIONARY)
                    for c in range(cw):
                        g.put(0, c, REG_I, d.read(i[k0 + c, s]), s)
                    for r, mm in enumerate(chunk):
                        g.put(r, 0, REG_PIN, d.read(res.out[mm, s]) if k0 else 0, s)
                    self._phase(res, "load", True)

                    def store(r: int, c: int, v: object, s: int = s, chunk: np.ndarray = chunk) -> None:
                        res.out[chunk[r], s] = v
                        d.write()
                    self._propagate(res, "WS", s, store)
                self._tile_end(res)

    # ---- dIS / sIS ----
    def _is(self, res: RunResult, w: np.ndarray, i: np.ndarray, sparse: bool) -> None:
        cfg, g, d = self.cfg, self.grid, self.decu
        (m, k), n = w.shape, i.shape[1]
        for n0 in range(0, n, cfg.cols):
            cc = min(cfg.cols, n - n0)
            for k0 in range(0, k, cfg.rows):
                rh = min(cfg.rows, k - k0)
                strip = w[:, k0:k0 + rh]
                rows, bits = self._strip(res, strip, sparse)
                if sparse and k0 == 0:
                    zero = np.setdiff1d(np.arange(m), rows)
                    res.out[zero, n0:n0 + cc] = 0
                    self._words_phase(res, "zero", 0, zero.size * cc)
                if not rows.size:  # nothing to multiply: the input tile is not loaded
                    continue
                g.reset()
                for r in range(rh):
                    for c in range(cc):
                        g.put(r, c, REG_I, d.read(i[k0 + r, n0 + c]), STATIONARY)
                for s, mm in enumerate(rows):
                    for r in range(rh):
                        g.put(r, 0, REG_W, d.weight(strip[mm, r], bool(bits[mm, r])), s)
                    for c in range(cc):
                        g.put(0, c, REG_PIN, d.read(res.out[mm, n0 + c]) if k0 else 0, s)
                    self._phase(res, "load", True)

                    def store(r: int, c: int, v: object, mm: int = int(mm)) -> None:
                        if c < cc:
                            res.out[mm, n0 + c] = v
                            d.write()
                    self._propagate(res, "IS", s, store)
                self._tile_end(res)


def _no_store(r: int, c: int, v: object) -> None:
    """OS keeps its sums in the PEs until the tile's store phase."""


def run_gemm(dataflow: str, w: np.ndarray, i: np.ndarray, cfg: ArrayConfig | None = None,
             trace: bool = False) -> RunResult:
    """Convenience: run one GEMM on a fresh step model."""
    return StepModel(cfg or ArrayConfig(), trace=trace).run(dataflow, w, i)
