"""Run a scenario in one process: build, load, simulate, gather the outcome, report.
(:mod:`cosim.partitioned` builds on this to split a run over processes with the same
report; :mod:`cosim.launch` picks one or the other and writes the outputs.)

The run ends at global quiescence (nothing left to do) or at ``limits.max_time``
(everything strictly before it); both are partition-invariant. ``limits.max_wall`` stops a
run that takes too long in wall time, with the simulated time reached in the error.

A run stopped by a limit (``max_memory``, ``max_wall``, the default time limit, an
exhausted address space, a signal) still ends with a report: its ``stopped`` section says
what stopped it, at which simulated time and where (the components with a process
runnable or waiting for a time). What a run keeps for that report while simulated time grows is bounded
(``cosim.limits``), and a :class:`cosim.limits.Reserve` of address space is released
before the report is made.
"""
from __future__ import annotations

import logging

import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator


from tlm import Process, Simulator, Tracer
from tlm.errors import SimulationError
from tlm.params import ParameterError
from tlm.units import MS, fmt_bytes, fmt_time

from . import limits
from . import checks as checks_mod
from . import interrupts
from .host import Host, resolve_address
from .outcome import Outcome, merge, plain_fields, region_key, stop_record
from .platforms import _param_error, check_addresses, check_fit, check_models, preset, resolved_parameters
from .report import Report
from .results import (EventHasher, error_records, hash_record, merge_stats, run_hash,
                      run_manifest, state_digest)
from .scenario import Scenario, ScenarioError
from .scenario.data import load_data

log = logging.getLogger("cosim.run")

#: the builder a worker process calls (cosim.partitioned); named in every manifest
WORKER_BUILDER = "cosim.partitioned:build_worker"

#: a waveform file larger than this is pointed out after the run (disk, viewer load time)
WAVES_WARN_BYTES = 100 << 20

#: simulated-time limit when a scenario gives none (a run must always end)
DEFAULT_MAX_TIME = 1000 * MS


@dataclass
class Run:
    """A built scenario: simulator, platform, host, goldens; filled in by ``execute``."""

    sc: Scenario
    sim: Simulator
    platform: Any
    host: Host | None
    deployment: Any = None
    goldens: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    wall: float = 0.0
    error: str | None = None
    #: set when SIGINT (Ctrl-C) or SIGTERM stopped the simulation: the report is partial
    #: and this is its exit code (130 / 143)
    interrupted: int | None = None
    #: the traceback when a model's Python code raised (a bug, not a modelled error)
    traceback: str | None = None
    #: the RTL blocks swapped in (``model: rtl|shadow``): ``report()``, ``close()``
    rtl: Any = None
    #: what stopped the run before it finished (:func:`cosim.outcome.stop_record`), or None
    stopped: dict[str, Any] | None = None

    def collect(self, owns) -> dict:
        """This process's part of the outcome (the distribution layer calls it at the end)."""
        return gather(self, owns)

    def close(self) -> None:
        if self.rtl is not None:
            self.rtl.close()


def build(sc: Scenario, trace: bool = False, echo=None, waves: str | None = None,
          sim: Simulator | None = None, out_dir: Path | None = None) -> Run:
    """Build the platform (in ``sim``, or a new simulator), apply loads and the network
    deployment, create the host; swap in the RTL blocks the scenario's ``models`` name
    (``waves``: 'vcd'/'fst'/None). Nothing is scheduled: a process may build the whole
    scenario and simulate only its partition."""
    check_models(sc)
    check_addresses(sc)
    resolved = resolved_parameters(sc)
    check_fit(sc, resolved)            # the loads now, the network's data once it is deployed
    limits.check(sc, resolved)
    sim = sim if sim is not None else Simulator(seed=sc.seed)
    if trace:
        sim.tracer = Tracer(sim, limit=limits.trace_records_cap(sc.max_memory))
    try:
        return _build(sc, sim, echo, waves, out_dir, resolved)
    except BaseException:
        sim.discard()      # a scenario error after elaboration: no process will ever run
        raise


