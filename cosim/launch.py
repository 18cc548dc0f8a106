"""Run a scenario end to end and write its outputs: in this process
(:func:`cosim.runner.run_here`) or split over processes
(:func:`cosim.partitioned.run_partitioned`), with the same report either way; then the
report JSON, the trace and the plots. The CLI's ``cosim run`` calls :func:`run_scenario`.

Once the output folder is checked, the run always ends with a report: an exception that is
not a user mistake (a bug in a model or in the tool, while building, simulating or
reporting) gives a report with status ``error`` and the traceback (exit 3); and when the
folder can no longer be written after the run (removed, replaced, disk full) the report goes
to a fresh rescue folder (``cosim-rescue-*`` under the temporary directory) with a warning.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tlm import write_chrome_trace

from .outcome import power_counters, stdout_line, stop_record
from .outdir import (OutputError, keep_previous, prepare_out_dir, safe_name, scenario_out_dir, text_writer,
                     write_atomic)
from .partitioned import run_partitioned
from .limits import WallLimit, WallLimitExceeded, wall_limit
from .report import EXIT_INTERNAL_ERROR, Report
from .runner import RunFailure, phase, run_here, scenario_info
from .scenario import Scenario, ScenarioError


def run_scenario(sc: Scenario, out_dir: str | Path | None = None, trace: bool = False,
                 plots: bool = True, progress: bool = False, processes: int | None = None,
                 echo: Any = None, waves: str | None = None, dist_options: Any = None,
                 keep_previous_report: bool = True) -> Report:
    """Build, run, check and write the outputs of ``sc``: in this process, or split over
    processes when ``processes`` > 1 or the scenario has a partition (``dist_options``:
    a :class:`cosim.distributed.DistOptions` for endpoints, keys and deadlines). An earlier
    report.json in the folder is kept as report.prev.json unless ``keep_previous_report``
    is False (``cosim run --force``: it is replaced)."""
    trace = trace or bool(sc.outputs.get("trace"))
    if sc.rtl_blocks:   # refused RTL (docs/security.md) leaves nothing behind: no folder yet
        from .rtl.spec import check_blocks
        check_blocks(sc)
    if out_dir is None:
        out_dir = scenario_out_dir(sc)
    made = _missing_folders(Path(out_dir))
    # a bad folder is found now, before anything is simulated (cosim.outdir)
    out = prepare_out_dir(out_dir)
    try:
        return _run_in(sc, out, trace, plots, progress, processes, echo, waves, dist_options, keep_previous_report)
    except ScenarioError:
        # a user mistake found while building (a data file refused, ...): exit 2 and, like a
        # refusal before the run, nothing left behind — the folders this run made, if empty
        for folder in made:
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _missing_folders(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, deepest first."""
    out = []
    while not path.exists() and not path.is_symlink() and path != path.parent:
        out.append(path)
        path = path.parent
    return out


def _run_in(sc: Scenario, out: Path, trace: bool, plots: bool, progress: bool, processes: int | None,
            echo: Any, waves: str | None, dist_options: Any, keep_previous_report: bool) -> Report:
    split = processes not in (None, 1) or sc.partition
    # limits.max_wall holds in every phase of a run in this process (a split run's window
    # loop holds it itself: cosim.distributed)
    wall = WallLimit(None if split else sc.max_wall)
    try:
        with wall_limit(wall):
            return _run_and_write(sc, out, wall, split, trace=trace, plots=plots, progress=progress,
                                  processes=processes, echo=echo, waves=waves, dist_options=dist_options,
                                  keep=keep_previous_report)
    except WallLimitExceeded as e:     # between the phases that catch it themselves
        return _failed(sc, out, RunFailure(wall.current, e), keep_previous_report, wall.sim_time)


def _failed(sc: Scenario, out: Path, failure: RunFailure, keep: bool, sim_time: int | None = None) -> Report:
    """The report of a run that failed before it had one (status ``error``, exit 3); with
    ``sim_time`` when the alarm stopped it after it simulated (while reporting, writing)."""
    report = Report(scenario=scenario_info(sc), error=str(failure), error_exit=EXIT_INTERNAL_ERROR,
                    error_traceback=failure.traceback, sim_time_ps=sim_time or 0)
    if sim_time is not None:
        report.stopped = stop_record("max_wall", sim_time, [])
    _write_report(sc, report, out, force=True, keep=keep)
    return report


