"""Run a scenario in one process: build, load, simulate, check, report.

The run ends at global quiescence (nothing left to do) or at ``limits.max_time``
(everything strictly before it); both are partition-invariant. ``limits.max_wall`` stops a
run that takes too long in wall time, with the simulated time reached in the error.
"""
from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tlm import Simulator, Tracer, write_chrome_trace
from tlm.errors import SimulationError
from tlm.params import ParameterError
from tlm.units import MS, fmt_time

from . import checks as checks_mod
from .host import Host, resolve_address
from .platform import _param_error, check_models, preset
from .report import Report
from .scenario import Scenario, ScenarioError

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
    #: the RTL blocks swapped in (``model: rtl|shadow``): ``report()``, ``close()``
    rtl: Any = None


def _data_bytes(sc: Scenario, task: dict, i: int) -> bytes:
    src = task["data"]
    key = ("workload", "tasks", i, "data")
    if "file" in src:
        path = sc.resolve_file(src["file"], key + ("file",))
        if path.suffix == ".npy":
            try:
                return np.load(path, allow_pickle=False).tobytes()
            except ValueError as e:
                raise sc.error(f"cannot read {src['file']}: {e}", key + ("file",)) from None
        return path.read_bytes()
    if "fill" in src:
        return bytes([src["fill"].get("value", 0)]) * src["fill"]["count"]
    r = src["random"]
    dtype = np.dtype(r.get("dtype", "uint8"))
    info = np.iinfo(dtype)
    lo, hi = r.get("low", int(info.min)), r.get("high", int(info.max) + 1)
    rng = np.random.default_rng(np.random.SeedSequence([sc.seed, *task["id"].encode()]))
    return rng.integers(lo, hi, size=r["count"], dtype=np.int64).astype(dtype).tobytes()


def build(sc: Scenario, trace: bool = False, echo=None, waves: str | None = None) -> Run:
    """Build the platform, apply loads and the network deployment, create the host;
    swap in the RTL blocks the scenario's ``models`` name (``waves``: 'vcd'/'fst'/None)."""
    check_models(sc)
    sim = Simulator(seed=sc.seed)
    if trace:
        sim.tracer = Tracer(sim)
    tasks = [dict(t) for t in sc.tasks]
    deployment = None
    if sc.network:
        from .deploy import deploy_network
        deployment = deploy_network(sc)
        tasks = tasks + deployment.tasks
    try:
        plat = preset(sc)(sim, sc.overrides, sc.firmware, echo)
    except ParameterError as e:
        raise _param_error(sc, e) from None
    run = Run(sc, sim, plat, None, deployment)
    if any(m != "tlm" for m in sc.models.values()):
        from .rtl.scenario import attach_models
        run.rtl = attach_models(run, waves=waves)
    for i, t in enumerate(sc.tasks):
        if t["op"] == "load":
            try:
                space, addr = resolve_address(t["to"], f"workload.tasks[{i}].to")
                plat.load(space, addr, _data_bytes(sc, t, i))
            except (ValueError, ParameterError) as e:
                raise sc.error(str(e), ("workload", "tasks", i, "to")) from None
    if deployment is not None:
        for space, addr, blob in deployment.loads:
            plat.load(space, addr, blob)
        run.goldens.update(deployment.goldens)
    if tasks:
        run.host = Host(plat.soc, "host", tasks=tasks, irq=plat.irq, pmu=getattr(plat, "pmu", None))
        run.host.socket.bind(plat.ms.soc_xbar.target_socket)
    return run


