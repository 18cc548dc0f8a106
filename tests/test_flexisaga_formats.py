"""FlexiSAGA sparse formats and pruning: the spec's worked examples (paper Fig. 1b/1c
decoded), round trips over random matrices, footprints from first principles."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelerators.flexisaga.model import formats as F
from accelerators.flexisaga.model import pruning as P


def test_two_stage_bitmap_example_fig1b() -> None:
    w = np.array([[1, 0, 0, 2, 0, 0], [3, 0, 0, 4, 5, 0], [0, 0, 0, 6, 7, 0]], dtype=np.float32)
    enc = F.encode_bitmap(w, "col")
    assert enc.outer.astype(int).tolist() == [1, 0, 0, 1, 1, 0]
    assert enc.elements.astype(int).tolist() == [1, 1, 0, 1, 1, 1, 0, 1, 1]
    assert enc.values.tolist() == [1, 3, 2, 4, 6, 5, 7]
    assert np.array_equal(F.decode_bitmap(enc), w)


def test_csb_example_fig1c() -> None:
    w = np.array([[1, 0, 0, 2, 3, 0], [0, 4, 5, 0, 0, 0], [6, 7, 0, 0, 0, 8]], dtype=np.float32)
    assert F.csb_groups(w) == [[0, 2], [1, 3], [4, 5]]
    enc = F.encode_csb(w)
    assert enc.merged == 3
    assert enc.col_index.T.reshape(-1).tolist() == [0, 2, 0, 3, 1, 1, 4, -1, 5]
    assert enc.values.tolist() == [1, 5, 6, 2, 4, 7, 3, 8]
    assert np.array_equal(F.decode_csb(enc), w)


def test_sos_example_word_count() -> None:
    # spec section 4: column bits 1001, element bits 110|111, 7 words instead of 12
    w = np.array([[1, 0, 0, 2], [3, 0, 0, 4], [0, 0, 0, 5]], dtype=np.float32)
    enc = F.encode_bitmap(w, "col")
    assert enc.words() == 7
    assert F.footprint_bits(w, "dense") == 12 * 32


def _naive_groups(w: np.ndarray) -> list[list[int]]:
    """The merge rule read literally, one column at a time."""
    nz = w != 0
    used = [not nz[:, c].any() for c in range(w.shape[1])]
    groups = []
    for c in range(w.shape[1]):
        if used[c]:
            continue
        used[c] = True
        g, rows = [c], set(np.flatnonzero(nz[:, c]).tolist())
        for d in range(c + 1, w.shape[1]):
            if not used[d] and not (set(np.flatnonzero(nz[:, d]).tolist()) & rows):
                used[d] = True
                g.append(d)
                rows |= set(np.flatnonzero(nz[:, d]).tolist())
        groups.append(g)
    return groups


@st.composite
def sparse_matrices(draw: st.DrawFn) -> np.ndarray:
    rows = draw(st.integers(1, 12))
    cols = draw(st.integers(1, 12))
    s = draw(st.floats(0.0, 0.99))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    w = rng.integers(-9, 10, size=(rows, cols)).astype(np.float32)
    w[rng.random((rows, cols)) < s] = 0
    return w


@settings(max_examples=150, deadline=None)
@given(sparse_matrices(), st.sampled_from(["col", "row"]))
def test_bitmap_round_trip(w: np.ndarray, orientation: str) -> None:
    enc = F.encode_bitmap(w, orientation)
    assert np.array_equal(F.decode_bitmap(enc), w)
    lines = w.T if orientation == "col" else w
    assert enc.outer.tolist() == [bool(np.any(x)) for x in lines]
    assert enc.nnz == np.count_nonzero(w)


@settings(max_examples=150, deadline=None)
@given(sparse_matrices())
def test_csb_round_trip_and_merge_rule(w: np.ndarray) -> None:
    groups = F.csb_groups(w)
    assert groups == _naive_groups(w)
    enc = F.encode_csb(w)
    assert np.array_equal(F.decode_csb(enc), w)
    # no two non-zeros of a group share a row; every non-zero is in exactly one slot
    for g in groups:
        assert (np.count_nonzero(w[:, g], axis=1) <= 1).all()
    assert sorted(c for g in groups for c in g) == [c for c in range(w.shape[1]) if w[:, c].any()]


def test_footprints_from_first_principles() -> None:
    w = np.zeros((4, 40), dtype=np.float32)
    w[0, 0] = 1
    w[0, 20] = 2   # 19 zeros before it: one padding entry
    w[3, 39] = 3
    flat = w.reshape(-1)
    pos = np.flatnonzero(flat)
    gaps = [pos[0]] + [pos[i] - pos[i - 1] - 1 for i in range(1, len(pos))]
    pads = sum(g // 16 for g in gaps)
    assert F.footprint_bits(w, "rle4") == (3 + pads) * 36
    assert F.footprint_bits(w, "csr") == 3 * 64 + 5 * 32
    assert F.footprint_bits(w, "csc") == 3 * 64 + 41 * 32
    assert F.footprint_bits(w, "coo") == 3 * 96
    assert F.footprint_bits(w, "bitmap") == 160 + 3 * 32
    # two-stage: 40 column bits = 2 words, 3 non-zero columns x 4 bits = 1 word, 3 values
    assert F.footprint_bits(w, "two_stage_bitmap") == (2 + 1 + 3) * 32
    # csb: columns 0, 20, 39 -> groups {0, 39}, {20}: 2 merged x 4 slots x 8 bit = 2 words
    assert F.csb_groups(w) == [[0, 39], [20]]
    assert F.footprint_bits(w, "csb") == (1 + 2 + 3) * 32


def test_footprint_ordering_at_high_sparsity() -> None:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((128, 512)).astype(np.float32)
    w[rng.random(w.shape) < 0.9] = 0
    fp = {f: F.footprint_bits(w, f) for f in F.FOOTPRINT_FORMATS}
    assert fp["two_stage_bitmap"] < fp["dense"]
    assert fp["csb"] < fp["dense"]
    # no column is all zero at this size: two-stage = plain bitmap + the column bits (+ padding)
    assert fp["bitmap"] + 512 <= fp["two_stage_bitmap"] <= fp["bitmap"] + 512 + 2 * 32


def test_bad_formats_are_refused() -> None:
    w = np.eye(3, dtype=np.float32)
    enc = F.encode_bitmap(w)
    with pytest.raises(ValueError, match="outer bits"):
        F.decode_bitmap(F.TwoStageBitmap((3, 4), "col", enc.outer, enc.elements, enc.values))
    csb = F.encode_csb(w)
    with pytest.raises(ValueError, match="one row per matrix row"):
        F.decode_csb(F.CSB((4, 3), csb.col_index, csb.values))
    with pytest.raises(ValueError, match="orientation"):
        F.encode_bitmap(w, "diag")
    with pytest.raises(ValueError, match="format"):
        F.footprint_bits(w, "zip")


# ---- pruning ----

def test_prune_column_vectors_smallest_norm() -> None:
    w = np.array([[1, 5, 0.1, 3], [1, 5, 0.1, 3], [2, 0.5, 4, 1], [2, 0.5, 4, 1]], dtype=np.float32)
    # column vectors of length 2: norms col0 sqrt2, 2sqrt2; col1 5sqrt2, .5sqrt2;
    # col2 .1sqrt2, 4sqrt2; col3 3sqrt2, sqrt2
    (out,) = P.prune_group([w], 0.375, 2, "col")  # floor(0.375 * 8) = 3 vectors
    expect = w.copy()
    expect[0:2, 2] = 0
    expect[2:4, 1] = 0
    expect[0:2, 0] = 0   # tie with col3 rows 2:4 (both sqrt2): the lower vector index goes
    assert P.sparsity_of(out) == 0.375
    assert np.array_equal(out, expect)


def test_prune_group_spans_operators_and_conv_im2col() -> None:
    rng = np.random.default_rng(3)
    conv = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    fc = rng.standard_normal((10, 16)).astype(np.float32) * 0.01
    small, big = P.prune_group([conv, fc], 0.3, 4, "row")
    assert small.shape == conv.shape and big.shape == fc.shape
    mat = small.reshape(8, 27)
    # row vectors of length 4 in the im2col matrix: each is either untouched or all zero
    for r in range(8):
        for s in range(0, 27, 4):
            seg = mat[r, s:s + 4]
            assert (seg == 0).all() or np.array_equal(seg, conv.reshape(8, 27)[r, s:s + 4])
    # the tiny FC weights go first: floor(0.3 * (8*7 + 10*4)) = 28 vectors, all from the FC
    assert np.array_equal(small, conv)
    zero_vecs = sum(int((big[r, s:s + 4] == 0).all()) for r in range(10) for s in range(0, 16, 4))
    assert zero_vecs == 28


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 5), st.sampled_from(["row", "col"]),
       st.floats(0.0, 0.95), st.integers(0, 2**31))
def test_prune_property(rows: int, cols: int, n: int, orient: str, s: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows, cols)).astype(np.float32) + 0.1
    (out,) = P.prune_group([w], s, n, orient)
    lines = w.T if orient == "col" else w
    olines = out.T if orient == "col" else out
    vecs = [(np.linalg.norm(lines[i, j:j + n].astype(np.float64)), i, j)
            for i in range(lines.shape[0]) for j in range(0, lines.shape[1], n)]
    dead = [v for v in vecs if not olines[v[1], v[2]:v[2] + n].any()]
    assert len(dead) == int(np.floor(s * len(vecs)))
    alive_min = min((v[0] for v in vecs if v not in dead), default=np.inf)
    assert all(v[0] <= alive_min for v in dead)
    for v in vecs:
        seg = olines[v[1], v[2]:v[2] + n]
        assert (seg == 0).all() or np.array_equal(seg, lines[v[1], v[2]:v[2] + n])


def test_prune_bad_input() -> None:
    w = np.ones((2, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="sparsity"):
        P.prune_group([w], 1.0, 2)
    with pytest.raises(ValueError, match="n must be"):
        P.prune_group([w], 0.5, 0)


def test_csb_merge_on_strips_taller_than_64_rows() -> None:
    rng = np.random.default_rng(9)
    for s in (0.5, 0.9, 0.97):
        w = (rng.random((70, 40)) > s).astype(np.float32)
        assert F.csb_groups(w) == _naive_groups(w)
        assert np.array_equal(F.decode_csb(F.encode_csb(w)), w)
