"""Analytical cycle model of one RBE job, per phase, from the microarchitecture.

Per output tile t (3x3 outputs), K_out tile, K_in tile and pass (docs/rbe.md has the
derivation):

* LOAD      = valid input pixels of the patch (25 for interior tiles in 3x3 mode, 9 in 1x1)
* COMPUTE   = 32*(W + acc) + fill (3x3: weight bits serial) or 32*(1 + acc) + fill (1x1:
  bits over Blocks); acc = accumulate cycles per output channel, calibrated with the fill
  on the paper's 1610 ops/cycle COMPUTE peak at W = 2 (docs/rbe.md)
* per tile and K_out tile: NORMQUANT = 8 groups * nq_cycles_per_group,
  STREAMOUT = valid output pixels * O

Every LOAD/STREAMOUT/NORMQUANT access and every weight access is one streamer cycle; stall
cycles (TCDM grant denied, computed by whoever models the TCDM) add to their phase.

Two calibrations (docs/rbe.md "Calibration"). The default timing (``params`` omitted,
``cluster.rbe.timing: open_rtl``) is :meth:`CycleParams.open_rtl`, calibrated on the open RTL
(pulp-platform/rbe, components/rbe/rtl_cycles.yaml, tests/test_rbe_rtl_cycles.py): its
patch is fetched as rows of 288-bit beats whatever the tile's edge, its weight stream has 2
extra beats and a 15-cycle drain, and its output goes out in 12-beat passes of 4 bits.
:meth:`CycleParams.paper` (the field defaults of :class:`CycleParams`, ``timing: paper``) is
the one above, calibrated on the paper's COMPUTE peak, which our SV RBE (rtl/rbe) implements
cycle for cycle.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .arch import N_BLOCKS, N_CORES, NQ_GROUPS, TILE, TP
from .job import RbeJob
from .streamer import Phase


@dataclass(frozen=True)
class CycleParams:
    """Timing parameters that are not fixed by the array structure. The field defaults are
    the paper calibration (:meth:`paper`); the default timing of :func:`job_cycles` and of
    the peripheral is :meth:`open_rtl`."""

    #: Pipeline fill/drain per (tile, K_out tile, K_in tile, pass): the 2 offset beats of the
    #: weight stream (the open RTL streams TP*QW + 2 beats) + 5 stages from the BinConv
    #: popcount to the accumulator (scale, Block sum, Core sum, accumulate) drained before
    #: the next LOAD.
    compute_fill: int = 7
    #: Cycles per output channel in which the Core adds its Blocks' partial sum into the
    #: channel's 32-bit accumulator (read-modify-write of the accumulator bank) and takes
    #: no new weight word.
    accumulate_cycles: int = 1
    #: Per group of 4 output channels: one cycle to load scale/bias, one to normalise.
    nq_cycles_per_group: int = 2
    #: HWPE controller start-up (IDLE -> STARTING -> RUN) before the first access.
    setup: int = 2
    #: 0: LOAD takes one cycle per streamer access (the valid pixels of the patch); N > 0:
    #: every LOAD takes patch rows x N beats, edge tiles included (the open RTL: 4).
    load_beats_per_row: int = 0
    #: Cycles per (tile, K_out tile, K_in tile), booked to COMPUTE (the open RTL: 2).
    kin_tile_cycles: int = 0
    #: Cycles per (tile, K_out tile) added to NORMQUANT (the open RTL: 5).
    nq_overhead: int = 0
    #: 0: STREAMOUT takes one cycle per output access; N > 0: N cycles per (tile, K_out
    #: tile, pass of 4 output bits) (the open RTL: 12 beats + 3).
    streamout_cycles_per_pass: int = 0
    #: Cycles per spatial tile (the open RTL's micro-loop W step: 3), booked to setup.
    tile_cycles: int = 0
    #: Cycles per row of spatial tiles (the open RTL's micro-loop H step: 3), booked to setup.
    tile_row_cycles: int = 0

    @classmethod
    def paper(cls) -> "CycleParams":
        """Calibrated on the paper's 1610 ops/cycle COMPUTE peak; our SV RBE (rtl/rbe)
        implements this schedule cycle for cycle."""
        return cls()

    @classmethod
    def open_rtl(cls) -> "CycleParams":
        """Calibrated on the open RTL (components/rbe/rtl_cycles.yaml): COMPUTE per step
        32*W + 17 (3x3) or 32 + 17 (1x1) after a 20- or 12-beat LOAD."""
        return cls(compute_fill=17, accumulate_cycles=0, nq_cycles_per_group=2, setup=13,
                   load_beats_per_row=4, kin_tile_cycles=2, nq_overhead=5,
                   streamout_cycles_per_pass=15, tile_cycles=3, tile_row_cycles=3)


@dataclass(frozen=True)
class PhaseStalls:
    """Cycles a phase waited for TCDM grants (from the TCDM model)."""

    load: int = 0
    compute: int = 0
    normquant: int = 0
    streamout: int = 0

    @property
    def total(self) -> int:
        return self.load + self.compute + self.normquant + self.streamout


@dataclass(frozen=True)
class RbeCycles:
    """Per-phase cycles of one job (ideal + stalls) and its work."""

    load: int
    compute: int
    normquant: int
    streamout: int
    setup: int
    stalls: PhaseStalls = field(default_factory=PhaseStalls)
    ops: int = 0
    accesses: dict[Phase, int] = field(default_factory=dict)

    @property
    def ideal(self) -> int:
        return self.load + self.compute + self.normquant + self.streamout + self.setup

    @property
    def total(self) -> int:
        return self.ideal + self.stalls.total

    def phase_total(self, phase: Phase) -> int:
        name = phase.name.lower()
        return getattr(self, name) + getattr(self.stalls, name)

    @property
    def ops_per_cycle(self) -> float:
        return self.ops / self.total

    @property
    def compute_ops_per_cycle(self) -> float:
        """Throughput counting only the COMPUTE phase's cycles."""
        return self.ops / self.phase_total(Phase.COMPUTE)

    def gops(self, freq_hz: float) -> float:
        return self.ops_per_cycle * freq_hz / 1e9

    def as_stats(self) -> dict[str, int]:
        """Flat counters for the statistics registry."""
        d = {f"cycles_{p.name.lower()}": self.phase_total(p) for p in Phase}
        d.update({f"stall_{p.name.lower()}": getattr(self.stalls, p.name.lower()) for p in Phase})
        d.update({f"accesses_{p.name.lower()}": n for p, n in self.accesses.items()})
        d.update(cycles_setup=self.setup, cycles_total=self.total, ops=self.ops)
        return d


