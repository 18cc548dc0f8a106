"""cocotb testbench of tests/rtl/waves_top.sv: 100 cycles of 10 ns after a reset."""
from __future__ import annotations

import cocotb
from cocotb.triggers import ClockCycles

from cosim.rtl.adapters import reset, start_clock


@cocotb.test()
async def count(dut):
    start_clock(dut.clk_i, 10)
    await reset(dut.clk_i, dut.rst_ni, 2)
    await ClockCycles(dut.clk_i, 100)
    assert int(dut.a_o.value) == int(dut.b_o.value) >= 99
