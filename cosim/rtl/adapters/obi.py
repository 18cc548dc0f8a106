"""OBI adapters built on cocotbext-obi (``pip install cocotbext-obi``, checked with 1.1.0).

* :class:`ObiMasterAdapter` drives an RTL OBI *subordinate* (port-map kind ``obi_slave``)
  with cocotbext-obi's :class:`~cocotbext.obi.ObiHost` (pipelined: up to
  ``max_outstanding`` requests in flight): ``await write(addr, data, be)``,
  ``await read(addr) -> int`` (or ``read(addr, n) -> bytes``). An ``err`` response raises
  :class:`ObiError` naming the address; a subordinate that never grants or never answers
  raises :class:`~.pins.AdapterTimeout` naming the stuck port after ``timeout_cycles``.
* :class:`ObiResponder` serves an RTL OBI *manager* (kind ``obi_master``) from a memory
  back-end; an access outside the back-end answers ``err = 1``. It is a small pin-level
  subordinate of our own, **not** cocotbext-obi's ``ObiDevice``: ObiDevice 1.1.0 decides
  ``gnt`` for the next cycle from the ``req`` it sampled and then records that request
  without checking that ``req`` was still high in the granted cycle, so an RTL manager
  that drops ``req`` after its handshake (or presents the next request) gets phantom or
  misaddressed transactions: tests/rtl/obi_mem_tb.py saw ``rvalid`` with nothing
  outstanding and wrong read data through obi_mem's forwarding window.

Ports: OBI 1.x ``req gnt addr we be wdata rvalid rready rdata err`` (+ optional ``aid``/
``rid``). cocotbext-obi requires ``rready`` and ``err``; an RTL port without them (both
are optional in OBI) gets constant tie-offs (rready = 1, err = 0).

What the wrappers add to cocotbext-obi 1.1.0 (and why):

* errors and timeouts become exceptions of the *caller*: ObiHost raises them inside its
  background tasks (which would kill the driver and fail the whole cocotb test), so it
  runs with ``exception_enabled = False`` and no timeout, and the adapter checks
  ``exception_occurred`` and bounds each transaction with a ``Timer``;
* **parking**: ObiHost's R-channel and RREADY tasks wake up on every clock edge, even
  idle; the adapter stops them when the host is idle and restarts them with the next
  request (the A-channel task already sleeps on an event), so an idle OBI port costs no
  Python per cycle;
* ObiBase's constructor re-seeds Python's *global* ``random``: the adapter saves and
  restores it and passes a fixed seed; the INFO banner is silenced.

The responder runs one Python step per clock edge while the manager is active and
sleeps on ``req`` while it is idle.
"""
from __future__ import annotations

import logging
import random
from typing import Any, Mapping

import cocotb
from cocotb.triggers import First, RisingEdge, Timer

from .pins import AdapterError, AdapterTimeout, WordMaster, now_ps

ROLES = ("req", "gnt", "addr", "we", "be", "wdata", "rvalid", "rready", "rdata", "err")
OPTIONAL = ("aid", "rid")
TIED = {"rready": 1, "err": 0}     # OBI-optional signals cocotbext-obi requires


class ObiError(AdapterError):
    """The OBI subordinate answered with ``err = 1``."""


def _obi():
    try:
        import cocotbext.obi as obi
    except ImportError as e:  # pragma: no cover - reported to the user
        raise ImportError("OBI adapters need cocotbext-obi: pip install cocotbext-obi") from e
    return obi


class _TiedValue(int):
    is_resolvable = True


class _Tied:
    """A constant stand-in for an OBI signal the RTL does not have."""

    def __init__(self, name: str, value: int):
        self._name = name
        self._value = _TiedValue(value)

    @property
    def value(self) -> _TiedValue:
        return self._value

    @value.setter
    def value(self, v: Any) -> None:   # writes to a tie-off are dropped
        pass

    def __len__(self) -> int:
        return 1


def _find(dut: Any, prefix: str, role: str) -> str | None:
    for cand in (f"{prefix}{role}_i", f"{prefix}{role}_o", f"{prefix}{role}",
                 f"{prefix}_{role}"):
        if hasattr(dut, cand):
            return cand
    return None


def bus_from_signals(dut: Any, signals: Mapping[str, str], prefix: str = "") -> Any:
    """A cocotbext-obi ``ObiBus`` from explicit ``role -> port`` names (a resolved port
    map). Roles the map does not name are looked up as ``<prefix><role>[_i|_o]``; a missing
    ``rready``/``err`` is tied off."""
    obi = _obi()
    sig = dict(signals)
    for role in ROLES + OPTIONAL:
        if role not in sig and prefix:
            found = _find(dut, prefix, role)
            if found:
                sig[role] = found
    missing = [r for r in ROLES if r not in sig and r not in TIED]
    if missing:
        raise AdapterError(f"OBI port needs the signals {', '.join(missing)}")
    req = {r: sig[r] for r in ROLES if r in sig}
    opt = {r: sig[r] for r in OPTIONAL if r in sig}
    bus = obi.ObiBus(dut, None, signals=req, optional_signals=opt)
    for role, v in TIED.items():
        if role not in sig:
            setattr(bus, role, _Tied(role, v))
    return bus