def _build(sc: Scenario, sim: Simulator, echo: Any, waves: str | None,
           out_dir: Path | None, resolved: dict[str, dict[str, Any]]) -> Run:
    tasks = [dict(t) for t in sc.tasks]
    deployment = None
    if sc.network:
        from .deploy import deploy_network
        deployment = deploy_network(sc)
        tasks = tasks + deployment.tasks
    check_fit(sc, resolved, deployment)
    try:
        plat = preset(sc)(sim, sc.overrides, sc.firmware, echo)
    except ParameterError as e:
        raise _param_error(sc, e) from None
    run = Run(sc, sim, plat, None, deployment)
    if any(m != "tlm" for m in sc.models.values()) or sc.rtl_blocks:
        from .platforms import rtl_swappable
        from .rtl.swap import attach_models
        run.rtl = attach_models(run, rtl_swappable(sc), waves=waves, out_dir=out_dir)
    for i, t in enumerate(sc.tasks):
        if t["op"] == "load":
            try:
                space, addr = resolve_address(t["to"], f"workload.tasks[{i}].to", plat.memory_map)
                plat.load(space, addr, load_data(sc, t, i))
            except (ValueError, ParameterError) as e:
                raise sc.error(str(e), ("workload", "tasks", i, "to")) from None
    if deployment is not None:
        for space, addr, blob in deployment.loads:
            plat.load(space, addr, blob)
        run.goldens.update(deployment.goldens)
    if tasks:
        run.host = Host(plat.soc, "host", tasks=tasks, irq=plat.irq, pmu=getattr(plat, "pmu", None),
                        memory_map=getattr(plat, "memory_map", None))
        run.host.socket.bind(plat.host_bus)
    return run


def execute(run: Run, progress: bool = False) -> None:
    """Simulate to quiescence or the limits; errors end up in ``run.error``, what stopped
    the run early in ``run.stopped``. A :class:`limits.Reserve` is held meanwhile and
    released at the end, for the report."""
    sc, sim = run.sc, run.sim
    limit = sc.max_time or DEFAULT_MAX_TIME
    deadline = time.monotonic() + sc.max_wall if sc.max_wall else None
    t0 = time.perf_counter()
    bar = None
    stop: str | None = None
    where: list[str] | None = None
    reserve = limits.Reserve()
    try:
        if progress:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
            bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                           TextColumn("{task.fields[simtime]}"), TimeElapsedColumn(), transient=True)
            bar.start()
            job = bar.add_task(sc.name, total=limit, simtime="")
        step = 10_000_000  # ps of simulated time per slice; adapted to ~0.2 s of wall time
        while True:
            nxt = sim.next_event_time()
            if nxt is None:
                break
            if nxt >= limit:
                if sim.now < limit:
                    sim.run(until=limit)   # end exactly at the limit, as a split run does
                break
            until = min(limit, max(nxt + 1, sim.now + step))
            w = time.perf_counter()
            sim.run(until=until)
            if sim.stopped:
                break
            dw = time.perf_counter() - w
            step = max(1_000_000, int(step * min(4.0, max(0.25, 0.2 / max(dw, 1e-6)))))
            if bar is not None:
                bar.update(job, completed=sim.now, simtime=fmt_time(sim.now))
            if deadline is not None and time.monotonic() > deadline:
                run.error = (f"limits.max_wall ({sc.max_wall} s) exceeded at simulated time "
                             f"{fmt_time(sim.now)}")
                stop = "max_wall"
                break
            rss = limits.rss_bytes()
            if rss > sc.max_memory:
                run.error = (f"limits.max_memory ({fmt_bytes(sc.max_memory)}) exceeded at simulated time "
                             f"{fmt_time(sim.now)}: the process holds {fmt_bytes(rss)}")
                stop = "max_memory"
                break
        sim.settle()
        nxt = sim.next_event_time()
        if run.error is None and nxt is not None and nxt >= limit and sc.max_time is None:
            run.error = (f"the run did not finish within the default limit of {fmt_time(limit)} "
                         "of simulated time (set limits.max_time)")
            stop = "default_max_time"
    except SimulationError as e:
        if _out_of_memory(e):
            reserve.release()
            where = [e.path] if e.path else None
            run.error = _no_memory_message(sim, e.path)
            stop = "out_of_memory"
        else:
            run.error = str(e)
            run.traceback = internal_traceback(e)
    except MemoryError:              # the kernel's own bookkeeping, outside any process
        reserve.release()
        run.error = _no_memory_message(sim, None)
        stop = "out_of_memory"
    except KeyboardInterrupt as e:   # Ctrl-C or SIGTERM: stop here, report what was simulated
        run.interrupted = interrupts.exit_code(e)
        run.error = f"interrupted by {interrupts.signal_name(e)} at simulated time {fmt_time(sim.now)}"
        stop = "interrupted"
    finally:
        reserve.release()
        if bar is not None:
            bar.stop()
        run.close()
        run.wall = time.perf_counter() - t0
        if stop is not None:
            run.stopped = stop_record(stop, sim.now, where if where is not None else pending_components(sim))


