"""The Voyager performance model and per-layer schedule search (docs/voyager.md,
"Performance model").

For a matrix operator the search enumerates L2 tilings (output rows ``oy``, output columns
``ox``, input channels ``c``, output channels ``n``) and the two loop orders the address
generators support (output pixels outer or output channels outer; the reduction is always
innermost so partial sums stay in the accumulation buffer), keeps the tilings the buffers
hold, and prices each with the spec's rule:

* an array tile (``ic_dim`` x ``oc_dim`` weights, ``P`` streamed vectors) costs
  ``max(P, ic_dim)`` (weight loading overlaps compute); an L2 tile costs that per array tile
  plus one fill/drain ``ic_dim + oc_dim + pe_latency``;
* an L2 tile's memory time is its DRAM bytes / ``mem_bytes_per_cycle`` (a tile that stays
  on chip across the inner loop is not fetched again; traffic spread evenly over tiles);
* total = first tile's load + sum over tiles of ``max(compute, memory)``; without a
  double-buffered accumulation buffer the vector unit's time of an output tile joins the
  max of the tile that completes it; with one, the vector unit works beside the array
  (total at least the vector unit's own time).

Objectives (``objective``): ``perf`` the fastest schedule; ``energy`` the schedule with the
fewest weighted accesses (Interstellar-style: DRAM, buffer, MAC energies), reported with
its cycles; ``coarse`` no search (largest fitting tiles, pixels outer) and total =
``max(sum compute, sum memory)``.

Vector operators run one ``lanes``-wide vector per cycle plus the pipeline depth, bounded
by their fetch bandwidth; softmax and layer norm take three passes.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from .compiler import FusedOp, fuse
from .config import VoyagerParams
from .dtypes import MXInt8, parse_dtype
from .dwc import dwc_cycles
from .errors import VoyagerError
from .zoo import Layer

#: energy per access (pJ): DRAM byte, buffer byte, MAC (the energy objective's weights)
E_DRAM, E_SRAM, E_MAC = 100.0, 3.0, 0.5


@dataclass(frozen=True)
class LayerPerf:
    """One operator's schedule and figures (``ideal``/``cycles`` in accelerator cycles)."""

    name: str
    unit: str
    macs: int
    ideal: int
    cycles: int
    compute: int
    memory: int
    dram_bytes: int
    energy_pj: float
    tile: tuple[int, int, int, int] = (0, 0, 0, 0)
    order: str = ""
    l2_tiles: int = 0
    post: tuple[str, ...] = ()
    #: vector-unit cycles of the operator's output (post-ops)
    vector: int = 0

    @property
    def utilisation(self) -> float:
        return self.ideal / self.cycles if self.cycles else 0.0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tile"] = list(self.tile)
        d["post"] = list(self.post)
        d["utilisation"] = self.utilisation
        return d


def elem_bytes(p: VoyagerParams) -> float:
    dt = parse_dtype(p.dtype, "dtype")
    b = dt.bits / 8
    return b + 1 / dt.block if isinstance(dt, MXInt8) else b


def _cands(full: int, unit: int) -> np.ndarray:
    """Tile sizes along one dimension: ``unit * 2^i`` below ``full``, and ``full``."""
    out = {full}
    t = unit
    while t < full:
        out.add(t)
        t *= 2
    return np.array(sorted(out), dtype=np.int64)


def min_buffers(ly: Layer, p: VoyagerParams) -> dict[str, int]:
    """The smallest buffer depths that hold the smallest tile of matrix layer ``ly``: one
    output pixel, one filter tap, one block of input and of output channels."""
    win = ly.f * ly.f if ly.kind == "conv" else 1
    return {"input_buffer_rows": win, "weight_buffer_rows": p.ic_dim, "accum_buffer_rows": 1}


