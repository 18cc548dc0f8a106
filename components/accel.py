"""The common accelerator interface: what the RBE, a Tensil TCU, a FlexiSAGA array and a
Voyager unit share (docs/accelerators.md).

An accelerator is a :class:`tlm.Module` with

* a **control port**: a register bank (``regs``, a :class:`tlm.RegisterBank` mapped by the
  composition) or a command queue, decoded into immutable job objects;
* one or more **memory initiator ports** (``ports``: name -> :class:`tlm.InitiatorSocket`)
  to memory it does not own (TCDM, L2, DRAM);
* a **done event** (``done``), notified at the end of every job, that the composition wires
  to an interrupt line or an event unit;
* a **functional engine** and a **cycle model**, pure functions of the job that run without
  the kernel (:class:`AcceleratorModel`);
* a **report entry** (:meth:`Accelerator.report_entry`): jobs, cycles, utilisation, bytes
  moved per port, operations, energy where the platform books it.

The job loop (:meth:`Accelerator.job_loop`) is shared: it takes the next job from the
control port, hands it to :attr:`Accelerator.executor` and retires it. ``executor`` is the
swap point for RTL: ``cosim.rtl`` replaces it with a transactor that runs the same job on a
Verilated block (``model: rtl``) or beside the model (``model: shadow``), for any
accelerator that names its RTL block.

Nothing here knows a platform: the composition gives every address, clock and wire.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generic, Mapping, Protocol, Sequence, TypeVar

from tlm import Clock, Event, InitiatorSocket, Module, Simulator

JobT = TypeVar("JobT")
JobT_contra = TypeVar("JobT_contra", contravariant=True)

#: ``read(address, nbytes) -> bytes-like``: the memory as the functional engine sees it
ReadFn = Callable[[int, int], Any]
#: ``write(address, data)``: where the functional engine puts its outputs
WriteFn = Callable[[int, Any], None]


@dataclass(frozen=True)
class Burst:
    """One memory burst of a job: on ``port``, ``nbytes`` at ``address``."""

    port: str
    address: int
    nbytes: int
    write: bool = False


@dataclass(frozen=True)
class TimingPhase:
    """A compute phase of ``cycles`` cycles and the memory bursts it issues."""

    name: str
    cycles: int
    bursts: tuple[Burst, ...] = ()


@dataclass(frozen=True)
class JobTiming:
    """What the cycle model says about one job, before contention: its phases, the
    operations it performs, and its ideal cycles (operations / peak operations per cycle)."""

    phases: tuple[TimingPhase, ...]
    ops: int = 0
    ideal_cycles: int = 0

    @property
    def cycles(self) -> int:
        return sum(p.cycles for p in self.phases)

    def bytes_by_port(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.phases:
            for b in p.bursts:
                out[b.port] = out.get(b.port, 0) + b.nbytes
        return out


class AcceleratorModel(Protocol[JobT_contra]):
    """The two pure functions every accelerator family provides (testable without the
    kernel): bit-exact ``functional`` and analytic ``timing``."""

    def functional(self, job: JobT_contra, read: ReadFn, write: WriteFn) -> None:
        """Compute the job bit-exactly: operands through ``read``, outputs to ``write``."""

    def timing(self, job: JobT_contra) -> JobTiming:
        """The job's compute phases and memory bursts, without contention."""


@dataclass
class JobRecord:
    """What one job did. ``cycles`` is the accelerator's own record (for the RBE its
    per-phase :class:`components.rbe.RbeCycles`), ``error`` a non-zero code for a job the
    control port rejected."""

    job_id: int
    start: int
    end: int
    error: int
    cycles: Any = None


@dataclass
class AcceleratorReport:
    """An accelerator's report entry (stable keys)."""

    kind: str
    jobs: int
    errors: int
    busy_ps: int
    cycles: int
    ideal_cycles: int
    ops: int
    bytes: dict[str, int] = field(default_factory=dict)
    energy_j: float | None = None

    @property
    def utilisation(self) -> float:
        """Ideal over achieved cycles (0 when nothing ran)."""
        return self.ideal_cycles / self.cycles if self.cycles else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "jobs": self.jobs, "errors": self.errors,
                "busy_ps": self.busy_ps, "cycles": self.cycles,
                "ideal_cycles": self.ideal_cycles, "utilisation": self.utilisation,
                "ops": self.ops, "bytes": dict(sorted(self.bytes.items())),
                "energy_j": self.energy_j}


@dataclass(frozen=True)
class MacArrayEnergy:
    """How a MAC array's activity reaches a platform's power model (docs/power.md): under
    activity class ``cls``, a report of kind ``macs_kind`` (a job's MACs) books the MACs,
    their one-bit products (W^2 per MAC) and the busy cycles x processing elements, with
    ``shape(accelerator) -> (W, PEs)``; any other kind books as reported."""

    cls: str
    macs_kind: str
    shape: Callable[[Any], tuple[int, int]]