def execute(run: Run, progress: bool = False) -> None:
    """Simulate to quiescence or the limits; errors end up in ``run.error``."""
    sc, sim = run.sc, run.sim
    limit = sc.max_time or DEFAULT_MAX_TIME
    deadline = time.monotonic() + sc.max_wall if sc.max_wall else None
    t0 = time.perf_counter()
    bar = None
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
            if nxt is None or nxt >= limit:
                break
            until = min(limit, max(nxt + 1, sim.now + step))
            w = time.perf_counter()
            sim.run(until=until)
            if sim._stop:
                break
            dw = time.perf_counter() - w
            step = max(1_000_000, int(step * min(4.0, max(0.25, 0.2 / max(dw, 1e-6)))))
            if bar is not None:
                bar.update(job, completed=sim.now, simtime=fmt_time(sim.now))
            if deadline is not None and time.monotonic() > deadline:
                run.error = (f"limits.max_wall ({sc.max_wall} s) exceeded at simulated time "
                             f"{fmt_time(sim.now)}")
                break
        sim.settle()
        nxt = sim.next_event_time()
        if run.error is None and nxt is not None and nxt >= limit and sc.max_time is None:
            run.error = (f"the run did not finish within the default limit of {fmt_time(limit)} "
                         "of simulated time (set limits.max_time)")
    except SimulationError as e:
        run.error = str(e)
    finally:
        if bar is not None:
            bar.stop()
        if run.rtl is not None:
            run.rtl.close()
        run.wall = time.perf_counter() - t0


def make_report(run: Run) -> Report:
    sc, sim, plat = run.sc, run.sim, run.platform
    sim_time = max(sim.last_activity, sim.now if sim._stop else 0)
    stats = sim.stats.as_dict()
    rep = Report(scenario={"name": sc.name, "file": str(sc.file) if sc.file else None,
                           "seed": sc.seed, "preset": sc.preset, "overrides": sc.overrides,
                           "models": sc.models},
                 sim_time_ps=sim_time, wall_time_s=run.wall, stats=stats, error=run.error)
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
    rep.tlm_errors = [str(e) for e in sim.errors]
    if run.host is not None:
        rep.tasks = {tid: r.as_dict() for tid, r in run.host.records.items()}
    rep.energy = checks_mod.energy_summary(plat, sim_time)
    rep.checks = checks_mod.evaluate(run, sim_time)
    if run.deployment is not None:
        from .deploy.report import layer_table
        rep.extra["layers"] = layer_table(run)
    if run.rtl is not None:
        rep.extra["rtl"] = run.rtl.report()
    return rep


def default_out_dir(sc: Scenario) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path("out") / f"{sc.name}-{stamp}"
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def run_scenario(sc: Scenario, out_dir: Path | None = None, trace: bool = False,
                 plots: bool = True, progress: bool = False, processes: int | None = None,
                 echo=None, waves: str | None = None) -> Report:
    """Build, run, check and write the outputs of ``sc``."""
    if processes not in (None, 1) or sc.partition:
        raise ScenarioError("running a scenario split over processes is not available yet "
                            "(the distribution layer runs its own test platforms); drop "
                            "--partition/--processes or the scenario's partition key",
                            str(sc.file) if sc.file else None, key="partition")
    trace = trace or bool(sc.outputs.get("trace"))
    run = build(sc, trace=trace, echo=echo, waves=waves)
    execute(run, progress)
    report = make_report(run)
    out = Path(sc.outputs["dir"]) if sc.outputs.get("dir") and out_dir is None else out_dir
    out = out or default_out_dir(sc)
    out.mkdir(parents=True, exist_ok=True)
    if sc.outputs.get("report", True):
        report.outputs["report"] = str(out / "report.json")
    if trace and run.sim.tracer is not None:
        with (out / "trace.json").open("w") as f:
            write_chrome_trace(run.sim.tracer.records, f, sc.name)
        report.outputs["trace"] = str(out / "trace.json")
    want_plots = plots and sc.outputs.get("plots", True) is not False
    if want_plots:
        from .plots import write_plots
        names = sc.outputs.get("plots") if isinstance(sc.outputs.get("plots"), list) else None
        report.outputs.update(write_plots(run, report, out, names))
    if "report" in report.outputs:
        report.write_json(out / "report.json")
    return report
