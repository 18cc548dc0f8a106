"""RBE bit-plane layouts: exact bit placement, byte order, round trips, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.rbe.layout import (from_bytes, pack_activations, pack_bitplanes, pack_normquant,
                                   pack_weights_1x1, pack_weights_3x3, to_bytes,
                                   unpack_activations, unpack_bitplanes, unpack_normquant,
                                   unpack_weights_1x1, unpack_weights_3x3)

bits_st = st.integers(2, 8)


def test_single_activation_bit_lands_in_its_word_and_bit():
    x = np.zeros((2, 3, 64), dtype=np.int64)
    x[1, 2, 37] = 1 << 4  # channel 37 = group 1, bit 5 of the word; value bit 4
    words = pack_activations(x, 6)
    assert words.shape == (2, 3, 2, 6) and words.dtype == np.uint32
    expect = np.zeros_like(words)
    expect[1, 2, 1, 4] = 1 << 5
    np.testing.assert_array_equal(words, expect)


def test_bytes_are_little_endian_words_in_c_order():
    x = np.zeros((1, 1, 32), dtype=np.int64)
    x[0, 0, 0] = 0b01  # bit 0 of channel 0 -> word 0 = 0x00000001
    x[0, 0, 31] = 0b10  # bit 1 of channel 31 -> word 1 = 0x80000000
    data = to_bytes(pack_activations(x, 2))
    assert data == bytes([1, 0, 0, 0, 0, 0, 0, 0x80])
    np.testing.assert_array_equal(from_bytes(data, (1, 1, 1, 2)), pack_activations(x, 2))


def test_all_ones_word():
    x = np.full((1, 1, 32), 3, dtype=np.int64)
    np.testing.assert_array_equal(pack_activations(x, 2), np.full((1, 1, 1, 2), 0xFFFFFFFF))


def test_3x3_weight_tap_order_is_ky_times_3_plus_kx():
    w = np.zeros((2, 32, 3, 3), dtype=np.int64)
    w[1, 5, 2, 1] = 0b100
    words = pack_weights_3x3(w, 3)
    assert words.shape == (2, 1, 3, 9)
    nz = np.argwhere(words)
    assert nz.tolist() == [[1, 0, 2, 7]]  # ko=1, group 0, bit 2, tap 2*3+1
    assert words[1, 0, 2, 7] == 1 << 5


def test_1x1_weights_accept_4d_and_2d():
    rng = np.random.default_rng(0)
    w = rng.integers(0, 8, size=(32, 64))
    np.testing.assert_array_equal(pack_weights_1x1(w, 3), pack_weights_1x1(w[:, :, None, None], 3))
    assert pack_weights_1x1(w, 3).shape == (32, 2, 3)


def test_normquant_record_bytes():
    scale = np.array([0x1234] + [0] * 31)
    bias = np.array([-2] + [0] * 31)
    data = pack_normquant(scale, bias)
    assert data.size == 32 * 6
    assert bytes(data[:6]) == bytes([0x34, 0x12, 0xFE, 0xFF, 0xFF, 0xFF])


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 4), w=st.integers(1, 4), groups=st.integers(1, 3), bits=bits_st,
       seed=st.integers(0, 2**32 - 1))
def test_activation_round_trip(h, w, groups, bits, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << bits, size=(h, w, 32 * groups))
    words = pack_activations(x, bits)
    assert words.shape == (h, w, groups, bits)
    np.testing.assert_array_equal(unpack_activations(words), x)
    np.testing.assert_array_equal(
        unpack_activations(from_bytes(to_bytes(words), words.shape)), x)


@settings(max_examples=30, deadline=None)
@given(kout=st.integers(1, 3), groups=st.integers(1, 3), bits=bits_st,
       seed=st.integers(0, 2**32 - 1))
def test_weight_round_trips(kout, groups, bits, seed):
    rng = np.random.default_rng(seed)
    w3 = rng.integers(0, 1 << bits, size=(kout, 32 * groups, 3, 3))
    np.testing.assert_array_equal(unpack_weights_3x3(pack_weights_3x3(w3, bits)), w3)
    w1 = rng.integers(0, 1 << bits, size=(kout, 32 * groups))
    np.testing.assert_array_equal(unpack_weights_1x1(pack_weights_1x1(w1, bits)), w1)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_normquant_round_trip(n, seed):
    rng = np.random.default_rng(seed)
    scale = rng.integers(0, 1 << 16, size=32 * n)
    bias = rng.integers(-(1 << 31), 1 << 31, size=32 * n)
    s, b = unpack_normquant(bytes(pack_normquant(scale, bias)))
    np.testing.assert_array_equal(s, scale)
    np.testing.assert_array_equal(b, bias)


def test_generic_bitplanes_match_a_per_bit_reference():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 7, size=(5, 64))
    words = pack_bitplanes(x, 7)
    for g in range(2):
        for b in range(7):
            ref = sum(((int(x[3, 32 * g + c]) >> b) & 1) << c for c in range(32))
            assert int(words[3, g, b]) == ref
    np.testing.assert_array_equal(unpack_bitplanes(words), x)


@pytest.mark.parametrize("call", [
    lambda: pack_activations(np.zeros((1, 1, 48), dtype=int), 4),      # K not multiple of 32
    lambda: pack_activations(np.full((1, 1, 32), 16), 4),              # value >= 2**bits
    lambda: pack_activations(np.full((1, 1, 32), -1), 4),              # negative value
    lambda: pack_activations(np.zeros((1, 32), dtype=int), 4),         # wrong rank
    lambda: pack_activations(np.zeros((1, 1, 32)), 4),                 # float tensor
    lambda: pack_weights_3x3(np.zeros((1, 32, 1, 1), dtype=int), 2),   # not 3x3
    lambda: pack_normquant(np.full(32, 1 << 16), np.zeros(32, dtype=int)),  # scale > uint16
    lambda: pack_normquant(np.zeros(32, dtype=int), np.full(32, 1 << 31)),  # bias > int32
    lambda: pack_normquant(np.zeros(16, dtype=int), np.zeros(16, dtype=int)),  # not 32*n
    lambda: unpack_normquant(bytes(7)),
])
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()
