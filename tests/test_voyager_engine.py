"""Voyager matrix and vector units against independent references: numpy integer
arithmetic, scalar exact-rational loops (tests/voyager_ref.py), a direct convolution
written with loops, the cycle-level array against the tile rule of the spec."""
from __future__ import annotations

from math import erf

import numpy as np
import pytest

from accelerators.voyager.model import dtypes as D
from accelerators.voyager.model import matrix as M
from accelerators.voyager.model import vector as V
from accelerators.voyager.model.errors import VoyagerError
from voyager_ref import F, oracle, ref_gemm_float


def rand_operands(dt: D.DType, shape, rng, scale=1.0):
    return dt.quantize(rng.standard_normal(shape) * scale)


@pytest.mark.parametrize("name", ["bf16", "e4m3", "e5m2", "posit8", "posit8_es2", "fp32"])
def test_float_gemm_of_each_datatype_is_bit_exact(name):
    rng = np.random.default_rng(len(name))
    des = D.design(name)
    x = rand_operands(des.operand, (3, 21), rng)
    w = rand_operands(des.operand, (21, 4), rng, 0.5)
    bias = rng.standard_normal(4)
    got = M.gemm(des, x, w, 8, bias=bias)
    want = ref_gemm_float(x, w, 8, des.accum, des.accum_buffer, bias)
    np.testing.assert_array_equal(got, want)
    # another loop order is another rounding sequence, and the model follows it
    order = [2, 0, 1]
    np.testing.assert_array_equal(M.gemm(des, x, w, 8, bias=bias, order=order),
                                  ref_gemm_float(x, w, 8, des.accum, des.accum_buffer, bias, order))


@pytest.mark.parametrize("name,acc", [("int8", None), ("int4", None), ("int16", None), ("int8", "int16")])
def test_integer_gemm_is_exact_and_wraps_at_the_accumulator_width(name, acc):
    rng = np.random.default_rng(5)
    des = D.design(name, acc)
    t = des.operand
    x = rng.integers(t.lo, t.hi + 1, (4, 40))
    w = rng.integers(t.lo, t.hi + 1, (40, 5))
    bias = rng.integers(-1000, 1000, 5)
    got = M.gemm(des, x, w, 16, bias=bias)
    exact = x.astype(object) @ w.astype(object) + bias.astype(object)
    bits = des.accum_bits()
    want = np.array([[(int(v) + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1) for v in row] for row in exact])
    np.testing.assert_array_equal(got, want)


def test_mxint8_gemm_dequantises_each_block_with_both_scales():
    rng = np.random.default_rng(6)
    des = D.design("mxint8_b16")
    mt = des.operand
    x = mt.quantize_blocks(rng.standard_normal((3, 32)), axis=1)
    w = mt.quantize_blocks(rng.standard_normal((32, 4)), axis=0)
    got = M.gemm(des, x.q, w.q, 8, x_scale=x.e, w_scale=w.e)
    for i in range(3):
        for j in range(4):
            acc = 0.0
            for b in range(2):
                s = sum(int(x.q[i, k]) * int(w.q[k, j]) for k in range(16 * b, 16 * b + 16))
                acc = oracle(F(acc) + F(oracle(s * F(2.0 ** (int(x.e[i, b]) + int(w.e[b, j]) - 266)), "bf16")), "bf16")
            assert got[i, j] == acc
    with pytest.raises(VoyagerError, match="layer l3: MX block size 16 is not a multiple of the array rows 32"):
        M.gemm(des, x.q, w.q, 32, x_scale=x.e, w_scale=w.e, where="layer l3")


def ref_conv(x, w, stride, pad):
    """Direct convolution with loops (exact integers)."""
    fy, fx, c, oc = w.shape
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0))).astype(np.int64)
    ho = (x.shape[0] + 2 * pad - fy) // stride + 1
    wo = (x.shape[1] + 2 * pad - fx) // stride + 1
    out = np.zeros((ho, wo, oc), np.int64)
    for oy in range(ho):
        for ox in range(wo):
            for dy in range(fy):
                for dx in range(fx):
                    out[oy, ox] += xp[oy * stride + dy, ox * stride + dx] @ w[dy, dx].astype(np.int64)
    return out


def test_int8_conv_is_exact_with_channels_padded_to_the_array_rows():
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (7, 6, 5))
    w = rng.integers(-128, 128, (3, 3, 5, 6))
    got = M.conv2d(D.design("int8"), x, w, 4, stride=2, pad=1)
    np.testing.assert_array_equal(got, ref_conv(x, w, 2, 1))


