"""Cluster kernels: results == the numpy definitions (and plain numpy) for every kernel and
precision, through the simulated cores and the real TCDM, in both TCDM modes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.cluster import Cluster, KernelError, list_kernels, ops
from components.cluster.kernels import KERNELS
from components.marsellus.facts import MEMORY_MAP
from components.rbe.layout import from_bytes, pack_activations, unpack_activations
from components.tcdm import Tcdm, TcdmParams
from tlm import Clock, Simulator
from marsellus_regions import CLUSTER_ARGS, TCDM_ARGS  # noqa: E402

B = MEMORY_MAP["tcdm"].base
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def build(mode: str = "burst", seed: int = 1):
    sim = Simulator(seed)
    clk = Clock(sim, "cluster_clk", 420e6)
    cl = Cluster(sim, "cluster", clock=clk, **CLUSTER_ARGS)
    tcdm = Tcdm(cl, "tcdm", clk, TcdmParams(mode=mode), **TCDM_ARGS)
    cl.bind_tcdm(tcdm)
    return sim, cl, tcdm


def run(sim, cl, name, cores, **args):
    out = {}

    async def main():
        out["run"] = await cl.run_kernel(name, cores, **args)

    sim.spawn(main(), "main")
    sim.run()
    return out["run"]


def i32(tcdm, addr, n):
    return np.frombuffer(tcdm.dump(addr, 4 * n), "<i4").astype(np.int64)


# ----- matmul ------------------------------------------------------------------------------------
@pytest.mark.parametrize("bits", [8, 4, 2])
@pytest.mark.parametrize("isa", ["xpulp", "xpulpnn", "macload"])
def test_matmul_every_precision_and_isa(bits, isa):
    rng = np.random.default_rng(bits * 7 + len(isa))
    m, n, k = 13, 10, 48
    lo, hi = ops.int_range(bits, True)
    a = rng.integers(lo, hi + 1, (m, k))
    w = rng.integers(lo, hi + 1, (n, k))
    sim, cl, tcdm = build()
    tcdm.load(B, ops.pack_subbyte(a, bits).tobytes())
    tcdm.load(B + 0x4000, ops.pack_subbyte(w, bits).tobytes())
    r = run(sim, cl, "matmul", 16, m=m, n=n, k=k, bits=bits, isa=isa, a=B, w=B + 0x4000, out=B + 0x8000)
    assert r.ok
    got = i32(tcdm, B + 0x8000, m * n).reshape(m, n)
    assert np.array_equal(got, a @ w.T)                   # plain numpy
    assert np.array_equal(got, ops.matmul(a, w, bits))    # the shared definition


@SETTINGS
@given(m=st.integers(1, 20), n=st.integers(1, 12), kw=st.integers(1, 6),
       bits=st.sampled_from([8, 4, 2]), cores=st.integers(1, 16), seed=st.integers(0, 2**16))
def test_matmul_shapes_and_core_counts(m, n, kw, bits, cores, seed):
    k = kw * 8
    rng = np.random.default_rng(seed)
    lo, hi = ops.int_range(bits, True)
    a = rng.integers(lo, hi + 1, (m, k))
    w = rng.integers(lo, hi + 1, (n, k))
    sim, cl, tcdm = build()
    tcdm.load(B, ops.pack_subbyte(a, bits).tobytes())
    tcdm.load(B + 0x4000, ops.pack_subbyte(w, bits).tobytes())
    r = run(sim, cl, "matmul", cores, m=m, n=n, k=k, bits=bits, a=B, w=B + 0x4000, out=B + 0x8000)
    assert r.ok and r.cores == cores
    assert np.array_equal(i32(tcdm, B + 0x8000, m * n).reshape(m, n), a @ w.T)


def test_subbyte_packing_roundtrip_and_layout():
    x = np.array([[-8, 7, 1, -1]])
    packed = ops.pack_subbyte(x, 4)
    assert packed.tolist() == [[0x78, 0xF1]]          # little end first, two's complement
    assert np.array_equal(ops.unpack_subbyte(packed, 4), x)
    y = np.array([[-2, -1, 0, 1]])
    assert ops.pack_subbyte(y, 2).tolist() == [[0b01001110]]
    assert np.array_equal(ops.unpack_subbyte(ops.pack_subbyte(y, 2), 2), y)


# ----- conv --------------------------------------------------------------------------------------
@SETTINGS
@given(h=st.integers(1, 9), w=st.integers(1, 9), cin=st.integers(1, 9), cout=st.integers(1, 9),
       kh=st.integers(1, 3), kw=st.integers(1, 3), stride=st.integers(1, 2), pad=st.integers(0, 1),
       relu=st.booleans(), cores=st.integers(1, 16), seed=st.integers(0, 2**16))
def test_conv2d_int8(h, w, cin, cout, kh, kw, stride, pad, relu, cores, seed):
    if (h + 2 * pad - kh) < 0 or (w + 2 * pad - kw) < 0:
        return
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (h, w, cin))
    wt = rng.integers(-128, 128, (cout, kh, kw, cin))
    scale = rng.integers(1, 64, cout)
    bias = rng.integers(-5000, 5000, cout)
    shift = 9
    sim, cl, tcdm = build()
    tcdm.load(B, x.astype(np.int8).tobytes())
    tcdm.load(B + 0x1000, wt.astype(np.int8).tobytes())
    tcdm.load(B + 0x2000, scale.astype("<i4").tobytes())
    tcdm.load(B + 0x2100, bias.astype("<i4").tobytes())
    r = run(sim, cl, "conv2d", cores, h=h, w=w, cin=cin, cout=cout, kh=kh, kw=kw, stride=stride,
            pad=pad, shift=shift, relu=relu, x=B, weights=B + 0x1000, scale=B + 0x2000,
            bias=B + 0x2100, out=B + 0x3000)
    assert r.ok
    ref = ops.conv2d(x, wt, scale, bias, shift, stride, pad, relu)
    got = np.frombuffer(tcdm.dump(B + 0x3000, ref.size), np.int8).reshape(ref.shape)
    assert np.array_equal(got, ref)
    # independent numpy: direct loops over the padded input
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    acc = np.zeros(ref.shape, dtype=np.int64)
    for oy in range(ref.shape[0]):
        for ox in range(ref.shape[1]):
            patch = xp[oy * stride:oy * stride + kh, ox * stride:ox * stride + kw]
            acc[oy, ox] = np.tensordot(wt, patch, axes=([1, 2, 3], [0, 1, 2]))
    plain = np.clip((scale * acc + bias) >> shift, 0 if relu else -128, 127)
    assert np.array_equal(got, plain)


# ----- element-wise add --------------------------------------------------------------------------
@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("inplace", [False, True])
def test_add_int8(signed, inplace):
    rng = np.random.default_rng(3)
    n = 1500
    lo, hi = ops.int_range(8, signed)
    x1, x2 = rng.integers(lo, hi + 1, n), rng.integers(lo, hi + 1, n)
    dt = np.int8 if signed else np.uint8
    sim, cl, tcdm = build()
    tcdm.load(B, x1.astype(dt).tobytes())
    tcdm.load(B + 0x1000, x2.astype(dt).tobytes())
    y = B if inplace else B + 0x2000
    r = run(sim, cl, "add_int8", 16, n=n, signed=signed, m1=3, m2=5, bias=4, shift=3, a=B, b=B + 0x1000, out=y)
    assert r.ok
    got = np.frombuffer(tcdm.dump(y, n), dt)
    assert np.array_equal(got, np.clip((3 * x1 + 5 * x2 + 4) >> 3, lo, hi))


@SETTINGS
@given(h=st.integers(1, 6), w=st.integers(1, 6), groups=st.integers(1, 3), b1=st.integers(1, 8),
       b2=st.integers(1, 8), bo=st.integers(1, 8), m1=st.integers(0, 65535), m2=st.integers(0, 65535),
       bias=st.integers(-(1 << 20), 1 << 20), shift=st.integers(0, 20), cores=st.integers(1, 16),
       seed=st.integers(0, 2**16))
def test_add_requant_bitplanes(h, w, groups, b1, b2, bo, m1, m2, bias, shift, cores, seed):
    k = 32 * groups
    rng = np.random.default_rng(seed)
    x1 = rng.integers(0, 1 << b1, (h, w, k))
    x2 = rng.integers(0, 1 << b2, (h, w, k))
    sim, cl, tcdm = build()
    tcdm.load(B, pack_activations(x1, b1).astype("<u4").tobytes())
    tcdm.load(B + 0x4000, pack_activations(x2, b2).astype("<u4").tobytes())
    r = run(sim, cl, "add_requant", cores, pixels=h * w, k=k, a_bits=b1, b_bits=b2, o_bits=bo,
            m1=m1, m2=m2, bias=bias, shift=shift, a=B, b=B + 0x4000, out=B + 0x8000)
    assert r.ok
    got = unpack_activations(from_bytes(tcdm.dump(B + 0x8000, h * w * groups * bo * 4), (h, w, groups, bo)))
    assert np.array_equal(got, np.clip((m1 * x1 + m2 * x2 + bias) >> shift, 0, (1 << bo) - 1))


def test_requant_parameter_helpers():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 256, (4, 4, 32)), rng.integers(0, 16, (4, 4, 32))
    p = ops.add_requant_params(a, b, 8, 4, 8)
    assert set(p) == {"m1", "m2", "bias", "shift"} and max(p["m1"], p["m2"]) < 1 << 16
    y = ops.add_requant(a, b, o_bits=8, **p)
    peak = (a / 255 + b / 15).max()
    assert np.abs(y - (a / 255 + b / 15) / peak * 255).max() <= 1    # the full range is used
    assert y.max() == 255
    q = ops.avgpool_params(64)
    assert q == {"mult": 1 << 15, "bias": 1 << 20, "shift": 21}
    for pixels in (1, 3, 49, 64, 1000):
        q = ops.avgpool_params(pixels)
        assert q["mult"] < 1 << 16
        x = rng.integers(0, 256, (pixels, 32))
        assert np.abs(ops.avgpool(x, **q) - x.mean(axis=0)).max() <= 0.5 + 1e-9


# ----- pooling and FC ----------------------------------------------------------------------------
@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("bits,k,cores", [(8, 64, 16), (4, 32, 3), (2, 96, 7)])
def test_avgpool_bitplane(signed, bits, k, cores):
    rng = np.random.default_rng(bits + k)
    h = w = 8
    x = rng.integers(0, 1 << bits, (h, w, k))
    mult, shift = 1024, 16                      # 1024 / 2^16 = 1 / 64 = 1 / (H W)
    bias = -(1 << 22) if signed else 1 << 15    # signed: shift the mean down to show negatives
    sim, cl, tcdm = build()
    tcdm.load(B, pack_activations(x, bits).astype("<u4").tobytes())
    r = run(sim, cl, "avgpool", cores, pixels=h * w, k=k, bits=bits, mult=mult, bias=bias,
            shift=shift, signed=signed, x=B, out=B + 0x8000)
    assert r.ok
    got = np.frombuffer(tcdm.dump(B + 0x8000, k), np.int8 if signed else np.uint8).astype(np.int64)
    lo, hi = ops.int_range(8, signed)
    assert np.array_equal(got, np.clip((x.sum(axis=(0, 1)) * mult + bias) >> shift, lo, hi))
    if not signed:   # with rounding, the mean itself
        assert np.abs(got - x.mean(axis=(0, 1))).max() <= 0.5


@pytest.mark.parametrize("x_signed", [False, True])
@pytest.mark.parametrize("k,n,cores", [(64, 10, 16), (33, 7, 2), (256, 40, 16)])
def test_fc(x_signed, k, n, cores):
    rng = np.random.default_rng(k + n)
    lo, hi = ops.int_range(8, x_signed)
    x = rng.integers(lo, hi + 1, k)
    w = rng.integers(-128, 128, (n, k))
    b = rng.integers(-(1 << 20), 1 << 20, n)
    sim, cl, tcdm = build()
    tcdm.load(B, x.astype(np.int8 if x_signed else np.uint8).tobytes())
    tcdm.load(B + 0x400, w.astype(np.int8).tobytes())
    tcdm.load(B + 0x8000, b.astype("<i4").tobytes())
    r = run(sim, cl, "fc", cores, n_in=k, n_out=n, x_signed=x_signed, x=B, w=B + 0x400, bias=B + 0x8000,
            out=B + 0x9000)
    assert r.ok
    assert np.array_equal(i32(tcdm, B + 0x9000, n), w @ x + b)


# ----- FFT ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("precision,tol", [("fp32", 1e-5), ("fp16", 1e-2)])
@pytest.mark.parametrize("n,cores", [(2048, 16), (64, 5), (8, 16), (2, 1)])
def test_fft(precision, tol, n, cores):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    e = 8 if precision == "fp32" else 4
    sim, cl, tcdm = build()
    tcdm.load(B, ops.complex_to_bytes(x, precision))
    tcdm.load(B + 0x8000, ops.fft_twiddles(n, precision).tobytes())
    r = run(sim, cl, "fft", cores, n=n, precision=precision, src=B, dst=B + 0x10000, twiddles=B + 0x8000)
    assert r.ok
    got = ops.bytes_to_complex(tcdm.dump(B + 0x10000, n * e), precision)
    assert np.array_equal(got, ops.fft(x, precision))             # the definition, bit for bit
    ref = np.fft.fft(x.astype(np.complex64 if precision == "fp32" else np.complex128))
    z = got[:, 0].astype(np.float64) + 1j * got[:, 1]
    assert np.abs(z - ref).max() <= tol * np.abs(ref).max() * max(1, np.log2(n))


# ----- both TCDM modes, bad input ---------------------------------------------------------------------
def test_word_mode_gives_the_same_results():
    rng = np.random.default_rng(9)
    a = rng.integers(-128, 128, (16, 64))
    w = rng.integers(-128, 128, (8, 64))
    out = []
    for mode in ("burst", "word"):
        sim, cl, tcdm = build(mode)
        tcdm.load(B, a.astype(np.int8).tobytes())
        tcdm.load(B + 0x1000, w.astype(np.int8).tobytes())
        run(sim, cl, "matmul", 16, m=16, n=8, k=64, a=B, w=B + 0x1000, out=B + 0x2000)
        out.append(tcdm.dump(B, 0x3000))
    assert out[0] == out[1]


def test_bad_kernel_calls_are_clear_errors():
    sim, cl, tcdm = build()
    errors = []

    async def main():
        for name, cores, args in [
            ("matmull", 4, {}),
            ("matmul", 4, {"m": 4, "n": 4, "k": 8, "a": B, "w": B, "outt": B}),
            ("matmul", 17, {"m": 4, "n": 4, "k": 8, "a": B, "w": B + 64, "out": B + 128}),
            ("matmul", 4, {"m": 4, "n": 4, "k": 3, "bits": 4, "a": B, "w": B + 64, "out": B + 128}),
            ("matmul", 4, {"m": 4, "n": 4, "k": 8, "a": B + 0x1FFF0, "w": B, "out": B + 128}),
            ("matmul", 4, {"m": 4, "n": 4, "k": 8, "a": B, "w": B + 64, "out": B + 16}),
            ("fft", 4, {"n": 24, "src": B, "dst": B + 0x1000, "twiddles": B + 0x2000}),
            ("fft", 4, {"n": 16, "precision": "fp64", "src": B, "dst": B + 0x1000, "twiddles": B + 0x2000}),
        ]:
            try:
                await cl.run_kernel(name, cores, **args)
            except KernelError as e:
                errors.append(str(e))

    sim.spawn(main(), "main")
    sim.run()
    assert len(errors) == 8
    assert "did you mean 'matmul'" in errors[0]
    assert "unknown argument 'outt'" in errors[1] and "did you mean 'out'" in errors[1]
    assert "cores must be in 1..16" in errors[2]
    assert "multiple of 2" in errors[3]
    assert "is not inside the TCDM" in errors[4]
    assert "overlaps operand 'a'" in errors[5]
    assert "not a power of two" in errors[6]
    assert "fp64" in errors[7]
    assert all(e.startswith("cluster at 0 ps:") for e in errors)
    assert cl.ctrl.jobs == 0                      # nothing started


@pytest.mark.parametrize("n,c,relu,cores,mode", [(49, 24, False, 16, "burst"), (16, 64, True, 16, "word"),
                                                  (1, 10, False, 16, "word"), (37, 3, True, 5, "burst")])
def test_requant_int32_is_the_cores_requantisation_of_a_channel_major_accumulator(n, c, relu, cores, mode):
    """A GEMM unit's int32 accumulator (C, N) into the int8 HWC tensor: bit for bit
    ``ops.requantize`` (the cores' ``conv2d`` arithmetic) of its transpose; its simulated
    cycles are the plan's contention-free estimate (word mode: within the TCDM's conflicts)."""
    from components.cluster.event_unit import EventUnitParams
    from components.cluster.kernels import job_steps
    from components.cluster.timing import estimate_cycles, load_timing
    rng = np.random.default_rng(n * c)
    acc = rng.integers(-(1 << 20), 1 << 20, (c, n))
    scale = rng.integers(1, 1 << 14, c)
    bias = rng.integers(-(1 << 28), 1 << 28, c)
    shift = 21
    sim, cl, tcdm = build(mode)
    a_acc, a_s, a_b, a_o = B, B + 0x8000, B + 0x9000, B + 0xA000
    tcdm.load(a_acc, acc.astype("<i4").tobytes())
    tcdm.load(a_s, scale.astype("<i4").tobytes())
    tcdm.load(a_b, bias.astype("<i4").tobytes())
    args = dict(n=n, c=c, shift=shift, relu=relu, acc=a_acc, scale=a_s, bias=a_b, out=a_o)
    r = run(sim, cl, "requant_int32", cores, **args)
    assert r.ok
    got = np.frombuffer(tcdm.dump(a_o, n * c), np.int8).reshape(n, c)
    want = np.clip((acc.T * scale + bias) >> shift, 0 if relu else -128, 127)
    assert np.array_equal(got, want)
    k = KERNELS["requant_int32"]
    tm = load_timing()
    model = estimate_cycles(job_steps(k, k.normalize(args), cores, tm), tm, EventUnitParams())
    assert model >= n * c / cores * 21.378                          # the measured per-output cost
    assert abs(r.cycles - model) <= (0.10 * model if mode == "word" else 2), (r.cycles, model)


def test_registry_lists_every_kernel_with_stable_ids():
    names = [n for n, _ in list_kernels()]
    assert names == ["matmul", "conv2d", "add_int8", "add_requant", "avgpool", "fc", "fft", "pack_rbe",
                     "unpack_rbe", "maxpool_int8", "leaky_int8", "lut_int8", "requant_int32"]
    assert [KERNELS[n].kid for n in names] == list(range(1, 14))
    for k in KERNELS.values():
        # every argument survives the args-block encoding (signed ints, enums, booleans)
        sample = {a.name: (a.choices[-1] if a.kind == "enum" else True if a.kind == "bool"
                           else B + 4 if a.kind == "addr" else (a.lo if a.lo is not None else -5))
                  for a in k.args}
        words = k.encode(sample)
        assert len(words) == len(k.args) and all(0 <= w < 2**32 for w in words)
        assert k.decode(words) == sample


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_fft_can_build_its_own_twiddle_table(precision):
    n = 256
    x = np.random.default_rng(2).standard_normal(n) + 0j
    e = 8 if precision == "fp32" else 4
    cycles = []
    for make in (False, True):
        sim, cl, tcdm = build()
        tcdm.load(B, ops.complex_to_bytes(x, precision))
        if not make:
            tcdm.load(B + 0x8000, ops.fft_twiddles(n, precision).tobytes())
        r = run(sim, cl, "fft", 16, n=n, precision=precision, src=B, dst=B + 0x10000,
                twiddles=B + 0x8000, make_twiddles=make)
        assert np.array_equal(ops.bytes_to_complex(tcdm.dump(B + 0x10000, n * e), precision),
                              ops.fft(x, precision))
        assert tcdm.dump(B + 0x8000, n // 2 * e) == ops.fft_twiddles(n, precision).tobytes()
        cycles.append(r.cycles)
    assert cycles[1] > cycles[0]          # the table costs time (and a barrier)
