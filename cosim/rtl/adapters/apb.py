"""APB adapters built on cocotbext-apb (``pip install cocotbext-apb``, checked with 1.1.0).

* :class:`ApbMasterAdapter` drives an RTL APB *target* (port-map kind ``apb_slave``) with
  cocotbext-apb's :class:`~cocotbext.apb.ApbHost`: ``await write(addr, data, be)``,
  ``await read(addr) -> int`` (or ``read(addr, n) -> bytes``). PSLVERR raises
  :class:`ApbError` naming the address; a target that never raises PREADY raises
  :class:`~.pins.AdapterTimeout` naming the port after ``timeout_cycles``.
* :class:`ApbResponder` serves an RTL APB *initiator* (kind ``apb_master``) from a memory
  back-end (:class:`~.memory.ByteMemory`, :class:`~.memory.TlmMemory`) with cocotbext-apb's
  :class:`~cocotbext.apb.ApbDevice`; an access outside the back-end answers PSLVERR.

What the wrappers add to cocotbext-apb 1.1.0 (and why):

* errors and timeouts become exceptions of the *caller* (ApbHost raises them inside its own
  background task, which would kill the driver and fail the whole cocotb test): the host
  runs with its PSLVERR check and timeout off, the adapter samples PSLVERR itself when the
  host reports the transfer done (the falling edge where PREADY was seen, PSLVERR is valid
  with it) and bounds every transfer with a ``Timer``;
* **parking** (``park=True``): ApbHost's task wakes up on every clock edge, even idle. The
  adapter stops it after each transfer, once it has released PSEL, and restarts it on the
  next request, so an idle APB port costs no Python per cycle (the bridge's rule);
* ApbBase's constructor re-seeds Python's *global* ``random`` module (``random.seed``):
  the adapter saves and restores the global state around it, and gives the host a fixed
  seed (``seed=``), so nothing else's randomness changes;
* its INFO banner (version, copyright) is silenced.

ApbDevice (the responder) polls PSEL on every clock edge: an RTL initiator's APB port
costs one Python wake-up per cycle.
"""
from __future__ import annotations

import logging
import random
from typing import Any, Mapping

import cocotb
from cocotb.triggers import First, ReadWrite, RisingEdge, Timer

from .pins import AdapterError, AdapterTimeout, WordMaster, now_ps

#: roles of an APB port (names as in cocotbext-apb), required ones first
REQUIRED = ("psel", "pwrite", "paddr", "pwdata", "pready", "prdata")
OPTIONAL = ("penable", "pstrb", "pprot", "pslverr")


class ApbError(AdapterError):
    """The APB target answered PSLVERR."""


def _apb():
    try:
        import cocotbext.apb as apb
    except ImportError as e:  # pragma: no cover - reported to the user
        raise ImportError("APB adapters need cocotbext-apb: pip install cocotbext-apb") from e
    return apb


def bus_from_signals(dut: Any, signals: Mapping[str, str]) -> Any:
    """A cocotbext-apb ``ApbBus`` from explicit ``role -> port`` names (a resolved port
    map), so ports need not follow cocotbext's ``<prefix>_<role>`` convention."""
    apb = _apb()
    missing = [r for r in REQUIRED if r not in signals]
    if missing:
        raise AdapterError(f"APB port needs the signals {', '.join(missing)}")
    req = {r: signals[r] for r in REQUIRED}
    opt = {r: signals[r] for r in OPTIONAL if r in signals}
    return apb.ApbBus(dut, None, signals=req, optional_signals=opt)


def _quiet(factory, seed: int):
    """Construct a cocotbext-apb object without its banner and without touching the global
    ``random`` state."""
    state = random.getstate()
    logging.disable(logging.INFO)
    try:
        obj = factory(seednum=seed)
    finally:
        logging.disable(logging.NOTSET)
        random.setstate(state)
    obj.log.setLevel(logging.WARNING)
    return obj


