"""Voyager datatypes against independent references: ml_dtypes round trips, an exact
(Fraction) round-to-nearest-even oracle, posit tables derived by hand from the posit
standard's definition, and a bit-level posit encoder written from the standard's rounding
rule (round the unbounded pattern, ties to even, never to 0 or NaR)."""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from accelerators.voyager.model import dtypes as D
from accelerators.voyager.model import posit
from accelerators.voyager.model.errors import VoyagerError
from voyager_ref import oracle, ref_posit_encode

def all_codes(attr: str, bits: int) -> np.ndarray:
    codes = np.arange(1 << bits, dtype=np.uint16 if bits == 16 else np.uint8)
    with np.errstate(invalid="ignore"):
        vals = codes.view(getattr(ml_dtypes, attr)).astype(np.float64)
    return codes[np.isfinite(vals)]


@pytest.mark.parametrize("name,attr,bits", [("bf16", "bfloat16", 16), ("e4m3", "float8_e4m3fn", 8),
                                            ("e5m2", "float8_e5m2", 8)])
def test_float_codes_round_trip_through_ml_dtypes(name, attr, bits):
    t = D.parse_dtype(name)
    codes = all_codes(attr, bits)
    vals = t.decode(codes)
    np.testing.assert_array_equal(vals, codes.view(getattr(ml_dtypes, attr)).astype(np.float64))
    back = t.encode(vals)
    # +0/-0 both decode to 0 and are the same value
    np.testing.assert_array_equal(t.decode(back), vals)
    assert np.array_equal(back[vals != 0], codes[vals != 0])


def test_rounding_is_single_and_exact_where_ml_dtypes_alone_would_round_twice():
    # ml_dtypes converts float64 through float32: 1 + 2^-8 + 2^-30 would become the tie 1 + 2^-8
    x = 1 + 2.0 ** -8 + 2.0 ** -30
    assert D.round_to("bf16", x) == 1 + 2.0 ** -7
    assert D.round_to("e4m3", 1 + 2.0 ** -4 + 2.0 ** -40) == 1.125
    assert D.round_to("bf16", 1 + 2.0 ** -8) == 1.0                        # tie to even
    assert D.round_to("bf16", 1 + 3 * 2.0 ** -8) == 1 + 2.0 ** -6           # tie to even (up)


@pytest.mark.parametrize("fmt", ["bf16", "e4m3", "e5m2", "fp32"])
def test_round_to_matches_the_exact_oracle(fmt):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(400) * np.ldexp(1.0, rng.integers(-20, 20, 400))
    got = D.round_to(fmt, x)
    want = [oracle(Fraction(float(v)), fmt) for v in x]
    np.testing.assert_array_equal(got, want)


def test_e4m3_saturates_and_e5m2_overflows_to_inf():
    np.testing.assert_array_equal(D.round_to("e4m3", [1000.0, -1e9, np.inf, 464.0, 449.0]),
                                  [448.0, -448.0, 448.0, 448.0, 448.0])
    assert np.isnan(D.round_to("e4m3", np.nan))
    np.testing.assert_array_equal(D.round_to("e5m2", [1e6, -1e6, 57344.0]), [np.inf, -np.inf, 57344.0])
    # subnormals exist: e4m3 min subnormal 2^-9, half of it ties to 0 (even)
    np.testing.assert_array_equal(D.round_to("e4m3", [2.0 ** -9, 2.0 ** -10, 1.5 * 2.0 ** -10]),
                                  [2.0 ** -9, 0.0, 2.0 ** -9])


@pytest.mark.parametrize("fmt", ["bf16", "fp32"])
def test_fused_mac_rounds_the_exact_sum_once(fmt):
    rng = np.random.default_rng(2)
    n = 300
    acc = D.round_to("bf16", rng.standard_normal(n) * np.ldexp(1.0, rng.integers(-40, 40, n)))
    x = D.round_to("bf16", rng.standard_normal(n))
    w = D.round_to("bf16", rng.standard_normal(n) * np.ldexp(1.0, rng.integers(-40, 40, n)))
    got = D.fused_mac(fmt, acc, x, w)
    want = [oracle(Fraction(float(a)) + Fraction(float(b)) * Fraction(float(c)), fmt) for a, b, c in zip(acc, x, w)]
    np.testing.assert_array_equal(got, want)
    # the case float64 alone gets wrong: a product on a bf16 tie plus a far smaller accumulator
    assert D.fused_mac("bf16", np.array([2.0 ** -80]), np.array([1 + 2.0 ** -7]), np.array([1 + 2.0 ** -1])) \
        == oracle(Fraction(2) ** -80 + Fraction(129, 128) * Fraction(3, 2), "bf16")