#: ``executor(job_id, job, start) -> JobRecord``: runs one accepted job to its end
Executor = Callable[[int, Any, int], Awaitable[JobRecord]]


class Accelerator(Module, ABC, Generic[JobT]):
    """Base of every accelerator model. Subclasses set ``kind``, create their control port
    and memory ports (:meth:`add_port`), and implement :meth:`next_job` and
    :meth:`execute`; they call :meth:`kick` when the control port has new work.

    Accounting: every executor calls :meth:`account` once per job (``busy_ps``, ``ops``,
    ``cycles``, ``ideal_cycles``, ``bytes_moved`` per port)."""

    kind = "accelerator"
    #: the RTL block that can replace the executor (``cosim.rtl`` registry key), if any
    rtl_block: str | None = None
    #: how the platform books its energy, for a MAC array (None: the platform's own rule)
    energy_profile: MacArrayEnergy | None = None

    def __init__(self, parent: Module | Simulator, name: str, *, clock: Clock):
        super().__init__(parent, name)
        self.clock = clock
        self.ports: dict[str, InitiatorSocket] = {}
        self.done = Event(self.sim, f"{self.path}.done")
        self._kick = Event(self.sim, f"{self.path}.kick")
        self.jobs: list[JobRecord] = []
        self.busy_ps = 0
        self.ops = 0
        self.cycles = 0
        self.ideal_cycles = 0
        self.bytes_moved: dict[str, int] = {}
        #: power hooks ``(kind, count, over_ps[, start=, unit=])`` (:meth:`book`): the
        #: platform books energy through them
        self.activity: list[Callable[..., None]] = []
        #: runs one accepted job; replaceable (``cosim.rtl`` swaps in a Verilated block)
        self.executor: Executor = self.execute

    # ----- what a subclass provides ----------------------------------------------------
    @abstractmethod
    def next_job(self) -> tuple[int, JobT | int] | None:
        """The next job from the control port: ``(job_id, job)``, ``(job_id, error_code)``
        for a job the control port rejected, or None when there is nothing to do."""
        ...

    @abstractmethod
    async def execute(self, job_id: int, job: JobT, start: int) -> JobRecord:
        """Run one accepted job with the model: outputs in memory, time passed,
        accounting updated."""
        ...

    async def reject(self, job_id: int, error: int, start: int) -> JobRecord:
        """A job the control port rejected: by default it ends at once with its code."""
        return JobRecord(job_id, start, self.sim.now, error, None)

    def retire(self, job_id: int, record: JobRecord) -> bool:
        """Called at the end of a job; False drops it (e.g. aborted by a soft clear):
        not recorded, no done event."""
        return True

    # ----- shared machinery -----------------------------------------------------------------
    def add_port(self, name: str) -> InitiatorSocket:
        """A memory initiator port, bound by the composition."""
        sock = InitiatorSocket(self, name)
        self.ports[name] = sock
        self.bytes_moved.setdefault(name, 0)
        return sock

    def kick(self) -> None:
        """The control port has new work (or was cleared): wake the job loop."""
        self._kick.notify(0)

    def start(self) -> None:
        """Start the job loop (subclasses call it at the end of their constructor)."""
        self.spawn(self.job_loop(), "engine")

    async def job_loop(self) -> None:
        while True:
            item = self.next_job()
            if item is None:
                await self._kick
                continue
            job_id, job = item
            start = self.sim.now
            if isinstance(job, int):
                record = await self.reject(job_id, job, start)
            else:
                record = await self.executor(job_id, job, start)
            if self.retire(job_id, record):
                self.jobs.append(record)
                self.done.notify()
            tr = self.sim.tracer
            if tr is not None:
                tr.span(self.path, f"job{job_id}" + (f" error {record.error}" if record.error else ""),
                        start, self.sim.now)

    def account(self, start: int, cycles: int, ideal_cycles: int, ops: int,
                moved: Mapping[str, int]) -> None:
        """Add one finished job (started at ``start``, ending now) to the report counters;
        ``moved``: bytes per memory port. Every executor of the accelerator (its model, an
        RTL stand-in) calls it once per job."""
        self.busy_ps += self.sim.now - start
        self.cycles += cycles
        self.ideal_cycles += ideal_cycles
        self.ops += ops
        for port, n in moved.items():
            self.bytes_moved[port] = self.bytes_moved.get(port, 0) + n

    def book(self, kind: str, count: int, over_ps: int, start: int | None = None,
             unit: str | None = None) -> None:
        """Report activity to the platform's power model (nothing if none listens):
        ``count`` activities of ``kind`` over ``[start, start + over_ps)`` (``start``
        defaults to now and may lie in the past), by the accelerator itself or, with
        ``unit``, by the memory it uses on its behalf (e.g. ``"tcdm"``). Hooks receive
        ``(kind, count, over_ps)``, plus ``start=`` and ``unit=`` keywords when given."""
        # the keywords only when given, without building a dict per report (the RBE books
        # three per compute span)
        if unit is None:
            if start is None:
                for hook in self.activity:
                    hook(kind, count, over_ps)
            else:
                for hook in self.activity:
                    hook(kind, count, over_ps, start=start)
        elif start is None:
            for hook in self.activity:
                hook(kind, count, over_ps, unit=unit)
        else:
            for hook in self.activity:
                hook(kind, count, over_ps, start=start, unit=unit)

    def report_entry(self) -> AcceleratorReport:
        return AcceleratorReport(
            kind=self.kind, jobs=len(self.jobs), errors=sum(1 for j in self.jobs if j.error),
            busy_ps=self.busy_ps, cycles=self.cycles, ideal_cycles=self.ideal_cycles,
            ops=self.ops, bytes=dict(self.bytes_moved))


