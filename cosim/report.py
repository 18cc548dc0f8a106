"""Run reports: the JSON report (stable, documented keys) and the terminal summary.

Report keys (docs/scenarios.md lists them with their meaning):
``tool``, ``scenario``, ``status`` (passed | failed | error | interrupted), ``exit_code``,
``sim_time_ps``, ``sim_time``, ``wall_time_s``, ``sim_per_wall``, ``components``
(path -> statistics), ``utilisation`` (path -> fraction of the run it was busy: the
terminal's busy column; an accelerator's MAC utilisation is in extra.accelerators),
``traffic`` (path -> bytes), ``energy`` (when the platform has a power model),
``tasks`` (id -> start/end), ``checks`` (list of name/passed/detail), ``tlm_errors``,
``error`` (for status error), ``outputs`` (paths of files written), ``extra`` (per-scenario
sections such as per-layer latency), ``hash`` and ``manifest``; ``error_traceback`` (an
internal error: the Python traceback, else null) and ``output_error`` (the output folder
could not be written after the run and the report went to a rescue folder, else null);
``stopped`` only for a run a limit stopped (what, when and where:
:func:`cosim.outcome.stop_record`).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from tlm.units import fmt_time

from .exitcodes import (EXIT_CHECK_FAILED, EXIT_DISTRIBUTED_ERROR, EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED,  # noqa: F401
                        EXIT_OK, EXIT_SCENARIO_ERROR, EXIT_SIMULATION_ERROR, EXIT_TERMINATED)


@dataclass
class CheckResult:
    name: str
    passed: bool
    detail: str

    def as_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


@dataclass
class Report:
    """Everything a run produced; ``as_dict`` is the JSON report."""

    scenario: dict[str, Any]
    sim_time_ps: int = 0
    wall_time_s: float = 0.0
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    utilisation: dict[str, float] = field(default_factory=dict)
    traffic: dict[str, int] = field(default_factory=dict)
    energy: dict[str, Any] | None = None
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    tlm_errors: list[str] = field(default_factory=list)
    error: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    hash: dict[str, str] | None = None
    manifest: dict[str, Any] | None = None
    #: the exit code of an error that is not a simulation error (a failed distributed run)
    error_exit: int | None = None
    #: one-line notes for the terminal, not part of the JSON (e.g. a previous report kept)
    notes: list[str] = field(default_factory=list)
    #: one-line warnings for stderr, not part of the JSON (e.g. the report was rescued)
    warnings: list[str] = field(default_factory=list)
    #: the Python traceback of an internal error (a bug in a model or in the tool)
    error_traceback: str | None = None
    #: why the outputs could not be written into the output folder after the run
    output_error: str | None = None
    #: what stopped the run before it finished, when a limit did (cosim.outcome.stop_record)
    stopped: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        if self.error is not None:
            return "interrupted" if self.error_exit in (EXIT_INTERRUPTED, EXIT_TERMINATED) else "error"
        return "passed" if all(c.passed for c in self.checks) else "failed"

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return self.error_exit or EXIT_SIMULATION_ERROR
        return EXIT_OK if all(c.passed for c in self.checks) else EXIT_CHECK_FAILED

    def as_dict(self) -> dict[str, Any]:
        from tlm import __version__
        d: dict[str, Any] = {
            "tool": {"name": "tlm-cosim", "version": __version__},
            "scenario": self.scenario,
            "status": self.status,
            "exit_code": self.exit_code,
            "sim_time_ps": self.sim_time_ps,
            "sim_time": fmt_time(self.sim_time_ps),
            "wall_time_s": round(self.wall_time_s, 6),
            "sim_per_wall": (self.sim_time_ps * 1e-12 / self.wall_time_s) if self.wall_time_s else None,
            "components": self.stats,
            "utilisation": self.utilisation,
            "traffic": self.traffic,
            "energy": self.energy,
            "tasks": self.tasks,
            "checks": [c.as_dict() for c in self.checks],
            "tlm_errors": self.tlm_errors,
            "error": self.error,
            "error_traceback": self.error_traceback,
            "outputs": self.outputs,
            "output_error": self.output_error,
            "extra": self.extra,
        }
        if self.stopped is not None:    # only then: a finished run's report keeps its keys
            d["stopped"] = self.stopped
        if self.hash is not None:
            d["hash"] = self.hash
        if self.manifest is not None:
            d["manifest"] = self.manifest
        return d

    def json_text(self) -> str:
        return json.dumps(self.as_dict(), indent=2, sort_keys=False, default=_jsonable) + "\n"

    def write_json(self, path: Path) -> None:
        """Write the report atomically (cosim.outdir.write_atomic: never through a symlink)."""
        from .outdir import write_atomic
        write_atomic(path.parent, path.name, self.json_text())


def _jsonable(o: Any) -> Any:
    try:
        import numpy as np
        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n}"


def hash_line(report: Report) -> str:
    """``hash <run hash> (<n> link events, <p> process(es))``: compare runs at a glance."""
    h, m = report.hash or {}, report.manifest or {}
    return (f"hash {h.get('run', '?')} ({h.get('link_events', 0)} link events, "
            f"{m.get('processes', 1)} process{'es' if m.get('processes', 1) != 1 else ''})")


def natural_key(text: str) -> tuple:
    """Sort key that orders numbers by value: ``core2`` before ``core10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


