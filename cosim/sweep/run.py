"""Run a sweep's points on dask.distributed and keep a cache of their results.

:func:`run_point` is what a Dask worker executes: the base scenario plus the point's
``--set`` assignments, run in the worker process (:func:`cosim.runner.run_here`), its
report as plain data. A point that cannot be loaded or that raises comes back with its
status and error; it never stops the sweep. The cache holds one file per point
(``cache/<key>.json``, the key from :func:`cosim.sweep.spec.point_key`), written by the
client as results arrive, so a killed or extended sweep resumes where it was.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..scenario.errors import ScenarioError
from .spec import Point, SweepSpec

#: statuses a cached entry may have (the others are recomputed on the next run)
CACHEABLE = ("passed", "failed", "error")
#: the default time to reach a scheduler (a clear message instead of a hang)
CONNECT_TIMEOUT = 10.0
#: without a time limit per point (options.timeout, limits.max_wall), the sweep gives up when
#: no point has finished for this long (plus the grace below)
DEFAULT_POINT_DEADLINE = 3600.0
DEADLINE_GRACE = 60.0


class SweepError(Exception):
    """The sweep cannot run at all (no scheduler, no worker); one line for the user."""


class MissingExtra(SweepError):
    """The sweep extra (dask.distributed, pandas, pyarrow) is not installed."""


@dataclass
class RunResult:
    """What :func:`execute` gives back: one entry per point (space order), and counts."""

    entries: list[dict[str, Any]]
    ran: int = 0
    cached: int = 0
    failed: int = 0
    wall_s: float = 0.0
    workers: int = 0
    notes: list[str] = field(default_factory=list)


def run_point(text: str, file: str | None, sets: list[str], out_dir: str | None = None,
              allow: list[str] | None = None) -> dict[str, Any]:
    """Run one point in this process; a dict with ``status``, ``error``, ``report`` (the
    JSON report as plain data, or None) and ``wall_s``. Never raises for a point's fault.
    ``allow``: the sweep's path policy as plain data (``PathPolicy.to_data``)."""
    from ..limits import wall_limit
    from ..runner import run_here
    from ..scenario.loader import load_scenario_text
    from ..scenario.paths import PathPolicy
    from tlm.errors import SimulationError
    t0 = time.perf_counter()
    try:
        sc = load_scenario_text(text, Path(file) if file else None, sets, PathPolicy.from_data(allow))
    except ScenarioError as e:
        return {"status": "invalid", "error": str(e), "report": None, "wall_s": time.perf_counter() - t0}
    try:
        if out_dir is not None:     # keep_outputs: the point's own folder, as `cosim run` writes it
            from ..launch import run_scenario
            report = run_scenario(sc, out_dir=out_dir, plots=False, keep_previous_report=False)
        elif sc.partition:
            from ..partitioned import run_partitioned
            with tempfile.TemporaryDirectory(prefix="cosim-sweep-") as tmp:
                report, _run, _out = run_partitioned(sc, out_dir=Path(tmp))
        else:
            # no outputs: a private folder only for what a model may write (RTL waves)
            with tempfile.TemporaryDirectory(prefix="cosim-sweep-") as tmp, wall_limit(sc.max_wall) as wall:
                report, _run, _out = run_here(sc, Path(tmp), wall=wall)
        data = json.loads(report.json_text())
        return {"status": report.status, "error": report.error, "report": data,
                "wall_s": time.perf_counter() - t0}
    except ScenarioError as e:      # a point's value that only building the platform refuses
        return {"status": "invalid", "error": str(e), "report": None, "wall_s": time.perf_counter() - t0}
    except SimulationError as e:    # stopped outside the simulation loop (e.g. max_wall while building)
        return {"status": "error", "error": str(e), "report": None, "wall_s": time.perf_counter() - t0}
    except Exception as e:  # noqa: BLE001 - recorded, the sweep goes on
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        return {"status": "crashed", "error": tb, "report": None, "wall_s": time.perf_counter() - t0}


# -- the cache ------------------------------------------------------------------------------

def cache_dir(out: Path) -> Path:
    return out / "cache"


