"""Run a scenario end to end and write its outputs: in this process
(:func:`cosim.runner.run_here`) or split over processes
(:func:`cosim.partitioned.run_partitioned`), with the same report either way; then the
report JSON, the trace and the plots. The CLI's ``cosim run`` calls :func:`run_scenario`.
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from tlm import write_chrome_trace

from .outdir import keep_previous, prepare_out_dir, text_writer, write_atomic
from .partitioned import run_partitioned
from .report import Report
from .limits import wall_limit
from .runner import run_here
from .scenario import Scenario


def default_out_dir(sc: Scenario) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path("out") / f"{sc.name}-{stamp}"
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def run_scenario(sc: Scenario, out_dir: str | Path | None = None, trace: bool = False,
                 plots: bool = True, progress: bool = False, processes: int | None = None,
                 echo: Any = None, waves: str | None = None, dist_options: Any = None) -> Report:
    """Build, run, check and write the outputs of ``sc``: in this process, or split over
    processes when ``processes`` > 1 or the scenario has a partition (``dist_options``:
    a :class:`cosim.dist.DistOptions` for endpoints, keys and deadlines)."""
    trace = trace or bool(sc.outputs.get("trace"))
    if out_dir is None:
        out_dir = sc.outputs["dir"] if sc.outputs.get("dir") else default_out_dir(sc)
    # a bad folder is found now, before anything is simulated (cosim.outdir)
    out = prepare_out_dir(out_dir)
    if processes not in (None, 1) or sc.partition:
        report, run, outcome = run_partitioned(sc, processes=processes, waves=waves, trace=trace,
                                               dist_options=dist_options, out_dir=out)
    else:
        with wall_limit(sc.max_wall) as wall:
            report, run, outcome = run_here(sc, out, trace=trace, echo=echo, waves=waves,
                                            progress=progress, wall=wall)
            wall.phase("writing the outputs")
            _write_outputs(sc, out, report, run, outcome, trace, plots)
        return report
    _write_outputs(sc, out, report, run, outcome, trace, plots)
    return report


def _write_outputs(sc: Scenario, out: Path, report: Report, run: Any, outcome: Any, trace: bool,
                   plots: bool) -> None:
    """The report JSON, the trace and the plots (into ``out``)."""
    if sc.outputs.get("report", True):
        report.outputs["report"] = str(out / "report.json")
    if trace and outcome.trace is not None:
        records = outcome.trace
        write_atomic(out, "trace.json", text_writer(lambda f: write_chrome_trace(records, f, sc.name)))
        report.outputs["trace"] = str(out / "trace.json")
    want_plots = plots and sc.outputs.get("plots", True) is not False
    if want_plots:
        from .plots import write_plots
        names = sc.outputs.get("plots") if isinstance(sc.outputs.get("plots"), list) else None
        report.outputs.update(write_plots(sc, outcome, run.deployment, out, names))
    if "report" in report.outputs:
        kept = keep_previous(out)      # an earlier run's report.json -> report.prev.json
        if kept is not None:
            report.notes.append(f"kept the previous report as {kept}")
        write_atomic(out, "report.json", report.json_text())
