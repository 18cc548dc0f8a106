"""Faults end a distributed run within the deadline, with the documented message and exit
code, and leave no process behind: a worker killed (-9), stopped (SIGSTOP), raising; a
coordinator that disappears; SIGTERM/SIGINT on the coordinator (cosim/distributed)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cosim.distributed import DistOptions, DistributedError, run_distributed

REPO = Path(__file__).resolve().parents[1]
LONG = "support.dist_platforms:compute_pair"
LONG_CFG = {"rounds": 100_000, "work": 2}          # runs for minutes unless stopped
RING = "support.dist_platforms:ring"
DEADLINE = 5.0


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (read from /proc, no psutil needed)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def wait_gone(pids, timeout: float) -> list[int]:
    end = time.monotonic() + timeout
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < end:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")])
    return e


def run_with_fault(fault, partition="node0|node1", after: float = 1.0, **opt):
    """Start a long run; ``after`` s into it apply ``fault(worker_infos)``; return (error,
    seconds from the fault to the end of the run, worker pids, on_abort calls)."""
    infos, flushed, fault_at = [], [], []

    def on_start(ws):
        infos.extend(ws)

        def hit():
            fault_at.append(time.monotonic())
            fault(ws)
        threading.Timer(after, hit).start()

    options = DistOptions(on_start=on_start, on_abort=flushed.append, **opt)
    with pytest.raises(DistributedError) as ei:
        run_distributed(LONG, LONG_CFG, partition, options=options)
    took = time.monotonic() - fault_at[0] if fault_at else 0.0
    return ei.value, took, [w.pid for w in infos], flushed


def test_worker_killed_9():
    err, took, pids, flushed = run_with_fault(lambda ws: os.kill(ws[1].pid, signal.SIGKILL))
    assert took < DEADLINE
    assert err.worker == "w1" and err.components == ["node1"] and err.kind == "died"
    assert "killed by signal 9" in str(err) and "last simulated time" in str(err)
    assert err.exit_code == 3 and err.time > 0
    assert flushed == [err]                            # partial outputs flushed via the hook
    assert wait_gone(pids, 1.0) == []


def test_worker_stopped_sigstop():
    err, took, pids, _ = run_with_fault(lambda ws: os.kill(ws[0].pid, signal.SIGSTOP))
    assert took < DEADLINE
    assert err.worker == "w0" and err.kind == "hung"
    assert "stopped responding" in str(err) and "node0" in str(err)
    assert wait_gone(pids, 1.0) == []


def test_worker_model_raises():
    t0 = time.monotonic()
    with pytest.raises(DistributedError) as ei:
        run_distributed(RING, {"nodes": 3, "rounds": 50, "fail": {"node": 2, "at_ns": 300}},
                        "node0,node1|node2")
    e = ei.value
    assert time.monotonic() - t0 < 10
    assert e.worker == "w1" and e.components == ["node2"] and e.kind == "raised"
    assert "injected fault in node2.gen" in str(e) and e.time >= 300_000 and e.exit_code == 3


def _coordinator(tmp_path, *extra, cfg=LONG_CFG, partition="node0|node1"):
    out = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "cosim.distributed.coordinator", "--builder", LONG, "--config",
           json.dumps(cfg), "--partition", partition, "--out", str(out), *extra]
    # TMPDIR: a coordinator killed with -9 cannot remove its ipc directory; keep it in tmp_path
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env(), "TMPDIR": str(tmp_path)}, cwd=REPO)
    return proc, out


def _worker_pids(proc) -> dict[str, int]:
    """Read the coordinator's 'workers: w0=PID w1=PID' line (it prints it once all are ready)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if line.startswith("workers:"):
            return {k: int(v) for k, v in (x.split("=") for x in line.split()[1:])}
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"coordinator never reported its workers: {proc.stderr.read()}")


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), pytest.param(signal.SIGINT, 130, marks=pytest.mark.slow(
    reason="the same stop as [15-143]; SIGINT's exit 130: "
           "test_run_failures.py::test_signal_while_loading_exits_at_once_in_one_line"))])
