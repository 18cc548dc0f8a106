"""The fast FlexiSAGA cycle model: equal to the step model cycle for cycle (and in steps,
MACs, words and tiles) over random shapes, sparsities and arrays; hand-computed costs
from the spec's step-cost formulas."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelerators.flexisaga.model.array import run_gemm
from accelerators.flexisaga.model.config import DATAFLOWS, ArrayConfig
from accelerators.flexisaga.model.cycles import best_dataflow, estimate


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 9), st.integers(0, 2),
       st.integers(1, 9), st.integers(1, 10), st.integers(1, 9), st.floats(0.0, 0.95),
       st.integers(0, 2**31), st.sampled_from(DATAFLOWS))
def test_fast_model_matches_step_model(rows: int, cols: int, ports: int, lat: int, m: int, k: int,
                                       n: int, s: float, seed: int, dataflow: str) -> None:
    cfg = ArrayConfig(rows=rows, cols=cols, mem_ports=ports, mem_latency=lat)
    rng = np.random.default_rng(seed)
    w = rng.integers(-3, 4, (m, k)).astype(np.float32)
    w[rng.random(w.shape) < s] = 0
    i = rng.integers(-3, 4, (k, n)).astype(np.float32)
    ref = run_gemm(dataflow, w, i, cfg)
    fast = estimate(dataflow, w, n, cfg)
    assert (fast.cycles, fast.steps, fast.macs, fast.reads, fast.writes, fast.tiles) == \
        (ref.cycles, ref.steps, ref.macs, ref.reads, ref.writes, ref.tiles)
    assert np.array_equal(ref.out, w @ i)  # small integers: every order is exact


def test_dos_cost_by_hand() -> None:
    # one 8x8 output tile, K = 10: per k one load step reading 8 + 8 words over 8 ports
    # (2 cycles) and 15 propagation steps; then 64 words stored (8 cycles); latency 1
    cfg = ArrayConfig(rows=8, cols=8, mem_ports=8, mem_latency=1)
    rep = estimate("dOS", np.ones((8, 10)), 8, cfg)
    assert rep.cycles == 10 * (2 + 15) + 8 + 1
    assert rep.steps == 10 * 16
    assert rep.utilisation == pytest.approx(8 * 8 * 10 / (64 * rep.cycles))


def test_dws_cost_by_hand() -> None:
    # M = 4, K = 6 on 4x3: two K blocks of 3; N = 5 input columns per stationary tile
    cfg = ArrayConfig(rows=4, cols=3, mem_ports=4, mem_latency=2)
    rep = estimate("dWS", np.ones((4, 6)), 5, cfg)
    prop = 4 + 3 - 1
    blk0 = math.ceil((12 + 3) / 4) + 4 * 1 + 5 * prop        # weights + first column, then 3 reads
    blk1 = math.ceil((12 + 3 + 4) / 4) + 4 * math.ceil(7 / 4) + 5 * prop  # + 4 partial sums
    assert rep.cycles == blk0 + blk1 + 2 * 2
    assert rep.writes == 2 * 5 * 4


def test_sparse_columns_make_sos_cheaper_and_best_is_minimum() -> None:
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 64)).astype(np.float32)
    w[:, rng.random(64) < 0.75] = 0
    cfg = ArrayConfig(rows=8, cols=8)
    dense, sparse = estimate("dOS", w, 32, cfg), estimate("sOS", w, 32, cfg)
    assert sparse.cycles < dense.cycles and sparse.macs_skipped > 0
    best = best_dataflow(w, 32, cfg)
    assert best.cycles == min(estimate(df, w, 32, cfg).cycles for df in DATAFLOWS)


def test_bad_dataflow_is_refused() -> None:
    with pytest.raises(ValueError, match="dataflow 'dXS'"):
        estimate("dXS", np.ones((2, 2)), 2, ArrayConfig())
