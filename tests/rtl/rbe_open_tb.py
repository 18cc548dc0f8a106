"""cocotb testbench of the open RBE RTL (pulp-platform/rbe, vendored in
rtl/third_party/rbe-rtl) in tests/rtl/rbe_open_top.sv (ideal memory, latency 1).

Cases come from the environment: ``RBE_OPEN_CASES`` = JSON list of jobs {mode ("3x3" or
"1x1"), h_out, w_out, k_in, k_out, w, i, o, optional shift, optional memory words x_words,
w_words, nq_words (loaded before the job at X_ADDR, W_ADDR, NQ_ADDR) and y_words (read back from Y_ADDR after
it)}; the results go to ``RBE_OPEN_REPORT`` (JSON list, one dict per case: the case without
its data, ``cycles`` trigger -> end event, ``reads``/``writes`` TCDM port words, ``y``).
Each case: reset, program one job through the peripheral port the way the RTL's
hwpe-ctrl v1.5 expects (read ACQUIRE, write the job registers of rbe_package.sv at word
16 + index, write TRIGGER), wait for the end-of-job event. The register encoding follows
rbe_ctrl.sv (fields "value - 1", the helper products, the micro-code of ucode/code.yml encoded
as ucode/uloop_common.py does); :func:`job_registers` is that encoding.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, First, RisingEdge, Timer

TP = 32
JOB_REG_BASE = 0x40          # hwpe-ctrl v1.5: 8 mandatory + 8 generic words, then the job registers
ACQUIRE, TRIGGER = 0x04, 0x00
PERIOD_NS = 2
X_ADDR, W_ADDR, NQ_ADDR, Y_ADDR = 0x0000, 0x1_0000, 0x3_0000, 0x3_8000

# ucode/code.yml of pulp-platform/rbe: (op_sel add=1/mv=0, a, b) per loop, innermost first
_MNEM = dict(W=0, x=1, NQ=2, y=3, W_major=4, x_major=5, x_major_h=6, y_major=7, y_major_h=8,
             nif=9, nof=10, patch_size=11, patch_size_w=12, patch_size_h=13, patch_output=14,
             patch_output_w=15, patch_output_h=16, stream_size=17, nq_batch=18, zero=19)
_CODE = [
    [("mv", "W", "W_major"), ("add", "x", "patch_size"), ("add", "y", "zero")],
    [("add", "W", "stream_size"), ("mv", "W_major", "W"), ("add", "x", "patch_size"),
     ("add", "y", "zero")],
    [("add", "W", "stream_size"), ("mv", "W_major", "W"), ("mv", "x", "x_major"),
     ("add", "y", "patch_output"), ("add", "NQ", "nq_batch")],
    [("mv", "W", "zero"), ("mv", "W_major", "zero"), ("add", "x_major", "patch_size_w"),
     ("mv", "x", "x_major"), ("mv", "NQ", "zero"), ("add", "y_major", "patch_output_w"),
     ("mv", "y", "y_major")],
    [("mv", "W", "zero"), ("mv", "W_major", "zero"), ("add", "x_major_h", "patch_size_h"),
     ("mv", "x_major", "x_major_h"), ("mv", "x", "x_major"), ("mv", "NQ", "zero"),
     ("add", "y_major_h", "patch_output_h"), ("mv", "y_major", "y_major_h"),
     ("mv", "y", "y_major")],
]


def ucode_words() -> tuple[list[int], list[int]]:
    """(LOOPS0..1, STATIC00..09) register values of the micro-code."""
    code = loops = 0
    pos = addr = 0
    for li, ops in enumerate(_CODE):
        loops |= ((addr << 4) | len(ops)) << (9 * li)
        for op, a, b in ops:
            code |= (((op == "add") << 10) | (_MNEM[a] << 5) | _MNEM[b]) << (11 * pos)
            pos += 1
        addr += len(ops)
    m = 0xFFFF_FFFF
    return [loops & m, (loops >> 32) & m], [(code >> (32 * k)) & m for k in range(10)]


def job_registers(case: dict, x=X_ADDR, w=W_ADDR, nq=NQ_ADDR, y=Y_ADDR) -> list[int]:
    """The 23 job registers (rbe_package.sv RBE_REG_*) of one case."""
    fs = 3 if case["mode"] == "3x3" else 1
    h_out, w_out = case["h_out"], case["w_out"]
    h_in, w_in = (h_out + 2, w_out + 2) if fs == 3 else (h_out, w_out)
    qa, qw, qo = case["i"], case["w"], case["o"]
    n_qa, n_qo = (qa - 1) // 4 + 1, (qo - 1) // 4 + 1
    n_kin, n_kout = -(-case["k_in"] // TP), -(-case["k_out"] // TP)
    pw, ph = -(-w_out // 3), -(-h_out // 3)
    loops, static = ucode_words()
    return [
        x, w, nq, y,
        ((w_in - 1) << 16) | (h_in - 1),
        ((w_out - 1) << 16) | (h_out - 1),
        ((case["k_in"] - 1) << 16) | (case["k_out"] - 1),
        # [15:0] + 1 scales the 3x3 weight-stream advance per K_in tile (beats x this, in
        # bytes): 9 words of 4 bytes per beat
        ((pw - 1) << 24) | ((fs - 1) << 16) | (fs * fs * 4 - 1),
        ((ph - 1) << 24) | ((qo - 1) << 16) | ((qw - 1) << 8) | (qa - 1),
        (1 << 31) | ((case.get("shift", 4) - 1) & 0xFFFF),
        ((n_kin * n_qa - 1) << 16) | (n_kout * n_qo - 1),
    ] + loops + static


class Periph:
    """The hwpe-ctrl peripheral port (always granted; read data the next cycle)."""

    def __init__(self, dut):
        self.dut = dut
        dut.periph_req.value = 0
        dut.periph_wen.value = 1
        dut.periph_add.value = 0
        dut.periph_data.value = 0

    async def access(self, addr: int, data: int | None) -> int:
        d = self.dut
        d.periph_req.value = 1
        d.periph_add.value = addr
        d.periph_wen.value = 1 if data is None else 0
        d.periph_data.value = data or 0
        await RisingEdge(d.clk_i)
        d.periph_req.value = 0
        await RisingEdge(d.clk_i)
        return int(d.periph_r_data.value) if data is None else 0


async def run_case(dut, case: dict, limit_ns: float) -> dict:
    dut.rst_ni.value = 0
    await ClockCycles(dut.clk_i, 3)
    dut.rst_ni.value = 1
    await ClockCycles(dut.clk_i, 2)
    for base, words in ((X_ADDR, case.get("x_words")), (W_ADDR, case.get("w_words")),
                        (NQ_ADDR, case.get("nq_words"))):
        for k, v in enumerate(words or ()):     # backdoor, one word per cycle
            dut.mem_we.value, dut.mem_waddr.value, dut.mem_wdata.value = 1, base // 4 + k, v
            await RisingEdge(dut.clk_i)
    dut.mem_we.value = 0
    p = Periph(dut)
    job_id = await p.access(ACQUIRE, None)
    assert job_id < 256, f"ACQUIRE after reset returned {job_id:#x} (no free context)"
    for i, v in enumerate(job_registers(case)):
        await p.access(JOB_REG_BASE + 4 * i, v)
    await p.access(TRIGGER, 0)
    got = await First(RisingEdge(dut.done), Timer(limit_ns, "ns"))
    assert got is not None and int(dut.done.value) == 1, f"no end event within {limit_ns} ns: {case}"
    await ClockCycles(dut.clk_i, 2)
    row = {k: v for k, v in case.items() if not k.endswith("_words")}
    row.update(cycles=int(dut.job_cycles.value), reads=int(dut.tcdm_reads.value),
               writes=int(dut.tcdm_writes.value))
    if case.get("y_words"):
        y = []
        for k in range(case["y_words"]):
            dut.mem_raddr.value = Y_ADDR // 4 + k
            await FallingEdge(dut.clk_i)
            y.append(int(dut.mem_rdata.value))
        row["y"] = y
    return row


@cocotb.test()
async def jobs(dut):
    """Every case of RBE_OPEN_CASES, one after the other, each from reset."""
    cases = json.loads(os.environ["RBE_OPEN_CASES"])
    cocotb.start_soon(Clock(dut.clk_i, PERIOD_NS, "ns").start())
    dut.mem_we.value = 0
    dut.mem_waddr.value = 0
    dut.mem_wdata.value = 0
    dut.mem_raddr.value = 0
    out = []
    for case in cases:
        out.append(await run_case(dut, case, limit_ns=float(case.get("limit_ns", 2e7))))
        with open(os.environ["RBE_OPEN_REPORT"], "w") as f:
            json.dump(out, f)
