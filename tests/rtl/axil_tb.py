"""cocotb testbench of the AXI-Lite adapters through rtl/bus/axil_passthrough, each
checked against a cocotbext-axi reference model on the other side:

* ``master_adapter``: our AxiLiteMasterAdapter writes/reads -> cocotbext ``AxiLiteRam``;
* ``responder_adapter``: cocotbext ``AxiLiteMaster`` -> our AxiLiteResponder serving a
  ByteMemory back-end.
"""
from __future__ import annotations

import cocotb
import numpy as np
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiLiteRam

from cosim.rtl.adapters import ByteMemory, reset, start_clock
from cosim.rtl.adapters.axi import AxiLiteMasterAdapter, AxiLiteResponder


async def _setup(dut):
    start_clock(dut.clk_i, 2.5)
    await reset(dut.clk_i, dut.rst_ni, 3)


@cocotb.test()
async def master_adapter(dut):
    ram = AxiLiteRam(AxiLiteBus.from_prefix(dut, "m_axil"), dut.clk_i, dut.rst_ni,
                     reset_active_level=False, size=4096)
    ad = AxiLiteMasterAdapter(dut, "s_axil", dut.clk_i, dut.rst_ni)
    await _setup(dut)
    rng = np.random.default_rng(1)
    for _ in range(40):
        a = int(rng.integers(0, 1000)) * 4
        d = rng.integers(0, 256, size=4, dtype=np.uint8).tobytes()
        await ad.write(a, d)
        assert ram.read(a, 4) == d
        assert await ad.read(a, 4) == d


@cocotb.test()
async def responder_adapter(dut):
    mem = ByteMemory(4096, base=0)
    AxiLiteResponder(dut, "m_axil", dut.clk_i, mem, dut.rst_ni)
    ref = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk_i, dut.rst_ni,
                        reset_active_level=False)
    await _setup(dut)
    rng = np.random.default_rng(2)
    for _ in range(40):
        a = int(rng.integers(0, 1000)) * 4
        d = rng.integers(0, 256, size=4, dtype=np.uint8).tobytes()
        await ref.write(a, d)
        assert mem.read(a, 4) == d
        assert bytes((await ref.read(a, 4)).data) == d
    assert not mem.errors
