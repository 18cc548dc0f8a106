"""Design-space sweeps (cosim/sweep, docs/sweeps.md): the space and its located errors, and
real runs on dask.distributed — a LocalCluster, a `dask scheduler` with two `dask worker`
processes on loopback giving the identical table, resume after a kill, a failing point,
determinism. The sweeps are four quickstart points (about a second each)."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim.scenario import ScenarioError
from cosim.sweep.spec import load_sweep, report_value, set_text

ROOT = Path(__file__).resolve().parents[1]
# the sweeps need the `sweep` extra: skip, not fail, where it is not installed
pytest.importorskip("dask.distributed")
pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

#: four points: two time limits x two seeds; 10 us stops quickstart before its work is done,
#: so those two points fail their checks
GRID = {"limits.max_time": ["10 ms", "10 us"], "seed": [1, 2]}
SETS = {"outputs.trace": False}
VOLATILE = ["wall_s"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}


def _write(tmp_path: Path, text: str, name: str = "sweep.yaml") -> Path:
    f = tmp_path / name
    f.write_text(text)
    return f


def _stable(df):
    """The table without wall times, missing values as None (NaN never equals itself)."""
    d = df.drop(columns=VOLATILE).astype(object)
    return d.where(d.notna(), None).to_dict(orient="records")


# -- the space --------------------------------------------------------------------------------

def test_grid_zip_and_constraints_expand_in_order(tmp_path):
    f = _write(tmp_path, """\
scenario: quickstart
space:
  grid: {pmu.operating_point: [nominal, low]}
  zip:
    - {seed: [1, 2, 3], limits.max_time: [1 ms, 2 ms, 3 ms]}
constraints:
  - "not (pmu.operating_point == 'low' and seed == 3)"
""")
    spec = load_sweep(f)
    pts = spec.points()
    assert [(p.params["pmu.operating_point"], p.params["seed"], p.params["limits.max_time"]) for p in pts] == [
        ("nominal", 1, "1 ms"), ("nominal", 2, "2 ms"), ("nominal", 3, "3 ms"), ("low", 1, "1 ms"),
        ("low", 2, "2 ms")]
    assert [p.index for p in pts] == list(range(5))
    assert pts[0].sets == ["pmu.operating_point=nominal", "seed=1", "limits.max_time=1 ms"]
    assert len({p.key for p in pts}) == 5
    assert [p.key for p in load_sweep(f).points()] == [p.key for p in pts]   # keys are stable


def test_random_and_lhs_samples_are_seeded(tmp_path):
    text = """\
scenario: quickstart
space:
  sample:
    method: {method}
    n: 8
    seed: {seed}
    params:
      pmu.sample_period: {{low: 1, high: 100, log: true, unit: us}}
      seed: {{low: 0, high: 7, int: true}}
      cluster.tcdm.mode: {{choices: [word, bank]}}
