"""Tensil fixed-point arithmetic against exact rational arithmetic (spec §2, §13)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelerators.tensil.model.fixed import FixedFormat

FP16 = FixedFormat.named("FP16BP8")
FP32 = FixedFormat.named("FP32B16")


def ref_mac(fmt: FixedFormat, x: int, w: int, z: int) -> int:
    """Exact x*w/2^F + z, rounded half to even (Python's round on a Fraction), saturated."""
    exact = Fraction(x * w, 1 << fmt.frac) + z
    return max(fmt.lo, min(fmt.hi, round(exact)))


# ties at bit F-1 (x*w low byte exactly 0x80) with even and odd z, and saturation at both ends
@pytest.mark.parametrize("x,w,z,expected", [
    (1, 128, 0, 0), (1, 128, 1, 2), (1, 128, 2, 2), (1, 128, -1, 0), (-1, 128, 0, 0),
    (-1, 128, 1, 0), (-1, 128, -1, -2), (3, 128, 0, 2), (5, 128, 0, 2), (1, 129, 0, 1),
    (1, 127, 0, 0), (-1, 129, 0, -1), (32767, 32767, 0, 32767), (-32768, 32767, 0, -32768),
    (256, 256, 32767, 32767), (-256, 256, -32768, -32768), (256, 256, 5, 261),
])
def test_fp16_mac_table(x: int, w: int, z: int, expected: int) -> None:
    assert int(FP16.mac(x, w, z)) == expected


def test_rounding_applies_to_whole_sum() -> None:
    # x*w = 0.5 LSB; z odd: whole-sum rounding goes to even (z+1), z + rne(x*w) gives z
    z = 3
    assert int(FP16.mac(1, 128, z)) == 4
    assert z + int(FP16.mac(1, 128, 0)) == 3


@settings(max_examples=400, deadline=None)
@given(st.integers(-32768, 32767), st.integers(-32768, 32767), st.integers(-32768, 32767))
def test_fp16_mac_matches_fractions(x: int, w: int, z: int) -> None:
    assert int(FP16.mac(x, w, z)) == ref_mac(FP16, x, w, z)


@settings(max_examples=400, deadline=None)
@given(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-(1 << 31), (1 << 31) - 1),
       st.integers(-(1 << 31), (1 << 31) - 1))
def test_fp32_mac_matches_fractions(x: int, w: int, z: int) -> None:
    assert int(FP32.mac(x, w, z)) == ref_mac(FP32, x, w, z)


def test_mac_vectorised_equals_scalar() -> None:
    rng = np.random.default_rng(7)
    x, w, z = (rng.integers(-32768, 32768, 500) for _ in range(3))
    got = FP16.mac(x, w, z)
    assert [int(v) for v in got] == [ref_mac(FP16, int(a), int(b), int(c)) for a, b, c in zip(x, w, z)]


@settings(max_examples=200, deadline=None)
@given(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-(1 << 31), (1 << 31) - 1))
def test_saturating_add(a: int, b: int) -> None:
    assert int(FP32.add(a, b)) == max(FP32.lo, min(FP32.hi, a + b))
    a16, b16 = a >> 16, b >> 16
    assert int(FP16.add(a16, b16)) == max(-32768, min(32767, a16 + b16))


@settings(max_examples=300, deadline=None)
@given(st.floats(-300, 300, allow_nan=False))
def test_from_float_floor_half_up(f: float) -> None:
    for fmt in (FP16, FP32):
        exact = math.floor(Fraction(f) * fmt.one + Fraction(1, 2))
        assert int(fmt.from_float(f)) == max(fmt.lo, min(fmt.hi, exact))


def test_byte_layout_little_endian_lane0_first() -> None:
    assert FP16.to_bytes([1, -2]) == bytes([1, 0, 0xFE, 0xFF])
    assert FP32.to_bytes([0x12345678]) == bytes([0x78, 0x56, 0x34, 0x12])
    assert list(FP16.from_bytes(bytes([0, 0x80, 0xFF, 0x7F]))) == [-32768, 32767]