def _valid_counts(tiles: int, size: int, span: int) -> int:
    """Sum over tiles of how many of ``span`` rows starting at 3*t are < ``size``."""
    return sum(min(span, size - TILE * t) for t in range(tiles))


def access_counts(job: RbeJob) -> dict[Phase, int]:
    """Streamer accesses per phase (equals ``streamer_trace(job).counts()``)."""
    tiles = job.tiles_h * job.tiles_w
    loads_per_kin_pass = (_valid_counts(job.tiles_h, job.h_in, job.patch)
                          * _valid_counts(job.tiles_w, job.w_in, job.patch))
    inner = job.kout_tiles * job.kin_tiles * job.passes
    weight_beats = TP * job.w_bits if job.is_3x3 else TP
    return {
        Phase.LOAD: loads_per_kin_pass * inner,
        Phase.COMPUTE: tiles * inner * weight_beats,
        Phase.NORMQUANT: tiles * job.kout_tiles * NQ_GROUPS,
        Phase.STREAMOUT: job.h_out * job.w_out * job.kout_tiles * job.o_bits,
    }


def job_cycles(job: RbeJob, stalls: PhaseStalls | None = None,
               params: CycleParams | None = None) -> RbeCycles:
    """Cycle breakdown of ``job``; ``stalls`` adds TCDM grant stalls per phase; ``params``
    defaults to the open-RTL calibration (:meth:`CycleParams.open_rtl`)."""
    params = params or CycleParams.open_rtl()
    acc = access_counts(job)
    tiles = job.tiles_h * job.tiles_w
    blocks = tiles * job.kout_tiles
    inner = blocks * job.kin_tiles * job.passes
    load = (inner * job.patch * params.load_beats_per_row if params.load_beats_per_row
            else acc[Phase.LOAD])
    streamout = (blocks * _out_passes(job) * params.streamout_cycles_per_pass
                 if params.streamout_cycles_per_pass else acc[Phase.STREAMOUT])
    return RbeCycles(
        load=load,
        compute=(acc[Phase.COMPUTE] + inner * (TP * params.accumulate_cycles + params.compute_fill)
                 + blocks * job.kin_tiles * params.kin_tile_cycles),
        normquant=blocks * (NQ_GROUPS * params.nq_cycles_per_group + params.nq_overhead),
        streamout=streamout,
        setup=params.setup + tiles * params.tile_cycles + job.tiles_h * params.tile_row_cycles,
        stalls=stalls or PhaseStalls(),
        ops=2 * job.macs,
        accesses=acc,
    )