class ApbMasterAdapter(WordMaster):
    """Drive an RTL APB target. ``bus`` is a cocotbext ``ApbBus`` (see :meth:`from_prefix`,
    :func:`bus_from_signals`)."""

    protocol = "APB"

    def __init__(self, bus: Any, clk: Any, *, name: str = "apb", timeout_cycles: int = 1000,
                 period_ns: float | None = None, park: bool = True, seed: int = 1):
        apb = _apb()
        self.bus = bus
        self.clk = clk
        self.name = name
        self.timeout_cycles = timeout_cycles
        self.park = park
        self.host = _quiet(lambda **kw: apb.ApbHost(bus, clk, timeout_max=-1, **kw), seed)
        self.host.pslverr_present = False      # the adapter checks PSLVERR itself
        self._pslverr = getattr(bus, "pslverr", None)
        self._period_ns = period_ns
        self._lock = cocotb.triggers.Lock()
        self.reads = self.writes = self.errors = 0
        if park:
            self._stop_host()

    @classmethod
    def from_prefix(cls, dut: Any, prefix: str, clk: Any, **kw) -> "ApbMasterAdapter":
        return cls(_apb().ApbBus.from_prefix(dut, prefix), clk, **kw)

    # ------------------------------------------------------------------ host task control
    def _stop_host(self) -> None:
        task = self.host._run_coroutine_obj
        if task is not None and not task.done():
            task.cancel()
        self.host._run_coroutine_obj = None

    def _start_host(self) -> None:
        if self.host._run_coroutine_obj is None:
            self.host._run_coroutine_obj = cocotb.start_soon(self.host._run())

    @property
    def parked(self) -> bool:
        return self.host._run_coroutine_obj is None

    async def _timeout(self) -> Timer:
        if self._period_ns is None:
            # measure the clock period once (two edges)
            await RisingEdge(self.clk)
            t0 = now_ps()
            await RisingEdge(self.clk)
            self._period_ns = (now_ps() - t0) / 1000
        return Timer(self.timeout_cycles * self._period_ns, unit="ns")

    # ------------------------------------------------------------------ transfers
    async def _xfer(self, write: bool, addr: int, data: int, strb: int) -> int:
        host = self.host
        async with self._lock:
            timer = await self._timeout()
            self._start_host()
            if write:
                host.write_nowait(addr, data, strb)
            else:
                rx_id = host.read_nowait(addr)
            done = host._idle.wait()
            await First(done, timer)
            if not host._idle.is_set():
                self._stop_host()
                host.clear()
                self.bus.psel.value = 0
                if hasattr(self.bus, "penable"):
                    self.bus.penable.value = 0
                raise AdapterTimeout(
                    f"{self.name}: RTL signal {self.bus.pready._name} stayed 0 for "
                    f"{self.timeout_cycles} cycles ({'write' if write else 'read'} "
                    f"0x{addr:08x}, t = {now_ps()} ps): the target never answers")
            # the falling edge where PREADY was seen: PSLVERR is valid with it
            err = self._pslverr is not None and int(self._pslverr.value)
            value = 0
            if not write:
                while host.queue_rx:
                    ret, tid = host.queue_rx.popleft()
                    if tid == rx_id:
                        value = int.from_bytes(ret, "little")
            if self.park:
                # the host releases PSEL at the next rising edge, then waits: stop it there
                await RisingEdge(self.clk)
                await ReadWrite()
                self._stop_host()
            if err:
                self.errors += 1
                raise ApbError(f"{self.name}: PSLVERR on {'write' if write else 'read'} "
                               f"0x{addr:08x} (t = {now_ps()} ps)")
            return value


class _ApbTarget:
    """The ``target`` interface ApbDevice expects, on a bridge memory back-end. An access
    outside the back-end raises ``APBPrivilegedErr``: the one exception ApbDevice turns
    into PSLVERR (cocotbext-apb 1.1.0 has no generic slave-error hook)."""

    def __init__(self, mem: Any):
        self.mem = mem
        self.errors: list[tuple[str, int, int]] = []

    def _check(self, what: str, addr: int, n: int) -> None:
        contains = getattr(self.mem, "contains", None)
        if contains is not None and not contains(addr, n):
            self.errors.append((what, addr, n))
            raise _apb().APBPrivilegedErr(f"0x{addr:08x}+{n} outside the memory")

    async def read(self, addr: int, n: int) -> bytes:
        self._check("read", addr, n)
        return self.mem.read(addr, n)

    async def write(self, addr: int, data: bytes) -> None:
        self._check("write", addr, len(data))
        self.mem.write(addr, bytes(data))

    async def write_byte(self, addr: int, data: bytes) -> None:
        await self.write(addr, data)


class ApbResponder:
    """Serve an RTL APB initiator from ``mem`` (cocotbext-apb ``ApbDevice``)."""

    def __init__(self, bus: Any, clk: Any, mem: Any, *, seed: int = 1):
        apb = _apb()
        self.bus = bus
        self.target = _ApbTarget(mem)
        self.device = _quiet(lambda **kw: apb.ApbDevice(bus, clk, target=self.target, **kw),
                             seed)

    @classmethod
    def from_prefix(cls, dut: Any, prefix: str, clk: Any, mem: Any, **kw) -> "ApbResponder":
        return cls(_apb().ApbBus.from_prefix(dut, prefix), clk, mem, **kw)


# ---------------------------------------------------------------------- port-map hooks
def _build_slave(dut: Any, ra: Any, clk: Any, rst: Any, rpm: Any,
                 memories: Mapping[str, Any]) -> ApbMasterAdapter:
    bus = bus_from_signals(dut, ra.ports)
    return ApbMasterAdapter(bus, clk, name=ra.spec.name, timeout_cycles=ra.spec.timeout_cycles,
                            period_ns=rpm.period_ns)


def _build_master(dut: Any, ra: Any, clk: Any, rst: Any, rpm: Any,
                  memories: Mapping[str, Any]) -> ApbResponder:
    if ra.spec.name not in memories:
        raise AdapterError(f"adapter {ra.spec.name!r} (apb_master) needs a memory back-end")
    return ApbResponder(bus_from_signals(dut, ra.ports), clk, memories[ra.spec.name])


#: port-map kind -> builder(dut, resolved_adapter, clk, rst, resolved_map, memories)
BUILDERS = {"apb_slave": _build_slave, "apb_master": _build_master}