def test_coordinator_signals_stop_everything_cleanly(tmp_path, sig, code):
    proc, out = _coordinator(tmp_path)
    try:
        pids = _worker_pids(proc)
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(sig)
        rc = proc.wait(timeout=DEADLINE)
        assert time.monotonic() - t0 < DEADLINE
        assert rc == code
        assert wait_gone(pids.values(), 1.0) == []
        aborted = json.loads(out.read_text())["aborted"]     # partial output flushed
        assert aborted["kind"] == "interrupted" and signal.Signals(sig).name in aborted["reason"]
    finally:
        proc.kill()
        proc.wait()


def test_coordinator_killed_local_workers_exit(tmp_path):
    """Local workers die with their coordinator (PR_SET_PDEATHSIG)."""
    proc, _ = _coordinator(tmp_path)
    try:
        pids = _worker_pids(proc)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        assert wait_gone(pids.values(), DEADLINE) == []
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow(reason="workers exit when their coordinator dies: test_coordinator_killed_local_workers_exit; a "
                         "worker's deadline without coordinator answers: "
                         "test_worker_without_a_coordinator_gives_up")
def test_coordinator_killed_remote_workers_exit(tmp_path):
    """Workers that are not its children (started like remote ones) notice the missing
    heartbeat answers and exit with code 5 within the deadline."""
    ep = f"ipc://{tmp_path}/c.sock"
    proc, _ = _coordinator(tmp_path, "--bind", ep, "--no-launch")
    workers = [subprocess.Popen([sys.executable, "-m", "cosim.distributed.worker", "--connect", ep],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=env(), cwd=REPO) for _ in range(2)]
    try:
        _worker_pids(proc)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        t0 = time.monotonic()
        for w in workers:
            rc = w.wait(timeout=DEADLINE)
            assert rc == 5
            assert "stopped answering" in w.stderr.read()
        assert time.monotonic() - t0 < DEADLINE
    finally:
        for w in workers + [proc]:
            w.kill()
            w.wait()


def test_worker_without_a_coordinator_gives_up(tmp_path):
    w = subprocess.run([sys.executable, "-m", "cosim.distributed.worker", "--connect",
                        f"ipc://{tmp_path}/nobody.sock", "--connect-timeout", "1"],
                       capture_output=True, text=True, env=env(), cwd=REPO, timeout=20)
    assert w.returncode == 5 and "no answer from the coordinator" in w.stderr


def test_a_window_over_the_round_timeout_names_the_late_workers():
    """A model busy past ``round_timeout`` (its heartbeat alive) aborts the run within the
    deadline, naming each worker that did not report and its components."""
    t0 = time.monotonic()
    with pytest.raises(DistributedError) as ei:
        run_distributed(LONG, {"rounds": 5, "work": 400, "burst": 8192, "latency_ns": 100_000},
                        "node0|node1", options=DistOptions(round_timeout=0.3))
    err = ei.value
    assert time.monotonic() - t0 < 30
    assert err.kind == "timeout" and "after 0.3 s (round_timeout)" in str(err)
    assert "worker w0 (components: node0)" in str(err) and "worker w1 (components: node1)" in str(err)


def test_round_timeout_follows_the_cli_and_limits_max_wall(monkeypatch):
    """`--round-timeout S` reaches DistOptions; without it a split run's windows get
    limits.max_wall (else the coordinator's 300 s default)."""
    import argparse

    import cosim.partitioned as part
    from cosim.cli import _dist_options
    from cosim.distributed.coordinator import ROUND_TIMEOUT
    from cosim.scenario import load_scenario
    ns = argparse.Namespace(bind=None, keys=None, connect_timeout=20.0, round_timeout=7.0)
    assert _dist_options(ns, None).round_timeout == 7.0
    assert _dist_options(argparse.Namespace(bind=None, keys=None, connect_timeout=20.0,
                                            round_timeout=None), None) is None
    seen = []

    def fake_run(builder, config, partition, *, processes, max_time, options):
        seen.append(options.round_timeout)
        raise DistributedError("stop here", kind="abort")
    monkeypatch.setattr("cosim.distributed.run_distributed", fake_run)
    for sets, want in ((["limits.max_wall=12"], 12.0), ([], None)):
        sc = load_scenario("quickstart", ["partition=soc,pmu,hyperram|cluster", *sets])
        part.run_partitioned(sc)
        assert seen[-1] == want
    assert ROUND_TIMEOUT == 300.0