def _causes(e: BaseException) -> Iterator[BaseException]:
    """``e`` and its chain of ``__cause__``."""
    cause: BaseException | None = e
    while cause is not None:
        yield cause
        cause = cause.__cause__


def _out_of_memory(e: BaseException) -> bool:
    """Whether a MemoryError is behind ``e`` (a model ran out of address space)."""
    return any(isinstance(c, MemoryError) for c in _causes(e))


def _no_memory_message(sim: Simulator, path: str | None) -> str:
    return (f"out of memory at simulated time {fmt_time(sim.now)}{f' in {path}' if path else ''}: the process's "
            "address space is exhausted (set limits.max_memory below it, so the run stops by itself first)")


def pending_components(sim: Simulator, most: int = 8) -> list[str]:
    """Where a stopped run was going on: the components with a process runnable or waiting
    for a time (not for an event), each process's name cut to its module; at most ``most``."""
    found: set[str] = set()
    for item in sim.pending_items():
        name = getattr(item, "name", None)
        if not isinstance(item, Process) or not name:
            continue
        path = name
        while path and path not in sim.modules:
            path = path.rpartition(".")[0]
        found.add(path or name)
    return sorted(found)[:most]


def internal_traceback(e: SimulationError) -> str | None:
    """The traceback of ``e`` when Python code raised under it (a model's bug: a
    ZeroDivisionError, a KeyError...), None for a modelled error (firmware fault, TLM
    protocol rule, time limit): only a bug needs the traceback."""
    if all(isinstance(c, SimulationError) for c in _causes(e)):
        return None
    return "".join(traceback.format_exception(e))


