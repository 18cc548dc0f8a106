"""The Voyager matrix unit, functionally (docs/voyager.md, "Matrix unit").

* :func:`gemm`: a GEMM ``[P, K] x [K, N]`` as the array computes it: the reduction is cut
  into tiles of ``ic_dim`` rows, taken in the descriptor's order; inside a tile each column
  is a chain of the design's MACs over rows 0..ic_dim-1 (starting at 0); the column sum is
  added into the accumulation buffer (started at the bias) in the buffer's format. Integer
  designs are exact and wrap at their widths (order-free, so a matmul per tile); MXINT8
  sums ``block / ic_dim`` passes in int32, then dequantises to bf16.
* :func:`conv2d`: direct convolution (NHWC, weights ``[fy][fx][c][oc]``) as a GEMM whose
  reduction tiles are (tap, channel block) pairs in loop order; channels are zero-padded
  to a multiple of ``ic_dim`` per tap (a row with weight 0 adds an exact 0).
* :class:`SystolicArray`: a cycle-stepped ``rows x cols`` weight-stationary array with
  ``weight_regs`` weight registers per PE loaded over a column shift chain (one row per
  cycle) while earlier tiles compute; it gives the same sums as :func:`gemm` and the cycle
  of every output, so the cycle model's tile rule can be checked against it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .dtypes import Design, MXInt8, mx_dot_blocks, round_to, wrap_int
from .errors import VoyagerError


def _pad_rows(a: np.ndarray, mult: int, axis: int) -> np.ndarray:
    n = a.shape[axis]
    extra = (-n) % mult
    if not extra:
        return a
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, extra)
    return np.pad(a, pad)


def column_chain(design: Design, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """One array pass: ``x`` [P, R] against ``w`` [R, N]; column sums as the PE chain makes
    them (PE r: ``psum = mac(x_r, w_rc, psum)``, top psum 0)."""
    if design.int_accum:
        return wrap_int(x.astype(np.int64) @ w.astype(np.int64), design.accum_bits())
    psum = np.zeros((x.shape[0], w.shape[1]))
    for r in range(x.shape[1]):
        psum = design.mac(psum, x[:, r:r + 1], w[r:r + 1, :])
    return psum


def gemm(design: Design, x: np.ndarray, w: np.ndarray, ic_dim: int, *, bias: np.ndarray | None = None,
         order: Sequence[int] | None = None, x_scale: np.ndarray | None = None,
         w_scale: np.ndarray | None = None, where: str = "gemm") -> np.ndarray:
    """Accumulation-buffer contents of ``x @ w`` (float64 values of the buffer's format).

    ``x``/``w``: operand *values* (integer codes for int designs); ``order``: the order of the
    reduction tiles (default ascending); ``bias`` in the buffer's format, added first. For
    MXINT8, ``x_scale`` [P, K/B] and ``w_scale`` [K/B, N] are the E8M0 codes."""
    if ic_dim < 1:
        raise VoyagerError(where, f"array rows (ic_dim) must be >= 1, got {ic_dim}")
    p, k = x.shape
    n = w.shape[1]
    if w.shape[0] != k:
        raise VoyagerError(where, f"reduction sizes differ: input {k}, weight {w.shape[0]}")
    if isinstance(design.operand, MXInt8):
        b = design.operand.block
        if b % ic_dim:
            raise VoyagerError(where, f"MX block size {b} is not a multiple of the array rows {ic_dim}")
        if k % b:
            raise VoyagerError(where, f"MX block size {b} does not divide the reduction dimension {k}")
        acc = np.zeros((p, n)) if bias is None else np.broadcast_to(np.asarray(bias, np.float64), (p, n))
        nb = k // b
        blocks = list(range(nb)) if order is None else list(order)
        out = np.array(acc, dtype=np.float64)
        for blk in blocks:
            sl = slice(blk * b, (blk + 1) * b)
            out = mx_dot_blocks(x[:, sl], x_scale[:, blk:blk + 1], w[sl], w_scale[blk:blk + 1], b, out)
        return out
    xp = _pad_rows(x, ic_dim, 1)
    wp = _pad_rows(w, ic_dim, 0)
    n_tiles = xp.shape[1] // ic_dim
    tiles = list(range(n_tiles)) if order is None else list(order)
    if sorted(tiles) != list(range(n_tiles)):
        raise VoyagerError(where, f"reduction order {tiles} is not a permutation of {n_tiles} tiles")
    if design.int_accum:
        acc = np.zeros((p, n), np.int64) if bias is None else np.broadcast_to(
            np.asarray(bias, np.int64), (p, n)).copy()
        for t in tiles:
            sl = slice(t * ic_dim, (t + 1) * ic_dim)
            acc = design.accumulate(acc, column_chain(design, xp[:, sl], wp[sl]))
        return acc
    acc = np.zeros((p, n)) if bias is None else np.broadcast_to(
        round_to(design.accum_buffer, bias), (p, n)).astype(np.float64)
    for t in tiles:
        sl = slice(t * ic_dim, (t + 1) * ic_dim)
        acc = design.accumulate(acc, column_chain(design, xp[:, sl], wp[sl]))
    return acc


def im2col(x: np.ndarray, fy: int, fx: int, stride: int, pad: int, c_mult: int = 1) -> np.ndarray:
    """NHWC ``x`` [H, W, C] -> [Ho*Wo, fy*fx*Cp]: rows of the input address generator, taps
    outer, channels (zero-padded to a multiple of ``c_mult``) inner; zeros outside the image."""
    h, w_, c = x.shape
    xp = np.pad(_pad_rows(x, c_mult, 2), ((pad, pad), (pad, pad), (0, 0)))
    ho = (h + 2 * pad - fy) // stride + 1
    wo = (w_ + 2 * pad - fx) // stride + 1
    cols = [xp[dy:dy + stride * ho:stride, dx:dx + stride * wo:stride, :].reshape(ho * wo, -1)
            for dy in range(fy) for dx in range(fx)]
    return np.concatenate(cols, axis=1)


def conv2d(design: Design, x: np.ndarray, w: np.ndarray, ic_dim: int, *, stride: int = 1, pad: int = 0,
           bias: np.ndarray | None = None, channel_outer: bool = False, where: str = "conv") -> np.ndarray:
    """Direct convolution: ``x`` [H, W, C] values, ``w`` [fy, fx, C, OC]; returns the
    accumulation buffer [Ho, Wo, OC]. Reduction tiles run taps outer, channel blocks inner
    (``channel_outer`` swaps the two loops)."""
    fy, fx, c, oc = w.shape
    if x.shape[2] != c:
        raise VoyagerError(where, f"input has {x.shape[2]} channels, weights expect {c}")
    ho = (x.shape[0] + 2 * pad - fy) // stride + 1
    wo = (x.shape[1] + 2 * pad - fx) // stride + 1
    cols = im2col(x, fy, fx, stride, pad, ic_dim)
    wm = _pad_rows(w, ic_dim, 2).reshape(-1, oc)
    cb = cols.shape[1] // (fy * fx * ic_dim)
    order = None
    if channel_outer:
        order = [tap * cb + blk for blk in range(cb) for tap in range(fy * fx)]
    return gemm(design, cols, wm, ic_dim, bias=bias, order=order, where=where).reshape(ho, wo, oc)


# ----- the array, cycle by cycle -------------------------------------------------------------
@dataclass
class ArrayRun:
    """What :meth:`SystolicArray.run` produced: the column sums per tile [P, cols] and the
    cycles (first weight load starts at cycle 0; ``cycles`` = last output + 1)."""

    sums: list[np.ndarray]
    cycles: int
    load_start: list[int] = field(default_factory=list)
    stream_start: list[int] = field(default_factory=list)


class SystolicArray:
    """``rows x cols`` weight-stationary array: inputs enter row r skewed by r cycles and
    move right one PE per cycle, partial sums move down one PE per cycle, a PE adds after
    ``pe_latency`` cycles. Each PE holds ``weight_regs`` weight registers; a tile's weights
    shift in from the top over the column chain, one row per cycle, into a free register
    (a register frees when the last input of its tile has left the array)."""

    def __init__(self, design: Design, rows: int, cols: int, weight_regs: int = 3, pe_latency: int = 1):
        if rows < 1 or cols < 1:
            raise VoyagerError("matrix unit", f"array size {rows}x{cols}: both dimensions must be >= 1")
        if weight_regs < 2:
            raise VoyagerError("matrix unit", "a PE needs at least 2 weight registers to overlap loading")
        self.design, self.rows, self.cols = design, rows, cols
        self.weight_regs, self.pe_latency = weight_regs, pe_latency

    def schedule(self, n_inputs: Sequence[int]) -> tuple[list[int], list[int], int]:
        """Load and stream start cycles of each tile, and the total cycles."""
        r, c, lat = self.rows, self.cols, self.pe_latency
        load, stream, leave = [], [], []
        for j, p in enumerate(n_inputs):
            t = load[-1] + r if load else 0                         # one shift chain
            if j >= self.weight_regs:
                t = max(t, leave[j - self.weight_regs])             # its register is free
            load.append(t)
            s = max(t + r, stream[-1] + n_inputs[j - 1] if stream else 0)
            stream.append(s)
            # last input leaves the last PE (row r-1, col c-1) after its MAC
            leave.append(s + p - 1 + (r - 1) * lat + (c - 1) + lat)
        return load, stream, leave[-1] if leave else 0

    def run(self, x_tiles: Sequence[np.ndarray], w_tiles: Sequence[np.ndarray]) -> ArrayRun:
        """Stream ``x_tiles[j]`` [P_j, rows] against ``w_tiles[j]`` [rows, cols], cycle by
        cycle; returns each tile's column sums and the cycle count."""
        rows, cols, lat = self.rows, self.cols, self.pe_latency
        load, stream, total = self.schedule([len(x) for x in x_tiles])
        sums = [np.zeros((len(x), cols), dtype=np.int64 if self.design.int_accum else np.float64)
                for x in x_tiles]
        # psum[(tile, p)][col] travelling down, keyed by the cycle it reaches row r
        state: dict[tuple[int, int], np.ndarray] = {}
        events: list[tuple[int, int, int, int]] = []               # (cycle at row r, r, tile, p)
        for j, x in enumerate(x_tiles):
            for p in range(len(x)):
                for r in range(rows):
                    events.append((stream[j] + p + r * lat, r, j, p))
        events.sort()
        for cyc, r, j, p in events:
            # the weights of tile j are in place in every row by the time the input arrives
            assert cyc >= load[j] + rows
            prev = state.pop((j, p), np.zeros(cols, dtype=sums[j].dtype))
            xv = x_tiles[j][p, r]
            cur = self.design.mac(prev, xv, w_tiles[j][r])
            if r == rows - 1:
                sums[j][p] = cur
            else:
                state[(j, p)] = cur
        return ArrayRun(sums, total, load, stream)