def read_cache(out: Path, key: str) -> dict[str, Any] | None:
    """The cached entry of a point, or None (absent, unreadable or of a status not kept)."""
    f = cache_dir(out) / f"{key}.json"
    from tlm.files import read_text
    try:        # bounded (tlm.files); FileAccessError is a ValueError
        entry = json.loads(read_text(f, "tool_output"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or entry.get("status") not in CACHEABLE:
        return None
    return entry


def write_cache(out: Path, key: str, entry: dict[str, Any]) -> None:
    """One file per point, written atomically (cosim.outdir.write_atomic: never through a
    symbolic link): a kill leaves whole entries or none."""
    from ..outdir import subfolder, write_atomic
    if entry.get("status") not in CACHEABLE:
        return
    d = subfolder(out, cache_dir(out).name)
    write_atomic(d, f"{key}.json", json.dumps({**entry, "key": key}, default=str))


# -- Dask -----------------------------------------------------------------------------------

#: a scheduler address: [protocol://]host:port (IPv6 hosts in brackets)
_ADDRESS = re.compile(r"^(?:(tcp|tls|ws|wss|ucx)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


def check_address(address: str) -> None:
    """``tcp://host:port`` (or tls/ws/wss/ucx, or bare ``host:port``), port 1..65535; a
    ScenarioError at ``--scheduler`` otherwise (before anything waits on it)."""
    m = _ADDRESS.match(address)
    if m is None or not 1 <= int(m.group(3)) <= 65535:
        raise ScenarioError(f"bad scheduler address {address[:200]!r}: expected tcp://HOST:PORT "
                            "(e.g. tcp://10.0.0.1:8786)", key="--scheduler")


def connect(scheduler: str | None, workers: int | None, timeout: float = CONNECT_TIMEOUT,
            dashboard: int | None = None) -> tuple[Any, Any]:
    """A dask.distributed Client: to ``scheduler`` (tcp://host:port) within ``timeout``
    seconds, or to a new LocalCluster (one single-threaded worker process per core), quiet
    (:func:`quiet_cluster`). ``dashboard``: serve the LocalCluster's dashboard on this port
    (0: a free one), else none. Returns ``(client, cluster or None)``."""
    from dask.distributed import Client
    if scheduler:
        check_address(scheduler)
        try:
            client = Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                             f"({type(e).__name__}); is `dask scheduler` running there?") from None
        return client, None
    n = workers or os.cpu_count() or 1
    try:
        cluster = quiet_cluster(n, dashboard)
    except RuntimeError as e:
        # the workers are spawned processes that import the main module again
        raise SweepError(f"could not start {n} local Dask worker(s): {e}; in a script, run the sweep "
                         "under `if __name__ == '__main__':`") from None
    client = Client(cluster, set_as_default=False, timeout=timeout)
    return client, cluster


def quiet_cluster(n: int, dashboard: int | None = None) -> Any:
    """A LocalCluster of ``n`` single-threaded worker processes (the simulator is
    single-threaded Python: parallelism comes from processes) that keeps Dask's own chatter
    out of a passing sweep:

    - its logs below CRITICAL are silenced, in this process and the workers: at shutdown a
      worker whose scheduler closed first logs a 30-line heartbeat traceback at ERROR. A
      point that fails or a worker that dies still shows, as that point's row (status
      ``crashed``, the error) and the exit code;
    - the scheduler's HTTP server (which it starts even without a dashboard, on 8787 by
      default, warning when that port is taken) listens on a free port; the dashboard
      (bokeh) only when asked for, on ``dashboard`` (0: a free port).
    """
    import logging
    import warnings

    from dask.distributed import LocalCluster
    with warnings.catch_warnings():
        # "Port 8787 is already in use ... Hosting the HTTP server on port N instead": the
        # cluster got a port; which one is in client.dashboard_link
        warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
        if dashboard is None:
            return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.CRITICAL)
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                            dashboard_address=f":{dashboard}", silence_logs=logging.CRITICAL)


def check_workers(client: Any) -> list[str]:
    """Every worker can import this tool (a SweepError naming the first that cannot); a note
    when a worker's version differs from this one (its results are cached under this one's)."""
    def probe() -> str:        # a local function: sent by value, so it runs without cosim
        try:
            from tlm import __version__
            import cosim.sweep.run  # noqa: F401
        except Exception as e:  # noqa: BLE001
            return f"error: {type(e).__name__}: {e}"
        return __version__
    from tlm import __version__
    answers = client.run(probe)
    for worker, answer in sorted(answers.items()):
        if answer.startswith("error: "):
            raise SweepError(f"Dask worker {worker} cannot run sweep points ({answer[7:]}); install "
                             "tlm-cosim on every worker host, the same version as here")
    return [f"worker {w} runs tlm-cosim {v}, this is {__version__}" for w, v in sorted(answers.items())
            if v != __version__]