"""
    lhs = load_sweep(_write(tmp_path, text.format(method="lhs", seed=3)), check_keys=False).points()
    again = load_sweep(_write(tmp_path, text.format(method="lhs", seed=3)), check_keys=False).points()
    other = load_sweep(_write(tmp_path, text.format(method="lhs", seed=4)), check_keys=False).points()
    rnd = load_sweep(_write(tmp_path, text.format(method="random", seed=3)), check_keys=False).points()
    assert [p.params for p in lhs] == [p.params for p in again]
    assert [p.params for p in lhs] != [p.params for p in other]
    assert len(rnd) == 8 and [p.params for p in rnd] != [p.params for p in lhs]
    # Latin hypercube: the 8 integer seeds 0..7 each once (one per stratum)
    assert sorted(p.params["seed"] for p in lhs) == list(range(8))
    assert sorted(p.params["cluster.tcdm.mode"] for p in lhs) == ["bank"] * 4 + ["word"] * 4
    for p in lhs:
        v, unit = p.params["pmu.sample_period"].split()
        assert unit == "us" and 1 <= float(v) <= 100


@pytest.mark.parametrize("value", ["nominal", 3, 1e-05, 0.5, True, None, "10 ns", "1", [6, 3, 2],
                                   {"blocks": 1}, "a: b", "yes"])
def test_set_text_reads_back_as_the_value(value):
    import yaml
    assert yaml.safe_load(set_text(value)) == value


def test_report_paths_with_dotted_keys():
    rep = {"utilisation": {"cluster.rbe": 0.5}, "checks": [{"passed": True}], "energy": None}
    assert report_value(rep, "utilisation.cluster.rbe") == 0.5
    assert report_value(rep, "checks.0.passed") is True
    assert report_value(rep, "energy.total_j") is None
    assert report_value(rep, "utilisation.cluster.dma") is None


@pytest.mark.parametrize("text, where, message", [
    ("scenario: quickstart\nspace:\n  grid:\n    pmu.operating_pont: [nominal]\n",
     ":4: space.grid.pmu.operating_pont:", "did you mean 'operating_point'"),
    ("scenario: quickstart\nspace:\n  grid: {seed: []}\n", ":3: space.grid.seed:", "the space is empty"),
    ("scenario: quickstart\nspace: {}\n", ":2: space:", "the space is empty"),
    ("scenario: quickstart\nspace:\n  grid: {seed: [1, 2]}\nconstraints:\n  - seed > 5\n",
     ":4: constraints:", "the constraints reject all 2 points"),
    ("scenario: quickstart\nspace:\n  grid: {seed: [1, 2]}\nconstraints:\n  - sed > 5\n",
     ":5: constraints[0]:", "'sed' is not a parameter of the space (did you mean 'seed'?)"),
    ("scenario: quickstart\nspace:\n  grid: {seed: [1]}\nconstraints:\n  - __import__('os')\n",
     ":5: constraints[0]:", "may be called"),
    ("scenario: quickstart\nspace:\n  zip:\n    - {seed: [1, 2], limits.max_time: [1 ms]}\n",
     ":4: space.zip[0]:", "the same length"),
    ("scenario: quickstart\nspace:\n  grid: {seed: [1]}\nmetrics: {e: energie.total_j}\n",
     ":4: metrics.e:", "did you mean 'energy'"),
    ("scenario: quickstart\nspace:\n  gird: {seed: [1]}\n", ":3: space.gird:", "did you mean 'grid'"),
    ("scenario: quickstrt\nspace:\n  grid: {seed: [1]}\n", ":1: scenario:", "did you mean 'quickstart'"),
    ("scenario: quickstart\nspace:\n  sample: {n: 0, params: {seed: {low: 0, high: 3}}}\n",
     ":3: space.sample.n:", "integer in [1, 100000]"),
])
def test_bad_sweep_files_give_located_errors(tmp_path, text, where, message):
    f = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as exc:
        load_sweep(f).points()
    assert f"{f}{where}" in str(exc.value)
    assert message in str(exc.value)


def test_cli_bad_key_exits_2_with_a_suggestion(capsys):
    from cosim.cli import main
    rc = main(["sweep", "quickstart", "--grid", "pmu.operating_pont=nominal,low", "--no-plots", "-q"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "pmu.operating_pont" in err and "did you mean 'operating_point'" in err


def test_a_single_process_run_does_not_import_dask():
    code = ("import sys, cosim, cosim.cli, cosim.launch, cosim.runner\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed', 'pandas', 'pyarrow'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


# -- real runs ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The four-point sweep on a LocalCluster of two workers, through the Python API."""
    import cosim
    out = tmp_path_factory.mktemp("local")
    df = cosim.sweep(scenario="quickstart", grid=GRID, sets=SETS, workers=2, out=out,
                     pareto=("latency_ms", "energy_uJ"), plots=True)
    return df, out