class RunFailure(Exception):
    """Something raised outside the simulated processes while ``phase`` ('building the
    platform', 'simulating', 'reporting'): a bug, or a SimulationError of elaboration. The
    launcher turns it into a report with status ``error`` and the traceback (exit 3)."""

    def __init__(self, phase: str, cause: BaseException):
        self.phase = phase
        self.cause = cause
        if isinstance(cause, (SimulationError, limits.WallLimitExceeded)):   # modelled: no bug
            self.traceback: str | None = None
            super().__init__(f"{cause} (while {phase})")
        else:
            self.traceback = "".join(traceback.format_exception(cause))
            super().__init__(f"internal error ({type(cause).__name__}) while {phase}: {cause}")


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Turn any exception but a user mistake or an interrupt into :class:`RunFailure`;
    log the phase and its wall time (``cosim run --verbose``)."""
    log.info("%s", name)
    t0 = time.perf_counter()
    try:
        yield
        log.info("%s: done in %.3f s", name, time.perf_counter() - t0)
    except (ScenarioError, RunFailure):
        raise
    except Exception as e:  # noqa: BLE001 - reported with its phase and traceback
        raise RunFailure(name, e) from e


def gather(run: Run, owns: Callable[[str], bool], samples: bool = True) -> dict[str, Any]:
    """The part of ``run``'s outcome held by the components ``owns`` accepts (plain data);
    ``capped``: what was kept of a record that outgrew its cap (``extra.capped``)."""
    plat, part = run.platform, {}
    capped: dict[str, str] = {}
    if owns("soc"):
        if run.host is not None:
            part["records"] = {k: plain_fields(r) for k, r in run.host.records.items()}
        fc = getattr(plat, "fc", None)
        if fc is not None:
            part["firmware"] = {"fault": fc.fault.message() if fc.fault is not None else None,
                                "exit_code": fc.exit_code, "exit_time": fc.exit_time}
        stdout = getattr(plat, "stdout", None)
        # [time ps, source, text]: plain data for a worker's RESULT as for one process
        part["stdout"] = [[ln.time, ln.source, ln.text] for ln in stdout.lines] if stdout is not None else []
        if stdout is not None and stdout.lines.dropped:
            kept = stdout.lines
            capped["stdout"] = (f"kept the first {len(kept.head):,} and the last {len(kept.tail):,} of "
                                f"{kept.total:,} lines (soc.stdout.max_lines)")
    pmu = getattr(plat, "pmu", None)
    if pmu is not None and owns(pmu.path):
        part["pmu"] = {
            "path": pmu.path, "energy_path": pmu.energy.path, "domains": list(pmu.domains),
            "operating_point": pmu.operating_point_label, "abb": bool(pmu.abb.enabled),
            "conditions": {"start": pmu.start_conditions, "end": pmu.conditions()},
            "timing_errors": [str(e) for e in pmu.timing_errors],
            "abb_steps": len(getattr(pmu.abb, "history", ()) or ()),
            "samples": _samples(run, pmu, capped) if samples and run.sim.now else []}
    regions = {}
    for space, addr, size in checks_mod.regions_needed(run.sc, run.goldens, run.deployment):
        try:
            if owns(plat.owner_of(space, addr, size)):
                regions[region_key(space, addr, size)] = plat.dump(space, addr, size)
        except (ValueError, ParameterError):   # platforms say ParameterError (memory_for)
            continue          # a bad range: the checks report it, with the scenario's key
    part["regions"] = regions
    from components.accel import accelerators
    part["accelerators"] = {a.path: a.report_entry().as_dict()
                            for a in accelerators(run.sim.modules) if owns(a.path.split(".")[0])}
    if run.rtl is not None:
        rtl = run.rtl.report(owned=lambda path: owns(path.split(".")[0]))
        if rtl["blocks"]:
            part["rtl"] = rtl
    tracer = run.sim.tracer
    if tracer is not None:
        part["trace"] = [[r.path, r.name, r.begin, r.end, r.args] for r in tracer.records
                         if owns(r.path.split(".")[0])]
        if tracer.dropped:
            capped["trace"] = (f"kept the first {len(tracer.records):,} of {len(tracer.records) + tracer.dropped:,} "
                               "records (1/8 of limits.max_memory)")
    if capped:
        part["capped"] = capped
    return part


def _samples(run: Run, pmu: Any, capped: dict[str, str]) -> list[dict]:
    """The PMU's power time series as report data: at most
    :func:`limits.power_samples_cap` samples (a longer series is decimated, and
    ``capped`` says so)."""
    energy, now = pmu.energy, run.sim.now
    cap = limits.power_samples_cap(run.sc.max_memory)
    step = energy.coarse_period(now, cap)
    series = pmu.timeseries(until=now, max_samples=cap)
    if step:
        capped["power_samples"] = (f"decimated to {len(series):,} samples of {fmt_time(step)} (at most {cap:,}, "
                                   f"from 1/16 of limits.max_memory; pmu.sample_period is "
                                   f"{fmt_time(energy.sample_period)})")
    if energy.folded():
        capped["activity_spans"] = (f"activity energy of the power series folded into {fmt_time(energy.folded())} "
                                    "bins (a domain booked more spans than it keeps)")
    return [plain_fields(s) for s in series]


def outcome_of(run: Run, lean: bool = False) -> Outcome:
    """The outcome of a run simulated in this process (one part: it owns everything);
    ``lean``: without the power series, the trace and the firmware's output (a report
    made after the first attempt ran out of memory). A stopped run's time is the simulated
    time it reached."""
    sim = run.sim
    sim_time = max(sim.last_activity, sim.now if sim.stopped or run.stopped else 0)
    if lean:
        if sim.tracer is not None:
            sim.tracer.records = []
        stdout = getattr(run.platform, "stdout", None)
        if stdout is not None:
            stdout.lines.clear()
    part = gather(run, lambda _c: True, samples=not lean)
    if lean:
        part.setdefault("capped", {})["report"] = ("the first report ran out of memory: this one leaves out "
                                                   "the power series, the trace and the firmware's output")
    return merge([part], sim_time=sim_time, stats=merge_stats([sim.stats.as_dict()], set()),
                 errors=error_records(sim), locate=run.platform.memory_for)


def scenario_info(sc: Scenario) -> dict[str, Any]:
    return {"name": sc.name, "file": str(sc.file) if sc.file else None, "seed": sc.seed,
            "preset": sc.preset, "overrides": sc.overrides, "models": sc.models,
            "partition": sc.partition}


def make_report(sc: Scenario, out: Outcome, *, goldens: dict, deployment: Any = None,
                wall: float = 0.0, error: str | None = None) -> Report:
    """The report of a run from its outcome (one process or several alike)."""
    sim_time, stats = out.sim_time, out.stats
    rep = Report(scenario=scenario_info(sc), sim_time_ps=sim_time, wall_time_s=wall, stats=stats, error=error)
    for path, vals in stats.items():
        busy = vals.get("busy_ps")
        if busy is not None and sim_time:
            rep.utilisation[path] = min(1.0, busy / sim_time)
        moved = sum(v for k, v in vals.items() if k.split(".")[-1] in ("bytes_read", "bytes_written")
                    and isinstance(v, (int, float)))
        if not moved:
            moved = sum(v for k, v in vals.items() if k.split(".")[-1] == "bytes"
                        and isinstance(v, (int, float)))
        if moved:
            rep.traffic[path] = int(moved)
    rep.tlm_errors = list(out.errors)
    if out.records is not None:
        rep.tasks = {tid: r.as_dict() for tid, r in out.records.items()}
    rep.energy = checks_mod.energy_summary(out)
    rep.checks = checks_mod.evaluate(sc, out, goldens, deployment)
    if deployment is not None:
        from .deploy.report import layer_table
        rep.extra["layers"] = layer_table(out.records, deployment)
    if out.rtl is not None:
        rep.extra["rtl"] = out.rtl
        for path, block in out.rtl.get("blocks", {}).items():
            size = block.get("waves_bytes") or 0
            if size > WAVES_WARN_BYTES:
                rep.warnings.append(f"{path}: the waveform {block['waves']} holds {fmt_bytes(size)}"
                                    + ("; --waves fst writes a compressed one" if str(block["waves"]).endswith(".vcd")
                                       else ""))
    if out.stdout_lines:
        rep.extra["stdout"] = out.stdout_lines
    capped = dict(out.capped)
    not_kept = sum(v.get("tlm_errors_not_kept", 0) for v in stats.values())
    if not_kept:
        capped["tlm_errors"] = (f"kept the first {len(rep.tlm_errors):,} TLM errors; {not_kept:,} more are "
                                "counted in their components' tlm_errors_not_kept")
    if capped:
        rep.extra["capped"] = dict(sorted(capped.items()))
    if out.accelerators:
        # energy comes from the platform's power model (booked through Accelerator.book),
        # merged from whichever process owns it; with a power model, nothing booked is 0 J
        booked = (rep.energy or {}).get("per_component_j", {})
        rep.extra["accelerators"] = {
            path: {**e, "energy_j": booked.get(path, 0.0) if rep.energy else e["energy_j"]}
            for path, e in out.accelerators.items()}
    return rep


def run_here(sc: Scenario, out: Path, *, trace: bool = False, echo: Any = None,
             waves: str | None = None, progress: bool = False,
             wall: limits.WallLimit | None = None) -> tuple[Report, Run, Outcome]:
    """Build, simulate and report ``sc`` in this process (report with hash and manifest);
    ``wall`` (:func:`cosim.limits.wall_limit`) is told the phase."""
    wall = wall or limits.WallLimit(None)
    with phase("building the platform"):
        run = build(sc, trace=trace, echo=echo, waves=waves, out_dir=out)
        hasher = EventHasher().install(run.sim)
    wall.phase("simulating")
    with phase("simulating"):
        execute(run, progress)
    wall.sim_time = run.sim.now
    if run.stopped is not None and run.stopped["by"] == "max_wall":
        wall.disarm()     # the loop stopped at the limit: what remains is reporting it (bounded)
    wall.phase("reporting")
    with phase("reporting"):
        try:
            outcome = outcome_of(run)
        except MemoryError:
            outcome = outcome_of(run, lean=True)
        report = make_report(sc, outcome, goldens=run.goldens, deployment=run.deployment,
                             wall=run.wall, error=run.error)
        report.error_exit = run.interrupted
        report.error_traceback = run.traceback
        report.stopped = run.stopped
        memories = state_digest(run.sim)
        report.hash = hash_record(run_hash(hasher.acc, memories), hasher.count, memories)
    report.manifest = run_manifest(WORKER_BUILDER, {"seed": sc.seed}, None, sc.max_time or DEFAULT_MAX_TIME,
                                   {"transport": "in-process", "windows": 0,
                                    "wall_time_s": round(run.wall, 6)})
    return report, run, outcome