# ----- posit ---------------------------------------------------------------------------------
# hand-derived from the standard (useed = 2^2^es; value = useed^k * 2^e * (1 + f))
POSIT_TABLE = {
    (8, 0): {0x00: 0.0, 0x40: 1.0, 0x60: 2.0, 0x50: 1.5, 0x7F: 64.0, 0x01: 1 / 64, 0x7E: 32.0, 0x20: 0.5,
             0xC0: -1.0, 0xFF: -1 / 64},
    (8, 1): {0x40: 1.0, 0x50: 2.0, 0x48: 1.5, 0x60: 4.0, 0x7F: 4096.0, 0x7E: 1024.0, 0x01: 4.0 ** -6,
             0x30: 0.5, 0x41: 1 + 1 / 16, 0xC0: -1.0},
    (8, 2): {0x40: 1.0, 0x48: 2.0, 0x50: 4.0, 0x60: 16.0, 0x7F: 2.0 ** 24, 0x01: 2.0 ** -24, 0x44: 1.5},
}


@pytest.mark.parametrize("n,es", sorted(POSIT_TABLE))
def test_posit_decoding_matches_hand_derived_values(n, es):
    t = posit.value_table(n, es)
    for code, v in POSIT_TABLE[(n, es)].items():
        assert t[code] == v, (hex(code), t[code], v)
    assert np.isnan(t[0x80])
    assert np.all(np.diff(t[1:0x80]) > 0)                  # positive patterns are monotone


@pytest.mark.parametrize("es", [0, 1, 2])
def test_posit_encoding_follows_the_standards_rounding(es):
    n = 8
    vals = posit.value_table(n, es)
    wide = posit.value_table(n + 1, es)
    rng = np.random.default_rng(es)
    samples = list(rng.standard_normal(300) * np.ldexp(1.0, rng.integers(-30, 30, 300)))
    samples += [float(v) for v in wide if np.isfinite(v)]       # every tie and every value
    samples += [float(np.nextafter(v, np.inf)) for v in wide if np.isfinite(v)]
    samples += [float(np.nextafter(v, -np.inf)) for v in wide if np.isfinite(v)]
    samples += [1e30, -1e30, 1e-30, -1e-30, 0.0]
    got = posit.encode(np.array(samples), n, es)
    want = [ref_posit_encode(x, n, es) for x in samples]
    assert [int(g) for g in got] == want
    np.testing.assert_array_equal(posit.decode(posit.encode(vals[np.isfinite(vals)], n, es), n, es),
                                  vals[np.isfinite(vals)])


def test_posit_rounding_is_on_the_pattern_not_the_value():
    # posit<8,1>: between 1024 (0x7E) and 4096 (0x7F) the tie is 2048 (pattern 0x7E + half), not 2560
    t = D.parse_dtype("posit8")
    assert [int(c) for c in t.encode(np.array([2048.0, 2049.0, 2500.0, 2047.0]))] == [0x7E, 0x7F, 0x7F, 0x7E]
    assert t.encode(np.array([1 + 1 / 32]))[0] == 0x40 and t.encode(np.array([1 + 3 / 32]))[0] == 0x42
    assert [int(c) for c in t.encode(np.array([1e9, -1e9, 1e-12, -1e-12, np.nan]))] == [0x7F, 0x81, 0x01, 0xFF, 0x80]
    assert D.parse_dtype("posit8_es2").es == 2


# ----- integers, MX, custom ------------------------------------------------------------------
def test_int_encode_rounds_half_even_and_saturates_and_accumulators_wrap():
    t = D.parse_dtype("int4")
    np.testing.assert_array_equal(t.encode(np.array([0.5, 1.5, 2.5, -2.5, 7.6, -9.0])), [0, 2, 2, -2, 7, -8])
    assert D.wrap_int(np.array([2 ** 31, 2 ** 31 + 5, -(2 ** 31) - 1]), 32).tolist() == [-(2 ** 31), -(2 ** 31) + 5,
                                                                                           2 ** 31 - 1]
    assert D.wrap_int(np.array([2 ** 23]), 24).tolist() == [-(2 ** 23)]


def test_mx_quantisation_follows_the_ocp_rule():
    x = np.zeros((1, 64))
    x[0, :32] = np.linspace(-3.0, 2.5, 32)           # max |x| = 3 -> e = 1 + 127
    mx = D.MXInt8(32).quantize_blocks(x, axis=1)
    assert mx.e.tolist() == [[128, 0]]                # second block all zero -> e = 0
    want = np.clip(np.rint(x[0, :32] * 2.0 ** -1 * 64), -127, 127)
    np.testing.assert_array_equal(mx.q[0, :32], want)
    np.testing.assert_array_equal(mx.values()[0, :32], want * 2.0 ** -6 * 2.0)
    with pytest.raises(VoyagerError, match="block size 32 does not divide the reduction dimension 48"):
        D.MXInt8(32).quantize_blocks(np.ones((2, 48)), axis=1, where="layer conv1")


