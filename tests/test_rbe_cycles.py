"""RBE cycle model and streamer trace: hand-computed cases, monotonicity, consistency.

The formulas tested here are the paper calibration's (``CycleParams.paper()``, the schedule
our SV RBE implements), pinned explicitly; the default (open-RTL) timing is checked by hand
in test_default_timing_is_the_open_rtl_calibration and against the RTL's own table in
tests/test_rbe_rtl_cycles.py."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.rbe import (CycleParams, Mode, Phase, PhaseStalls, RbeJob, access_counts,
                            datapath_peak_ops_per_cycle, job_cycles, streamer_trace)
from components.rbe.cycles import compute_spans

#: marsellus.md: "Peak: 1610 ops/cycle in COMPUTE in 3x3 mode at W = 2"
PAPER_PEAK = 1610
PAPER = CycleParams.paper()


def paper_cycles(j: RbeJob, stalls: PhaseStalls | None = None):
    return job_cycles(j, stalls, PAPER)


def job(h=3, w=3, k_in=32, k_out=32, wb=4, ib=4, ob=4, mode=Mode.CONV3X3, base=0x1000):
    # operands far apart so the trace's address ranges are distinguishable
    return RbeJob.dense(x_addr=base, w_addr=base + 0x10_0000, nq_addr=base + 0x20_0000,
                        y_addr=base + 0x30_0000, h_out=h, w_out=w, k_in=k_in, k_out=k_out,
                        w_bits=wb, i_bits=ib, o_bits=ob, mode=mode)


def test_single_tile_3x3_by_hand():
    c = paper_cycles(job(wb=2, ib=4, ob=4))
    # COMPUTE: 32 output channels x (2 weight bits + 1 accumulate cycle) + 7 fill/drain
    assert (c.load, c.compute, c.normquant, c.streamout, c.setup) == (25, 32 * 3 + 7, 16, 9 * 4, 2)
    assert c.total == 25 + 103 + 16 + 36 + 2
    assert c.ops == 2 * 9 * 32 * 32 * 9


def test_default_timing_is_the_open_rtl_calibration():
    # docs/rbe.md "Calibration on the open RTL": one 3x3 tile, W = 2, I = O = 4: LOAD 5
    # patch rows x 4 beats; COMPUTE 32*W + 17 + 2 per K_in tile; NORMQUANT 8*2 + 5;
    # STREAMOUT one 4-bit pass of 15; setup 13 + one tile (3) + one tile row (3)
    j = job(wb=2, ib=4, ob=4)
    c = job_cycles(j)
    assert (c.load, c.compute, c.normquant, c.streamout, c.setup) == (
        5 * 4, 32 * 2 + 17 + 2, 8 * 2 + 5, 15, 13 + 3 + 3)
    assert c == job_cycles(j, params=CycleParams.open_rtl())
    # ... and a step's LOAD + COMPUTE is the paper's 32*(W + 1) + 7 (its 1610 ops/cycle)
    assert c.load + c.compute == 32 * (2 + 1) + 7


def test_single_tile_1x1_by_hand():
    c = paper_cycles(job(wb=7, ib=8, ob=3, mode=Mode.CONV1X1))
    # two passes of (9 loads + 32 x (1 weight beat + 1 accumulate) + 7 fill), then 8 NQ
    # groups and 9*3 stores
    assert (c.load, c.compute, c.normquant, c.streamout) == (2 * 9, 2 * 71, 16, 27)


def test_edge_tiles_by_hand():
    # 4x5 outputs, 3x3 mode: input 6x7. Tile row 0 loads input rows 0..4 (5), tile row 1
    # rows 3..5 (3); tile columns load 5 and 4 pixels. Pixels past the edge are not loaded.
    j = job(h=4, w=5, k_in=64, k_out=96, ib=8, ob=5)
    n = access_counts(j)
    inner = 3 * 2 * 2  # K_out tiles x K_in tiles x passes
    assert n[Phase.LOAD] == (5 + 3) * (5 + 4) * inner
    assert n[Phase.COMPUTE] == 4 * inner * 32 * 4
    assert n[Phase.NORMQUANT] == 4 * 3 * 8
    assert n[Phase.STREAMOUT] == 4 * 5 * 3 * 5


@pytest.mark.parametrize("ib", range(2, 9))
@pytest.mark.parametrize("k_in", [32, 96])
def test_fewer_weight_bits_are_faster_in_3x3_mode(ib, k_in):
    totals = [paper_cycles(job(h=5, w=4, k_in=k_in, wb=wb, ib=ib)).total for wb in range(2, 9)]
    assert all(a < b for a, b in zip(totals, totals[1:])), totals
    computes = [paper_cycles(job(k_in=k_in, wb=wb, ib=ib)).compute for wb in range(2, 9)]
    assert all(b - a == 32 * (k_in // 32) * (1 if ib <= 4 else 2)
               for a, b in zip(computes, computes[1:]))


@pytest.mark.parametrize("ib", range(2, 9))
def test_weight_bits_do_not_change_1x1_time(ib):
    cyc = {wb: paper_cycles(job(h=7, w=7, k_in=64, wb=wb, ib=ib, mode=Mode.CONV1X1))
           for wb in range(2, 9)}
    assert len({c.compute for c in cyc.values()}) == 1
    assert len({c.total for c in cyc.values()}) == 1


def test_8_bit_inputs_cost_two_passes():
    for mode in Mode:
        for wb in (2, 5, 8):
            c4 = paper_cycles(job(h=6, w=7, k_in=64, wb=wb, ib=4, mode=mode))
            for ib in (5, 6, 7, 8):
                c8 = paper_cycles(job(h=6, w=7, k_in=64, wb=wb, ib=ib, mode=mode))
                assert c8.compute == 2 * c4.compute
                assert c8.load == 2 * c4.load
                assert (c8.normquant, c8.streamout) == (c4.normquant, c4.streamout)
            for ib in (2, 3):
                assert paper_cycles(job(h=6, w=7, k_in=64, wb=wb, ib=ib, mode=mode)).total == \
                    c4.total


def test_monotonic_in_layer_size():
    base = paper_cycles(job(h=6, w=6, k_in=64, k_out=64)).total
    for bigger in (job(h=7, w=6, k_in=64, k_out=64), job(h=6, w=7, k_in=64, k_out=64),
                   job(h=6, w=6, k_in=96, k_out=64), job(h=6, w=6, k_in=64, k_out=96),
                   job(h=6, w=6, k_in=64, k_out=64, ob=5)):
        assert paper_cycles(bigger).total > base


def test_stalls_add_to_their_phase_and_total():
    j = job(h=5, w=5, k_in=64)
    c0 = paper_cycles(j)
    st_ = PhaseStalls(load=7, compute=11, normquant=3, streamout=5)
    c1 = paper_cycles(j, stalls=st_)
    assert c1.total == c0.total + 26
    assert c1.phase_total(Phase.LOAD) == c0.load + 7
    assert c1.phase_total(Phase.STREAMOUT) == c0.streamout + 5
    assert c1.ops_per_cycle < c0.ops_per_cycle
    stats = c1.as_stats()
    assert stats["stall_compute"] == 11 and stats["cycles_total"] == c1.total
    assert stats["accesses_load"] == c0.accesses[Phase.LOAD]


def test_params_change_what_they_name():
    j = job(h=4, w=4, k_in=64)
    c0 = paper_cycles(j)
    c1 = job_cycles(j, params=CycleParams(compute_fill=0, nq_cycles_per_group=1, setup=0))
    assert c0.compute - c1.compute == 4 * 2 * 7     # 4 tiles x 2 K_in tiles x the fill
    c2 = job_cycles(j, params=CycleParams(accumulate_cycles=0))
    assert c0.compute - c2.compute == 4 * 2 * 32    # one cycle per output channel
    assert c0.normquant == 2 * c1.normquant
    assert c1.setup == 0


def test_peak_ops_per_cycle():
    # datapath bound: 9 Cores x 9 Blocks x 32 channels, one weight bit per cycle
    assert datapath_peak_ops_per_cycle(True, 2, 4) == 2 * 9 * 9 * 32 / 2 == 2592
    assert datapath_peak_ops_per_cycle(True, 2, 8) == 1296
    assert datapath_peak_ops_per_cycle(False, 8, 4) == 2 * 9 * 32
    # the COMPUTE phase at W = 2 reproduces the paper's peak (any I <= 4, any depth)
    for ib in (2, 3, 4):
        c = paper_cycles(job(k_in=256, k_out=64, wb=2, ib=ib, ob=4))
        assert c.compute_ops_per_cycle == pytest.approx(PAPER_PEAK, rel=0.001)
    # ... and is the highest COMPUTE rate of any precision and mode
    rates = [paper_cycles(job(k_in=64, wb=wb, ib=ib, mode=m)).compute_ops_per_cycle
             for wb in range(2, 9) for ib in range(2, 9) for m in Mode]
    assert max(rates) == pytest.approx(PAPER_PEAK, rel=0.001)
    # the whole job adds LOAD, NORMQUANT, STREAMOUT (not overlapped) and the setup
    c = paper_cycles(job(k_in=128, k_out=64, wb=2, ib=4, ob=4))
    assert c.total == 2 * (4 * (25 + 103) + 16 + 36) + 2
    assert c.gops(420e6) == pytest.approx(c.ops_per_cycle * 0.42)


def test_second_pass_and_1x1_costs():
    # I > 4: a second LOAD + COMPUTE per (tile, K_out tile, K_in tile), with its own
    # accumulate cycles and fill: the COMPUTE rate halves exactly
    c4 = paper_cycles(job(k_in=64, wb=3, ib=4))
    c8 = paper_cycles(job(k_in=64, wb=3, ib=8))
    assert c8.compute_ops_per_cycle == pytest.approx(c4.compute_ops_per_cycle / 2)
    # 1x1: one output channel per (1 + accumulate) cycles for all W bits at once:
    # 2 * 9 pixels * 32 input channels per 2 cycles, less the fill
    c = paper_cycles(job(k_in=256, wb=5, ib=4, mode=Mode.CONV1X1))
    assert c.compute_ops_per_cycle == pytest.approx(2 * 9 * 32 * 32 / (32 * 2 + 7))


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("dims", [(3, 3, 32, 32, 2, 4), (7, 5, 64, 96, 3, 8), (32, 32, 64, 64, 4, 8)])
def test_compute_spans_follow_the_loop_nest(mode, dims):
    h, w, k_in, k_out, wb, ib = dims
    j = job(h=h, w=w, k_in=k_in, k_out=k_out, wb=wb, ib=ib, mode=mode)
    stalls = PhaseStalls(load=13, compute=7, normquant=0, streamout=5)
    c = paper_cycles(j, stalls)
    spans = compute_spans(j, c, PAPER, max_spans=16)
    assert 1 <= len(spans) <= 16
    assert sum(s.ops for s in spans) == c.ops
    assert sum(s.cycles for s in spans) == c.compute
    # the first COMPUTE starts after the setup and the first tile's LOAD; the last ends
    # before the last tile's NORMQUANT and STREAMOUT
    first_load = min(j.patch, j.h_in) * min(j.patch, j.w_in) * (1 + 13 / c.load)
    assert spans[0].start == pytest.approx(c.setup + first_load)
    last_r = j.h_out - 3 * (j.tiles_h - 1)
    last_c = j.w_out - 3 * (j.tiles_w - 1)
    tail = 16 + last_r * last_c * j.o_bits * (1 + 5 / c.streamout)
    assert spans[-1].end == pytest.approx(c.total - tail)
    for a, b in zip(spans, spans[1:]):
        assert a.start < a.end == b.start


trace_jobs = st.builds(
    job, h=st.integers(1, 8), w=st.integers(1, 8), k_in=st.sampled_from([32, 64, 96]),
    k_out=st.sampled_from([32, 64]), wb=st.integers(2, 8), ib=st.integers(2, 8),
    ob=st.integers(2, 8), mode=st.sampled_from(list(Mode)))


def _words(tr, phase):
    t = tr.select(phase)
    return (t.addr[:, None] + 4 * np.arange(9)[None, :])[np.arange(9)[None, :] < t.nwords[:, None]]


@settings(max_examples=40, deadline=None)
@given(trace_jobs)
def test_trace_matches_cycle_model_and_covers_every_operand_word(j):
    tr = streamer_trace(j)
    assert tr.counts() == access_counts(j)
    c = paper_cycles(j)
    assert c.load == tr.counts()[Phase.LOAD]
    assert c.streamout == tr.counts()[Phase.STREAMOUT]
    # LOAD reads exactly the input words; every input word once per (K_out tile, tile it is in)
    x0, x1 = j.x_extent()
    assert set(_words(tr, Phase.LOAD).tolist()) == set(range(x0, x1, 4))
    # the weight stream reads all weight words and nothing else
    assert set(_words(tr, Phase.COMPUTE).tolist()) == set(range(*j.w_extent(), 4))
    assert set(_words(tr, Phase.NORMQUANT).tolist()) == set(range(*j.nq_extent(), 4))
    # each output word is stored exactly once
    stores = _words(tr, Phase.STREAMOUT)
    assert stores.size == len(set(stores.tolist())) == j.h_out * j.w_out * j.kout_tiles * j.o_bits
    y0, y1 = j.y_extent()
    assert stores.min() >= y0 and stores.max() < y1
    assert tr.is_write.sum() == stores.size


def test_trace_order_follows_the_loop_nest():
    j = job(h=3, w=6, k_in=64, k_out=64, wb=2, ib=8, ob=2)
    ph = streamer_trace(j).phase
    # per (tile, K_out tile): 2 K_in tiles x 2 passes x (25 loads + 64 weight beats), 8 NQ, 18 SO
    block = [Phase.LOAD] * 25 + [Phase.COMPUTE] * 64
    one = block * 4 + [Phase.NORMQUANT] * 8 + [Phase.STREAMOUT] * 18
    assert ph.tolist() == one * 4


def test_second_pass_loads_the_high_bit_planes():
    j = job(ib=8, k_in=32)
    loads = streamer_trace(j).select(Phase.LOAD)
    assert loads.addr[0] == j.x_addr and loads.addr[25] == j.x_addr + 16
    assert set(loads.nwords.tolist()) == {4}
    j6 = job(ib=6, k_in=32)
    assert streamer_trace(j6).select(Phase.LOAD).nwords.tolist() == [4] * 25 + [2] * 25


def test_banks_of_an_access():
    j = job(base=0x1000_0000 + 30 * 4)  # port 0 in bank 30: ports wrap around to bank 0
    tr = streamer_trace(j)
    b = tr.banks()
    assert b.shape == (len(tr), 9)
    assert b[0].tolist() == [30, 31, 0, 1, 2, 3, 4, 5, 6]
    used = tr.banks(all_ports=False)
    assert used[0].tolist() == [30, 31, 0, 1, -1, -1, -1, -1, -1]  # 4 input bit-planes
