"""AXI4 and AXI-Lite adapters built on cocotbext-axi.

* ``AxiLiteMasterAdapter`` / ``AxiMasterAdapter``: transactions from the TLM side drive an
  RTL *slave* port (cocotbext-axi ``AxiLiteMaster`` / ``AxiMaster``);
* ``AxiLiteResponder`` / ``AxiResponder``: an RTL *master* port is served from a memory
  back-end (cocotbext-axi ``AxiLiteSlave`` / ``AxiSlave`` with our back-end as target).

Ports are found by prefix (``<prefix>_awaddr`` ...), cocotbext-axi's own convention.
"""
from __future__ import annotations

from typing import Any

from .memory import AsyncTarget


def _axi():
    try:
        import cocotbext.axi as axi
    except ImportError as e:  # pragma: no cover - reported to the user
        raise ImportError("AXI adapters need cocotbext-axi: pip install cocotbext-axi") from e
    return axi


class AxiLiteMasterAdapter:
    def __init__(self, dut: Any, prefix: str, clk: Any, rst: Any = None,
                 rst_active_low: bool = True):
        axi = _axi()
        self.bus = axi.AxiLiteBus.from_prefix(dut, prefix)
        self.master = axi.AxiLiteMaster(self.bus, clk, rst, reset_active_level=not rst_active_low)

    async def read(self, addr: int, length: int) -> bytes:
        return bytes((await self.master.read(addr, length)).data)

    async def write(self, addr: int, data: bytes) -> None:
        await self.master.write(addr, bytes(data))


class AxiLiteResponder:
    def __init__(self, dut: Any, prefix: str, clk: Any, mem: Any, rst: Any = None,
                 rst_active_low: bool = True):
        axi = _axi()
        self.bus = axi.AxiLiteBus.from_prefix(dut, prefix)
        self.slave = axi.AxiLiteSlave(self.bus, clk, rst, target=AsyncTarget(mem),
                                      reset_active_level=not rst_active_low)


class AxiMasterAdapter:
    def __init__(self, dut: Any, prefix: str, clk: Any, rst: Any = None,
                 rst_active_low: bool = True):
        axi = _axi()
        self.bus = axi.AxiBus.from_prefix(dut, prefix)
        self.master = axi.AxiMaster(self.bus, clk, rst, reset_active_level=not rst_active_low)

    async def read(self, addr: int, length: int) -> bytes:
        return bytes((await self.master.read(addr, length)).data)

    async def write(self, addr: int, data: bytes) -> None:
        await self.master.write(addr, bytes(data))


class AxiResponder:
    def __init__(self, dut: Any, prefix: str, clk: Any, mem: Any, rst: Any = None,
                 rst_active_low: bool = True):
        axi = _axi()
        self.bus = axi.AxiBus.from_prefix(dut, prefix)
        self.slave = axi.AxiSlave(self.bus, clk, rst, target=AsyncTarget(mem),
                                  reset_active_level=not rst_active_low)
