"""The Voyager depthwise-convolution (DWC) extension, cycle by cycle (docs/voyager.md, "DWC
extension").

The datapath of the spec: an input fetcher, input line buffers, ``trees`` MAC trees each
reducing one filter (one channel) of the native ``kernel x kernel`` size, and a weight
fetcher. A layer runs as *passes* (one per native-size slice of a larger filter; a smaller
filter is zero-padded to the native size) times *channel groups* of ``trees`` channels:

* the input fetcher streams the pixels of the input rectangle the pass needs, raster order,
  ``trees`` channels per pixel, one pixel every ``fetch_cycles`` cycles, into a line buffer
  of ``line_rows`` image rows; it waits while the row it would overwrite is still needed;
  padding zeros are made by the window reader, not fetched;
* one output pixel issues per cycle, in raster order, once the last pixel of its window has
  arrived (in an earlier cycle); every tree multiplies its ``kernel^2`` pairs exactly and
  reduces them in a binary adder tree (pairs of neighbours, an odd last element passes up),
  integers exactly (wrapping at the accumulator width), floats rounded to the accumulator
  format after every adder; the result leaves ``tree_latency`` cycles later;
* the weights of the first (pass, group) load before it starts; later groups' weights are
  prefetched while the previous group computes (two weight registers per tree);
* the partial results of the passes are summed in the vector unit in pass order: integers
  exactly in its int32 accumulator, floats in ``vector`` format (one rounding per add).

:class:`DwcUnit.run` steps this cycle by cycle and returns the accumulator and the cycle
count; :func:`dwc_cycles` is the closed-form count the performance model uses.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dtypes import Design, round_sum, wrap_int
from .errors import VoyagerError


def n_passes(f: int, kernel: int) -> int:
    """Native-size slices of an ``f x f`` filter (row slices times column slices)."""
    return (-(-f // kernel)) ** 2


def tree_latency(kernel: int) -> int:
    """Multiplier stage plus the adder-tree levels of ``kernel^2`` products."""
    return 1 + max(1, (kernel * kernel - 1).bit_length())


@dataclass(frozen=True)
class PassGeometry:
    """What one pass reads: real input rows ``r0..r1`` and columns ``c0..c1`` (inclusive)
    and the output window it computes (``ho x wo`` at ``stride``)."""

    dy: int
    dx: int
    r0: int
    r1: int
    c0: int
    c1: int

    @property
    def rows(self) -> int:
        return max(0, self.r1 - self.r0 + 1)

    @property
    def cols(self) -> int:
        return max(0, self.c1 - self.c0 + 1)


def geometry(h: int, w: int, f: int, stride: int, pad: int, kernel: int) -> tuple[int, int, list[PassGeometry]]:
    """Output size and the passes of a depthwise conv on a ``kernel``-native unit."""
    ho = (h + 2 * pad - f) // stride + 1
    wo = (w + 2 * pad - f) // stride + 1
    out = []
    slices = -(-f // kernel)
    for a in range(slices):
        for b in range(slices):
            dy, dx = a * kernel - pad, b * kernel - pad        # window origin of output (0, 0)
            ky, kx = min(kernel, f - a * kernel), min(kernel, f - b * kernel)
            out.append(PassGeometry(dy, dx, max(0, dy), min(h - 1, (ho - 1) * stride + dy + ky - 1),
                                    max(0, dx), min(w - 1, (wo - 1) * stride + dx + kx - 1)))
    return ho, wo, out


@dataclass
class DwcRun:
    """The accumulator [Ho, Wo, C] (integer codes or values of the accumulator format,
    before bias and post-ops), the stepped cycle count and the per-(pass, group) cycles."""

    acc: np.ndarray
    cycles: int
    group_cycles: list[int]


class DwcUnit:
    """``trees`` MAC trees of native size ``kernel``; a line buffer of ``line_rows`` rows
    (0: ``kernel + stride``); ``fetch_cycles`` cycles per fetched pixel of ``trees`` channels;
    ``weight_load`` cycles to load one group's weights; ``vector``: the format the vector unit
    sums float slices in (default: the design's vector format)."""

    def __init__(self, design: Design, trees: int, kernel: int = 3, *, line_rows: int = 0, fetch_cycles: int = 1,
                 weight_load: int = 0, vector: str = ""):
        if trees < 1 or kernel < 1:
            raise VoyagerError("dwc", f"{trees} MAC trees of native size {kernel}: both must be >= 1")
        if design.operand.name.startswith("mxint8"):
            raise VoyagerError("dwc", "the DWC extension has no microscaling path (MXINT8)")
        self.design, self.trees, self.kernel = design, trees, kernel
        self.line_rows, self.fetch_cycles, self.weight_load = line_rows, fetch_cycles, weight_load
        self.vector = vector or design.vector

    def tree(self, xs: np.ndarray, ws: np.ndarray) -> np.ndarray:
        """One issue: ``xs``, ``ws`` [kernel^2, trees] -> [trees], the adder tree's result."""
        d = self.design
        if d.int_accum:
            level = [np.asarray(x, np.int64) * np.asarray(wt, np.int64) for x, wt in zip(xs, ws)]
            while len(level) > 1:
                nxt = [wrap_int(level[i] + level[i + 1], d.accum_bits()) for i in range(0, len(level) - 1, 2)]
                level = nxt + ([level[-1]] if len(level) % 2 else [])
            return wrap_int(level[0], d.accum_bits())
        level = [np.asarray(x, np.float64) * np.asarray(wt, np.float64) for x, wt in zip(xs, ws)]
        if len(level) == 1:
            return round_sum(d.accum, level[0], np.zeros_like(level[0]))
        while len(level) > 1:
            nxt = [round_sum(d.accum, level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        return level[0]

    def run(self, x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> DwcRun:
        """Depthwise conv of ``x`` [H, W, C] (operand values) with ``w`` [F, F, C], stepped."""
        h, wd, c = x.shape
        f = w.shape[0]
        if w.shape != (f, f, c):
            raise VoyagerError("dwc", f"weights {w.shape} do not match a {f}x{f} filter over {c} channels")
        if stride < 1 or h + 2 * pad < f or wd + 2 * pad < f:
            raise VoyagerError("dwc", f"a {f}x{f} window at stride {stride} does not fit the padded input")
        kn, t = self.kernel, self.trees
        ho, wo, passes = geometry(h, wd, f, stride, pad, kn)
        cap = self.line_rows or kn + stride
        # each slice as a native-size filter (zero rows/columns beyond the real filter)
        wfull = np.zeros((-(-f // kn) * kn, -(-f // kn) * kn, c), dtype=w.dtype)
        wfull[:f, :f] = w
        int_acc = self.design.int_accum
        out = np.zeros((ho, wo, c), np.int64 if int_acc else np.float64)
        cycles, per_group = self.weight_load, []
        for pi, g in enumerate(passes):
            sl = -(-f // kn)
            a, b = divmod(pi, sl)
            part = np.zeros((ho, wo, c), out.dtype)
            for c0 in range(0, c, t):
                ch = slice(c0, min(c, c0 + t))
                wt = wfull[a * kn:(a + 1) * kn, b * kn:(b + 1) * kn, ch].reshape(kn * kn, -1)
                n = self._group(x[:, :, ch], wt, g, stride, cap, ho, wo, part[:, :, ch])
                per_group.append(n)
                cycles += n
            out = wrap_int(out + part, 32) if int_acc else (part if pi == 0 else round_sum(self.vector, out, part))
        return DwcRun(out, cycles, per_group)

    def _group(self, x: np.ndarray, wt: np.ndarray, g: PassGeometry, stride: int, cap: int, ho: int, wo: int,
               out: np.ndarray) -> int:
        """Step one (pass, channel group); write its outputs into ``out``; return its cycles."""
        kn = self.kernel
        h, wd, tc = x.shape
        lines: dict[int, np.ndarray] = {}
        arrived = -np.ones((h, wd), np.int64)          # cycle each pixel entered the line buffer
        fetch = [(r, col) for r in range(g.r0, g.r1 + 1) for col in range(g.c0, g.c1 + 1)]
        fi, next_fetch = 0, 0
        oy = ox = 0
        last_issue = -1
        cyc = 0
        while oy < ho:
            first_needed = oy * stride + g.dy                     # oldest row the current output row reads
            # fetcher: one pixel every fetch_cycles, unless its line would evict a needed row
            if fi < len(fetch) and cyc >= next_fetch:
                r, col = fetch[fi]
                if r - max(first_needed, g.r0) < cap:
                    if r not in lines:
                        for old in [q for q in lines if q < r - cap + 1]:
                            del lines[old]
                        lines[r] = np.zeros((wd, tc), x.dtype)
                    lines[r][col] = x[r, col]
                    arrived[r, col] = cyc
                    fi += 1
                    next_fetch = cyc + self.fetch_cycles
            # issue: the window's last real pixel arrived in an earlier cycle
            ry = min(g.r1, oy * stride + g.dy + kn - 1)
            rx = min(g.c1, ox * stride + g.dx + kn - 1)
            ready = ry < g.r0 or rx < g.c0 or 0 <= arrived[ry, rx] < cyc
            if ready:
                win = np.zeros((kn, kn, tc), x.dtype)
                for i in range(kn):
                    r = oy * stride + g.dy + i
                    for j in range(kn):
                        col = ox * stride + g.dx + j
                        if g.r0 <= r <= g.r1 and g.c0 <= col <= g.c1:
                            win[i, j] = lines[r][col]
                out[oy, ox] = self.tree(win.reshape(kn * kn, tc), wt)
                last_issue = cyc
                ox += 1
                if ox == wo:
                    ox, oy = 0, oy + 1
            cyc += 1
        return last_issue + 1 + tree_latency(kn)


def dwc_cycles(h: int, w: int, c: int, f: int, stride: int, pad: int, *, trees: int, kernel: int = 3,
               fetch_cycles: int = 1, weight_load: int = 0) -> int:
    """The datapath's cycles when the line buffer never makes the fetcher wait (true for the
    default ``kernel + stride`` rows): per (pass, group), output ``i`` (raster order) issues
    at ``t_i = max(t_{i-1} + 1, need_i)``, ``need_i`` = the cycle after its window's last
    pixel arrives (pixel ``n`` of the pass's rectangle arrives at ``n * fetch_cycles``);
    i.e. ``t_i = i + max_{j<=i}(need_j - j)``; the group ends ``tree_latency`` after the last."""
    ho, wo, passes = geometry(h, w, f, stride, pad, kernel)
    groups = -(-c // trees)
    total = weight_load
    oy = np.repeat(np.arange(ho), wo)
    ox = np.tile(np.arange(wo), ho)
    idx = np.arange(ho * wo)
    for g in passes:
        ry = np.minimum(g.r1, oy * stride + g.dy + kernel - 1)
        rx = np.minimum(g.c1, ox * stride + g.dx + kernel - 1)
        pad_only = (ry < g.r0) | (rx < g.c0)
        need = np.where(pad_only, 0, ((ry - g.r0) * g.cols + (rx - g.c0)) * fetch_cycles + 1)
        t_last = int(idx[-1] + np.max(need - idx))
        total += groups * (t_last + 1 + tree_latency(kernel))
    return int(total)
