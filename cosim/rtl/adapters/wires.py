"""Interrupt/event wires: monitors of RTL outputs and drivers of RTL inputs."""
from __future__ import annotations

from typing import Any, Callable

import cocotb
from cocotb.triggers import ClockCycles, Event, First, RisingEdge

from .pins import AdapterTimeout, now_ps


class IrqMonitor:
    """Records every rising edge of a 1-bit RTL output (time in ps) and calls callbacks.

    Python runs once per pulse (a ``RisingEdge`` on the wire itself), never per cycle."""

    def __init__(self, signal: Any, *, name: str | None = None):
        self.signal = signal
        self.name = name or signal._name
        self.times: list[int] = []
        self.callbacks: list[Callable[[int], None]] = []
        self._event = Event()
        self._task = cocotb.start_soon(self._run())

    async def _run(self) -> None:
        edge = RisingEdge(self.signal)
        while True:
            await edge
            t = now_ps()
            self.times.append(t)
            for cb in self.callbacks:
                cb(t)
            self._event.set()

    @property
    def count(self) -> int:
        return len(self.times)

    async def wait(self, clk: Any = None, timeout_cycles: int | None = None) -> int:
        """Wait for the next pulse; with ``timeout_cycles`` raise :class:`AdapterTimeout`."""
        self._event.clear()
        if timeout_cycles is None:
            await self._event.wait()
        else:
            got = await First(self._event.wait(), ClockCycles(clk, timeout_cycles))
            if not self._event.is_set():
                del got
                raise AdapterTimeout(f"{self.name}: no pulse within {timeout_cycles} cycles "
                                     f"(t = {now_ps()} ps): the block never signalled")
        return self.times[-1]

    def stop(self) -> None:
        self._task.cancel()


class WireDriver:
    """Drives a 1-bit (or narrow) RTL input from TLM signal values."""

    def __init__(self, signal: Any, init: int = 0):
        self.signal = signal
        signal.value = init

    def set(self, value: int) -> None:
        self.signal.value = int(value)
