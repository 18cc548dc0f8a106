"""Scenarios split over processes give the report a single process gives: times,
statistics, energy, task records, checks, TLM errors, memory digests and the run hash.

Each library scenario below runs once in one process and then split two ways (an explicit
partition and an automatic one over 2 or 3 processes); everything but wall times, output
paths and the manifest must be identical, bit for bit."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cosim.launch import run_scenario
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(600)

#: what may differ between a run in one process and a split one
VOLATILE = {"wall_time_s", "sim_per_wall", "outputs", "manifest"}


def comparable(report) -> dict:
    d = {k: v for k, v in report.as_dict().items() if k not in VOLATILE}
    d["scenario"] = {k: v for k, v in d["scenario"].items() if k != "partition"}
    return json.loads(json.dumps(d, default=str))


def run(tmp_path: Path, sc, tag: str, processes: int | None = None):
    return run_scenario(sc, out_dir=tmp_path / tag, plots=False, processes=processes)


#: one library scenario of the same invariance stays in the default set (dvfs_sweep: the CDC and
#: pmu_link cut, explicit and automatic splits); the others add the RBE, firmware, ABB and a network
SECOND = pytest.mark.slow(reason="test_library_scenario_is_partition_invariant[dvfs_sweep-...] in the default set")


@pytest.mark.parametrize("name, split, processes", [
    pytest.param("quickstart", "soc,pmu,hyperram|cluster", 3, marks=SECOND),
    pytest.param("firmware_rbe", "soc,pmu|cluster,hyperram", 3, marks=SECOND),
    pytest.param("resnet20_cifar", "soc,pmu,hyperram|cluster", 3, marks=SECOND),   # a full network
    pytest.param("abb_phases", "soc,pmu|cluster|hyperram", 2, marks=SECOND),     # ABB, OCMs, activity over pmu_link
    ("dvfs_sweep", "soc,pmu,hyperram|cluster", 2),     # DVFS crosses pmu_link
])
def test_library_scenario_is_partition_invariant(tmp_path, name, split, processes):
    one = run(tmp_path, load_scenario(name), "one")
    assert one.status == "passed", (one.error, [c.as_dict() for c in one.checks if not c.passed])
    assert one.manifest["processes"] == 1 and one.hash["run"]
    reference = comparable(one)
    for tag, sets, procs in (("explicit", [f"partition={split}"], None),
                             ("auto", [], processes)):
        sc = load_scenario(name, sets)
        rep = run(tmp_path, sc, tag, procs)
        assert rep.manifest["processes"] == (len(split.split("|")) if procs is None else procs)
        assert rep.manifest["cut_links"], "a split run must cut at least one link"
        got = comparable(rep)
        diff = sorted(k for k in reference if reference[k] != got.get(k))
        assert not diff, f"{name} ({tag}): {diff} differ from the single-process run"


def _scenario(tmp_path: Path, checks: str) -> str:
    text = textwrap.dedent("""\
        name: checks_split
        seed: 7
        platform: {preset: marsellus}
        workload:
          tasks:
            - {op: load, to: l2+0x1000, data: {random: {count: 4096}}}
            - {op: dma, id: in, src: l2+0x1000, dst: tcdm+0x0, size: 4096}
            - {op: dma, id: back, after: [in], src: tcdm+0x0, dst: l2+0x8000, size: 4096}
        checks:
        """) + textwrap.indent(textwrap.dedent(checks), "  ")
    path = tmp_path / "checks_split.yaml"
    path.write_text(text)
    return str(path)


def test_memory_checks_read_the_owner_s_memory_in_a_split_run(tmp_path):
    """A check on the TCDM (owned by the cluster's process) and one comparing L2 with the
    TCDM (two owners) give the same verdicts and details, failing ones included."""
    path = _scenario(tmp_path, """\
        - memory: {at: tcdm+0x0, equals_memory: l2+0x1000, size: 4096}
        - memory: {at: l2+0x8000, equals_memory: tcdm+0x0, size: 4096}
        - memory: {at: tcdm+0x10, equals_memory: l2+0x1000, size: 64}
        """)
    one = run(tmp_path, load_scenario(path), "one")
    two = run(tmp_path, load_scenario(path, ["partition=soc,pmu,hyperram|cluster"]), "two")
    verdicts = [(c.name, c.passed, c.detail) for c in one.checks]
    assert [c.passed for c in one.checks] == [True, True, True, False]     # tasks + 3 checks
    assert "byte(s) differ" in one.checks[-1].detail
    assert [(c.name, c.passed, c.detail) for c in two.checks] == verdicts
    assert comparable(one) == comparable(two)


def test_a_bad_partition_is_refused_before_anything_starts(tmp_path):
    sc = load_scenario("quickstart")
    for split, msg in (("soc|pmu,cluster,hyperram", "zero-latency socket binding"),
                       ("soc,pmu|cluster|clusterx", "unknown component 'clusterx'"),
                       ("soc,pmu,cluster|cluster,hyperram", "'cluster' is in two partitions")):
        sc.partition = [g.split(",") for g in split.split("|")]
        with pytest.raises(ScenarioError, match=msg) as e:
            run(tmp_path, sc, "bad")
        assert "quickstart.yaml" in str(e.value)
    sc.partition = None
    with pytest.raises(ScenarioError, match="cannot split into 9 processes"):
        run(tmp_path, sc, "bad", processes=9)


def test_partition_key_in_the_scenario_file(tmp_path):
    text = (ROOT / "scenarios" / "quickstart.yaml").read_text() + "partition: soc,pmu,hyperram|cluster\n"
    sc = load_scenario_text(text, tmp_path / "q.yaml")
    assert sc.partition == [["soc", "pmu", "hyperram"], ["cluster"]]
    rep = run(tmp_path, sc, "key")
    assert rep.status == "passed"
    assert sorted(map(sorted, rep.manifest["partition"])) == [["cluster"], ["hyperram", "pmu", "soc"]]
    assert set(rep.manifest["cut_links"]) == {"cdc", "pmu_link"}


def test_cli_prints_the_same_hash_for_one_and_two_processes(tmp_path):
    def cli(*extra):
        r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", "quickstart", "--quiet",
                            "--no-plots", "--out", str(tmp_path / "o".join(extra or ("1",))), *extra],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("hash "))
        return line.split()[1], line
    h1, l1 = cli()
    h2, l2 = cli("--processes", "2")
    assert h1 == h2 and len(h1) == 64
    assert "1 process)" in l1 and "2 processes)" in l2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): it is dead for our purpose once its parent reaped it
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.slow(reason="a worker killed mid-run is a clear error: test_dist_faults.py::test_worker_killed_9")
def test_a_worker_killed_mid_run_ends_the_scenario_with_a_clear_error(tmp_path, caplog):
    from cosim.distributed import DistOptions

    pids: list[int] = []

    def kill_cluster_worker(workers):
        for w in workers:
            pids.append(w.pid)
            if "cluster" in w.components:
                os.kill(w.pid, signal.SIGKILL)

    sc = load_scenario("resnet20_cifar", ["partition=soc,pmu,hyperram|cluster"])
    t0 = time.monotonic()
    rep = run_scenario(sc, out_dir=tmp_path / "killed", plots=False,
                       dist_options=DistOptions(on_start=kill_cluster_worker, heartbeat_timeout=1.0))
    assert time.monotonic() - t0 < 30
    assert rep.status == "error" and rep.exit_code == 4
    assert "cluster" in rep.error and "w1" in rep.error, rep.error
    assert (tmp_path / "killed" / "report.json").exists()      # the report says what happened
    assert len(pids) == 2 and not any(_alive(p) for p in pids)  # no orphan worker
    # the error is the caller's to print (the CLI does, once): not logged again as an error
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and "aborted" in r.getMessage()]


def test_cli_split_run_with_workers_started_elsewhere_over_curve_tcp(tmp_path):
    """`cosim run --bind tcp://...` waits for `cosim worker --connect` peers (as on other
    hosts), which get the scenario from the coordinator; the hash is the single-process one."""
    import socket
    keys = tmp_path / "keys"
    run_cli = [sys.executable, "-m", "cosim.cli"]
    subprocess.run(run_cli + ["keys", str(keys), "--workers", "2"], check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"tcp://127.0.0.1:{port}"
    coord = subprocess.Popen(run_cli + ["run", "quickstart", "--quiet", "--no-plots", "--out",
                                        str(tmp_path / "out"), "--processes", "2", "--bind", endpoint,
                                        "--keys", str(keys)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    workers = [subprocess.Popen(run_cli + ["worker", "--connect", endpoint, "--keys", str(keys),
                                           "--name", f"worker{k}"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for k in range(2)]
    try:
        out, _ = coord.communicate(timeout=120)
        codes = [w.wait(timeout=30) for w in workers]
    finally:
        for p in [coord, *workers]:
            if p.poll() is None:
                p.kill()
    assert coord.returncode == 0 and codes == [0, 0], out
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    one = run(tmp_path, load_scenario("quickstart"), "one")
    assert rep["hash"] == one.hash and rep["manifest"]["transport"].startswith("tcp")


@pytest.mark.parametrize("keys", [pytest.param(k, marks=pytest.mark.slow(
    reason="the same refusal of a keys folder, exit 2 before any worker: [empty]")) if k != "empty" else k
    for k in ["missing", "empty", "no_workers"]])
def test_bad_keys_end_the_run_at_once_with_exit_2(tmp_path, keys):
    """--keys naming no folder, a folder without the coordinator's pair, or one without any
    authorised worker key: one line naming the folder, exit 2, no hang (the authenticator
    thread used to outlive the error)."""
    d = tmp_path / "keys"
    run_cli = [sys.executable, "-m", "cosim.cli"]
    if keys != "missing":
        d.mkdir()
    if keys == "no_workers":
        subprocess.run(run_cli + ["keys", str(d), "--workers", "1"], check=True, capture_output=True)
        for f in (d / "authorized").glob("*.key"):
            f.unlink()
    r = subprocess.run(run_cli + ["run", "quickstart", "--quiet", "--no-plots", "--out", str(tmp_path / "out"),
                                  "--processes", "2", "--bind", "tcp://127.0.0.1:0", "--keys", str(d)],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and f"--keys {d}" in lines[0] and "Traceback" not in r.stderr, lines
    assert "cannot start the distributed run" in lines[0]


@pytest.mark.slow
def test_rtl_rbe_inside_a_split_run_gives_the_single_process_results(tmp_path):
    """The RTL RBE's child process starts in the worker that owns the cluster (lazily, at
    the first job) and the split run's memories, tasks and hash equal the 1-process RTL run."""
    sets = ["cluster.rbe.model=rtl"]
    one = run(tmp_path, load_scenario("quickstart", sets), "one")
    two = run(tmp_path, load_scenario("quickstart", sets + ["partition=soc,pmu,hyperram|cluster"]), "two")
    assert one.status == two.status == "passed"
    assert one.hash == two.hash
    a, b = comparable(one), comparable(two)
    assert {k for k in a if a[k] != b[k]} <= {"extra"}          # pids and build paths differ
    jobs = lambda r: [(j["job"], j["start_ps"], j["rtl_cycles"]) for j in  # noqa: E731
                      r.extra["rtl"]["blocks"]["cluster.rbe"]["jobs"]]
    assert jobs(one) == jobs(two) and len(jobs(one)) == 4
