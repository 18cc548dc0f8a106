"""Sub-byte integer and MXINT8 convolutions/linears programmed through the Voyager
descriptor registers (DTYPE codes 6/7, MX_CFG.BLOCK): bit-exact against numpy / exact
rational references, and located errors for a DTYPE code that does not exist and an MX
block size that does not divide."""
from __future__ import annotations

from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest

from components.l2 import BankedMemory, BankedMemoryParams
from accelerators.voyager.model.accel import MAP, Voyager
from accelerators.voyager.model.config import VoyagerParams
from accelerators.voyager.model.errors import VoyagerError
from accelerators.voyager.model.job import VoyagerJob, job_registers
from tlm import Clock, GenericPayload, InitiatorSocket, Module, Simulator
from tlm.address_map import Region
from tlm.payload import WRITE

from voyager_ref import F, oracle

BASE = 0x80000000
BF = ml_dtypes.bfloat16


def _soc(params: VoyagerParams | None = None):
    sim = Simulator()
    clk = Clock(sim, "clk", 1e9)
    dram = BankedMemory(sim, "dram", Region("dram", BASE, 0x100000, "soc", "memory", ""), clk,
                        BankedMemoryParams(banks=1, bank_word_bytes=64, latency=10))
    acc = Voyager(sim, "voyager", clock=clk, params=params or VoyagerParams())
    acc.dram.bind(dram.socket)
    acc.host = InitiatorSocket(Module(sim, "host"), "bus")
    acc.host.bind(acc.regs.socket)
    return sim, dram, acc


def _run(sim, acc, regs: dict[str, int]) -> int:
    """Program ``regs``, start the fused pair, return STATUS at the end of the job."""
    seen = {}

    async def host():
        for name, v in regs.items():
            await acc.host.b_transport(GenericPayload(WRITE, MAP.register(name).offset,
                                                      bytearray(int(v).to_bytes(4, "little"))), 0)
        await acc.host.b_transport(GenericPayload(WRITE, 0, bytearray((4).to_bytes(4, "little"))), 0)
        await acc.done
        seen["status"] = acc._read_status()

    sim.spawn(host(), "host")
    sim.run()
    return seen["status"]


