"""The Voyager DWC extension's datapath (accelerators/voyager/model/dwc.py): bit-exact against numpy
depthwise convolution (integers) and an exact-rational adder-tree reference (bf16), larger
filters split into native-size slices, its stepped cycles against the performance model,
and MobileNetV2's depthwise layers as register-programmed jobs in data mode."""
from __future__ import annotations

from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest

from components.l2 import BankedMemory, BankedMemoryParams
from accelerators.voyager.model.accel import MAP, Voyager
from accelerators.voyager.model.compiler import FusedOp
from accelerators.voyager.model.config import VoyagerParams
from accelerators.voyager.model.dtypes import design, parse_dtype
from accelerators.voyager.model.dwc import DwcUnit, dwc_cycles
from accelerators.voyager.model.errors import VoyagerError
from accelerators.voyager.model.job import KIND_DWC, VoyagerJob, job_registers
from accelerators.voyager.model.perf import vector_perf
from accelerators.voyager.model.zoo import Layer, mobilenet_v2
from tlm import Clock, GenericPayload, InitiatorSocket, Module, Simulator
from tlm.address_map import Region
from tlm.payload import WRITE

from voyager_ref import F, oracle

BASE = 0x80000000
BF = ml_dtypes.bfloat16


def ref_dw_int(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """numpy depthwise conv, exact int64: x [H, W, C], w [F, F, C]."""
    h, wd, _ = x.shape
    f = w.shape[0]
    xp = np.pad(x.astype(np.int64), ((pad, pad), (pad, pad), (0, 0)))
    ho, wo = (h + 2 * pad - f) // stride + 1, (wd + 2 * pad - f) // stride + 1
    out = np.zeros((ho, wo, x.shape[2]), np.int64)
    for dy in range(f):
        for dx in range(f):
            out += xp[dy:dy + stride * ho:stride, dx:dx + stride * wo:stride] * w[dy, dx].astype(np.int64)
    return out


@pytest.mark.parametrize("dtype,shape,f,stride,pad,trees", [
    ("int8", (9, 7, 40), 3, 1, 1, 16),        # channels not a multiple of the trees
    ("int8", (10, 11, 16), 3, 2, 1, 16),
    ("int4", (8, 8, 12), 5, 1, 2, 8),         # 5x5 on a 3x3 unit: 4 slices
    ("int2", (12, 12, 8), 7, 2, 3, 4),        # 7x7: 9 slices
    ("int8", (6, 6, 5), 1, 1, 0, 4),          # 1x1 padded up to the native size
])
def test_integer_depthwise_conv_is_bit_exact_against_numpy(dtype, shape, f, stride, pad, trees):
    t = parse_dtype(dtype)
    rng = np.random.default_rng(shape[2] + f)
    x = rng.integers(t.lo, t.hi + 1, shape)
    w = rng.integers(t.lo, t.hi + 1, (f, f, shape[2]))
    run = DwcUnit(design(dtype), trees, 3).run(x, w, stride, pad)
    np.testing.assert_array_equal(run.acc, ref_dw_int(x, w, stride, pad))


def _tree_ref(vals: list) -> float:
    """bf16 binary adder tree over exact (rational) products, neighbours paired, an odd last
    one passes up unrounded."""
    level = vals
    while len(level) > 1:
        nxt = [F(oracle(level[i] + level[i + 1], "bf16")) for i in range(0, len(level) - 1, 2)]
        level = nxt + ([level[-1]] if len(level) % 2 else [])
    return float(level[0])


def test_bf16_trees_round_after_every_adder_and_slices_add_in_the_vector_unit():
    rng = np.random.default_rng(7)
    bf = parse_dtype("bf16")
    h, wd, c, f, stride, pad = 5, 6, 6, 5, 1, 2
    x = bf.quantize(rng.standard_normal((h, wd, c)))
    w = bf.quantize(rng.standard_normal((f, f, c)))
    got = DwcUnit(design("bf16"), 4, 3).run(x, w, stride, pad).acc
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    for oy in range(h):
        for ox in range(wd):
            for ch in range(c):
                total = None
                for a in range(2):
                    for b in range(2):                       # 2x2 slices of a 6x6 zero-padded filter
                        prods = []
                        for i in range(3):
                            for j in range(3):
                                fy, fx = 3 * a + i, 3 * b + j
                                wv = w[fy, fx, ch] if fy < f and fx < f else 0.0
                                prods.append(F(xp[oy + fy, ox + fx, ch]) * F(wv) if oy + fy < h + 2 * pad
                                             and ox + fx < wd + 2 * pad else F(0))
                        part = _tree_ref(prods)
                        total = part if total is None else oracle(F(total) + F(part), "bf16")
                assert got[oy, ox, ch] == total, (oy, ox, ch)


@pytest.mark.parametrize("h,w,c,f,stride,pad,trees,kernel,fetch", [
    (8, 8, 32, 3, 1, 1, 16, 3, 1), (9, 7, 20, 3, 2, 1, 16, 3, 1), (10, 10, 16, 5, 1, 2, 8, 3, 1),
    (12, 12, 16, 7, 2, 3, 16, 3, 1), (8, 8, 16, 3, 1, 0, 16, 3, 2), (10, 9, 24, 5, 2, 2, 8, 5, 1),
    (16, 16, 32, 3, 2, 1, 16, 3, 3), (6, 6, 5, 1, 1, 0, 4, 3, 1),
])
def test_stepped_cycles_equal_the_model(h, w, c, f, stride, pad, trees, kernel, fetch):
    rng = np.random.default_rng(h * w)
    x = rng.integers(-8, 8, (h, w, c))
    wt = rng.integers(-8, 8, (f, f, c))
    run = DwcUnit(design("int8"), trees, kernel, fetch_cycles=fetch, weight_load=5).run(x, wt, stride, pad)
    model = dwc_cycles(h, w, c, f, stride, pad, trees=trees, kernel=kernel, fetch_cycles=fetch, weight_load=5)
    assert run.cycles == model
    # a sanity bound independent of both: every output of every slice and group issues in its own cycle
    ho, wo = (h + 2 * pad - f) // stride + 1, (w + 2 * pad - f) // stride + 1
    assert run.cycles >= 5 + (-(-f // kernel)) ** 2 * (-(-c // trees)) * ho * wo


def test_a_line_buffer_of_only_the_kernel_rows_stalls_the_fetcher():
    rng = np.random.default_rng(3)
    x = rng.integers(-8, 8, (12, 12, 16))
    wt = rng.integers(-8, 8, (3, 3, 16))
    model = dwc_cycles(12, 12, 16, 3, 1, 1, trees=16)
    tight = DwcUnit(design("int8"), 16, 3, line_rows=3).run(x, wt, 1, 1)
    roomy = DwcUnit(design("int8"), 16, 3, line_rows=4).run(x, wt, 1, 1)
    assert roomy.cycles == model < tight.cycles
    np.testing.assert_array_equal(tight.acc, roomy.acc)


def test_the_performance_model_of_a_dwc_layer_is_the_stepped_datapath_plus_the_vector_pipeline():
    p = replace(VoyagerParams(), dwc_unit=True)
    for ly in [ly for ly in mobilenet_v2(32) if ly.kind == "dwconv"][:4]:
        rng = np.random.default_rng(ly.c)
        run = DwcUnit(design("int8"), p.lanes, 3, weight_load=3 * 3 * 16 // 64 + 1).run(
            rng.integers(-8, 8, (ly.h, ly.w, ly.c)), rng.integers(-8, 8, (3, 3, ly.c)), ly.stride, ly.pad)
        lp = vector_perf(FusedOp(ly, "dwc"), p)
        assert lp.cycles == run.cycles + p.vector_pipeline_depth
    # the vector unit (no extension) does one multiply-add per lane and cycle: f*f times slower compute
    ly = Layer("dw", "dwconv", h=16, w=16, c=64, k=64, f=3, stride=1, pad=1)
    assert vector_perf(FusedOp(ly, "vector"), p).compute == 16 * 16 * 64 * 9 // 16


def _soc(params: VoyagerParams):
    sim = Simulator()
    clk = Clock(sim, "clk", 1e9)
    dram = BankedMemory(sim, "dram", Region("dram", BASE, 0x100000, "soc", "memory", ""), clk,
                        BankedMemoryParams(banks=1, bank_word_bytes=64, latency=10))
    acc = Voyager(sim, "voyager", clock=clk, params=params)
    acc.dram.bind(dram.socket)
    host = InitiatorSocket(Module(sim, "host"), "bus")
    host.bind(acc.regs.socket)
    return sim, dram, acc, host


def _bf(v):
    return np.asarray(v, np.float32).astype(BF).astype(np.float64)


def test_mobilenet_v2_depthwise_layers_run_on_the_extension_in_data_mode():
    params = replace(VoyagerParams(), dwc_unit=True)
    sim, dram, acc, host = _soc(params)
    layers = [ly for ly in mobilenet_v2(32) if ly.kind == "dwconv"]
    rng = np.random.default_rng(2)
    a_x, a_w, a_b, a_s, a_o = BASE, BASE + 0x20000, BASE + 0x30000, BASE + 0x38000, BASE + 0x40000
    wants, statuses = [], []

    async def wr(name, v):
        await host.b_transport(GenericPayload(WRITE, MAP.register(name).offset,
                                              bytearray(int(v).to_bytes(4, "little"))), 0)

    async def main():
        for ly in layers:
            x = rng.integers(-128, 128, (ly.h, ly.w, ly.c))
            w = rng.integers(-128, 128, (3, 3, ly.c))
            bias = rng.integers(-1000, 1000, ly.c)
            s = _bf(rng.uniform(1e-3, 4e-3, ly.c))
            for addr, data in ((a_x, x.astype(np.int8).tobytes()), (a_w, w.astype(np.int8).tobytes()),
                               (a_b, bias.astype("<i4").tobytes()), (a_s, s.astype(np.float32).astype(BF).tobytes())):
                dram.array[addr - BASE:addr - BASE + len(data)] = np.frombuffer(data, np.uint8)
            job = VoyagerJob(kind=KIND_DWC, dtype="int8", in_addr=a_x, w_addr=a_w, bias_addr=a_b, scale_addr=a_s,
                             out_addr=a_o, h=ly.h, w=ly.w, c=ly.c, k=ly.c, f=3, stride=ly.stride, pad=1, bias=True,
                             relu=True, quant=True, out_scale=0.05)
            for name, v in job_registers(job).items():
                await wr(name, v)
            n = len(acc.layers)
            await wr("CTRL", 4)
            await acc.done
            statuses.append(acc._read_status() >> 16 & 0xFF)
            y = np.maximum(_bf(_bf(ref_dw_int(x, w, ly.stride, 1) + bias) * s), 0.0)
            want = np.clip(np.rint(_bf(y * _bf(1 / np.float32(0.05)))), -128, 127).astype(np.int8)
            got = dram.array[a_o - BASE:a_o - BASE + want.size].view(np.int8).reshape(want.shape)
            wants.append(np.array_equal(got, want) and len(acc.layers) == n + 1)

    sim.spawn(main(), "host")
    sim.run()
    assert len(layers) == 17 and statuses == [0] * 17 and all(wants)
    rows = acc.report_entry().as_dict()["layers"]
    assert all(r["op"].startswith("dwconv") and r["cycles"] >= r["model_cycles"] for r in rows)
    # without the extension the same descriptor is refused, located at OP.KIND
    sim, dram, acc, host = _soc(VoyagerParams())
    job = VoyagerJob(kind=KIND_DWC, dtype="int8", in_addr=a_x, w_addr=a_w, out_addr=a_o, h=8, w=8, c=16, k=16, f=3)

    async def once():
        for name, v in job_registers(job).items():
            await wr(name, v)
        await wr("CTRL", 4)
        await acc.done

    sim.spawn(once(), "host")
    sim.run()
    err = acc.report_entry().as_dict()["job_errors"][0]
    assert err["where"] == "voyager.regs.OP.KIND" and "dwc_unit" in err["message"]


def test_the_extension_has_no_microscaling_path():
    job = VoyagerJob(kind=KIND_DWC, dtype="mxint8", in_addr=BASE, w_addr=BASE, out_addr=BASE, h=8, w=8, c=32,
                     k=32, f=3)
    pr = job.problem()
    assert pr is not None and pr.code == 1 and pr.field == "OP.DTYPE" and "microscaling" in pr.message
    with pytest.raises(VoyagerError, match="no microscaling path"):
        DwcUnit(design("mxint8"), 16, 3)