def test_mx_gemm_matches_an_exact_reference():
    rng = np.random.default_rng(3)
    mt = D.MXInt8(16)
    x = mt.quantize_blocks(rng.standard_normal((5, 48)), axis=1)
    w = mt.quantize_blocks(rng.standard_normal((48, 4)) * 0.01, axis=0)
    got = D.mx_dot_blocks(x.q, x.e, w.q, w.e, 16)
    for i in range(5):
        for j in range(4):
            acc = 0.0
            for b in range(3):
                s = sum(int(x.q[i, k]) * int(w.q[k, j]) for k in range(16 * b, 16 * b + 16))
                deq = oracle(s * Fraction(2) ** (int(x.e[i, b]) + int(w.e[b, j]) - 254 - 12), "bf16")
                acc = oracle(Fraction(acc) + Fraction(deq), "bf16")
            assert got[i, j] == acc


def test_custom_type_is_a_quantiser_over_bf16_values():
    book = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    nf = D.CustomType("nf-like", lambda v: book[np.argmin(np.abs(v[..., None] - book), axis=-1)])
    np.testing.assert_array_equal(nf.quantize(np.array([0.7, -0.2, 0.26, 3.0])), [0.5, 0.0, 0.5, 1.0])
    bad = D.CustomType("bad", lambda v: v + 1e-5)
    with pytest.raises(VoyagerError, match="bad: quantisation function returned .* not a bf16 value"):
        bad.encode(np.array([1.0]))


def test_unknown_datatype_is_refused_with_the_known_ones():
    with pytest.raises(VoyagerError, match=r"layer fc: unknown datatype 'fp9'.*known: int2..int16"):
        D.parse_dtype("fp9", where="layer fc")
    with pytest.raises(VoyagerError, match="int17"):
        D.parse_dtype("int17")
    assert D.design("int8").accum == "int32" and D.design("mxint8").accum_buffer == "bf16"
    assert D.design("posit8").accum == "bf16" and D.design("int8", "int24").accum == "int24"


@pytest.mark.parametrize("name,acc", [("int8", "int24"), ("int4", "int8"), ("bf16", None), ("e4m3", None),
                                      ("posit8", None), ("fp32", None), ("bf16", "fp32")])
def test_each_designs_mac_and_accumulation_against_the_reference(name, acc):
    des = D.design(name, acc)
    rng = np.random.default_rng(7)
    if des.int_accum:
        bits = des.accum_bits()
        a = rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), 200)
        x = rng.integers(des.operand.lo, des.operand.hi + 1, 200)
        w = rng.integers(des.operand.lo, des.operand.hi + 1, 200)
        want = [(int(p) + int(q) * int(r) + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1) for p, q, r in zip(a, x, w)]
        assert des.mac(a, x, w).tolist() == want
        assert des.accumulate(np.array([2 ** (bits - 1) - 1]), np.array([1])).tolist() == [-(2 ** (bits - 1))]
        return
    a = D.round_to(des.accum, rng.standard_normal(200) * 8)
    x, w = des.operand.quantize(rng.standard_normal(200)), des.operand.quantize(rng.standard_normal(200))
    want = [oracle(Fraction(float(p)) + Fraction(float(q)) * Fraction(float(r)), des.accum) for p, q, r in zip(a, x, w)]
    np.testing.assert_array_equal(des.mac(a, x, w), want)
    b = D.round_to(des.accum, rng.standard_normal(200) * 1e-3)
    np.testing.assert_array_equal(des.accumulate(a, b), [oracle(Fraction(float(p)) + Fraction(float(q)),
                                                                des.accum_buffer) for p, q in zip(a, b)])


# ----- properties (hypothesis): edge cases the random draws above rarely reach -----------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None)
@given(a=_finite, b=_finite, fmt=st.sampled_from(["bf16", "e4m3", "e5m2", "fp32"]))
def test_an_exact_sum_rounds_once_for_any_operands(a, b, fmt):
    got = float(D.round_sum(fmt, np.array([a]), np.array([b]))[0])
    want = oracle(Fraction(a) + Fraction(b), fmt)
    assert got == want or (np.isnan(got) and np.isnan(want)), (a, b, fmt, got, want)


@settings(max_examples=200, deadline=None)
@given(x=st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), es=st.integers(0, 2),
       n=st.sampled_from([6, 8, 10]))
def test_posit_encoding_of_any_value_follows_the_standard(x, es, n):
    assert int(posit.encode(np.array([x]), n, es)[0]) == ref_posit_encode(x, n, es)
