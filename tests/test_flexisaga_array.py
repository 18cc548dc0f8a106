"""The FlexiSAGA step model: the spec's worked single-tile examples on a 3-row x 2-column
grid (register contents and step counts), bit-exact GEMMs in fp32 and int for all seven
dataflows against independent numpy references, DecU zero semantics, bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelerators.flexisaga.model.array import REG_I, REG_P, REG_W, run_gemm
from accelerators.flexisaga.model.config import DATAFLOWS, ArrayConfig
from accelerators.flexisaga.model.formats import csb_groups
from accelerators.flexisaga.model.functional import gemm

GRID = ArrayConfig(rows=3, cols=2)
# distinct values for a..e and A..H (products and sums exact in fp32)
a, b, c, d, e = 2.0, 3.0, 5.0, 7.0, 11.0
A, B, C, D, E, F, G, H = 13.0, 17.0, 19.0, 23.0, 29.0, 31.0, 37.0, 41.0
NAN = np.nan


def f32(x: list) -> np.ndarray:
    return np.array(x, dtype=np.float32)


def seq_ref(w: np.ndarray, i: np.ndarray) -> np.ndarray:
    """Ascending-k float32 multiply-then-add, partial sums from +0.0 (spec section 5)."""
    acc = np.zeros((w.shape[0], i.shape[1]), dtype=np.float32)
    for k in range(w.shape[1]):
        acc = acc + w[:, k:k + 1] * i[k:k + 1, :]
    return acc


def csos_ref(w: np.ndarray, i: np.ndarray, rows: int) -> np.ndarray:
    """Per row, terms in merged-column order of each R-row strip; -1 slots add nothing."""
    out = np.zeros((w.shape[0], i.shape[1]), dtype=np.float32)
    for m0 in range(0, w.shape[0], rows):
        strip = w[m0:m0 + rows]
        for g in csb_groups(strip):
            for r in range(strip.shape[0]):
                hit = [col for col in g if strip[r, col] != 0]
                if hit:
                    out[m0 + r] = out[m0 + r] + strip[r, hit[0]] * i[hit[0]]
    return out


def test_sos_worked_example() -> None:
    w = f32([[a, 0, 0, b], [c, 0, 0, d], [0, 0, 0, e]])
    i = f32([[A, B], [NAN, NAN], [NAN, NAN], [G, H]])  # rows 1, 2 must never be read
    res = run_gemm("sOS", w, i, GRID, trace=True)
    assert res.steps == 10
    t = res.trace
    assert t[0].regs[:, 0, REG_W].tolist() == [a, c, 0]
    assert t[0].regs[0, :, REG_I].tolist() == [A, B]
    assert t[5].regs[:, 0, REG_W].tolist() == [b, d, e]
    assert t[5].regs[0, :, REG_I].tolist() == [G, H]
    # the wavefront reaches PE(r, c) in step r + c + 1 of each column's five steps
    assert t[2].regs[1, 1, REG_P] == 0 and t[3].regs[1, 1, REG_P] == c * B
    assert t[3].regs[2, 1, REG_P] == 0 and t[4].valid[2, 1, REG_W]
    assert t[4].regs[:, :, REG_P].tolist() == [[a * A, a * B], [c * A, c * B], [0, 0]]
    expect = f32([[a * A + b * G, a * B + b * H], [c * A + d * G, c * B + d * H], [e * G, e * H]])
    assert np.array_equal(t[9].regs[:, :, REG_P], expect)
    assert np.array_equal(res.out, expect)
    # 7 weight words (5 values, 1 column-bit word, 1 element-bit word) + 4 input words
    assert res.reads == 7 + 4


def test_sws_worked_example() -> None:
    w = f32([[a, b], [0, 0], [0, 0], [c, d], [0, e]])
    i = f32([[A, B], [C, D]])
    res = run_gemm("sWS", w, i, GRID, trace=True)
    assert res.steps == 10
    t = res.trace
    assert t[0].regs[:, :, REG_W].tolist() == [[a, b], [c, d], [0, e]]
    assert t[0].regs[0, :, REG_I].tolist() == [A, C]
    col0 = [a * A + b * C, c * A + d * C, 0 * A + e * C]
    col1 = [a * B + b * D, c * B + d * D, 0 * B + e * D]
    assert t[3].regs[:, 1, REG_P].tolist() == [col0[0], col0[1], 0]  # row 2 completes in step 4
    assert t[4].regs[:, 1, REG_P].tolist() == col0
    assert t[5].regs[0, :, REG_I].tolist() == [B, D]
    assert t[9].regs[:, 1, REG_P].tolist() == col1
    assert res.out.tolist() == [[col0[0], col1[0]], [0, 0], [0, 0], [col0[1], col1[1]], [col0[2], col1[2]]]
    # 7 weight words instead of 10: 5 values + row bits + element bits; 4 inputs
    assert res.reads == 7 + 4


def test_sis_worked_example() -> None:
    w = f32([[a, b, c], [0, 0, 0], [0, 0, 0], [d, 0, e]])
    i = f32([[A, B], [C, D], [E, F]])
    res = run_gemm("sIS", w, i, GRID, trace=True)
    assert res.steps == 10
    t = res.trace
    assert t[0].regs[:, :, REG_I].tolist() == [[A, B], [C, D], [E, F]]
    assert t[0].regs[:, 0, REG_W].tolist() == [a, b, c]
    assert t[5].regs[:, 0, REG_W].tolist() == [d, 0, e]
    row0 = [a * A + b * C + c * E, a * B + b * D + c * F]
    row3 = [d * A + 0 * C + e * E, d * B + 0 * D + e * F]
    assert t[4].regs[2, :, REG_P].tolist() == row0
    assert t[9].regs[2, :, REG_P].tolist() == row3
    assert res.out.tolist() == [row0, [0, 0], [0, 0], row3]


def test_csos_worked_example() -> None:
    w = f32([[a, 0, 0, b], [c, d, 0, 0], [0, 0, 0, e]])
    i = f32([[A, B], [C, D], [NAN, NAN], [G, H]])  # row 2 is never named by an index
    res = run_gemm("csOS", w, i, GRID, trace=True)
    assert res.steps == 10
    t = res.trace
    assert t[0].regs[:, :, REG_W].tolist() == [[a, a], [c, c], [0, 0]]
    assert [s.temp_index for s in t[1:4]] == [(0, -1, -1), (0, 0, -1), (0, 0, 0)]
    assert t[3].regs[:, :, REG_P].tolist() == [[a * A, a * B], [c * A, c * B], [0, 0]]
    assert t[4].regs[:, :, REG_W].tolist() == [[b, b], [d, d], [e, e]]
    assert [s.temp_index for s in t[5:8]] == [(3, -1, -1), (3, 3, -1), (3, 3, 3)]
    # row 1 holds index 1 != 3: untouched by the second pass
    assert t[7].regs[:, :, REG_P].tolist() == [[a * A + b * G, a * B + b * H], [c * A, c * B], [e * G, e * H]]
    assert [s.temp_index for s in t[8:10]] == [(1, -1, -1), (1, 1, -1)]
    assert t[9].regs[1, :, REG_P].tolist() == [c * A + d * C, c * B + d * D]
    assert [s.kind for s in t] == ["load", "pass", "pass", "pass", "load", "pass", "pass", "pass", "pass", "pass"]


@pytest.mark.parametrize("dataflow", DATAFLOWS)
def test_fp32_bit_exact_against_numpy(dataflow: str) -> None:
    rng = np.random.default_rng(7)
    for rows, cols, (m, k, n) in ((3, 2, (7, 9, 5)), (4, 4, (4, 4, 4)), (2, 5, (5, 11, 3))):
        w = rng.standard_normal((m, k)).astype(np.float32)
        w[rng.random(w.shape) < 0.55] = 0
        w[:, 1] = 0  # a whole zero column and row for the sparse schedules to skip
        w[0, :] = 0
        i = rng.standard_normal((k, n)).astype(np.float32)
        out = run_gemm(dataflow, w, i, ArrayConfig(rows=rows, cols=cols)).out
        ref = csos_ref(w, i, rows) if dataflow == "csOS" else seq_ref(w, i)
        assert out.dtype == np.float32
        assert np.array_equal(out.view(np.uint32), ref.view(np.uint32)), dataflow


def test_csos_order_differs_from_ascending_k() -> None:
    # row 0's terms come as k=3 then k=1 (merged column {0,3} first, then {1})
    w = f32([[0, 1e8, 0, 1.0], [1.0, 1.0, 0, 0]])
    i = f32([[1.0], [1.0], [0.0], [1.0]])
    out = run_gemm("csOS", w, i, ArrayConfig(rows=2, cols=1)).out
    assert csb_groups(w) == [[0, 3], [1]]
    assert out[0, 0] == np.float32(np.float32(1.0) + np.float32(1e8))
    assert np.array_equal(out, csos_ref(w, i, 2))


@pytest.mark.parametrize("dataflow", DATAFLOWS)
def test_int_mode_wraps_like_twos_complement(dataflow: str) -> None:
    rng = np.random.default_rng(11)
    cfg = ArrayConfig(rows=3, cols=3, pe_dtype="int", word_bits=8)
    w = rng.integers(-100, 100, (5, 7))
    w[rng.random(w.shape) < 0.4] = 0
    i = rng.integers(-100, 100, (7, 4))
    ref = ((w @ i + 128) % 256) - 128
    assert np.array_equal(run_gemm(dataflow, w, i, cfg).out, ref)


def test_decu_zeros_are_multiplied_skipped_columns_are_not() -> None:
    inf = np.inf
    w = f32([[1, 0, 0], [0, 0, 2]])
    i = f32([[inf, 1], [inf, 1], [1, 1]])
    cfg = ArrayConfig(rows=2, cols=2)
    dense = run_gemm("dOS", w, i, cfg).out
    sparse = run_gemm("sOS", w, i, cfg).out
    cs = run_gemm("csOS", w, i, cfg).out
    assert np.isnan(dense[0, 0]) and np.isnan(dense[1, 0])   # 0 * inf in every row
    assert sparse[0, 0] == inf                                 # column 1 skipped
    assert np.isnan(sparse[1, 0])                              # DecU zero of column 0 times inf
    assert cs[0, 0] == inf and cs[1, 0] == 2                   # -1 slots: no MAC at all


def test_bad_input_is_refused() -> None:
    w = np.ones((2, 3), dtype=np.float32)
    i = np.ones((3, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="dataflow 'xOS'"):
        run_gemm("xOS", w, i, GRID)
    with pytest.raises(ValueError, match="K must match"):
        run_gemm("dOS", w, i.T, GRID)
    with pytest.raises(ValueError, match="rows = 0"):
        ArrayConfig(rows=0)
    with pytest.raises(ValueError, match="pe_dtype"):
        ArrayConfig(pe_dtype="bf16")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 8), st.integers(1, 9), st.integers(1, 8),
       st.floats(0.0, 0.95), st.booleans(), st.integers(0, 2**31), st.sampled_from(DATAFLOWS))
def test_vectorised_functional_model_equals_the_step_model(rows: int, cols: int, m: int, k: int, n: int,
                                                          s: float, integer: bool, seed: int,
                                                          dataflow: str) -> None:
    """functional.gemm (what the accelerator block computes with) gives the step model's
    bits: fp32 with Inf inputs (DecU zeros times Inf), or int8 with wrapping."""
    rng = np.random.default_rng(seed)
    if integer:
        cfg = ArrayConfig(rows=rows, cols=cols, pe_dtype="int", word_bits=8)
        w, i = rng.integers(-128, 128, (m, k)), rng.integers(-128, 128, (k, n))
    else:
        cfg = ArrayConfig(rows=rows, cols=cols)
        w = rng.standard_normal((m, k)).astype(np.float32)
        i = rng.standard_normal((k, n)).astype(np.float32)
        i[rng.random(i.shape) < 0.1] = np.inf
    w[rng.random(w.shape) < s] = 0
    ref = run_gemm(dataflow, w, i, cfg).out
    out = gemm(dataflow, w, i, cfg)
    assert out.dtype == ref.dtype
    if integer:
        assert np.array_equal(out, ref)
    else:
        assert np.array_equal(out.view(np.uint32), ref.view(np.uint32))
