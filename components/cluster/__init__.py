"""The MARSELLUS cluster: 16 cores running kernels as TLM processes, the Event Unit, and the
control registers for offload from the SOC (docs/cluster.md).

Platform wiring::

    cl = Cluster(parent, "cluster", clock=cluster_clock,          # params: ClusterParams
                 ctrl_region=mm["cluster_ctrl"], event_unit_region=mm["event_unit"],
                 tcdm_region=mm["tcdm"])    # regions: from the platform's memory map
    cl.bind_tcdm(tcdm)                       # core i -> tcdm.core_ports[i]
    router.map_region(mm["cluster_ctrl"], cl.ctrl.regs.socket)
    router.map_region(mm["event_unit"], cl.event_unit.regs.socket)
    cl.connect_dma(dma)                      # dma.done_event -> EVT_DMA, dma.irq -> EVT_DMA_IRQ
    cl.connect_rbe(rbe_end_of_job_event)     # -> EVT_RBE
    cl.bind_soc(link.event("cluster_eoj", from_side="b"))   # end of job -> SOC
    cl.attach_power(pmu.domains["cluster"])  # power-off aborts jobs, resets EU and ctrl

Python API (same job path as a register START)::

    run = await cl.run_kernel("matmul", cores=16, m=64, n=64, k=256, bits=8, a=..., w=..., c=...)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from tlm import Clock, Module, Region
from tlm.errors import SimulationError
from tlm.params import check_params, param, suggest
from tlm.units import period_ps

from .core import Access, ClusterCore
from .ctrl import ClusterCtrl, JobError
from .event_unit import (EVT_BARRIER, EVT_DMA, EVT_DMA_IRQ, EVT_RBE, EVT_SOC, EVT_SW0,
                         EventUnit, EventUnitParams)
from .kernels import KERNELS, KERNELS_BY_ID, Kernel, KernelArgError, job_steps, list_kernels
from .timing import KernelTiming, estimate_cycles, load_timing

if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["Cluster", "ClusterParams", "KernelRun", "KernelError", "EventUnit", "EventUnitParams",
           "ClusterCore", "ClusterCtrl", "JobError", "KERNELS", "list_kernels", "EVT_SW0",
           "EVT_DMA", "EVT_DMA_IRQ", "EVT_RBE", "EVT_BARRIER", "EVT_SOC"]


class KernelError(SimulationError):
    """A kernel call from Python with a bad name, arguments or core count."""


@dataclass
class ClusterParams:
    """``cluster`` parameters. Frequencies come from the cluster clock."""

    n_cores: int = param(16, "cluster cores (1..16)", lo=1, hi=16)
    #: Another timing data file (default: components/cluster/kernel_timing.yaml).
    timing_file: str = field(default="", metadata={"doc": "kernel timing data file"})
    #: Register access latency of the control registers (cycles).
    ctrl_latency: int = param(1, "control register latency (cycles)", lo=0, hi=1000)

    def validate(self) -> None:
        if not 1 <= self.n_cores <= 16:
            raise ValueError(f"n_cores must be in 1..16, got {self.n_cores}")
        if self.ctrl_latency < 0:
            raise ValueError(f"ctrl_latency must be >= 0, got {self.ctrl_latency}")


@dataclass
class KernelRun:
    """The outcome of one job: times in ps, ``cycles`` of the cluster clock."""

    kernel: str
    cores: int
    args: dict[str, Any]
    start: int
    end: int
    cycles: int
    ops: int
    error: JobError = JobError.NONE
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.error == JobError.NONE

    @property
    def duration(self) -> int:
        return self.end - self.start

    @property
    def ops_per_cycle(self) -> float:
        return self.ops / self.cycles if self.cycles else 0.0


def cycles_between(clock: Clock, t0: int, t1: int) -> int:
    """Whole cycles of ``clock`` in [t0, t1], following its frequency history (DVFS)."""
    hist = clock.history
    total = 0.0
    for k, (ts, f) in enumerate(hist):
        te = hist[k + 1][0] if k + 1 < len(hist) else t1
        a, b = max(ts, t0), min(te, t1)
        if b > a:
            total += (b - a) / period_ps(f)
    return int(round(total))


class Cluster(Module):
    """Cores, Event Unit and control registers of the cluster (see the module docstring
    for the wiring). The TCDM, DMA and RBE are separate components the platform builds
    (they may be children of this module) and connects with the ``bind``/``connect``
    methods. ``ctrl_region`` / ``event_unit_region``: where the composer maps the control
    and Event Unit registers; ``tcdm_region``: the TCDM's global region (kernel operands and
    args blocks are checked against it; :meth:`bind_tcdm` takes the bound TCDM's)."""

    def __init__(self, parent: "Module | Simulator", name: str = "cluster", *, clock: Clock,
                 ctrl_region: Region, event_unit_region: Region, tcdm_region: Region,
                 params: ClusterParams | None = None, eu_params: EventUnitParams | None = None,
                 timing: KernelTiming | None = None):
        super().__init__(parent, name)
        self.params = params or ClusterParams()
        check_params(self.params, self.path)
        self.clock = clock
        self.timing = timing or load_timing(self.params.timing_file or None)
        n = self.params.n_cores
        self.event_unit = EventUnit(self, "event_unit", clock, n, eu_params,
                                    region=event_unit_region)
        self.ctrl = ClusterCtrl(self, "ctrl", clock, n, len(KERNELS), self._start_from_regs,
                                self.params.ctrl_latency, region=ctrl_region)
        self.cores = [ClusterCore(self, f"core{i}", i, clock, self.event_unit) for i in range(n)]
        for c in self.cores:
            c.issue_ratio = self.timing.issue_ratio
        self.tcdm_region: Region = tcdm_region
        self._jobs = 0
        self._epoch = 0          # bumped at every power-off: jobs of an older epoch abort
        self.runs: list[KernelRun] = []

    # ----- wiring ----------------------------------------------------------------------------
    def bind_tcdm(self, tcdm: Any) -> None:
        """Bind core ``i``'s port to ``tcdm.core_ports[i]`` (a :class:`components.tcdm.Tcdm`)."""
        ports = tcdm.core_ports
        if len(ports) < len(self.cores):
            raise SimulationError(f"{tcdm.path} has {len(ports)} core ports for "
                                  f"{len(self.cores)} cores", self.path)
        for core, port in zip(self.cores, ports):
            core.tcdm.bind(port)
        self.tcdm_region = getattr(tcdm, "region", self.tcdm_region)

    def connect_dma(self, dma: Any) -> None:
        """The cluster DMA's completion (``done_event``) and interrupt (``irq``) events."""
        self.event_unit.connect(EVT_DMA, dma.done_event)
        if getattr(dma, "irq", None) is not None:
            self.event_unit.connect(EVT_DMA_IRQ, dma.irq)

    def connect_rbe(self, end_of_job: Any) -> None:
        """The RBE's end-of-job event (an Event, or a LinkEvent's receiving side)."""
        self.event_unit.connect(EVT_RBE, end_of_job)

    def bind_soc(self, sink: Any) -> None:
        """Where the cluster end-of-job event goes (a LinkEvent towards the SOC)."""
        self.event_unit.bind_soc(sink)

    def attach_power(self, domain: Any) -> None:
        """Follow the CLUSTER power domain (a ``components.pmu.PowerDomain``): when it goes
        OFF, :meth:`power_off` runs. (Core activity goes to the PMU's energy ledger by
        itself when the platform has one; accesses to the registers while OFF are refused
        by a ``DomainGate`` the platform puts in front of them.)"""
        domain.on_power_off(self.power_off)

    def power_off(self) -> None:
        """The cluster loses power: a running job stops at its cores' next step (no
        end-of-job event; a Python caller gets ``JobError.POWER_OFF``), sleeping cores are
        released, the Event Unit and the control registers return to reset."""
        self._epoch += 1
        self.stats.add("power_offs")
        self.event_unit.reset()
        self.ctrl.reset()

    def on_activity(self, fn: Callable[[ClusterCore, int, int, int, float], None]) -> None:
        """Call ``fn(core, begin_ps, end_ps, ops, instr)`` after every chunk of every core
        (the power model's activity feed)."""
        for c in self.cores:
            c.activity_listeners.append(fn)

    # ----- kernels ------------------------------------------------------------------------------
    def _kernel(self, name: str) -> Kernel:
        k = KERNELS.get(name)
        if k is None:
            raise KernelError(f"unknown kernel {name!r}{suggest(name, KERNELS)}; kernels: "
                              f"{', '.join(KERNELS)}", self.path, self.sim.now)
        return k

    def _prepare(self, name: str, cores: int | None, args: dict[str, Any]) -> tuple[Kernel, dict, int]:
        k = self._kernel(name)
        n = len(self.cores) if cores is None else cores
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(self.cores):
            raise KernelError(f"kernel {name}: cores must be in 1..{len(self.cores)}, got {cores!r}",
                              self.path, self.sim.now)
        try:
            a = k.normalize(args)
            a = k.decode(k.encode(a))      # exactly what an args block can carry
            k.check(a, self.tcdm_region)
        except KernelArgError as e:
            raise KernelError(str(e), self.path, self.sim.now) from None
        return k, a, n

    def estimate(self, name: str, cores: int | None = None, **args: Any) -> float:
        """Contention-free cycles of a job (what TCDM burst mode without conflicts gives)."""
        k, a, n = self._prepare(name, cores, args)
        return estimate_cycles(job_steps(k, a, n, self.timing), self.timing, self.event_unit.params)

    async def run_kernel(self, name: str, cores: int | None = None, **args: Any) -> KernelRun:
        """Run kernel ``name`` on ``cores`` cores (default: all) with its arguments; waits
        for a running job to end first. Raises :class:`KernelError` on bad input."""
        k, a, n = self._prepare(name, cores, args)
        while self.ctrl.busy:
            await self.ctrl.idle
        self.ctrl.begin()
        return await self._execute(k, a, n, self.sim.now)

    def _start_from_regs(self, kid: int, ptr: int, cores: int) -> None:
        self._jobs += 1
        self.spawn(self._reg_job(kid, ptr, cores), f"offload{self._jobs}")

    async def _reg_job(self, kid: int, ptr: int, cores: int) -> KernelRun | None:
        t0 = self.sim.now
        epoch = self._epoch
        k = KERNELS_BY_ID.get(kid)
        n = cores or len(self.cores)
        if k is None:
            return self._fail(t0, JobError.BAD_KERNEL, f"no kernel with id {kid}")
        if n > len(self.cores):
            return self._fail(t0, JobError.BAD_CORES, f"CORES={cores} > {len(self.cores)}")
        size = 4 * len(k.args)
        reg = self.tcdm_region
        local = ptr - reg.base if ptr >= reg.base else ptr
        if local < 0 or local + size > reg.size:
            return self._fail(t0, JobError.BAD_ARGS_PTR, f"args block 0x{ptr:x}+{size} is not in the TCDM")
        # the master core fetches the args block through its TCDM port
        master = self.cores[0]
        master.faults = 0
        buf, d = await master.read(Access(ptr, size))
        if d:
            await self.sim.wait(d)
        if epoch != self._epoch:
            return None              # powered off meanwhile: the registers are reset
        if master.faults:
            return self._fail(t0, JobError.BAD_ARGS_PTR, f"reading the args block at 0x{ptr:x} failed")
        try:
            a = k.decode([int(w) for w in buf.view("<u4")])
            k.check(a, reg)
        except KernelArgError as e:
            return self._fail(t0, JobError.BAD_ARGS, str(e))
        return await self._execute(k, a, n, t0)

    def _fail(self, t0: int, err: JobError, msg: str) -> None:
        self.stats.add("jobs_rejected")
        self.ctrl.finish(err, cycles_between(self.clock, t0, self.sim.now), msg)
        self.event_unit.send_soc_event()
        return None

    async def _execute(self, k: Kernel, a: dict[str, Any], n: int, t0: int) -> KernelRun:
        """The one job path: fork n cores on the planned steps, join, end of job."""
        tm = self.timing
        self._jobs += 1
        job = self._jobs
        epoch = self._epoch
        steps = job_steps(k, a, n, tm)
        eu = self.event_unit
        eu.configure_barrier(0, (1 << n) - 1)
        await self.clock.wait_cycles(tm.dispatch_cycles)

        def alive() -> bool:
            return self._epoch == epoch

        procs = [self.cores[i].spawn(self.cores[i].execute(steps[i], k.name, alive), f"job{job}")
                 for i in range(n)] if alive() else []
        faults = 0
        for p in procs:
            faults += await p
        if alive():
            await self.clock.wait_cycles(tm.eoj_cycles)
        if not alive():
            run = KernelRun(k.name, n, a, t0, self.sim.now, cycles_between(self.clock, t0, self.sim.now),
                            k.total_ops(a), JobError.POWER_OFF, "the cluster was powered off")
            self.runs.append(run)
            self.stats.add("jobs_aborted")
            return run
        end = self.sim.now
        cycles = cycles_between(self.clock, t0, end)
        err = JobError.ACCESS_FAULT if faults else JobError.NONE
        msg = f"{faults} TCDM access error(s) (see the TLM errors)" if faults else ""
        run = KernelRun(k.name, n, a, t0, end, cycles, k.total_ops(a), err, msg)
        self.runs.append(run)
        self.stats.add("jobs")
        self.stats.add(f"kernel.{k.name}.runs")
        self.stats.add(f"kernel.{k.name}.cycles", cycles)
        self.stats.add("ops", run.ops)
        self.trace_span(k.name, t0, end, cores=n, cycles=cycles)
        self.ctrl.finish(err, cycles, msg)
        eu.send_soc_event()
        return run
