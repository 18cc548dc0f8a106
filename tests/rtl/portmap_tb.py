"""Generic testbench: adapters built only from a port map (``PORTMAP_JSON``), no code
specific to the block. Every RTL slave-side adapter (AXI-Lite/AXI/HWPE/TCDM slave) writes
random words that must appear in the memory served by the RTL master-side responder."""
from __future__ import annotations

import json
import os

import cocotb
import numpy as np

from cosim.rtl.adapters import ByteMemory
from cosim.rtl.adapters.factory import bring_up, build_adapters
from cosim.rtl.portmap import PortMap, ports_from_dut


@cocotb.test()
async def traffic(dut):
    pm = PortMap.from_dict(json.loads(os.environ["PORTMAP_JSON"]), where="PORTMAP_JSON")
    rpm = pm.resolve(ports_from_dut(dut))      # the same check, against the live model
    mems = {name: ByteMemory(1 << 16) for name, ra in rpm.adapters.items()
            if ra.kind in ("axi_lite_master", "axi_master", "tcdm_master")}
    ad = build_adapters(dut, rpm, memories=mems)
    await bring_up(dut, rpm)
    drivers = [ad[n] for n, ra in rpm.adapters.items() if ra.kind in ("axi_lite_slave", "axi_slave")]
    mem = next(iter(mems.values()))
    rng = np.random.default_rng(4)
    for drv in drivers:
        for _ in range(20):
            a = int(rng.integers(0, 1 << 14)) * 4
            d = rng.integers(0, 256, size=4, dtype=np.uint8).tobytes()
            await drv.write(a, d)
            assert mem.read(a, 4) == d
            assert await drv.read(a, 4) == d
