"""Design-space sweeps on dask.distributed (docs/sweeps.md).

From Python or a notebook::

    import cosim
    df = cosim.sweep("scenarios/sweeps/resnet20_op_x_precision.yaml")     # a pandas DataFrame
    df = cosim.sweep(scenario="quickstart", grid={"pmu.operating_point": ["nominal", "low"]})

``cosim sweep FILE`` on the command line. Dask, pandas and pyarrow are imported only
when a sweep runs, never by ``cosim run``.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from .spec import Point, SweepSpec, load_sweep, validate_points

__all__ = ["sweep", "run_sweep", "load_sweep", "validate_points", "SweepSpec", "Point", "SweepOutcome"]


class SweepOutcome:
    """A finished sweep: the table, the files written and the counts."""

    def __init__(self, spec: SweepSpec, df: Any, result: Any, files: dict[str, str], out: Path | None):
        self.spec, self.df, self.result, self.files, self.out = spec, df, result, files, out


def require() -> None:
    """The sweep extra is installed (dask.distributed, pandas, pyarrow), or a SweepError
    saying how to install it."""
    import importlib.util
    missing = [m for m in ("distributed", "pandas", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        from .run import MissingExtra
        raise MissingExtra(f"cosim sweep needs {', '.join(missing)}: pip install -e '.[sweep]' "
                         "(or pip install 'tlm-cosim[sweep]')")


def default_out(spec: SweepSpec) -> Path:
    """``out/sweeps/<name>``: stable, so that running the same sweep again resumes it (the
    name reduced to letters, digits, ``_.-``: never a path of its own)."""
    from ..outdir import safe_name
    return Path("out") / "sweeps" / safe_name(spec.name, "sweep")


def run_sweep(spec: SweepSpec, out: str | Path | None = None, *, scheduler: str | None = None,
              workers: int | None = None, connect_timeout: float | None = None, cache: bool = True,
              plots: bool = True, progress: Any = None, write: bool = True, client: Any = None,
              dashboard: int | None = None, on_note: Any = None) -> SweepOutcome:
    """Expand, run (cached points are not run again), tabulate, write and plot ``spec``.
    ``progress``: a rich Console for a live bar, or None; ``client``: an existing dask
    Client (left open); ``dashboard``: the LocalCluster's dashboard port (0: a free one;
    None, the default: no dashboard), announced through ``on_note(text)``."""
    require()
    from . import plots as plots_mod
    from . import table
    from .run import CONNECT_TIMEOUT, execute
    points = spec.points()
    validate_points(spec, points)      # a refused point stops the sweep before any runs
    outp = Path(out) if out is not None else (default_out(spec) if write else None)
    if outp is not None:
        from ..outdir import prepare_out_dir
        outp = prepare_out_dir(outp)       # a bad folder is found before any point runs
    bar = _Bar(progress, len(points), spec.name) if progress is not None else None
    try:
        result = execute(spec, points, outp, scheduler=scheduler, workers=workers,
                         connect_timeout=connect_timeout or CONNECT_TIMEOUT, use_cache=cache,
                         on_result=bar.update if bar else None, client=client, dashboard=dashboard,
                         on_note=on_note)
    finally:
        if bar:
            bar.stop()
    df = table.frame(spec, points, result.entries)
    files: dict[str, str] = {}
    if outp is not None and write:
        files.update(table.write(df, outp))
        if plots:
            files.update(plots_mod.write_plots(df, spec, outp / "plots"))
    df.attrs["sweep"] = {"name": spec.name, "points": len(points), "ran": result.ran,
                         "cached": result.cached, "failed": int((df["status"] != "passed").sum()),
                         "wall_s": round(result.wall_s, 3), "workers": result.workers, "files": files,
                         "notes": list(result.notes)}
    return SweepOutcome(spec, df, result, files, outp)


def sweep(path: str | Path | None = None, *, scenario: str | Path | None = None,
          grid: dict[str, list] | None = None, zip: list[dict[str, list]] | None = None,
          sets: dict[str, Any] | None = None, metrics: dict[str, str] | None = None,
          pareto: tuple[str, str] | None = None, out: str | Path | None = None,
          scheduler: str | None = None, workers: int | None = None, connect_timeout: float | None = None,
          cache: bool = True, plots: bool = False, progress: bool = False, client: Any = None,
          dashboard: int | None = None) -> Any:
    """Run a sweep and return its table as a pandas DataFrame (``df.attrs['sweep']`` has the
    counts and the files). ``path`` is a sweep file or a scenario; the keyword arguments
    add to its space (``grid``, ``zip``), fix assignments (``sets``) or replace its
    ``metrics`` and ``pareto`` pair. Results go to ``out`` (default ``out/sweeps/<name>``),
    cached per point there. ``client``: run on this dask Client (e.g. the notebook's own)
    instead of a new LocalCluster or ``scheduler``; ``dashboard``: serve the LocalCluster's
    Dask dashboard on this port (0: a free one; its address is printed)."""
    spec = load_sweep(path, scenario=scenario, grid=grid, zips=zip, sets=sets, metrics=metrics,
                      pareto=pareto)
    console = None
    if progress:
        from rich.console import Console
        console = Console()
    return run_sweep(spec, out, scheduler=scheduler, workers=workers, connect_timeout=connect_timeout,
                     cache=cache, plots=plots, progress=console, client=client, dashboard=dashboard,
                     on_note=print).df


class _Bar:
    """A live rich progress bar: points done (run or from the cache), failed, ETA."""

    def __init__(self, console: Any, total: int, name: str):
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)
        self.failed = 0
        self.cached = 0
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("[red]{task.fields[failed]} failed[/red]"),
                                 TextColumn("{task.fields[cached]} cached"), TimeElapsedColumn(),
                                 TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=False)
        self.task = self.progress.add_task(name, total=total, failed=0, cached=0)
        self.progress.start()

    def update(self, point: Point, entry: dict, cached: bool) -> None:
        self.failed += entry.get("status") != "passed"
        self.cached += cached
        self.progress.update(self.task, advance=1, failed=self.failed, cached=self.cached)

    def stop(self) -> None:
        self.progress.stop()


class _CallableModule(types.ModuleType):
    """``cosim.sweep(...)`` runs a sweep while ``cosim.sweep`` stays this package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
