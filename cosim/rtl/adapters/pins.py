"""Fast pin access, clock and reset for cocotb 2.x (Verilator).

Timing convention of every adapter (one trigger per active cycle): at ``RisingEdge(clk)``
Python sees the values the design had *during the cycle that just ended* (what the
flops sample at this edge), and values it writes take effect for the *next* cycle
(cocotb's inertial writes, which the Verilator runner trusts). So a synchronous
handshake is "sample at the edge, drive for the next cycle", exactly like RTL.
"""
from __future__ import annotations

from typing import Any

from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import RisingEdge

_DEPOSIT = 0  # cocotb.handle._GPISetAction.DEPOSIT


class AdapterError(RuntimeError):
    """A protocol error or a stuck RTL block, named by signal and simulated time."""


class AdapterTimeout(AdapterError):
    """The RTL did not answer within the configured number of cycles."""


class WordMaster:
    """``read``/``write`` of words or whole-word byte strings on top of a bus master's
    single-transfer ``_xfer(write, addr, data, be) -> int`` (APB and OBI share this).
    Subclasses set ``protocol`` and have ``name``, ``host.wbytes``/``host.rbytes``,
    ``reads`` and ``writes``."""

    protocol = "bus"

    async def write(self, addr: int, data: "int | bytes", be: "int | None" = None) -> None:
        """Write one 32-bit word (``data`` int, byte enables ``be``) or ``bytes`` (whole
        words, one transfer per word)."""
        be = -1 if be is None else be
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data)
            w = self.host.wbytes
            if len(data) % w:
                raise AdapterError(f"{self.name}: {self.protocol} writes whole {w}-byte words, "
                                   f"got {len(data)} bytes")
            for k in range(0, len(data), w):
                await self._xfer(True, addr + k, int.from_bytes(data[k:k + w], "little"), be)
                self.writes += 1
            return
        await self._xfer(True, addr, int(data), be)
        self.writes += 1

    async def read(self, addr: int, length: "int | None" = None) -> "int | bytes":
        """Read one word as an int, or ``length`` bytes (whole words) as bytes."""
        if length is None:
            self.reads += 1
            return await self._xfer(False, addr, 0, -1)
        w = self.host.rbytes
        w = w[0] if isinstance(w, (list, tuple)) else w  # cocotbext-apb keeps a list
        out = bytearray()
        for k in range(0, length, w):
            out += (await self._xfer(False, addr + k, 0, -1)).to_bytes(w, "little")
            self.reads += 1
        return bytes(out[:length])


class Pin:
    """One port with int get/set that bypasses LogicArray (Verilator is 2-state).

    Wide vectors travel as binary strings (the GPI's only path for > 32 bits)."""

    __slots__ = ("handle", "name", "width", "_raw", "_mask", "_fmt")

    def __init__(self, handle: Any):
        self.handle = handle
        self.name = handle._name
        self.width = len(handle)
        self._raw = handle._handle
        self._mask = (1 << self.width) - 1
        self._fmt = f"0{self.width}b"

    def get(self) -> int:
        if self.width <= 32:
            return self._raw.get_signal_val_long() & self._mask
        s = self._raw.get_signal_val_binstr()
        try:
            return int(s, 2)
        except ValueError:  # X/Z (4-state simulators): read as 0
            return int(s.translate(str.maketrans("xXzZuUwW-", "000000000")), 2)

    def set(self, value: int) -> None:
        if self.width <= 32:
            self._raw.set_signal_val_int(_DEPOSIT, value & self._mask)
        else:
            self._raw.set_signal_val_binstr(_DEPOSIT, format(value & self._mask, self._fmt))

    def __repr__(self) -> str:
        return f"<Pin {self.name}[{self.width}]>"


def start_clock(clk: Any, period_ns: float) -> Any:
    """Start a cocotb ``Clock`` (runs in C++, no Python per cycle). Returns its task."""
    return Clock(clk, period_ns, unit="ns").start(start_high=False)


async def reset(clk: Any, rst: Any, cycles: int = 4, active_low: bool = True) -> None:
    """Hold reset for ``cycles`` rising edges, then release it."""
    rst.value = 0 if active_low else 1
    for _ in range(cycles):
        await RisingEdge(clk)
    rst.value = 1 if active_low else 0
    await RisingEdge(clk)


def now_ps() -> int:
    """Current simulated time in ps."""
    return int(get_sim_time(unit="ps"))