#: the width of a console that is not a terminal (a pipe, a file, a CI log) without COLUMNS
PIPED_WIDTH = 200


def output_console(stderr: bool = False) -> Console:
    """The console a command prints to. On a terminal, the terminal's width; piped or
    redirected, rich would assume 80 columns and cut table cells ("transac…"), so the width
    is ``$COLUMNS`` when set, else :data:`PIPED_WIDTH`. Tables fold what still does not fit
    (:func:`table`): a name is wrapped, never cut."""
    console = Console(stderr=stderr)
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(stderr=stderr, width=PIPED_WIDTH)


def table(title: str | None, columns: list[str], *, left: int = 1, **kw: Any) -> Any:
    """A summary table whose cells fold rather than end in an ellipsis, so no name or
    number is ever cut: the first ``left`` columns left-aligned (names), the rest right."""
    from rich.table import Table    # here: a quiet run never builds a table (start-up time)
    t = Table(title=title, show_edge=False, **kw)
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i < left else "right", overflow="fold")
    return t


def print_summary(report: Report, console: Console | None = None) -> None:
    """The human summary: time, utilisation, traffic, energy, tasks, checks."""
    console = console or output_console()
    sc = report.scenario
    console.print(f"[bold]{sc.get('name', 'scenario')}[/bold]  seed {sc.get('seed')}  "
                  f"simulated {fmt_time(report.sim_time_ps)} in {report.wall_time_s:.2f} s wall")
    if report.utilisation or report.traffic:
        # "busy", not "utilisation": the share of the run a block was busy (report.json's
        # top-level utilisation), unlike an accelerator's MAC utilisation (its own table)
        t = table("components", ["path", "busy", "bytes moved"])
        for path in sorted(set(report.utilisation) | set(report.traffic), key=natural_key):
            u = report.utilisation.get(path)
            b = report.traffic.get(path)
            t.add_row(path, f"{100 * u:.1f} %" if u is not None else "-",
                      _fmt_bytes(b) if b is not None else "-")
        console.print(t)
    accels = report.extra.get("accelerators") or {}
    if accels:
        t = table("accelerators", ["path", "jobs", "cycles", "ideal cycles", "MAC utilisation"],
                  caption="MAC utilisation: ideal cycles (the work at the array's peak) / cycles the "
                          "jobs took (report.json extra.accelerators.<path>.utilisation); busy "
                          "(components): the share of the run the block was busy",
                  caption_justify="left")
        for path, a in sorted(accels.items(), key=lambda kv: natural_key(kv[0])):
            t.add_row(path, f"{a['jobs']:,}", f"{a['cycles']:,}", f"{a['ideal_cycles']:,}",
                      f"{100 * a['utilisation']:.1f} %" if a["cycles"] else "-")
        console.print(t)
    if report.energy:
        e = report.energy
        t = table("energy", ["domain / component", "energy"])
        for k, v in sorted((e.get("per_domain_j") or {}).items()):
            t.add_row(k, f"{v * 1e6:.3f} µJ")
        for k, v in sorted((e.get("per_class_j") or {}).items()):
            if v:
                t.add_row(f"  activity: {k}", f"{v * 1e6:.3f} µJ")
        if "total_j" in e:
            t.add_row("[bold]total[/bold]", f"{e['total_j'] * 1e6:.3f} µJ")
        if "average_power_w" in e:
            t.add_row("average power", f"{e['average_power_w'] * 1e3:.2f} mW")
        console.print(t)
    for name, section in report.extra.items():
        if isinstance(section, dict) and section.get("table"):
            tab = section["table"]
            t = table(name, tab["columns"], caption=tab.get("caption"), caption_justify="left")
            for row in tab["rows"]:
                t.add_row(*[str(x) for x in row])
            console.print(t)
    if report.tlm_errors:
        console.print(f"[red]{len(report.tlm_errors)} TLM error response(s)[/red]")
        for line in report.tlm_errors[:10]:
            console.print(f"  {escape(line)}")
    for c in report.checks:
        mark = "[green]PASS[/green]" if c.passed else "[red]FAIL[/red]"
        console.print(f"{mark} {escape(c.name)}: {escape(c.detail)}")
    if report.error:
        console.print(f"[red]error:[/red] {escape(report.error)}")
    if report.stopped:
        st = report.stopped
        console.print(f"stopped by {st['by']} at simulated time {st['sim_time']}"
                      + (f" in {escape(', '.join(st['components']))}" if st["components"] else ""))
    for what, note in report.extra.get("capped", {}).items():
        console.print(f"capped {escape(what)}: {escape(note)}")
    if report.hash:
        console.print(hash_line(report))
    for k, v in report.outputs.items():
        console.print(f"{k}: {v}")