def _quiet(factory, seed: int):
    state = random.getstate()
    logging.disable(logging.INFO)
    try:
        obj = factory(seednum=seed)
    finally:
        logging.disable(logging.NOTSET)
        random.setstate(state)
    obj.log.setLevel(logging.ERROR)   # errors are reported by the adapter itself
    return obj


class ObiMasterAdapter(WordMaster):
    """Drive an RTL OBI subordinate. ``bus`` is a cocotbext ``ObiBus`` (see
    :meth:`from_prefix`, :func:`bus_from_signals`)."""

    protocol = "OBI"

    def __init__(self, bus: Any, clk: Any, *, name: str = "obi", timeout_cycles: int = 1000,
                 period_ns: float | None = None, max_outstanding: int = 2, seed: int = 1):
        obi = _obi()
        self.bus = bus
        self.clk = clk
        self.name = name
        self.timeout_cycles = timeout_cycles
        self.host = _quiet(lambda **kw: obi.ObiHost(bus, clk, timeout_cycles=-1,
                                                    max_outstanding=max_outstanding, **kw), seed)
        self.host.exception_enabled = False
        self._period_ns = period_ns
        self._lock = cocotb.triggers.Lock()
        self.reads = self.writes = self.errors = 0
        self._park()

    @classmethod
    def from_prefix(cls, dut: Any, prefix: str, clk: Any, **kw) -> "ObiMasterAdapter":
        return cls(bus_from_signals(dut, {}, prefix), clk, **kw)

    # ------------------------------------------------------------------ host task control
    def _park(self) -> None:
        h = self.host
        for attr in ("_r_coroutine_obj", "_rready_coroutine_obj"):
            task = getattr(h, attr)
            if task is not None and not task.done():
                task.cancel()
            setattr(h, attr, None)

    def _unpark(self) -> None:
        h = self.host
        if h._r_coroutine_obj is None:
            h._r_coroutine_obj = cocotb.start_soon(h._run_r_channel())
        if h._rready_coroutine_obj is None:
            h._rready_coroutine_obj = cocotb.start_soon(h._run_rready())

    @property
    def parked(self) -> bool:
        return self.host._r_coroutine_obj is None

    def _reset_host(self) -> None:
        """After a timeout: drop everything in flight, release req, restart the tasks."""
        h = self.host
        self._park()
        task = h._a_coroutine_obj
        if task is not None and not task.done():
            task.cancel()
        h.queue_tx.clear()
        h.outstanding.clear()
        h._presented = None
        h._deassert_req()
        h._idle.set()
        h._a_coroutine_obj = cocotb.start_soon(h._run_a_channel())

    async def _timer(self) -> Timer:
        if self._period_ns is None:
            await RisingEdge(self.clk)
            t0 = now_ps()
            await RisingEdge(self.clk)
            self._period_ns = (now_ps() - t0) / 1000
        return Timer(self.timeout_cycles * self._period_ns, unit="ns")

    # ------------------------------------------------------------------ transfers
    async def _xfer(self, write: bool, addr: int, data: int, be: int) -> int:
        h = self.host
        async with self._lock:
            timer = await self._timer()
            self._unpark()
            h.exception_occurred = False
            if write:
                h.write_nowait(addr, data, be)
            else:
                h.read_nowait(addr)
            op = h.queue_tx[-1]
            await First(op.event.wait(), timer)
            if not op.event.is_set():
                stuck = ("gnt", "grants") if (op is h._presented or op in h.queue_tx) \
                    else ("rvalid", "answers")
                port = getattr(self.bus, stuck[0])._name
                self._reset_host()
                raise AdapterTimeout(
                    f"{self.name}: RTL signal {port} stayed 0 for {self.timeout_cycles} cycles "
                    f"({'write' if write else 'read'} 0x{addr:08x}, t = {now_ps()} ps): the "
                    f"subordinate never {stuck[1]}")
            value = 0
            if not write:
                while h.queue_rx:
                    ret, tid = h.queue_rx.popleft()
                    if tid == op.tx_id:
                        value = int.from_bytes(ret, "little")
            if h.idle:
                self._park()
            if h.exception_occurred:
                h.exception_occurred = False
                self.errors += 1
                raise ObiError(f"{self.name}: err response to {'write' if write else 'read'} "
                               f"0x{addr:08x} (t = {now_ps()} ps)")
            return value