def _out_passes(job: RbeJob) -> int:
    """Output passes of 4 bits (the open RTL streams out O <= 4 and O > 4 in 1 or 2)."""
    return -(-job.o_bits // 4)


def datapath_peak_ops_per_cycle(is_3x3: bool, w_bits: int, i_bits: int) -> float:
    """Ops/cycle of the BinConv array alone (no fill, no other phase).

    3x3: per cycle 9 Cores x 9 Blocks x 32 input channels advance one weight bit of one
    output channel, so a W-bit MAC takes W cycles: 2*9*9*32/W ops/cycle (per pass).
    1x1: all W bits in parallel over Blocks: 2*9*32 ops/cycle (per pass).
    """
    passes = -(-i_bits // 4)
    macs = N_CORES * (N_BLOCKS * TP / w_bits if is_3x3 else TP)
    return 2 * macs / passes


def compute_cycles_per_inner(job: RbeJob, params: CycleParams | None = None) -> int:
    """COMPUTE cycles of one (tile, K_out tile, K_in tile, pass), without stalls or the
    per-K_in-tile cycles (``params`` defaults to :meth:`CycleParams.open_rtl`)."""
    params = params or CycleParams.open_rtl()
    bits = job.w_bits if job.is_3x3 else 1
    return TP * (bits + params.accumulate_cycles) + params.compute_fill


@dataclass(frozen=True)
class ComputeSpan:
    """Some consecutive COMPUTE phases of a job: ``[start, end)`` in cycles from the job's
    start (LOAD phases between them included), the ops and COMPUTE cycles they hold."""

    start: float
    end: float
    ops: int
    cycles: int


def compute_spans(job: RbeJob, cyc: RbeCycles, params: CycleParams | None = None,
                  max_spans: int = 16) -> list[ComputeSpan]:
    """When the job's COMPUTE phases happen, in hardware order (setup, then per tile and
    K_out tile: K_in tiles x passes of LOAD + COMPUTE, NORMQUANT, STREAMOUT), with each
    phase kind's stalls spread evenly over its instances; consecutive (tile, K_out tile)
    blocks are merged into at most ``max_spans`` contiguous spans (a power report each)."""
    import numpy as np
    params = params or CycleParams.open_rtl()
    th = np.arange(job.tiles_h)
    tw = np.arange(job.tiles_w)
    span = job.patch
    rows = np.minimum(span, job.h_in - TILE * th)
    cols = np.minimum(span, job.w_in - TILE * tw)
    out_r = np.minimum(TILE, job.h_out - TILE * th)
    out_c = np.minimum(TILE, job.w_out - TILE * tw)
    # per tile (row-major), repeated for each K_out tile (K_out tiles inside a tile)
    loads = np.repeat((rows[:, None] * cols[None, :]).ravel(), job.kout_tiles)
    outs = np.repeat((out_r[:, None] * out_c[None, :]).ravel(), job.kout_tiles)
    if params.load_beats_per_row:
        loads = np.full_like(loads, job.patch * params.load_beats_per_row)
    out_cycles = (np.full(len(outs), _out_passes(job) * params.streamout_cycles_per_pass)
                  if params.streamout_cycles_per_pass else outs * job.o_bits)
    # the per-tile cycles after the last K_out tile of each tile, the K_in-tile cycles in
    # each block's COMPUTE (spread evenly over its inner loops)
    tile_end = np.zeros(len(outs))
    tile_end[job.kout_tiles - 1::job.kout_tiles] = params.tile_cycles
    tile_end[job.kout_tiles * job.tiles_w - 1::job.kout_tiles * job.tiles_w] += \
        params.tile_row_cycles
    inner = job.kin_tiles * job.passes
    c_in = (compute_cycles_per_inner(job, params)
            + job.kin_tiles * params.kin_tile_cycles / inner)

    def scale(ideal: int, stall: int) -> float:
        return 1.0 + stall / ideal if ideal else 1.0

    s = cyc.stalls
    f_load, f_comp = scale(cyc.load, s.load), scale(cyc.compute, s.compute)
    f_nq, f_so = scale(cyc.normquant, s.normquant), scale(cyc.streamout, s.streamout)
    nq = (NQ_GROUPS * params.nq_cycles_per_group + params.nq_overhead) * f_nq
    load_t = loads * f_load
    block = inner * (load_t + c_in * f_comp) + nq + out_cycles * f_so + tile_end
    begin = params.setup + np.concatenate([[0.0], np.cumsum(block)[:-1]])
    first = begin + load_t                                   # first COMPUTE of the block
    last = begin + inner * (load_t + c_in * f_comp)          # end of its last COMPUTE
    taps = 9 if job.is_3x3 else 1
    ops = 2 * outs * TP * job.k_in * taps
    n = len(block)
    groups = np.array_split(np.arange(n), min(max_spans, n))
    groups = [g for g in groups if len(g)]
    # contiguous spans (each to the next one's first COMPUTE): the array is busy across
    # the short NORMQUANT/STREAMOUT/LOAD gaps at this resolution, the last ends with the
    # last COMPUTE
    ends = [float(first[g[0]]) for g in groups[1:]] + [float(last[groups[-1][-1]])]
    return [ComputeSpan(float(first[g[0]]), end, int(ops[g].sum()), round(len(g) * inner * c_in))
            for g, end in zip(groups, ends)]