def accelerators(modules: Mapping[str, Module] | Sequence[Module]) -> list[Accelerator[Any]]:
    """The accelerators among ``modules`` (a simulator's module table or a list), by path."""
    mods = modules.values() if isinstance(modules, Mapping) else modules
    return sorted((m for m in mods if isinstance(m, Accelerator)), key=lambda m: m.path)


class JobRefused(Exception):
    """A job the accelerator refuses: ``code`` names its error constant in the register map
    (``ERR_*``), the message says why (:attr:`JobRegisters.reason`)."""

    def __init__(self, code: str, why: str) -> None:
        super().__init__(why)
        self.code = code


class JobRegisters:
    """The control of an accelerator programmed through job registers, one job in flight
    (FlexiSAGA; the example plug-in in examples/): writing CTRL.START latches the job
    registers into a job (:meth:`start_job`); STATUS reads BUSY, DONE, ERROR and ERROR_CODE
    (:meth:`status_word`); :meth:`next_job` checks the job and hands a refused one over as its
    error code; a refused job takes ``setup`` cycles (:meth:`reject`). Mix it into an
    :class:`Accelerator` before it (``class A(JobRegisters, Accelerator[Job])``), call
    :meth:`init_job_registers` in the constructor and provide :meth:`check`."""

    map: Any            # the tlm.regmap.RegisterMap of STATUS and the ERR_* constants
    clock: Clock
    sim: Any

    def init_job_registers(self, regmap: Any, setup_cycles: int) -> None:
        self.map = regmap
        self._setup_cycles = setup_cycles
        self._pending: Any = None
        self._busy = False
        self._done = False
        self._error = 0
        self._next_id = 0
        #: why the last refused job was refused
        self.reason = ""

    def start_job(self, job: Any) -> None:
        """CTRL.START with ``job`` in the registers: queued unless a job is in flight."""
        if self._busy or self._pending is not None:
            return
        self._pending = job
        self._busy, self._done, self._error = True, False, 0
        self.kick()   # type: ignore[attr-defined]

    def clear_status(self) -> None:
        """A soft reset: DONE, ERROR and ERROR_CODE cleared."""
        self._done, self._error = False, 0

    def status_word(self) -> int:
        word = 0
        for name, v in (("BUSY", self._busy), ("DONE", self._done), ("ERROR", self._error != 0),
                        ("ERROR_CODE", self._error)):
            word = self.map.field("STATUS", name).put(word, int(v))
        return word

    def check(self, job: Any) -> None:
        """Raise :class:`JobRefused` for a job the accelerator cannot run."""

    def next_job(self) -> tuple[int, Any] | None:
        job = self._pending
        if job is None:
            return None
        self._pending = None
        self._next_id += 1
        try:
            self.check(job)
        except JobRefused as e:
            return self._next_id, self.refused(e)
        return self._next_id, job

    def refused(self, e: JobRefused) -> int:
        """Record why ``e``'s job was refused; its error code."""
        self.reason = str(e)
        return int(self.map.constant(e.code))

    async def reject(self, job_id: int, error: int, start: int) -> JobRecord:
        await self.clock.wait_cycles(self._setup_cycles)
        self._error = error
        return JobRecord(job_id, start, self.sim.now, error, None)

    def retire(self, job_id: int, record: JobRecord) -> bool:
        self._busy, self._done = False, True
        return True


async def timing_burst(accel: Accelerator[Any], port: str, write: bool, address: int, nbytes: int) -> None:
    """One burst of a job's words on memory port ``port``, for its time and the traffic the
    interconnect sees (the data itself moves by debug access; a write carries no byte enable,
    so it changes nothing)."""
    if nbytes <= 0:
        return
    from tlm import GenericPayload
    from tlm.payload import READ, WRITE
    p = GenericPayload(WRITE if write else READ, address, bytearray(nbytes), initiator=accel.path)
    if write:
        p.byte_enable = b"\x00"
    d = await accel.ports[port].b_transport(p, 0)
    if d:
        await accel.sim.wait(d)
