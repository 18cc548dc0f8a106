"""PULP HWPE peripheral (configuration) protocol: a master driving an RTL target.

Signals (roles): req, gnt, add, wen (1 = read), be, data, id (optional) towards the RTL;
r_data, r_valid, r_id (optional) back. A request is presented until ``gnt`` is sampled
high at a clock edge; ``r_valid``/``r_data`` come in a later cycle (one cycle for the
HWPE controller). The request id is ``periph_id`` on every access when given (hwpe-ctrl
reads it as the one-hot id of the offloading core), else a rolling counter. Waiting
longer than ``timeout_cycles`` for either raises :class:`AdapterTimeout` naming the stuck
signal, the address and the time.
"""
from __future__ import annotations

from typing import Any, Mapping

import cocotb
from cocotb.triggers import Lock, RisingEdge

from .pins import AdapterTimeout, Pin, now_ps

ROLES_IN = ("req", "add", "wen", "be", "data", "id")
ROLES_OUT = ("gnt", "r_data", "r_valid", "r_id")
OPTIONAL = ("id", "r_id")


class HwpePeriphMaster:
    def __init__(self, clk: Any, signals: Mapping[str, Any], *, name: str = "cfg",
                 timeout_cycles: int = 1000, periph_id: int | None = None):
        self.clk = clk
        self.name = name
        self.timeout = timeout_cycles
        self.p = {role: Pin(h) for role, h in signals.items() if h is not None}
        self._lock = Lock()
        self._edge = RisingEdge(clk)
        self._fixed_id = periph_id
        self._id = periph_id or 0
        self.reads = self.writes = 0
        self.p["req"].set(0)

    async def write(self, addr: int, data: int, be: int = 0xF) -> None:
        await self._xfer(addr, False, data, be)
        self.writes += 1

    async def read(self, addr: int) -> int:
        v = await self._xfer(addr, True, 0, 0xF)
        self.reads += 1
        return v

    async def _xfer(self, addr: int, read: bool, data: int, be: int) -> int:
        p = self.p
        async with self._lock:
            p["add"].set(addr)
            p["wen"].set(1 if read else 0)
            p["be"].set(be)
            p["data"].set(data)
            if "id" in p:
                p["id"].set(self._id)
            p["req"].set(1)
            n = 0
            while True:
                await self._edge
                if p["gnt"].get():
                    break
                n += 1
                if n >= self.timeout:
                    p["req"].set(0)
                    raise AdapterTimeout(self._stuck("gnt", addr, read, n))
            p["req"].set(0)
            n = 0
            while True:
                await self._edge
                if p["r_valid"].get():
                    break
                n += 1
                if n >= self.timeout:
                    raise AdapterTimeout(self._stuck("r_valid", addr, read, n))
            if "r_id" in p and p["r_id"].get() != self._id & ((1 << p["r_id"].width) - 1):
                raise AdapterTimeout(f"{self.name}: {p['r_id'].name} = {p['r_id'].get()} does "
                                     f"not match request id {self._id} (0x{addr:08x})")
            if self._fixed_id is None:
                self._id = (self._id + 1) & 0xFF
            return p["r_data"].get() if read else 0

    def _stuck(self, role: str, addr: int, read: bool, n: int) -> str:
        return (f"{self.name}: RTL signal {self.p[role].name} stayed 0 for {n} cycles "
                f"({'read' if read else 'write'} 0x{addr:08x}, t = {now_ps()} ps): "
                "the block never " + ("grants" if role == "gnt" else "answers"))


def start(coro) -> Any:
    return cocotb.start_soon(coro)


def periph_signals(dut: Any, prefix: str = "periph_") -> dict[str, Any]:
    """The HWPE peripheral target ports ``<prefix>req_i`` ... ``<prefix>r_id_o`` of ``dut``
    by role, as :class:`HwpePeriphMaster` takes them."""
    g = lambda n: getattr(dut, prefix + n)  # noqa: E731
    return {"req": g("req_i"), "gnt": g("gnt_o"), "add": g("add_i"), "wen": g("wen_i"),
            "be": g("be_i"), "data": g("data_i"), "id": g("id_i"), "r_data": g("r_data_o"),
            "r_valid": g("r_valid_o"), "r_id": g("r_id_o")}
