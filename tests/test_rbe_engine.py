"""RBE functional core vs the plain numpy golden, bit for bit, through a byte memory."""
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.rbe import (Mode, RbeError, RbeJob, acc_can_wrap, conv_acc, normquant, quantize,
                            run_job, validate)
from components.rbe.layout import (from_bytes, pack_activations, pack_normquant,
                                   pack_weights_3x3, to_bytes, unpack_outputs)
from components.rbe.stimuli import ByteMemory, Layer, place_layer, random_layer

MEM = 1 << 20
FILL = 0xA5  # background pattern: any byte the engine must not touch stays 0xA5


def run_and_check(layer: Layer, job: RbeJob | None = None, mem: ByteMemory | None = None):
    """Run ``layer`` through the engine; assert outputs == golden and no stray writes."""
    if mem is None:
        mem = ByteMemory(MEM)
        mem.data[:] = FILL
    if job is None:
        job = place_layer(layer, mem)
    assert validate(job, mem.base, mem.data.size) == RbeError.OK
    before = mem.data.copy()
    res = run_job(job, mem.read, mem.write)
    gold = layer.golden
    np.testing.assert_array_equal(res.outputs, gold)
    # decode the stored words with the job's strides and compare again
    y = np.empty((job.h_out, job.w_out, job.kout_tiles, job.o_bits), dtype=np.uint32)
    for h in range(job.h_out):
        for w in range(job.w_out):
            a = job.y_addr + h * job.y_row_stride + w * job.y_pix_stride
            y[h, w] = from_bytes(mem.read(a, job.y_pixel_bytes), y.shape[2:])
    np.testing.assert_array_equal(unpack_outputs(y), gold)
    # only output words may change
    touched = np.zeros(mem.data.size, dtype=bool)
    for h in range(job.h_out):
        for w in range(job.w_out):
            a = job.y_addr - mem.base + h * job.y_row_stride + w * job.y_pix_stride
            touched[a:a + job.y_pixel_bytes] = True
    np.testing.assert_array_equal(mem.data[~touched], before[~touched])
    return res


def _precisions() -> list[Any]:
    """Every (W, I, O) in 2..8. The default set runs a Latin square of them, O = 2 + (W + I) % 7:
    every pair of precisions (W with I, W with O, I with O) once; the other 294 (per mode) are slow."""
    out = []
    for w in range(2, 9):
        for i in range(2, 9):
            for o in range(2, 9):
                square = o == 2 + (w + i) % 7
                out.append(pytest.param(w, i, o, id=f"{w}-{i}-{o}", marks=[] if square else pytest.mark.slow(
                    reason="every pair of precisions runs in the default set (the Latin square O = 2 + (W + I) % 7)")))
    return out


# Every (W, I, O) in 2..8, both modes. Edge tiles in both dimensions (4x5 outputs) and,
# for half of the combinations, two K_in tiles and two K_out tiles.
@pytest.mark.parametrize("w_bits, i_bits, o_bits", _precisions())
@pytest.mark.parametrize("mode", [Mode.CONV3X3, Mode.CONV1X1], ids=["3x3", "1x1"])
def test_every_precision_matches_golden(mode, w_bits, i_bits, o_bits):
    seed = (int(mode) * 1000 + w_bits * 100 + i_bits * 10 + o_bits)
    rng = np.random.default_rng(seed)
    k = 64 if (w_bits + i_bits + o_bits) % 2 else 32
    layer = random_layer(rng, h_out=4, w_out=5, k_in=k, k_out=96 - k, w_bits=w_bits,
                         i_bits=i_bits, o_bits=o_bits, mode=mode)
    run_and_check(layer)


@pytest.mark.parametrize("mode", [Mode.CONV3X3, Mode.CONV1X1], ids=["3x3", "1x1"])
@pytest.mark.parametrize("k_in,k_out", [(64, 96), (96, 64), (128, 32)])
@pytest.mark.parametrize("hw", [(1, 1), (3, 3), (4, 5), (7, 7), (2, 8), (6, 6)])
def test_multi_tile_layers(mode, k_in, k_out, hw):
    rng = np.random.default_rng(k_in * 7 + k_out + hw[0] * 13 + hw[1])
    layer = random_layer(rng, h_out=hw[0], w_out=hw[1], k_in=k_in, k_out=k_out, w_bits=5,
                         i_bits=8, o_bits=6, mode=mode)
    run_and_check(layer)


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from([Mode.CONV3X3, Mode.CONV1X1]), h=st.integers(1, 8),
       w=st.integers(1, 8), k_in=st.sampled_from([32, 64, 96]), k_out=st.sampled_from([32, 64]),
       w_bits=st.integers(2, 8), i_bits=st.integers(2, 8), o_bits=st.integers(2, 8),
       relu=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_property_random_shapes_and_values(mode, h, w, k_in, k_out, w_bits, i_bits, o_bits,
                                           relu, seed):
    layer = random_layer(np.random.default_rng(seed), h_out=h, w_out=w, k_in=k_in, k_out=k_out,
                         w_bits=w_bits, i_bits=i_bits, o_bits=o_bits, mode=mode, relu=relu)
    run_and_check(layer)


