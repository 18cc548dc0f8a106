"""Window-stepped driver: the RTL partition's side of the distribution protocol.

The coordinator grants windows ``[T, until)``; the RTL partition must advance the
simulator to ``until`` and report what it produced. Inside a cocotb test::

    drv = WindowDriver(channel, handlers={"cfg": cfg_handler}, busy=lambda: dut.busy_o.value)
    irq.callbacks.append(lambda t: drv.emit(t, "evt", 1))
    await drv.run()

* ``channel.recv()`` blocks (a ZeroMQ DEALER in the distributed run): while it blocks the
  simulator is frozen, which is exactly the lock-step wanted; nothing polls.
* A grant is ``{"until": ps, "events": [[time_ps, channel, payload], ...]}`` (``None`` or
  ``{"stop": True}`` ends the run). Each inbound event is delivered at its time by its
  channel's handler (a coroutine, e.g. a register write through the HWPE adapter).
* Between events the simulator runs with **one** ``Timer`` to ``until``: the clock is
  driven from C++, and Python wakes up only for adapter activity (a TCDM access, an
  interrupt edge) or an inbound event.
* The reply is ``{"time": until, "next": ps | None, "events": [[time_ps, channel,
  payload], ...]}``: ``next`` is the earliest time this partition may produce an event
  on its own (``now`` while the block is busy, ``None`` when idle: the coordinator can
  skip it until an inbound event), ``events`` the outputs produced in the window.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping

import cocotb
from cocotb.triggers import Event, First, Timer

from .pins import AdapterError, now_ps


class QueueChannel:
    """An in-process channel: pre-made grants, recorded replies. Drives a
    :class:`WindowDriver` without a socket or a coordinator, e.g. from a standalone cocotb
    testbench that replays a recorded job (tests/rtl/rbe_tb.py, bench/rtl_tb.py)."""

    def __init__(self, grants: list[dict]):
        self.grants = list(grants)
        self.replies: list[dict] = []

    def recv(self) -> dict | None:
        return self.grants.pop(0) if self.grants else None

    def send(self, msg: dict) -> None:
        self.replies.append(msg)


class WindowDriver:
    def __init__(self, channel: Any, *, handlers: Mapping[str, Callable[[Any], Awaitable[Any]]],
                 busy: Callable[[], Any] | None = None, name: str = "rtl"):
        self.channel = channel
        self.handlers = dict(handlers)
        self.busy = busy
        self.name = name
        self.outbox: list[list] = []
        self.windows = 0
        self._pending = 0
        self._early: Any = None

    def emit(self, time_ps: int, channel: str, payload: Any) -> None:
        """Record an output event (called from adapter callbacks)."""
        self.outbox.append([int(time_ps), channel, payload])

    async def _deliver(self, t: int, channel: str, payload: Any) -> None:
        d = t - now_ps()
        if d < 0:
            raise AdapterError(f"{self.name}: event on {channel!r} for t = {t} ps arrived in "
                               f"the past (now {now_ps()} ps): causality violated")
        if d:
            await Timer(d, unit="ps")
        handler = self.handlers.get(channel)
        if handler is None:
            raise AdapterError(f"{self.name}: no handler for inbound channel {channel!r}")
        try:
            await handler(payload)
        finally:
            self._pending -= 1

    async def advance_to(self, until_ps: int) -> None:
        d = until_ps - now_ps()
        if d > 0:
            self._early = Event()
            await First(Timer(d, unit="ps"), self._early.wait())
            self._early = None

    def end_window(self) -> None:
        """End the present window now (a handler finished what the grant was for): the
        reply's ``time`` is the present time, so the block's time line stays where the
        parent expects it (used by blocks whose time is aligned with the scenario's)."""
        if self._early is not None:
            self._early.set()

    def next_time(self) -> int | None:
        if self._pending or (self.busy is not None and int(self.busy())):
            return now_ps()
        return None

    async def run(self, stop_when: Callable[[], bool] | None = None) -> None:
        """Serve grants until the channel says stop (or ``stop_when()`` after a window)."""
        while True:
            grant = self.channel.recv()
            if grant is None or grant.get("stop"):
                return
            for t, ch, payload in grant.get("events", ()):
                self._pending += 1
                cocotb.start_soon(self._deliver(int(t), ch, payload))
            await self.advance_to(int(grant["until"]))
            self.windows += 1
            out, self.outbox = self.outbox, []
            self.channel.send({"time": now_ps(), "next": self.next_time(),
                               "events": out})
            if stop_when is not None and stop_when():
                return