def test_local_cluster_sweep_writes_the_table(local_run):
    import pandas as pd
    df, out = local_run
    assert list(df["point"]) == [0, 1, 2, 3]
    assert list(df["status"]) == ["passed", "passed", "failed", "failed"]
    assert list(df["seed"]) == [1, 2, 1, 2]
    # point 0 is quickstart, seed 1: the same latency and energy as a run of its own, in ms and µJ
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    sc = load_scenario("quickstart", ["limits.max_time=10 ms", "outputs.trace=false", "seed=1"])
    alone, _, _ = run_here(sc, out / "alone")
    assert df["latency_ms"][0] == pytest.approx(alone.sim_time_ps * 1e-9, rel=1e-12)
    assert df["energy_uJ"][0] == pytest.approx(alone.energy["total_j"] * 1e6, rel=1e-12)
    assert 0.1 < df["latency_ms"][0] < 10 and 1 < df["energy_uJ"][0] < 1000
    # the failing points are recorded (stopped at 10 us), and the sweep went on
    assert 0 < df["latency_ms"][2] <= 0.01 and df["error"][2] is None
    assert len(df["scenario_hash"][0]) == 32 and len(df["run_hash"][0]) == 64
    info = df.attrs["sweep"]
    assert info["ran"] == 4 and info["cached"] == 0 and info["failed"] == 2 and info["workers"] == 2
    assert [c for c in df.columns if c in ("latency_ms", "energy_uJ", "latency_ps", "energy_j")] == [
        "latency_ms", "energy_uJ"]
    pq = pd.read_parquet(out / "results.parquet")
    csv = pd.read_csv(out / "results.csv")
    assert list(pq.columns) == list(df.columns) == list(csv.columns)
    assert list(pq["status"]) == list(df["status"])
    assert (out / "plots" / "pareto_latency_ms_energy_uJ.png").stat().st_size > 1000
    assert (out / "plots" / "latency_ms_vs_seed.png").exists()
    assert len(list((out / "cache").glob("*.json"))) == 4


def test_same_sweep_same_table_and_resume_from_the_cache(local_run, tmp_path):
    """Run again into the same folder: everything from the cache, the same table; run with
    --no-cache elsewhere: the same table (wall time aside)."""
    import cosim
    df, out = local_run
    again = cosim.sweep(scenario="quickstart", grid=GRID, sets=SETS, out=out, pareto=("latency_ms", "energy_uJ"))
    assert again.attrs["sweep"]["cached"] == 4 and again.attrs["sweep"]["ran"] == 0
    assert _stable(again) == _stable(df)
    fresh = cosim.sweep(scenario="quickstart", grid=GRID, sets=SETS, out=tmp_path, workers=1, cache=False,
                        pareto=("latency_ms", "energy_uJ"))
    assert fresh.attrs["sweep"]["ran"] == 4
    assert _stable(fresh) == _stable(df)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