@settings(max_examples=25, deadline=None)
@given(mode=st.sampled_from([Mode.CONV3X3, Mode.CONV1X1]), h=st.integers(1, 5),
       w=st.integers(1, 5), extreme=st.sampled_from(["zeros", "max", "random"]),
       bits=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
def test_property_extreme_operands(mode, h, w, extreme, bits, seed):
    rng = np.random.default_rng(seed)
    base = random_layer(rng, h_out=h, w_out=w, k_in=64, k_out=32, w_bits=bits, i_bits=bits,
                        o_bits=bits, mode=mode)
    fill = {"zeros": 0, "max": (1 << bits) - 1}.get(extreme)
    x = base.x if fill is None else np.full_like(base.x, fill)
    w_ = base.w if fill is None else np.full_like(base.w, fill)
    scale = rng.integers(0, 1 << 16, size=32)
    bias = rng.integers(-(1 << 31), 1 << 31, size=32)
    layer = Layer(x, w_, scale, bias, int(rng.integers(0, 32)), bits, bits, bits, int(mode))
    run_and_check(layer)


def test_strided_input_and_output_inside_larger_tensors():
    """Input is a window of a wider tensor; outputs go into every other pixel of a buffer."""
    rng = np.random.default_rng(5)
    layer = random_layer(rng, h_out=4, w_out=5, k_in=64, k_out=32, w_bits=3, i_bits=6,
                         o_bits=5)
    mem = ByteMemory(MEM, base=0x1000_0000)
    mem.data[:] = FILL
    dense = place_layer(layer, mem)
    # re-place the input inside a (9, 11, 96)-channel tensor at row 1, column 2
    big = np.zeros((9, 11, 96), dtype=np.int64)
    big[1:1 + 6, 2:2 + 7, :64] = layer.x
    big_words = pack_activations(big, 6)
    big_addr = mem.base + 0x8000
    mem.write(big_addr, to_bytes(big_words))
    pix = 3 * 6 * 4  # 96 channels x 6 bits
    y_addr = mem.base + 0x20000
    job = RbeJob(x_addr=big_addr + 1 * 11 * pix + 2 * pix, w_addr=dense.w_addr,
                 nq_addr=dense.nq_addr, y_addr=y_addr, h_out=4, w_out=5, k_in=64, k_out=32,
                 x_row_stride=11 * pix, x_pix_stride=pix,
                 y_row_stride=3 * 5 * dense.y_pix_stride + 64, y_pix_stride=2 * dense.y_pix_stride,
                 w_bits=3, i_bits=6, o_bits=5, mode=Mode.CONV3X3, shift=layer.shift)
    run_and_check(layer, job, mem)


def test_row_padded_output_stride():
    rng = np.random.default_rng(6)
    layer = random_layer(rng, h_out=5, w_out=4, k_in=32, k_out=64, w_bits=4, i_bits=4,
                         o_bits=4, mode=Mode.CONV1X1)
    mem = ByteMemory(MEM)
    mem.data[:] = FILL
    dense = place_layer(layer, mem)
    job = RbeJob(**{**dense.__dict__, "y_row_stride": dense.y_row_stride + 32})
    run_and_check(layer, job, mem)


def test_relu_flag_does_not_change_unsigned_outputs():
    rng = np.random.default_rng(7)
    a = random_layer(rng, h_out=3, w_out=3, k_in=32, k_out=32, w_bits=4, i_bits=4, o_bits=4)
    b = Layer(**{**a.__dict__, "relu": False})
    assert (a.golden == 0).any()  # the comparison is about negatives, so some must exist
    np.testing.assert_array_equal(run_and_check(a).outputs, run_and_check(b).outputs)


def test_accumulator_wraps_at_32_bits():
    """K_in = 3680 at 8x8 bits, all operands max: the exact sum exceeds int32."""
    k_in = 3680
    x = np.full((3, 3, k_in), 255, dtype=np.int64)
    w = np.full((32, k_in, 3, 3), 255, dtype=np.int64)
    exact = k_in * 9 * 255 * 255
    assert exact > 2**31 - 1
    layer = Layer(x, w, np.ones(32, dtype=np.int64), np.zeros(32, dtype=np.int64), 0, 8, 8, 8,
                  int(Mode.CONV3X3))
    mem = ByteMemory(1 << 21)
    job = place_layer(layer, mem)
    assert acc_can_wrap(job)
    res = run_and_check(layer, job, mem)
    wrapped = exact - (1 << 32)
    assert wrapped < 0
    np.testing.assert_array_equal(res.acc, np.full((1, 1, 32), wrapped, dtype=np.int32))
    np.testing.assert_array_equal(conv_acc(x, w), res.acc)
    assert (res.outputs == 0).all()  # negative after the wrap -> clipped to 0


def test_accumulator_does_not_wrap_just_below_the_bound():
    job = RbeJob.dense(x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=1, w_out=1, k_in=3648,
                       k_out=32, w_bits=8, i_bits=8, o_bits=8)
    assert not acc_can_wrap(job)
    assert acc_can_wrap(RbeJob(**{**job.__dict__, "k_in": 3680}))


def test_second_pass_carries_the_high_input_bits():
    """Inputs with only bits 4..7 set: a pass-2 shift error would change every output."""
    rng = np.random.default_rng(8)
    base = random_layer(rng, h_out=3, w_out=3, k_in=32, k_out=32, w_bits=3, i_bits=8, o_bits=8)
    x = (rng.integers(0, 16, size=base.x.shape) << 4)
    layer = Layer(**{**base.__dict__, "x": x, "scale": np.ones(32, dtype=np.int64),
                     "bias": np.zeros(32, dtype=np.int64), "shift": 12})
    res = run_and_check(layer)
    np.testing.assert_array_equal(res.acc, conv_acc(x, layer.w))
    assert (res.acc % 16 == 0).all() and res.acc.max() > 0


def test_quantizer_corner_cases():
    acc = np.array([-(1 << 31), (1 << 31) - 1, -1, 0, 5, 100], dtype=np.int32)
    scale = np.array([65535, 65535, 1, 1, 3, 1])
    bias = np.array([-(1 << 31), (1 << 31) - 1, 0, -1, 0, 0])
    for shift in (0, 1, 4, 31):
        for o in (2, 5, 8):
            np.testing.assert_array_equal(quantize(acc, scale, bias, shift, o),
                                          normquant(acc, scale, bias, shift, o))
    # -1 >> 1 is -1 (arithmetic shift), which clips to 0; 15 >> 0 saturates at 2**2-1
    assert quantize(np.array([-1]), np.array([1]), np.array([0]), 1, 2)[0] == 0
    assert quantize(np.array([15]), np.array([1]), np.array([0]), 0, 2)[0] == 3
    assert quantize(np.array([7]), np.array([1]), np.array([0]), 1, 2)[0] == 3
    assert quantize(np.array([5]), np.array([1]), np.array([0]), 1, 2)[0] == 2


@settings(max_examples=60, deadline=None)
@given(acc=st.lists(st.integers(-(1 << 31), (1 << 31) - 1), min_size=1, max_size=32),
       scale=st.integers(0, 65535), bias=st.integers(-(1 << 31), (1 << 31) - 1),
       shift=st.integers(0, 31), o_bits=st.integers(2, 8))
def test_property_quantizer_matches_golden_normquant(acc, scale, bias, shift, o_bits):
    a = np.array(acc, dtype=np.int32)
    s = np.full(a.shape, scale)
    b = np.full(a.shape, bias)
    np.testing.assert_array_equal(quantize(a, s, b, shift, o_bits),
                                  normquant(a, s, b, shift, o_bits))


def test_engine_uses_the_memory_not_the_tensors():
    """Corrupt one stored weight word: the engine result must change accordingly."""
    rng = np.random.default_rng(9)
    layer = random_layer(rng, h_out=3, w_out=3, k_in=32, k_out=32, w_bits=2, i_bits=2, o_bits=8)
    mem = ByteMemory(MEM)
    job = place_layer(layer, mem)
    w2 = layer.w.copy()
    w2[0] = 0
    mem.write(job.w_addr, to_bytes(pack_weights_3x3(w2, 2)))
    res = run_job(job, mem.read, mem.write)
    np.testing.assert_array_equal(res.acc, conv_acc(layer.x, w2))
    assert not np.array_equal(res.acc, conv_acc(layer.x, layer.w))


def test_normquant_parameters_are_read_from_memory():
    rng = np.random.default_rng(10)
    layer = random_layer(rng, h_out=2, w_out=2, k_in=32, k_out=32, w_bits=2, i_bits=2, o_bits=8)
    mem = ByteMemory(MEM)
    job = place_layer(layer, mem)
    scale = np.arange(32) * 1000
    bias = -np.arange(32) * 7
    mem.write(job.nq_addr, pack_normquant(scale, bias))
    res = run_job(job, mem.read, mem.write)
    np.testing.assert_array_equal(res.outputs, normquant(res.acc, scale, bias, layer.shift, 8))


@pytest.mark.parametrize("high, shape, wshape", [
    (256, (12, 11, 40), (24, 40, 3, 3)),          # 8-bit operands: the float64 (BLAS) path
    (256, (5, 6, 40), (24, 40)),                  # 1x1
    (1 << 31, (5, 5, 20), (3, 20, 3, 3)),         # sums past 2**53: the int64 path, wrapping
])
def test_conv_acc_equals_the_int64_definition(high, shape, wshape):
    """conv_acc is the int64 sum of products wrapped to int32, whichever matmul it uses."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, high, shape)
    w = rng.integers(0, high, wshape)
    w4 = w if w.ndim == 4 else w[:, :, None, None]
    ho, wo = shape[0] - w4.shape[2] + 1, shape[1] - w4.shape[3] + 1
    want = np.zeros((ho, wo, w4.shape[0]), dtype=np.int64)
    for ky in range(w4.shape[2]):
        for kx in range(w4.shape[3]):
            want += np.einsum("hwk,ok->hwo", x[ky:ky + ho, kx:kx + wo], w4[:, :, ky, kx])
    got = conv_acc(x, w)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, (want & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