class ObiResponder:
    """Serve an RTL OBI manager from ``mem``: a small pin-level subordinate of our own
    (not cocotbext-obi's ``ObiDevice``, see the module docstring).

    Timing (the bridge's convention: sample at the clock edge, drive for the next cycle):
    ``gnt`` is "ready" style, driven per cycle as ``len(accepted) < max_outstanding`` and
    ``gnt_policy(cycle)``; a request is taken when ``req & gnt`` is sampled at an edge;
    responses are returned in order, the earliest in the cycle after the grant, when
    ``rsp_policy(cycle)`` allows, and held until ``rready`` is sampled high. ``err = 1``
    answers an access outside the back-end (nothing written, reads return 0); with ``aid``/
    ``rid`` ports, ``rid`` echoes the request's ``aid``. Python runs only while the manager
    is active: with nothing accepted and ``req`` low it sleeps on a change of ``req``."""

    def __init__(self, bus: Any, clk: Any, mem: Any, *, max_outstanding: int = 2,
                 gnt_policy: Any = None, rsp_policy: Any = None, name: str = "obi"):
        self.bus = bus
        self.clk = clk
        self.mem = mem
        self.name = name
        self.max_outstanding = max(1, int(max_outstanding))
        self.gnt_policy = gnt_policy
        self.rsp_policy = rsp_policy
        self.errors: list[tuple[str, int, int]] = []
        self.requests = self.stall_cycles = 0
        self._task = cocotb.start_soon(self._run())

    @classmethod
    def from_prefix(cls, dut: Any, prefix: str, clk: Any, mem: Any, **kw) -> "ObiResponder":
        return cls(bus_from_signals(dut, {}, prefix), clk, mem, **kw)

    def stop(self) -> None:
        self._task.cancel()

    def _access(self, addr: int, we: int, be: int, wdata: int) -> tuple[int, int]:
        a = addr & ~3
        contains = getattr(self.mem, "contains", None)
        if contains is not None and not contains(a, 4):
            self.errors.append(("write" if we else "read", a, 4))
            return 0, 1
        if we:
            if be == 0xF:
                self.mem.write(a, wdata.to_bytes(4, "little"))
            elif be:
                self.mem.write(a, wdata.to_bytes(4, "little"),
                               bytes((be >> k) & 1 for k in range(4)))
            return 0, 0
        return int.from_bytes(self.mem.read(a, 4), "little"), 0

    async def _run(self) -> None:
        b = self.bus
        req, gnt, rvalid = b.req, b.gnt, b.rvalid
        rready = b.rready
        has_id = hasattr(b, "aid") and hasattr(b, "rid")
        edge = RisingEdge(self.clk)
        wake = req.value_change
        pending: list[tuple[int, int, int]] = []     # (rdata, err, rid)
        cycle = 0
        gnt_now = rsp_now = False
        gnt.value = 0
        rvalid.value = 0
        b.rdata.value = 0
        if not isinstance(b.err, _Tied):
            b.err.value = 0
        while True:
            if not pending and not int(req.value):
                await wake                           # idle: no Python per cycle
            await edge
            cycle += 1
            r = int(req.value)
            if rsp_now and int(rready.value):        # the head response was taken
                pending.pop(0)
            if r and gnt_now:
                self.requests += 1
                rid = int(b.aid.value) if has_id else 0
                rdata, err = self._access(int(b.addr.value), int(b.we.value), int(b.be.value),
                                          int(b.wdata.value))
                pending.append((rdata, err, rid))
            elif r:
                self.stall_cycles += 1
            # drive the next cycle
            gnt_now = len(pending) < self.max_outstanding and (
                self.gnt_policy is None or bool(self.gnt_policy(cycle)))
            gnt.value = int(gnt_now)
            rsp_now = bool(pending) and (self.rsp_policy is None or bool(self.rsp_policy(cycle)))
            rvalid.value = int(rsp_now)
            if rsp_now:
                rdata, err, rid = pending[0]
                b.rdata.value = rdata
                b.err.value = err
                if has_id:
                    b.rid.value = rid


# ---------------------------------------------------------------------- port-map hooks
def _build_slave(dut: Any, ra: Any, clk: Any, rst: Any, rpm: Any,
                 memories: Mapping[str, Any]) -> ObiMasterAdapter:
    bus = bus_from_signals(dut, ra.ports, ra.spec.prefix)
    return ObiMasterAdapter(bus, clk, name=ra.spec.name, timeout_cycles=ra.spec.timeout_cycles,
                            period_ns=rpm.period_ns)


def _build_master(dut: Any, ra: Any, clk: Any, rst: Any, rpm: Any,
                  memories: Mapping[str, Any]) -> ObiResponder:
    if ra.spec.name not in memories:
        raise AdapterError(f"adapter {ra.spec.name!r} (obi_master) needs a memory back-end")
    return ObiResponder(bus_from_signals(dut, ra.ports, ra.spec.prefix), clk,
                        memories[ra.spec.name], name=ra.spec.name)


#: port-map kind -> builder(dut, resolved_adapter, clk, rst, resolved_map, memories)
BUILDERS = {"obi_slave": _build_slave, "obi_master": _build_master}