def test_bf16_conv_follows_the_loop_order():
    rng = np.random.default_rng(8)
    des = D.design("bf16")
    x = rand_operands(des.operand, (4, 4, 6), rng)
    w = rand_operands(des.operand, (2, 2, 6, 3), rng)
    cols = M.im2col(x, 2, 2, 1, 0, 4)                      # taps outer, channels padded to 8
    wm = np.pad(w, ((0, 0), (0, 0), (0, 2), (0, 0))).reshape(-1, 3)
    for outer in (False, True):
        order = [t * 2 + b for b in range(2) for t in range(4)] if outer else None
        got = M.conv2d(des, x, w, 4, channel_outer=outer)
        want = ref_gemm_float(cols, wm, 4, "bf16", "bf16", None, order).reshape(3, 3, 3)
        np.testing.assert_array_equal(got, want)


# ----- the array, cycle by cycle -------------------------------------------------------------
def test_systolic_array_sums_match_the_gemm_and_its_cycles_the_tile_rule():
    rng = np.random.default_rng(9)
    des = D.design("int8")
    rows, cols, p, n = 4, 3, 9, 4
    arr = M.SystolicArray(des, rows, cols)
    xs = [rng.integers(-128, 128, (p, rows)) for _ in range(n)]
    ws = [rng.integers(-128, 128, (rows, cols)) for _ in range(n)]
    run = arr.run(xs, ws)
    for x, w, s in zip(xs, ws, run.sums):
        np.testing.assert_array_equal(s, x @ w)
    # P >= rows + cols: loads hide behind compute; first load, n streams, skew drain (PE latency 1)
    assert run.cycles == rows + n * p + (rows - 1) + (cols - 1)
    assert [b - a for a, b in zip(run.stream_start, run.stream_start[1:])] == [p] * (n - 1)


def test_short_streams_are_bound_by_the_weight_shift_chain_and_need_three_registers():
    des = D.design("bf16")
    # three registers hide the load when the previous-but-two tile has drained: P + cols - 2 <= rows
    rows, cols, p, n = 8, 4, 3, 6
    three = M.SystolicArray(des, rows, cols, weight_regs=3).schedule([p] * n)
    two = M.SystolicArray(des, rows, cols, weight_regs=2).schedule([p] * n)
    # max(t_compute, t_wload) per tile: a tile every `rows` cycles with three registers
    assert [b - a for a, b in zip(three[1], three[1][1:])] == [rows] * (n - 1)
    assert two[2] > three[2]
    rng = np.random.default_rng(10)
    xs = [rand_operands(des.operand, (p, rows), rng) for _ in range(2)]
    ws = [rand_operands(des.operand, (rows, cols), rng) for _ in range(2)]
    sums = M.SystolicArray(des, rows, cols).run(xs, ws).sums
    for x, w, s in zip(xs, ws, sums):
        np.testing.assert_array_equal(s, ref_gemm_float(x, w, rows, "bf16", "bf16"))


def test_array_size_zero_is_refused():
    with pytest.raises(VoyagerError, match="array size 0x16"):
        M.SystolicArray(D.design("int8"), 0, 16)


# ----- vector unit ---------------------------------------------------------------------------
def bf(v):
    return oracle(F(v), "bf16")


def test_dequantise_bias_relu_residual_and_quantise_round_after_each_step():
    rng = np.random.default_rng(11)
    acc = rng.integers(-40000, 40000, (5, 4))
    s = rng.uniform(1e-4, 1e-3, 4)
    bias = rng.standard_normal(4)
    skip = rng.standard_normal((5, 4))
    y = V.dequantize(acc, s)
    y = V.add(y, V.rnd(bias))
    y = V.add(y, V.rnd(skip))
    y = V.relu(y)
    q = V.quantize(y, D.IntType(8), 0.05)
    for i in range(5):
        for j in range(4):
            v = bf(F(bf(acc[i, j])) * F(bf(s[j])))
            v = bf(F(v) + F(bf(bias[j])))
            v = bf(F(v) + F(bf(skip[i, j])))
            v = max(v, 0.0)
            assert y[i, j] == v
            qv = bf(F(v) * F(bf(1 / 0.05)))
            assert q[i, j] == min(127, max(-128, int(np.rint(qv))))


