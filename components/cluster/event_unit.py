"""The cluster Event Unit: event lines, per-core event buffers with sleep/wake, hardware
barriers, and the cluster -> SOC event.

Semantics (a documented subset of PULP's cluster event unit, docs/cluster.md):

* 32 event lines (:data:`EVT_SW0`.. :data:`EVT_SOC`). An event on a line sets its bit in
  the *event buffer* of every core it targets (hardware events: all cores).
* Each core has an *event mask*. A core that waits sleeps (clock-gated: no simulation
  process runs for it) until ``buffer & mask`` is non-zero; it then resumes
  ``wakeup_cycles`` later. Waiting never consumes bits it was not waiting for; the
  wait-and-clear flavour clears exactly the bits that ended the wait.
* Barriers: each has a participant mask and a target mask. A core arrives with a store to
  the trigger register (``trigger_cycles`` for the core); when the last participant has
  arrived the barrier re-arms and, ``release_cycles`` later, raises :data:`EVT_BARRIER` in
  the targets' buffers. Waiting cores resume ``wakeup_cycles`` after that: a barrier costs
  ``trigger + release + wakeup`` cycles after its last arrival (2 + 2 + 2 by default).
* Inputs: any :class:`tlm.Event` (or a :class:`tlm.LinkEvent`'s receiving ``event``) can
  drive a line (:meth:`EventUnit.connect`): the cluster DMA and the RBE end-of-job events.
* Output: :meth:`EventUnit.send_soc_event` notifies every bound sink (``bind_soc``; a
  :class:`tlm.LinkEvent` on the SOC<->CLUSTER link) and the local :attr:`soc_event`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tlm import Clock, Event, Module, Region, RegisterBank
from tlm.payload import READ, GenericPayload
from tlm.regmap import load_regmap
from tlm.params import check_params, param


if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["EventUnitParams", "EventUnit", "EventUnitRegs", "EVT_SW0", "EVT_DMA", "EVT_DMA_IRQ",
           "EVT_RBE", "EVT_BARRIER", "EVT_SOC", "N_SW_EVENTS", "CORE_STRIDE", "CORE_REG",
           "BARRIER_BASE", "BARRIER_STRIDE", "BARRIER_REG", "SW_EVENT_BASE", "GLOBAL_REG"]

#: The register map (components/cluster/event_unit.registers.yaml); the names below derive
#: from it.
MAP = load_regmap(Path(__file__).with_name("event_unit.registers.yaml"))

#: Event lines (bit numbers of the event buffer), as in PULP where they exist.
EVT_SW0 = MAP.constant("EVT_SW0")          #: software events 0..7 (bits 0..7)
N_SW_EVENTS = MAP.constant("N_SW_EVENTS")
EVT_DMA = MAP.constant("EVT_DMA")          #: cluster DMA completion (EVT_EN transfers)
EVT_DMA_IRQ = MAP.constant("EVT_DMA_IRQ")  #: cluster DMA interrupt (IRQ_EN transfers, failures)
EVT_RBE = MAP.constant("EVT_RBE")          #: RBE end of job (HWPE event line)
EVT_BARRIER = MAP.constant("EVT_BARRIER")  #: hardware barrier released
EVT_SOC = MAP.constant("EVT_SOC")          #: an event from the SOC side (FC -> cluster)

_CORE, _BARRIER, _SW = MAP.array("CORE"), MAP.array("BARRIER"), MAP.array("SW_EVENT")
#: Per-core register block: core ``i`` at ``i * CORE_STRIDE``.
CORE_STRIDE = _CORE.stride
CORE_REG = {r.name: r.offset for r in _CORE.registers}
#: Barrier ``b`` at ``BARRIER_BASE + b * BARRIER_STRIDE``.
BARRIER_BASE = _BARRIER.base
BARRIER_STRIDE = _BARRIER.stride
BARRIER_REG = {r.name: r.offset for r in _BARRIER.registers}
#: Software event ``i`` trigger at ``SW_EVENT_BASE + 4 i`` (write: mask of target cores).
SW_EVENT_BASE = _SW.base
GLOBAL_REG = MAP.offsets()
_INFO = MAP.register("INFO")

ALL = 0xFFFFFFFF


@dataclass
class EventUnitParams:
    """``cluster.event_unit`` parameters (cycles of the cluster clock)."""

    n_barriers: int = param(8, "hardware barriers", lo=1, hi=32)
    #: A core's store to a barrier trigger reaching the Event Unit (peripheral interconnect).
    trigger_cycles: int = param(2, "barrier trigger latency (cycles)", lo=0, hi=1000)
    #: From the last arrival being registered to the barrier event in the buffers.
    release_cycles: int = param(2, "barrier release latency (cycles)", lo=0, hi=1000)
    #: From an awaited event in the buffer to the sleeping core executing again (clock
    #: un-gating and the pending ``elw`` retiring).
    wakeup_cycles: int = param(2, "sleep -> run latency (cycles)", lo=0, hi=1000)
    #: Register access latency on the cluster peripheral interconnect.
    reg_latency: int = param(1, "register access latency (cycles)", lo=0, hi=1000)

    def validate(self) -> None:
        if not 1 <= self.n_barriers <= 16:
            raise ValueError(f"n_barriers must be in 1..16, got {self.n_barriers}")
        for k in ("trigger_cycles", "release_cycles", "wakeup_cycles", "reg_latency"):
            if getattr(self, k) < 0:
                raise ValueError(f"{k} must be >= 0, got {getattr(self, k)}")

    @property
    def barrier_cycles(self) -> int:
        """Cycles from the last core reaching a barrier to every core running again."""
        return self.trigger_cycles + self.release_cycles + self.wakeup_cycles


class _CoreState:
    __slots__ = ("mask", "buffer", "wait_mask", "sleeping", "wake", "sleep_since",
                 "sleep_ps", "wakeups", "waits")

    def __init__(self, eu: "EventUnit", i: int):
        self.mask = 0
        self.buffer = 0
        self.wait_mask = 0
        self.sleeping = False
        self.wake = Event(eu.sim, f"{eu.path}.core{i}.wake")
        self.sleep_since = 0
        self.sleep_ps = 0
        self.wakeups = 0
        self.waits = 0


class _Barrier:
    __slots__ = ("participants", "targets", "status", "completed")

    def __init__(self) -> None:
        self.participants = 0
        self.targets = 0
        self.status = 0
        self.completed = 0


class EventUnit(Module):
    """The Event Unit of a cluster of ``n_cores`` cores; registers on :attr:`regs`
    (a :class:`tlm.RegisterBank` sized by ``region``; map it there)."""

    def __init__(self, parent: "Module | Simulator", name: str, clock: Clock, n_cores: int = 16,
                 params: EventUnitParams | None = None, *, region: Region):
        super().__init__(parent, name)
        self.region = region
        if not 1 <= n_cores <= 16:
            raise ValueError(f"{self.path}: n_cores must be in 1..16, got {n_cores}")
        self.params = params or EventUnitParams()
        check_params(self.params, self.path)
        self.clock = clock
        self.n_cores = n_cores
        self.all_cores = (1 << n_cores) - 1
        self.cores = [_CoreState(self, i) for i in range(n_cores)]
        self.barriers = [_Barrier() for _ in range(self.params.n_barriers)]
        self.soc_event = self.event("soc_event")   # local view of the cluster -> SOC event
        self._soc_sinks: list[Any] = []
        self.soc_events = 0
        self.line_counts = [0] * 32
        self._generation = 0                        # bumped by reset(): aborts waits
        self.regs = EventUnitRegs(self)
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _stat_values(self) -> dict:
        out: dict = {"soc_events": self.soc_events,
                     "barriers_completed": sum(b.completed for b in self.barriers)}
        for line, n in enumerate(self.line_counts):
            if n:
                out[f"line{line}.events"] = n
        for i, c in enumerate(self.cores):
            if c.waits:
                out[f"core{i}.waits"] = c.waits
                out[f"core{i}.wakeups"] = c.wakeups
                out[f"core{i}.sleep_ps"] = c.sleep_ps
        return out

    # ----- inputs and outputs -------------------------------------------------------------
    def connect(self, line: int, source: Any) -> None:
        """Drive event ``line`` (0..31) from ``source``: a :class:`tlm.Event`, or anything
        with an ``event`` attribute that is one (a :class:`tlm.LinkEvent`'s receiving side).
        Every notification sets the line's bit in all cores' buffers."""
        if not 0 <= line < 32:
            raise ValueError(f"{self.path}: event line must be in 0..31, got {line}")
        ev = source if isinstance(source, Event) else getattr(source, "event", None)
        if not isinstance(ev, Event):
            raise TypeError(f"{self.path}: connect() needs a tlm.Event or a LinkEvent, got {source!r}")
        ev.add_callback(lambda _e, b=1 << line: self.trigger(b))

    def bind_soc(self, sink: Any) -> None:
        """Add a sink of the cluster -> SOC event: anything with ``notify()`` (a
        :class:`tlm.LinkEvent` sending side, or a local :class:`tlm.Event`)."""
        if not callable(getattr(sink, "notify", None)):
            raise TypeError(f"{self.path}: bind_soc() needs an object with notify(), got {sink!r}")
        self._soc_sinks.append(sink)

    def send_soc_event(self) -> None:
        """Raise the cluster -> SOC event (end of job) on every bound sink."""
        self.soc_events += 1
        self.soc_event.notify()
        for s in self._soc_sinks:
            s.notify()

    # ----- event buffers ------------------------------------------------------------------
    def trigger(self, bits: int, cores: int = ALL) -> None:
        """Set ``bits`` in the buffers of ``cores`` (a core mask); wake sleepers that wait
        for any of them."""
        bits &= ALL
        b = bits
        line = 0
        while b:
            if b & 1:
                self.line_counts[line] += 1
            b >>= 1
            line += 1
        wake = self.clock.cycles(self.params.wakeup_cycles)
        for i, c in enumerate(self.cores):
            if not (cores >> i) & 1:
                continue
            c.buffer |= bits
            if c.sleeping and c.buffer & c.wait_mask:
                c.wake.notify(wake)

    def reset(self) -> None:
        """Power-off: masks, buffers and barriers are lost; every sleeping core's wait
        ends (returning 0) so that no process is left waiting for an event that the
        powered-down unit will never raise."""
        self._generation += 1
        for c in self.cores:
            c.mask = c.buffer = 0
            if c.sleeping:
                c.wake.notify()
        for b in self.barriers:
            b.participants = b.targets = b.status = 0
        self.regs.reset()

    def clear(self, core: int, bits: int) -> None:
        self.cores[core].buffer &= ~bits & ALL

    async def wait(self, core: int, mask: int | None = None, clear: bool = True) -> int:
        """Sleep core ``core`` until ``buffer & mask`` is non-zero (``mask`` defaults to the
        core's EVT_MASK). Returns those bits, cleared from the buffer when ``clear``. While
        asleep the core has no scheduled activity: only a matching event wakes it."""
        c = self.cores[core]
        m = c.mask if mask is None else mask & ALL
        c.waits += 1
        if not m:
            # nothing could ever wake the core; hardware would hang, we report it instead
            self.stats.add("errors.wait_without_mask")
            return 0
        if not c.buffer & m:
            gen = self._generation
            c.wait_mask = m
            c.sleeping = True
            c.sleep_since = self.sim.now
            while True:
                await c.wake
                if c.buffer & m or gen != self._generation:
                    break
            c.sleeping = False
            c.wait_mask = 0
            c.wakeups += 1
            c.sleep_ps += self.sim.now - c.sleep_since
        got = c.buffer & m
        if clear:
            c.buffer &= ~got
        return got

    # ----- barriers -----------------------------------------------------------------------
    def configure_barrier(self, barrier: int, participants: int, targets: int | None = None) -> None:
        """Arm ``barrier`` for the cores in ``participants``; ``targets`` (default: the
        participants) receive :data:`EVT_BARRIER` when it is released."""
        b = self.barriers[barrier]
        b.participants = participants & self.all_cores
        b.targets = (participants if targets is None else targets) & self.all_cores
        b.status = 0

    def arrive(self, barrier: int, cores: int) -> None:
        """Register the arrival of ``cores`` (a mask) at ``barrier``; the last arrival
        releases it (:data:`EVT_BARRIER` after ``release_cycles``) and re-arms it."""
        b = self.barriers[barrier]
        if not b.participants:
            self.stats.add("errors.trigger_unarmed_barrier")
            return
        b.status |= cores & b.participants
        if b.status == b.participants:
            b.status = 0
            b.completed += 1
            rel = self.clock.cycles(self.params.release_cycles)
            if rel:
                self.sim.schedule(rel, self.trigger, 1 << EVT_BARRIER, b.targets)
            else:
                self.trigger(1 << EVT_BARRIER, b.targets)

    async def barrier(self, core: int, barrier: int = 0) -> None:
        """Core ``core`` reaches ``barrier``: store to the trigger, then sleep until the
        barrier event (consumed on wake-up)."""
        await self.clock.wait_cycles(self.params.trigger_cycles)
        self.arrive(barrier, 1 << core)
        await self.wait(core, 1 << EVT_BARRIER, clear=True)


class EventUnitRegs(RegisterBank):
    """The Event Unit's memory-mapped registers (map in docs/cluster.md). Reads of
    EVT_WAIT / EVT_WAIT_CLEAR block the initiator, as PULP's ``elw`` does, until the
    core's masked buffer is non-zero."""

    def __init__(self, eu: EventUnit):
        super().__init__(eu, "regs", eu.region.size, clock=eu.clock, latency=eu.params.reg_latency,
                         max_bindings=8)
        self.eu = eu
        self.socket.optional = True   # a platform driving the cluster from Python may not map it
        self._waits: dict[int, tuple[int, bool]] = {}
        self._result = [0] * eu.n_cores
        for i in range(eu.n_cores):
            self._add_core(i)
        for bi in range(eu.params.n_barriers):
            self._add_barrier(bi)
        for s in range(N_SW_EVENTS):   # bank name SW_EVENT<s> (the map's SW_EVENT[s].TRIGGER)
            self.add_from_map(_SW.register("TRIGGER"), base=_SW.base + s * _SW.stride,
                              name=f"SW_EVENT{s}",
                              write=lambda v, s=s: eu.trigger(1 << (EVT_SW0 + s), v))
        self.add_map(MAP, {   # names, access, reset and docs: event_unit.registers.yaml
            "SOC_EVENT": dict(write=lambda v: eu.send_soc_event()),
            "SOC_EVENT_COUNT": dict(read=lambda: eu.soc_events & 0xFFFFFFFF),
            "INFO": dict(read=lambda: _INFO.field("BARRIERS").put(
                _INFO.field("CORES").put(0, eu.n_cores), eu.params.n_barriers)),
        })

    def _add_core(self, i: int) -> None:
        eu = self.eu
        c = eu.cores[i]
        # a wait in progress keeps the mask it began with (as the hardware's pending elw)
        self.add_map(_CORE, {
            "EVT_MASK": dict(read=lambda: c.mask, write=lambda v: setattr(c, "mask", v)),
            "EVT_MASK_AND": dict(write=lambda v: setattr(c, "mask", c.mask & ~v & ALL)),
            "EVT_MASK_OR": dict(write=lambda v: setattr(c, "mask", c.mask | v)),
            "EVT_BUFFER": dict(read=lambda: c.buffer),
            "EVT_BUFFER_MASKED": dict(read=lambda: c.buffer & c.mask),
            "EVT_BUFFER_CLEAR": dict(write=lambda v: eu.clear(i, v)),
            "EVT_WAIT": dict(read=lambda: self._result[i]),
            "EVT_WAIT_CLEAR": dict(read=lambda: self._result[i]),
        }, index=i, prefix=f"CORE{i}_")
        base = _CORE.base + i * CORE_STRIDE
        for name, clear in (("EVT_WAIT", False), ("EVT_WAIT_CLEAR", True)):
            self._waits[base + CORE_REG[name]] = (i, clear)

    def _add_barrier(self, bi: int) -> None:
        eu = self.eu
        b = eu.barriers[bi]
        self.add_map(_BARRIER, {
            "PARTICIPANTS": dict(read=lambda: b.participants,
                                 write=lambda v: eu.configure_barrier(bi, v, b.targets or v)),
            "STATUS": dict(read=lambda: b.status),
            "TARGETS": dict(read=lambda: b.targets,
                            write=lambda v: setattr(b, "targets", v & eu.all_cores)),
            "TRIGGER": dict(write=lambda v: eu.arrive(bi, v)),
        }, index=bi, prefix=f"BARRIER{bi}_")

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        if p.command == READ:
            w = self._waits.get(p.address & ~3)
            if w is not None and p.length in (1, 2, 4) and (p.address % 4) + p.length <= 4:
                core, clear = w
                if delay:
                    await self.sim.wait(delay)
                    delay = 0
                # the read completes (and its read hook returns the bits) once woken
                self._result[core] = await self.eu.wait(core, None, clear)
        return await super().b_transport(p, delay)