def execute(spec: SweepSpec, points: list[Point], out: Path | None, *, scheduler: str | None = None,
            workers: int | None = None, connect_timeout: float = CONNECT_TIMEOUT, use_cache: bool = True,
            on_result: Callable[[Point, dict[str, Any], bool], None] | None = None,
            client: Any = None, dashboard: int | None = None,
            on_note: Callable[[str], None] | None = None) -> RunResult:
    """Run the points not in the cache on Dask; each result is cached as it arrives.
    ``on_result(point, entry, cached)`` is called for every point (progress); ``client``:
    an existing dask Client to use (and leave open), e.g. a notebook's; ``dashboard``: the
    LocalCluster's dashboard port (0: a free one; None: no dashboard), its address given
    to ``on_note`` as the cluster starts."""
    t0 = time.perf_counter()
    entries: dict[int, dict[str, Any]] = {}
    res = RunResult(entries=[])
    todo: list[Point] = []
    for p in points:
        hit = read_cache(out, p.key) if (out is not None and use_cache) else None
        if hit is not None:
            entries[p.index] = hit
            res.cached += 1
            if on_result:
                on_result(p, hit, True)
        else:
            todo.append(p)
    if todo:
        own = client is None
        cluster = None
        if own:
            client, cluster = connect(scheduler, workers, connect_timeout, dashboard)
            if dashboard is not None and cluster is not None:
                if on_note:
                    on_note(f"Dask dashboard: {client.dashboard_link}")
        try:
            res.workers = len(client.scheduler_info().get("workers", {}))
            if res.workers == 0:
                try:
                    client.wait_for_workers(1, timeout=connect_timeout)
                except (TimeoutError, OSError):
                    addr = scheduler or getattr(client.scheduler, "address", "?")
                    raise SweepError(f"the Dask scheduler at {addr} has no worker (waited "
                                     f"{connect_timeout:g} s); start some with `dask worker {addr}`") from None
                res.workers = len(client.scheduler_info().get("workers", {}))
            res.notes += check_workers(client)
            _submit_all(client, spec, todo, out, entries, res, on_result)
        finally:
            if own:
                client.close(timeout=10)
                if cluster is not None:
                    cluster.close(timeout=10)
    res.entries = [entries[p.index] for p in points]
    res.wall_s = time.perf_counter() - t0
    return res


def _submit_all(client: Any, spec: SweepSpec, todo: list[Point], out: Path | None,
                entries: dict[int, dict[str, Any]], res: RunResult,
                on_result: Callable[[Point, dict[str, Any], bool], None] | None) -> None:
    from dask.distributed import wait

    from ..outdir import subfolder
    text, file = spec.scenario_text, str(spec.scenario)
    futures = {}
    by_key: dict[str, Any] = {}
    for p in todo:
        if p.key in by_key:        # the same scenario twice in the space: run it once
            futures[by_key[p.key]].append(p)
            continue
        pdir = str(subfolder(out, "points") / p.key) if (spec.keep_outputs and out is not None) else None
        fut = client.submit(run_point, text, file, p.sets, pdir, spec.policy.to_data(), key=f"cosim-point-{p.key}",
                            pure=False, retries=0)
        by_key[p.key] = fut
        futures[fut] = [p]
    stall = (spec.timeout or DEFAULT_POINT_DEADLINE) + DEADLINE_GRACE
    pending = set(futures)
    while pending:
        # deadline: some point must finish within one point's time limit (plus grace)
        try:
            with client.as_current():      # our client, not a global default one
                done, pending = wait(list(pending), timeout=stall, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        if not done:
            for fut in pending:
                fut.cancel()
                _record(futures[fut], {"status": "crashed", "error": f"no point finished within {stall:g} s "
                                       "(the point's time limit plus grace); given up", "report": None,
                                       "wall_s": 0.0}, out, entries, res, on_result)
            return
        for fut in done:
            try:
                entry = fut.result()
            except Exception as e:  # noqa: BLE001 - a worker died or the task could not run
                entry = {"status": "crashed", "error": f"{type(e).__name__}: {e}", "report": None, "wall_s": 0.0}
            _record(futures[fut], entry, out, entries, res, on_result)


def _record(points: list[Point], entry: dict[str, Any], out: Path | None, entries: dict[int, dict[str, Any]],
            res: RunResult, on_result: Callable[[Point, dict[str, Any], bool], None] | None) -> None:
    for p in points:
        e = dict(entry, key=p.key)
        entries[p.index] = e
        res.ran += 1
        if e["status"] != "passed":
            res.failed += 1
        if out is not None:
            write_cache(out, p.key, e)
        if on_result:
            on_result(p, e, False)