def test_softmax_and_layer_norm_are_the_three_pass_programs():
    rng = np.random.default_rng(12)
    x = V.rnd(rng.standard_normal((2, 6)) * 3)
    got = V.softmax(x)
    for i in range(2):
        m = max(x[i])
        e = [bf(np.exp(bf(F(v) - F(m)))) for v in x[i]]
        s = 0.0
        for v in e:
            s = bf(F(s) + F(v))
        r = bf(1 / s)
        assert list(got[i]) == [bf(F(v) * F(r)) for v in e]
    assert abs(got.sum(axis=1) - 1).max() < 0.03
    g, b = V.rnd(rng.standard_normal(6)), V.rnd(rng.standard_normal(6))
    ln = V.layer_norm(x, g, b)
    inv_n = bf(1 / 6)
    for i in range(2):
        s = 0.0
        for v in x[i]:
            s = bf(F(s) + F(v))
        mean = bf(F(s) * F(inv_n))
        d = [bf(F(v) - F(mean)) for v in x[i]]
        s2 = 0.0
        for v in d:
            s2 = bf(F(s2) + F(bf(F(v) * F(v))))
        var = bf(F(s2) * F(inv_n))
        inv = bf(1 / np.sqrt(bf(F(var) + F(bf(1e-5)))))
        assert list(ln[i]) == [bf(F(bf(F(bf(F(dv) * F(inv))) * F(gv))) + F(bv))
                               for dv, gv, bv in zip(d, g, b)]


@pytest.mark.parametrize("name,fn", [("gelu", lambda v: 0.5 * v * (1 + erf(v / 2 ** 0.5))),
                                     ("silu", lambda v: v / (1 + np.exp(-v)))])
def test_spline_activations_evaluate_their_segments_bit_exactly_and_approximate_the_function(name, fn):
    sp = V.spline(name)
    assert len(sp.bounds) == 6 and len(sp.coeffs) == 7
    xs = V.rnd(np.linspace(-8, 8, 161))
    got = V.activation(name, xs)
    for v, g in zip(xs, got):
        seg = sum(1 for b in sp.bounds if v >= b)
        c2, c1, c0 = sp.coeffs[seg]
        t = bf(F(c2) * F(v))
        t = bf(F(t) + F(c1))
        t = bf(F(t) * F(v))
        assert g == bf(F(t) + F(c0))
        assert abs(g - fn(v)) < 0.06 + 0.01 * abs(v)


def test_pooling_and_permuting_address_generators():
    rng = np.random.default_rng(13)
    x = V.rnd(rng.standard_normal((4, 4, 3)))
    mp = V.pool2d(x, 2, 2, "max")
    np.testing.assert_array_equal(mp, x.reshape(2, 2, 2, 2, 3).max(axis=(1, 3)))
    ap = V.pool2d(x, 2, 2, "avg")
    for oy in range(2):
        for ox in range(2):
            for c in range(3):
                s = 0.0
                for dy in range(2):
                    for dx in range(2):
                        s = bf(F(s) + F(x[2 * oy + dy, 2 * ox + dx, c]))
                assert ap[oy, ox, c] == bf(F(s) * F(bf(0.25)))
    t = rng.standard_normal((2, 3, 4, 5))
    for perm in [(0, 2, 1, 3), (3, 2, 1, 0), (1, 0, 3, 2)]:
        np.testing.assert_array_equal(V.permuted_read(t.reshape(-1), t.shape, perm), np.transpose(t, perm))
    with pytest.raises(VoyagerError, match="permutation"):
        V.permuted_read(t.reshape(-1), t.shape, (0, 0, 1, 2))


def test_attention_with_reshapes_folded_into_address_generators_matches_explicit_transposes():
    from accelerators.voyager.model.attention import attention
    rng = np.random.default_rng(14)
    des = D.design("bf16")
    s, heads, d = 5, 2, 4
    qkv = rand_operands(des.operand, (s, 3 * heads * d), rng)
    got = attention(des, qkv, heads, 4)
    t = qkv.reshape(s, 3, heads, d)
    scale = bf(1 / np.sqrt(d))
    for h in range(heads):
        q, k, v = t[:, 0, h], t[:, 1, h], t[:, 2, h]
        scores = ref_gemm_float(q, np.ascontiguousarray(k.T), 4, "bf16", "bf16")
        scores = np.array([[bf(F(bf(x)) * F(scale)) for x in row] for row in scores])
        probs = []
        for row in scores:
            m = max(row)
            e = [bf(np.exp(bf(F(x) - F(m)))) for x in row]
            tot = 0.0
            for x in e:
                tot = bf(F(tot) + F(x))
            r = bf(1 / tot)
            probs.append([bf(F(x) * F(r)) for x in e])
        out = ref_gemm_float(np.array(probs), v, 4, "bf16", "bf16")
        np.testing.assert_array_equal(got[:, h * d:(h + 1) * d], out)
    with pytest.raises(VoyagerError, match="QKV width 10"):
        attention(des, np.zeros((2, 10)), 2, 4)