def _pack(codes: np.ndarray, bits: int) -> bytes:
    """Reference packing: element i of the flat tensor in bits [(i % per)*bits, +bits) of byte i // per."""
    per = 8 // bits
    flat = [int(v) & ((1 << bits) - 1) for v in np.asarray(codes).reshape(-1)]
    out = bytearray(-(-len(flat) // per))
    for i, v in enumerate(flat):
        out[i // per] |= v << ((i % per) * bits)
    return bytes(out)


def _put(dram, addr: int, data: bytes) -> None:
    dram.array[addr - BASE:addr - BASE + len(data)] = np.frombuffer(data, np.uint8)


def _bf(v):
    return np.asarray(v, np.float32).astype(BF).astype(np.float64)


def _ref_int_conv(x, w, stride, pad, bias):
    """Exact integer conv (NHWC, [fy][fx][c][k]) by numpy over the taps."""
    h, wd, _ = x.shape
    f = w.shape[0]
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    ho, wo = (h + 2 * pad - f) // stride + 1, (wd + 2 * pad - f) // stride + 1
    acc = np.zeros((ho, wo, w.shape[3]), np.int64) + bias
    for dy in range(f):
        for dx in range(f):
            acc += np.einsum("yxc,ck->yxk", xp[dy:dy + stride * ho:stride, dx:dx + stride * wo:stride], w[dy, dx])
    return acc


@pytest.mark.parametrize("bits,kind", [(4, 0), (2, 0), (4, 1), (2, 1)])
def test_sub_byte_jobs_are_bit_exact_through_the_registers(bits, kind):
    rng = np.random.default_rng(bits * 10 + kind)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    h, wd, c, k, f, stride, pad = (5, 6, 24, 20, 3, 2, 1) if kind == 0 else (7, 1, 40, 12, 1, 1, 0)
    x = rng.integers(lo, hi + 1, (h, wd, c))
    w = rng.integers(lo, hi + 1, (f, f, c, k))
    bias = rng.integers(-200, 200, k)
    scales = _bf(rng.uniform(0.01, 0.1, k))
    out_scale = 0.37
    a_x, a_w, a_b, a_s, a_o = BASE, BASE + 0x4000, BASE + 0x8000, BASE + 0x9000, BASE + 0xA000
    sim, dram, acc = _soc()
    _put(dram, a_x, _pack(x, bits))
    _put(dram, a_w, _pack(w, bits))
    _put(dram, a_b, bias.astype("<i4").tobytes())
    _put(dram, a_s, scales.astype(np.float32).astype(BF).tobytes())
    job = VoyagerJob(kind=kind, dtype=f"int{bits}", in_addr=a_x, w_addr=a_w, out_addr=a_o, h=h, w=wd, c=c, k=k,
                     f=f, stride=stride, pad=pad, bias_addr=a_b, scale_addr=a_s, bias=True, relu=True, quant=True,
                     out_scale=out_scale)
    regs = job_registers(job)
    assert regs["OP"] >> 4 & 0xF == {4: 6, 2: 7}[bits]        # the DTYPE codes of registers.yaml
    assert _run(sim, acc, regs) == 1 << 8
    ref = _ref_int_conv(x, w, stride, pad, bias).reshape(-1, k)
    y = _bf(_bf(ref) * scales)                                  # rne(rne(acc) * s): exact product in fp32
    y = np.maximum(y, 0.0)
    q = np.clip(np.rint(_bf(y * _bf(1 / np.float32(out_scale)))), lo, hi).astype(np.int64)
    want = _pack(q, bits)
    got = bytes(dram.array[a_o - BASE:a_o - BASE + len(want)])
    assert got == want
    assert len(want) == -(-q.size * bits // 8) and acc.report_entry().as_dict()["layers"][0]["dram_bytes"] > 0


def _ref_mx(x, xe, w, we, block, stride, pad, f, bias):
    """Exact-rational MXINT8 conv: per output, taps row-major, blocks of ``block`` channels;
    each block's int sum dequantised to bf16 by 2^(ex+ew-266), added into a bf16 accumulator."""
    h, wd, c = x.shape
    k = w.shape[-1]
    ho, wo = (h + 2 * pad - f) // stride + 1, (wd + 2 * pad - f) // stride + 1
    out = np.zeros((ho, wo, k))
    for oy in range(ho):
        for ox in range(wo):
            for j in range(k):
                a = float(bias[j]) if bias is not None else 0.0
                for dy in range(f):
                    for dx in range(f):
                        iy, ix = oy * stride + dy - pad, ox * stride + dx - pad
                        for b in range(c // block):
                            if 0 <= iy < h and 0 <= ix < wd:
                                sl = slice(b * block, (b + 1) * block)
                                s = int(np.dot(x[iy, ix, sl], w[dy, dx, sl, j]))
                                deq = oracle(s * F(2.0 ** (int(xe[iy, ix, b]) + int(we[dy, dx, b, j]) - 266)), "bf16")
                            else:
                                deq = 0.0
                            a = oracle(F(a) + F(deq), "bf16")
                out[oy, ox, j] = a
    return out


@pytest.mark.parametrize("kind,block,ic", [(0, 32, 16), (0, 64, 32), (1, 64, 16)])
def test_mxint8_conv_and_linear_through_the_registers_are_bit_exact(kind, block, ic):
    rng = np.random.default_rng(block + kind)
    h, wd, c, k, f, stride, pad = (4, 5, 64, 8, 3, 1, 1) if kind == 0 else (6, 1, 128, 10, 1, 1, 0)
    x = rng.integers(-127, 128, (h, wd, c))
    w = rng.integers(-127, 128, (f, f, c, k))
    xe = rng.integers(118, 130, (h, wd, c // block))
    we = rng.integers(118, 130, (f, f, c // block, k))
    bias = _bf(rng.standard_normal(k))
    a = [BASE + i * 0x4000 for i in range(6)]
    sim, dram, acc = _soc(replace(VoyagerParams(), ic_dim=ic))
    for addr, arr, dt in ((a[0], x, np.int8), (a[1], w, np.int8), (a[2], xe, np.uint8), (a[3], we, np.uint8)):
        _put(dram, addr, arr.astype(dt).tobytes())
    _put(dram, a[4], bias.astype(np.float32).astype(BF).tobytes())
    job = VoyagerJob(kind=kind, dtype="mxint8", in_addr=a[0], w_addr=a[1], scale_addr=a[2], w_scale_addr=a[3],
                     bias_addr=a[4], bias=True, out_addr=a[5], h=h, w=wd, c=c, k=k, f=f, stride=stride, pad=pad,
                     mx_block=block)
    assert job_registers(job)["MX_CFG"] == block
    assert _run(sim, acc, job_registers(job)) == 1 << 8
    ho, wo = (h + 2 * pad - f) // stride + 1, (wd + 2 * pad - f) // stride + 1
    got = np.frombuffer(dram.array[a[5] - BASE:a[5] - BASE + ho * wo * k * 2].tobytes(), BF).astype(np.float64)
    np.testing.assert_array_equal(got.reshape(ho, wo, k), _ref_mx(x, xe, w, we, block, stride, pad, f, bias))


def test_a_datatype_code_that_does_not_exist_and_a_block_that_does_not_divide_are_located():
    job = VoyagerJob(kind=1, dtype="mxint8", in_addr=BASE, w_addr=BASE + 0x1000, scale_addr=BASE + 0x2000,
                     w_scale_addr=BASE + 0x3000, out_addr=BASE + 0x8000, h=4, w=1, c=64, k=16)
    sim, dram, acc = _soc()
    regs = job_registers(job)
    regs["OP"] = (regs["OP"] & ~0xF0) | 9 << 4
    assert _run(sim, acc, regs) >> 16 & 0xFF == 1
    err = acc.report_entry().as_dict()["job_errors"][0]
    assert err["where"] == "voyager.regs.OP.DTYPE" and err["message"].startswith("9 is no datatype code")
    assert "6 int4" in err["message"] and err["job"] == "job1"
    # 48 does not divide C = 64: error 3 at MX_CFG.BLOCK
    sim, dram, acc = _soc()
    assert _run(sim, acc, job_registers(replace(job, mx_block=48))) >> 16 & 0xFF == 3
    err = acc.report_entry().as_dict()["job_errors"][0]
    assert err["where"] == "voyager.regs.MX_CFG.BLOCK" and "48 does not divide" in err["message"]
    # a block of 16 on a 32-row array: dividing C is not enough
    sim, dram, acc = _soc(replace(VoyagerParams(), ic_dim=32))
    assert _run(sim, acc, job_registers(replace(job, mx_block=16))) >> 16 & 0xFF == 3
    assert "multiple of the array rows" in acc.report_entry().as_dict()["job_errors"][0]["message"]
    # a host cannot even encode an unknown datatype
    with pytest.raises(VoyagerError, match="job.dtype: 'int3' has no DTYPE code"):
        job_registers(replace(job, dtype="int3"))