def _dask(*args: str) -> subprocess.Popen:
    """A `dask` command in its own process group (killed whole by _kill)."""
    return subprocess.Popen([sys.executable, "-m", "dask", *args], env=_env(), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _scheduler() -> tuple[str, list[subprocess.Popen]]:
    port = _free_port()
    return (f"tcp://127.0.0.1:{port}",
            [_dask("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")])


@pytest.mark.slow(reason="a scheduler that cannot run the sweep is an exit-4 error within --connect-timeout: "
                         "test_unreachable_scheduler_is_a_clear_error")
def test_a_scheduler_without_workers_is_a_clear_error(tmp_path):
    from dask.distributed import Client
    addr, procs = _scheduler()
    try:
        with Client(addr, timeout=30):      # the scheduler is up: what follows waits for workers only
            pass
        r = subprocess.run([sys.executable, "-m", "cosim.cli", "sweep", "quickstart", "--grid", "seed=1",
                            "--scheduler", addr, "--connect-timeout", "2", "--out", str(tmp_path), "-q"],
                           cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    finally:
        for p in procs:
            _kill(p)
    assert r.returncode == 4, r.stderr[-2000:]
    assert f"the Dask scheduler at {addr} has no worker" in r.stderr


@pytest.mark.slow
def test_dask_scheduler_and_two_workers_give_the_identical_table(local_run, tmp_path):
    """`dask scheduler` and two `dask worker` processes on loopback, started here; the CLI's
    --scheduler runs the same sweep on them and writes the identical table."""
    import pandas as pd
    from dask.distributed import Client
    addr, procs = _scheduler()
    try:
        for i in range(2):
            procs.append(_dask("worker", addr, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                               "--name", f"w{i}"))
        with Client(addr, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        out = tmp_path / "remote"
        args = ["sweep", "quickstart", "--grid", "limits.max_time=10 ms,10 us", "--grid", "seed=1,2",
                "--set", "outputs.trace=false", "--pareto", "latency_ms,energy_uJ", "--scheduler", addr,
                "--out", str(out), "--no-plots", "-q"]
        r = subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=ROOT, env=_env(), capture_output=True,
                           text=True, timeout=180)
        assert r.returncode == 1, r.stderr[-3000:]        # two points fail: exit 1
        assert "4 points, 4 run" in r.stdout
        remote = pd.read_parquet(out / "results.parquet")
        df, _ = local_run
        assert _stable(remote) == _stable(df)
    finally:
        for p in reversed(procs):
            _kill(p)


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "sweep", "quickstart", "--grid", "seed=1",
                        "--scheduler", f"tcp://127.0.0.1:{_free_port()}", "--connect-timeout", "2",
                        "--out", str(tmp_path), "-q"], cwd=ROOT, env=_env(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 4, r.stderr[-2000:]
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:" in r.stderr and "within 2 s" in r.stderr
    assert "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 30


#: what Dask printed into a passing sweep before (issue 34): its logger's lines (the
#: heartbeat traceback at shutdown among them) and the warning of a taken dashboard port
DASK_NOISE = ("distributed.", "Failed to communicate with scheduler", "Port 8787 is already in use",
              "UserWarning", "Traceback")


def test_two_sweeps_at_once_print_nothing_of_dask(tmp_path):
    """Two local sweeps started together (each its own LocalCluster, as two notebooks or
    terminals would): stderr carries none of Dask's logging or warnings, while a failed
    point still shows in the table and the exit code."""
    def start(name: str, limit: str, *more: str) -> subprocess.Popen:
        args = ["sweep", "quickstart", "--grid", "seed=1", "--set", "outputs.trace=false", "--set",
                f"limits.max_time={limit}", "--workers", "1", "--out", str(tmp_path / name), "--no-plots", *more]
        return subprocess.Popen([sys.executable, "-m", "cosim.cli", *args], cwd=ROOT, env=_env(), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    procs = [start("a", "10 ms", "--dashboard"), start("b", "10 us")]
    try:
        (out_a, err_a), (out_b, err_b) = [p.communicate(timeout=180) for p in procs]
    finally:
        for p in procs:
            _kill(p)
    assert [p.returncode for p in procs] == [0, 1], err_a[-2000:] + err_b[-2000:]
    for err in (err_a, err_b):
        assert not [line for line in err.splitlines() if any(n in line for n in DASK_NOISE)], err[-3000:]
    assert "passed" in out_a and "failed" in out_b and "1 not passed" in out_b
    # asked for, the dashboard is served on a free port and its address printed
    assert re.search(r"Dask dashboard: http://[^ ]+:\d+/status", out_a) and "dashboard" not in out_b


def test_an_invalid_value_is_refused_before_any_point_runs(tmp_path, capsys):
    """`--grid pmu.operating_point=nominal,turbo`: exit 2 naming the key, the value and the
    operating points there are; nothing ran, nothing is cached."""
    from cosim.cli import main
    out = tmp_path / "o"
    rc = main(["sweep", "quickstart", "--grid", "pmu.operating_point=nominal,turbo", "--grid", "seed=1,2",
               "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "space.grid.pmu.operating_point: pmu.operating_point=turbo is refused: unknown operating point " \
           "'turbo'; known: nominal, signoff" in err.replace("\n", "")
    assert not out.exists()
    # a sweep file: the line of the key; --dry-run checks the same
    f = _write(tmp_path, "scenario: quickstart\nspace:\n  grid:\n    seed: [1]\n"
               "    pmu.operating_point: [nominal, turbo]\n")
    assert main(["sweep", str(f), "--dry-run"]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert f"{f}:5: space.grid.pmu.operating_point: pmu.operating_point=turbo" in err


def test_validate_points_names_the_refused_point(tmp_path):
    """validate_points checks each point whole (values refused only together): the first refused point is named."""
    from cosim.sweep import validate_points
    f = _write(tmp_path, "scenario: quickstart\nspace:\n  grid:\n"
               "    pmu.operating_point: [nominal, turbo]\n    seed: [1, 2]\n")
    spec = load_sweep(f, check_keys=False)
    with pytest.raises(ScenarioError) as exc:
        validate_points(spec, spec.points())
    assert "point 2 (pmu.operating_point=turbo, seed=1) is refused: unknown operating point 'turbo'" in str(exc.value)


@pytest.mark.slow(reason="resuming from the cache: test_same_sweep_same_table_and_resume_from_the_cache, "
                         "test_an_extended_sweep_runs_only_the_new_points")
def test_resume_after_a_kill_mid_sweep(local_run, tmp_path):
    """Kill the CLI (and its LocalCluster) once the first point is cached; the next run
    computes only the others and gives the same table."""
    import cosim
    out = tmp_path / "killed"
    args = ["sweep", "quickstart", "--grid", "limits.max_time=10 ms,10 us", "--grid", "seed=1,2",
            "--set", "outputs.trace=false", "--workers", "1", "--out", str(out), "--no-plots", "-q"]
    proc = subprocess.Popen([sys.executable, "-m", "cosim.cli", *args], cwd=ROOT, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("cache/*.json")):
            assert time.monotonic() < deadline, "no point finished within 120 s"
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.05)
    finally:
        _kill(proc)
    cached = len(list((out / "cache").glob("*.json")))
    assert 1 <= cached < 4
    df = cosim.sweep(scenario="quickstart", grid=GRID, sets=SETS, out=out, workers=1,
                     pareto=("latency_ms", "energy_uJ"))
    info = df.attrs["sweep"]
    assert info["cached"] == cached and info["ran"] == 4 - cached
    ref, _ = local_run
    assert _stable(df) == _stable(ref)


def test_a_sweep_without_progress_gives_up_at_its_deadline(monkeypatch, tmp_path):
    """Every wait has a deadline: when no point finishes within one point's time limit plus
    grace, the points still running are recorded as crashed (and not cached)."""
    import cosim
    from cosim.sweep import run
    monkeypatch.setattr(run, "DEFAULT_POINT_DEADLINE", 0.05)
    monkeypatch.setattr(run, "DEADLINE_GRACE", 0.0)
    df = cosim.sweep(scenario="quickstart", grid={"seed": [1]}, sets=SETS, workers=1, out=tmp_path)
    assert list(df["status"]) == ["crashed"]
    assert "no point finished within 0.05 s" in df["error"][0]
    assert not list(tmp_path.glob("cache/*.json"))


def test_progress_bar_counts_points_failed_and_cached(local_run):
    """The live bar (rich): points done of all, failed, from the cache, ETA."""
    import io

    from rich.console import Console

    from cosim.sweep import run_sweep
    _, out = local_run
    buf = io.StringIO()
    spec = load_sweep(scenario="quickstart", grid=GRID, sets=SETS)
    run_sweep(spec, out, plots=False, progress=Console(file=buf, force_terminal=True, width=120))
    text = buf.getvalue()
    assert "4/4" in text and "2 failed" in text and "4 cached" in text and "ETA" in text


def test_the_example_sweep_expands_and_its_metrics_are_report_paths():
    """scenarios/sweeps/resnet20_op_x_precision.yaml: 6 operating points x 4 zipped precision
    profiles; one point (made small) run in this process has every metric."""
    from cosim.sweep.run import run_point
    spec = load_sweep(ROOT / "scenarios" / "sweeps" / "resnet20_op_x_precision.yaml")
    pts = spec.points()
    assert len(pts) == 24 and spec.pareto == ("latency_ms", "energy_uJ")
    assert pts[1].params == {"pmu.operating_point": "nominal", "workload.network.options.stage_w_bits": [6, 3, 2],
                             "workload.network.options.inner_bits": 4}
    small = pts[-1].sets + ["workload.network.options.blocks=1", "workload.network.options.input_hw=16"]
    r = run_point(spec.scenario_text, str(spec.scenario), small)
    assert r["status"] == "passed", r["error"]
    for name, path in spec.metrics.items():
        assert isinstance(report_value(r["report"], path), (int, float)), (name, path)


def test_pareto_front_is_the_non_dominated_set():
    import pandas as pd
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cosim.sweep.table import pareto_mask

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=12))
    def check(pairs):
        df = pd.DataFrame({"a": [p[0] for p in pairs], "b": [p[1] for p in pairs]}, dtype=object)
        want = [not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in pairs) for p in pairs]
        assert pareto_mask(df, "a", "b") == want
    check()


@pytest.mark.slow
def test_sweep_bench_runs(tmp_path):
    """bench/sweep.py against the current API (tiny: its numbers are judged by the script)."""
    r = subprocess.run([sys.executable, "bench/sweep.py", "--points", "2", "--repeat", "1"], cwd=ROOT,
                       env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "2 workers vs 1:" in r.stdout and "per-point overhead" in r.stdout


def test_keep_outputs_writes_each_points_report(tmp_path):
    f = _write(tmp_path, "scenario: quickstart\nset: {outputs.trace: false}\nspace:\n  grid: {seed: [3]}\n"
               "options: {keep_outputs: true}\n")
    import cosim
    df = cosim.sweep(f, workers=1, out=tmp_path / "o")
    rep = json.loads((tmp_path / "o" / "points" / df["scenario_hash"][0] / "report.json").read_text())
    assert rep["hash"]["run"] == df["run_hash"][0] and rep["scenario"]["seed"] == 3


def test_an_extended_sweep_runs_only_the_new_points(local_run, tmp_path):
    import shutil

    import cosim
    df, out = local_run
    shutil.copytree(out / "cache", tmp_path / "cache")
    grid = {**GRID, "seed": [1, 2, 3]}
    ext = cosim.sweep(scenario="quickstart", grid=grid, sets=SETS, out=tmp_path, workers=1)
    info = ext.attrs["sweep"]
    assert info["points"] == 6 and info["cached"] == 4 and info["ran"] == 2
    assert list(ext["seed"]) == [1, 2, 3, 1, 2, 3] and list(ext["status"]) == ["passed"] * 3 + ["failed"] * 3
    same = ext[ext["seed"] != 3].drop(columns=["point"]).reset_index(drop=True)
    assert _stable(same) == _stable(df.drop(columns=["point", "pareto"]))


def test_a_bad_output_folder_is_refused_before_any_point_runs(tmp_path, capsys):
    from cosim.cli import main
    f = tmp_path / "file"
    f.write_text("x")
    rc = main(["sweep", "quickstart", "--grid", "seed=1", "--out", str(f), "-q"])
    assert rc == 2
    assert "the output folder exists and is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["foo", "tcp://127.0.0.1:99999", "tcp://host:8786/x", "tcp://:8786"])
def test_a_malformed_scheduler_address_is_a_usage_error(address, capsys, tmp_path):
    from cosim.cli import main
    rc = main(["sweep", "quickstart", "--grid", "seed=1", "--scheduler", address, "--out", str(tmp_path), "-q"])
    assert rc == 2
    assert "bad scheduler address" in capsys.readouterr().err


def test_metrics_may_be_a_list_of_report_paths(tmp_path):
    f = _write(tmp_path, "scenario: quickstart\nspace:\n  grid: {seed: [1]}\nmetrics: [sim_time_ps, energy.total_j]\n")
    assert load_sweep(f, check_keys=False).metrics == {"sim_time_ms": "sim_time_ps",
                                                       "energy.total_uJ": "energy.total_j"}


def test_dry_run_prints_the_points_and_runs_nothing(tmp_path, capsys):
    from cosim.cli import main
    rc = main(["sweep", "quickstart", "--grid", "pmu.operating_point=nominal,low", "--zip", "seed=1,2",
               "--zip", "limits.max_time=1 ms,2 ms", "--dry-run", "--out", str(tmp_path / "none")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "--set pmu.operating_point=low --set seed=2 --set 'limits.max_time=2 ms'" in out
    assert "quickstart: 4 points (fixed: none)" in out
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_a_split_point_runs_inside_a_dask_worker_with_the_same_run_hash(local_run, tmp_path):
    """A point with a partition runs split over processes from inside its Dask worker; its
    report is the single-process one (same run hash)."""
    import cosim
    df, _ = local_run
    split = cosim.sweep(scenario="quickstart", grid={"seed": [1]},
                        sets={**SETS, "limits.max_time": "10 ms", "partition": "soc,pmu,hyperram|cluster"},
                        workers=1, out=tmp_path)
    assert list(split["status"]) == ["passed"]
    assert split["run_hash"][0] == df["run_hash"][0] and split["latency_ms"][0] == df["latency_ms"][0]


@pytest.mark.parametrize("name, path, column, value, shown", [
    ("latency", "sim_time_ps", "latency_ms", 2_653_000_000, 2.653),
    ("latency_ps", "sim_time_ps", "latency_ms", 1e9, 1.0),
    ("latency_ms", "sim_time_ps", "latency_ms", 5e8, 0.5),
    ("energy", "energy.total_j", "energy_uJ", 0.0001909, 190.9),
    ("energy_j", "energy.total_j", "energy_uJ", 2e-6, 2.0),
    ("soc", "energy.per_domain_j.soc", "soc_uJ", 1e-6, 1.0),
    ("power", "energy.average_power_w", "power_mW", 0.0125, 12.5),
    ("rbe_utilisation", "utilisation.cluster.rbe", "rbe_utilisation_%", 0.603, 60.3),
    ("array", "extra.layers.array_utilisation", "array_%", 0.04, 4.0),
    ("rbe_cycles", "extra.accelerators.cluster.rbe.cycles", "rbe_cycles", 205248, 205248),
    ("latency_ms", "extra.layers.latency_ms", "latency_ms", 1.815, 1.815),
])
def test_metric_columns_carry_their_unit(name, path, column, value, shown):
    """cosim/sweep/units.py: the column's name and value in the unit the name says."""
    from cosim.sweep import units
    from cosim.sweep.table import _metric
    assert units.column(name, path) == column
    # the report holding `value` at `path` (utilisation's keys are block paths, dots and all)
    keys = ["utilisation", path.split(".", 1)[1]] if path.startswith("utilisation.") else path.split(".")
    rep: dict = {keys[-1]: value}
    for k in reversed(keys[:-1]):
        rep = {k: rep}
    assert _metric(rep, path) == pytest.approx(shown, rel=1e-12)


def test_default_metrics_and_pareto_by_name_or_column(tmp_path):
    f = _write(tmp_path, "scenario: quickstart\nspace:\n  grid: {seed: [1]}\npareto: [latency_ps, energy_uJ]\n"
               "metrics: {latency_ps: sim_time_ps, energy: energy.total_j, power: energy.average_power_w}\n")
    spec = load_sweep(f, check_keys=False)
    assert spec.metrics == {"latency_ms": "sim_time_ps", "energy_uJ": "energy.total_j",
                            "power_mW": "energy.average_power_w"}
    assert spec.pareto == ("latency_ms", "energy_uJ")
    assert load_sweep(scenario="quickstart", grid={"seed": [1]}, check_keys=False).metrics == {
        "latency_ms": "sim_time_ps", "energy_uJ": "energy.total_j"}
    clash = _write(tmp_path, "scenario: quickstart\nspace:\n  grid: {seed: [1]}\n"
                   "metrics: {latency: sim_time_ps, latency_ms: sim_time_ps}\n", "clash.yaml")
    with pytest.raises(ScenarioError, match="both column 'latency_ms'"):
        load_sweep(clash, check_keys=False)


def test_pareto_labels_do_not_overlap_and_axes_have_units():
    """A crowded front (12 points close together, 10 more beside it): every label's box is
    inside the axes, clear of every other label and of every point, and nearest its own
    point; the axes say ms and µJ."""
    import itertools

    import pandas as pd

    from cosim.sweep import plots
    from cosim.sweep.table import pareto_mask
    spec = load_sweep(scenario="quickstart", grid={"pmu.operating_point": ["nominal"], "seed": [1]},
                      pareto=("latency_ms", "energy_uJ"), check_keys=False)
    rows = [{"pmu.operating_point": f"op{i}", "seed": i, "latency_ms": 1 + 0.02 * i,
             "energy_uJ": 30 - 0.3 * i - 0.01 * i * i, "status": "passed"} for i in range(12)]
    rows += [{"pmu.operating_point": f"x{i}", "seed": i, "latency_ms": 1.05 + 0.02 * i, "energy_uJ": 30 - 0.2 * i,
              "status": "passed"} for i in range(10)]
    df = pd.DataFrame(rows)
    df["pareto"] = pareto_mask(df, "latency_ms", "energy_uJ")
    fig = plots.pareto_figure(df, spec)
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("latency (ms)", "energy (µJ)")
    renderer = fig.canvas.get_renderer()
    boxes = [plots._text_box(t, renderer) for t in ax.texts]
    assert len(boxes) == int(df["pareto"].sum()) == 12
    assert not [(i, j) for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2) if a.overlaps(b)]
    dots = [ax.transData.transform(xy) for xy in zip(df["latency_ms"], df["energy_uJ"])]
    assert not [i for i, box in enumerate(boxes) for x, y in dots if box.contains(x, y)]
    assert all(ax.bbox.contains(b.x0, b.y0) and ax.bbox.contains(b.x1, b.y1) for b in boxes)
    # each label is nearer its own point than any other front point's
    marks = [ax.transData.transform(xy) for xy in zip(*(df[df["pareto"]].sort_values("latency_ms")[c]
                                                         for c in ("latency_ms", "energy_uJ")))]
    assert all(min(range(len(marks)), key=lambda j: plots._distance(b, marks[j])) == i for i, b in enumerate(boxes))


@pytest.mark.parametrize("args, message", [
    (["--dashboard", "70000"], "--dashboard 70000: a port in 0..65535"),
    (["--dashboard", "--scheduler", "tcp://127.0.0.1:8786"], "--dashboard is for the local cluster"),
])
def test_dashboard_flag_mistakes_exit_2(args, message, capsys, tmp_path):
    from cosim.cli import main
    assert main(["sweep", "quickstart", "--grid", "seed=1", "--out", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_worker_that_dies_is_its_points_row_on_a_quiet_cluster(tmp_path, capfd):
    """Dask's logs are silenced, not the errors: the worker running the point is killed
    (SIGKILL, as the OOM killer would), and the point's row says it crashed and why."""
    import threading

    import dask
    from dask.distributed import Client

    import cosim
    from cosim.sweep.run import quiet_cluster
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):   # no retry on a new worker
        cluster = quiet_cluster(1)
    client = Client(cluster, set_as_default=False, timeout=30)
    killed: list[int] = []

    def kill_when_running() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(client.processing().values()):
            time.sleep(0.02)
        for pid in client.run(os.getpid).values():
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    try:
        killer = threading.Thread(target=kill_when_running, daemon=True)
        killer.start()
        df = cosim.sweep(scenario="quickstart", grid={"seed": [1]}, sets=SETS, out=tmp_path, client=client)
        killer.join(timeout=130)
    finally:
        client.close(timeout=10)
        cluster.close(timeout=10)
    assert killed
    assert list(df["status"]) == ["crashed"]
    assert "KilledWorker" in df["error"][0]
    assert not list(tmp_path.glob("cache/*.json"))          # a crashed point runs again next time
    err = capfd.readouterr().err
    assert not [line for line in err.splitlines() if any(n in line for n in DASK_NOISE)], err[-3000:]


def test_the_quiet_cluster_keeps_a_workers_dask_errors_off_stderr(capfd):
    """The shutdown heartbeat traceback of issue 34 is a `distributed.worker` ERROR logged in
    a worker process: logged there on purpose, it reaches neither this process's stderr
    nor the workers' (which is this one's file descriptor 2)."""
    import logging

    from dask.distributed import Client

    from cosim.sweep.run import quiet_cluster

    def log_heartbeat_error() -> int:
        logging.getLogger("distributed.worker").error("Failed to communicate with scheduler during heartbeat.")
        return os.getpid()
    cluster = quiet_cluster(1)
    try:
        with Client(cluster, set_as_default=False, timeout=30) as client:
            pids = list(client.run(log_heartbeat_error).values())
    finally:
        cluster.close(timeout=10)
    assert len(pids) == 1 and pids[0] != os.getpid()       # it was logged in a worker process
    err = capfd.readouterr().err
    assert not [line for line in err.splitlines() if any(n in line for n in DASK_NOISE)], err[-3000:]
