"""Interrupt/event wires: monitors of RTL outputs and drivers of RTL inputs."""
from __future__ import annotations

from typing import Any, Callable

import cocotb
from cocotb.triggers import ClockCycles, Event, First, RisingEdge, ValueChange

from .pins import AdapterTimeout, now_ps


class IrqMonitor:
    """Records every rising edge of a 1-bit RTL output (time in ps) and calls callbacks.

    Python runs once per pulse (a ``RisingEdge`` on the wire itself), never per cycle. On
    a vector port, ``select`` is the bit watched (an int) or ``"any"`` (the OR of all its
    bits); Python then runs on each change of the vector."""

    def __init__(self, signal: Any, *, name: str | None = None,
                 select: "int | str | None" = None):
        self.signal = signal
        self.select = select
        self.name = name or signal._name
        self.times: list[int] = []
        self.callbacks: list[Callable[[int], None]] = []
        self._event = Event()
        self._task = cocotb.start_soon(self._run())

    def _level(self) -> int:
        v = self.signal.value
        if not v.is_resolvable:     # X/Z bits count as 0
            return 0
        n = int(v)
        return int(n != 0) if self.select == "any" else (n >> int(self.select)) & 1

    async def _run(self) -> None:
        if self.select is None:
            edge = RisingEdge(self.signal)
            while True:
                await edge
                self._pulse()
        change = ValueChange(self.signal)
        level = 0
        while True:
            await change
            now = self._level()
            if now and not level:
                self._pulse()
            level = now

    def _pulse(self) -> None:
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