def matrix_perf(op: FusedOp, p: VoyagerParams, force: tuple[int, int, int, int] = (0, 0, 0, 0)) -> LayerPerf:
    """Schedule matrix operator ``op``; ``force`` (oy, ox, c, n) pins tile sizes (0: free)."""
    ly = op.layer
    ic, oc = p.ic_dim, p.oc_dim
    eb = elem_bytes(p)
    if ly.kind == "conv":
        ho, wo = ly.out_hw
        f, s = ly.f, ly.stride
    else:
        ho, wo, f, s = ly.m, 1, 1, 1
    taps = f * f
    C, N = ly.c, ly.k
    oy, ox, ct, nt = (np.array([min(int(want), full)]) if want else _cands(full, unit)
                      for want, full, unit in zip(force, (ho, wo, C, N), (1, 1, ic, oc)))
    ft = np.array(sorted({1, f, taps}), dtype=np.int64)       # filter taps per tile: one, a row, all
    OY, OX, CT, NT, FT, ORD = (a.reshape(-1) for a in np.meshgrid(oy, ox, ct, nt, ft, np.array([0, 1]),
                                                                  indexing="ij"))
    cb = -(-CT // ic)
    nb = -(-NT // oc)
    in_rows = ((OY - 1) * s + f) * ((OX - 1) * s + f) * cb
    w_rows = FT * cb * ic * nb
    acc_rows = OY * OX * nb
    fits = (in_rows <= p.input_buffer_rows) & (w_rows <= p.weight_buffer_rows) & (acc_rows <= p.accum_buffer_rows)
    if not fits.any():
        need = min_buffers(ly, p)
        short = [f"{k} >= {v} (have {getattr(p, k)})" for k, v in need.items() if getattr(p, k) < v]
        raise VoyagerError(f"layer {ly.name}", "the buffers are too small for any tile; the smallest tile needs "
                           + (", ".join(short) or ", ".join(f"{k} >= {v}" for k, v in need.items())))
    OY, OX, CT, NT, FT, ORD, cb, nb = (a[fits] for a in (OY, OX, CT, NT, FT, ORD, cb, nb))
    n_y, n_x, n_c, n_n, n_f = -(-ho // OY), -(-wo // OX), -(-C // CT), -(-N // NT), taps // FT
    n_p = n_y * n_x
    n_r = n_c * n_f                                         # reduction tiles (channels x taps)
    tiles = n_p * n_r * n_n
    # compute: sum over tiles of array tiles x max(P, ic) (+ fill per tile); separable per dimension
    last_y, last_x = ho - (n_y - 1) * OY, wo - (n_x - 1) * OX
    sum_pmax = ((n_y - 1) * (n_x - 1) * np.maximum(OY * OX, ic) + (n_y - 1) * np.maximum(OY * last_x, ic)
                + (n_x - 1) * np.maximum(last_y * OX, ic) + np.maximum(last_y * last_x, ic))
    sum_cb = (n_c - 1) * cb + -(-(C - (n_c - 1) * CT) // ic)
    sum_nb = (n_n - 1) * nb + -(-(N - (n_n - 1) * NT) // oc)
    fill = ic + oc + p.pe_latency
    compute = taps * sum_cb * sum_nb * sum_pmax + fill * tiles
    # traffic: an operand tile that stays on chip across the inner loop is fetched once
    in_tile = ((OY - 1) * s + f) * ((OX - 1) * s + f) * CT * eb
    w_tile = FT * CT * NT * eb
    in_loads = np.where(ORD == 0, np.where(n_r == 1, n_p, tiles), np.where(n_p * n_r == 1, 1, tiles))
    w_loads = np.where(ORD == 0, np.where(n_n * n_r == 1, 1, tiles), np.where(n_r == 1, n_n, tiles))
    out_b = ho * wo * N * eb * (2 if "add" in op.post else 1)          # residual: skip tensor fetched
    dram = in_loads * in_tile + w_loads * w_tile + out_b
    mem = dram / p.mem_bytes_per_cycle
    vec = ho * wo * N / p.lanes + n_p * n_n * p.vector_pipeline_depth
    t_c, t_m = compute / tiles, mem / tiles
    first = (in_tile + w_tile) / p.mem_bytes_per_cycle
    out_tiles = n_p * n_n
    if p.double_buffered_accum:
        # the vector unit drains one half while the array fills the other
        body = np.maximum(tiles * np.maximum(t_c, t_m), vec)
    else:
        t_v = vec / out_tiles
        body = out_tiles * np.maximum(np.maximum(t_c, t_m), t_v) + (tiles - out_tiles) * np.maximum(t_c, t_m)
    cycles = np.ceil(first + body)
    macs = ly.macs // ly.batch
    buf_bytes = (taps * sum_cb * sum_nb * sum_pmax * ic + taps * sum_cb * sum_nb * ic * oc) * eb
    energy = dram * E_DRAM + buf_bytes * E_SRAM + macs * E_MAC
    if p.objective == "coarse":
        # no search: the largest tile that fits, output pixels outer
        i = int(np.lexsort((-OX, -OY, -CT, -NT, -FT, ORD))[0])
        cycles = np.ceil(np.maximum(compute, mem) + (0 if p.double_buffered_accum else vec))
    elif p.objective == "energy":
        i = int(np.lexsort((cycles, energy))[0])
    else:
        i = int(np.lexsort((energy, cycles))[0])
    b = ly.batch
    return LayerPerf(ly.name, "matrix", ly.macs, int(-(-ly.macs // (ic * oc))), int(cycles[i]) * b,
                     int(compute[i]) * b, int(np.ceil(mem[i])) * b, int(dram[i]) * b, float(energy[i]) * b,
                     (int(OY[i]), int(OX[i]), int(CT[i]), int(NT[i])), ("pixels-outer", "channels-outer")[ORD[i]],
                     int(tiles[i]) * b, op.post, int(np.ceil(vec[i])) * b)


def dwc_fetch(p: VoyagerParams) -> tuple[int, int]:
    """DWC extension: cycles per fetched pixel (``trees`` channels; at least one, more when
    the memory bandwidth is narrower) and cycles to load one group's weights."""
    eb = elem_bytes(p)
    t = p.trees
    return (max(1, int(np.ceil(t * eb / p.mem_bytes_per_cycle))),
            int(np.ceil(p.dwc_kernel ** 2 * t * eb / p.mem_bytes_per_cycle)))


def dwc_compute(ly: Layer, p: VoyagerParams) -> int:
    """Cycles of depthwise layer ``ly`` on the DWC extension of ``p`` (:func:`dwc.dwc_cycles`)."""
    fc, wl = dwc_fetch(p)
    return dwc_cycles(ly.h, ly.w, ly.c, ly.f, ly.stride, ly.pad, trees=p.trees, kernel=p.dwc_kernel,
                      fetch_cycles=fc, weight_load=wl)


def vector_perf(op: FusedOp, p: VoyagerParams) -> LayerPerf:
    ly = op.layer
    eb = elem_bytes(p)
    v = p.lanes
    if ly.kind in ("conv", "gemm"):                          # batch-1 GEMM on the vector unit
        work = ly.macs / v
        bytes_ = (ly.batch * ly.m * ly.c + ly.batch * ly.c * ly.k + ly.out_elems) * eb
        passes = 1
    elif ly.kind == "dwconv":
        # the DWC extension: the stepped datapath's cycles (accelerators/voyager/model/dwc.py);
        # the vector unit: one multiply-add per lane and cycle
        work = dwc_compute(ly, p) if op.unit == "dwc" else ly.macs / v
        bytes_ = (ly.h * ly.w * ly.c + ly.c * ly.f * ly.f + ly.out_elems) * eb
        passes = 1
    elif ly.kind in ("maxpool", "avgpool"):
        work = ly.rows * ly.c * ly.f * ly.f / v
        bytes_ = (ly.h * ly.w * ly.c + ly.out_elems) * eb
        passes = 1
    else:                                                    # softmax, layernorm: 3 passes
        passes = 3
        work = passes * ly.m * ly.c / v
        bytes_ = (passes * ly.m * ly.c + ly.m * ly.c) * eb
    if "add" in op.post:
        bytes_ += ly.out_elems * eb
    mem = bytes_ / p.mem_bytes_per_cycle
    cycles = int(np.ceil(max(work, mem) + passes * p.vector_pipeline_depth))
    energy = bytes_ * E_DRAM + ly.macs * E_MAC
    return LayerPerf(ly.name, op.unit, ly.macs, 0, cycles, int(np.ceil(work)), int(np.ceil(mem)), int(bytes_),
                     float(energy), post=op.post)


def op_perf(op: FusedOp, p: VoyagerParams) -> LayerPerf:
    return matrix_perf(op, p) if op.unit == "matrix" else vector_perf(op, p)


@dataclass(frozen=True)
class NetworkPerf:
    """Per-operator figures and totals; utilisation over matrix operators only."""

    layers: tuple[LayerPerf, ...]

    @property
    def cycles(self) -> int:
        return sum(lp.cycles for lp in self.layers)

    @property
    def matrix_ideal(self) -> int:
        return sum(lp.ideal for lp in self.layers if lp.unit == "matrix")

    @property
    def matrix_cycles(self) -> int:
        return sum(lp.cycles for lp in self.layers if lp.unit == "matrix")

    @property
    def utilisation(self) -> float:
        return self.matrix_ideal / self.matrix_cycles if self.matrix_cycles else 0.0

    def totals(self) -> dict[str, Any]:
        return {"cycles": self.cycles, "matrix_cycles": self.matrix_cycles, "matrix_ideal": self.matrix_ideal,
                "utilisation": self.utilisation, "macs": sum(lp.macs for lp in self.layers),
                "dram_bytes": sum(lp.dram_bytes for lp in self.layers),
                "energy_pj": sum(lp.energy_pj for lp in self.layers)}


def network_perf(layers: Sequence[Layer], p: VoyagerParams) -> NetworkPerf:
    """Compile ``layers`` and schedule every operator on instance ``p``."""
    if p.ic_dim < 1 or p.oc_dim < 1:
        raise VoyagerError("array", f"array size {p.ic_dim}x{p.oc_dim}: both dimensions must be >= 1")
    return NetworkPerf(tuple(op_perf(op, p) for op in fuse(layers, p.dwc_unit)))