def _run_and_write(sc: Scenario, out: Path, wall: WallLimit, split: bool, *, trace: bool, plots: bool,
                   progress: bool, processes: int | None, echo: Any, waves: str | None, dist_options: Any,
                   keep: bool) -> Report:
    try:
        if split:
            with phase("running the split run"):
                report, run, outcome = run_partitioned(sc, processes=processes, waves=waves,
                                                       trace=trace, dist_options=dist_options, out_dir=out)
        else:
            report, run, outcome = run_here(sc, out, trace=trace, echo=echo, waves=waves,
                                            progress=progress, wall=wall)
    except RunFailure as e:
        wall.disarm()
        return _failed(sc, out, e, keep)
    try:
        wall.phase("writing the outputs")
        _write_outputs(sc, report, run, outcome, out, trace, plots, keep)
    except Exception as e:  # noqa: BLE001 - a bug while writing the trace or the plots
        wall.disarm()
        failure = RunFailure("writing the outputs", e)
        if report.error is None:        # the run's own error, if any, stays the headline
            report.error, report.error_exit = str(failure), EXIT_INTERNAL_ERROR
            report.error_traceback = failure.traceback
        else:
            report.warnings.append(str(failure))
        _write_report(sc, report, out, force=True, keep=keep)
    return report


def _write_outputs(sc: Scenario, report: Report, run: Any, outcome: Any, out: Path, trace: bool,
                   plots: bool, keep: bool) -> None:
    """Firmware output, trace, plots, then the report (last: it lists the others)."""
    try:
        if outcome.stdout_lines:     # the firmware's output, as printed (report: extra.stdout)
            text = "".join(stdout_line(ln) + "\n" for ln in outcome.stdout_lines)
            write_atomic(out, "stdout.log", text)
            report.outputs["stdout"] = str(out / "stdout.log")
        if trace and outcome.trace is not None:
            records, counters = outcome.trace, power_counters(outcome)
            write_atomic(out, "trace.json", text_writer(lambda f: write_chrome_trace(records, f, sc.name, counters)))
            report.outputs["trace"] = str(out / "trace.json")
        want_plots = plots and sc.outputs.get("plots", True) is not False
        if want_plots:
            from .plots import write_plots
            names = sc.outputs.get("plots") if isinstance(sc.outputs.get("plots"), list) else None
            report.outputs.update(write_plots(sc, outcome, run.deployment, out, names))
    except (OSError, OutputError) as e:
        _rescue(sc, report, out, e)
        return
    _write_report(sc, report, out, force=report.error_traceback is not None, keep=keep)


def _write_report(sc: Scenario, report: Report, out: Path, force: bool = False, keep: bool = True) -> None:
    """``out/report.json`` (an earlier one kept as report.prev.json when ``keep``), unless
    the scenario turned it off and ``force`` is not set (an internal error: its traceback
    lives there); in a rescue folder when ``out`` cannot be written."""
    if not (force or sc.outputs.get("report", True)):
        return
    report.outputs["report"] = str(out / "report.json")
    try:
        kept = keep_previous(out) if keep else None   # an earlier report.json -> report.prev.json
        if kept is not None:
            report.notes.append(f"kept the previous report as {kept}")
        write_atomic(out, "report.json", report.json_text())
    except (OSError, OutputError) as e:
        _rescue(sc, report, out, e)


def _rescue(sc: Scenario, report: Report, out: Path, e: Exception) -> None:
    """The output folder failed after the run: write the report into a fresh folder
    under the temporary directory and warn in one line. The run's exit code is kept: its
    status is known and its report exists (``output_error`` says why it moved)."""
    why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    report.output_error = f"cannot write into {out}: {why}"
    # only what is still there (a trace written before the folder vanished is gone)
    report.outputs = {k: v for k, v in report.outputs.items() if k != "report" and Path(v).is_file()}
    label = safe_name(sc.name)[:40]
    try:
        rescue = Path(tempfile.mkdtemp(prefix=f"cosim-rescue-{label}-"))
        report.outputs["report"] = str(rescue / "report.json")
        write_atomic(rescue, "report.json", report.json_text())
    except (OSError, OutputError) as e2:
        report.outputs.pop("report", None)
        report.warnings.append(f"{report.output_error}; and no report could be written "
                               f"elsewhere ({getattr(e2, 'strerror', None) or e2})")
        return
    report.warnings.append(f"{report.output_error}; the report was written to {rescue / 'report.json'}")
