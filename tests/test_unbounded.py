"""A run that never finishes by itself stays in a fixed memory envelope and ends with a
report (issue 29, "firmware that loops forever, no max_time"): what it keeps while simulated
time grows is capped (the power series decimated, the firmware's output, TLM errors and the
trace cut to a head and a tail), and whatever stops it (max_wall, the default time limit,
max_memory, an exhausted address space) leaves a report with the simulated time reached
and where. The end-to-end tests run ``cosim run`` in a child process under an address-space
limit (RLIMIT_AS, as ``ulimit -v``) and sample its resident size (/proc) while it runs.

The bounds stated here: an endless firmware or task list stays under 400 MiB resident with
the default budget (a run holds ~110 MiB before it simulates; the largest kept record is the
power series, at most 50 000 samples of ~3.5 KiB); a leaking model is stopped by the memory
watch within 1 GiB when the budget is 512 MiB (the watch looks between slices of simulated
time, and a slice may leak ~100 MiB)."""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tlm import NS, GenericPayload, Simulator
from tlm.bounded import HeadTail
from tlm.payload import Status, record_error

ROOT = Path(__file__).resolve().parents[1]
BUGGY = ROOT / "tests" / "support" / "buggy_platforms.py"
SPIN = ROOT / "firmware" / "build" / "spin.elf"
MIB = 1 << 20
#: a cosim run maps ~1.4 GiB of address space before it simulates (numpy, the ISS, the reserve)
ADDRESS_SPACE = 2560 * MIB


def _rss(pid: int) -> int:
    """Resident size of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _run_watched(tmp_path: Path, args: list[str], address_space: int, timeout: float = 55.0):
    """``args`` (a cosim command line) in a child limited to ``address_space`` bytes;
    returns (exit code, stdout + stderr, the resident sizes sampled every 50 ms)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                                         os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "console.txt"
    with open(log, "w") as out:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=limit)
        samples = []
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait(10)
                pytest.fail(f"{args} still running after {timeout} s")
            samples.append(_rss(proc.pid))
            time.sleep(0.05)
    return proc.returncode, log.read_text(), samples


def _cosim(*args: str) -> list[str]:
    return [sys.executable, "-m", "cosim.cli", *args]


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def _stopped_run(tmp_path: Path, command: list[str], address_space: int = ADDRESS_SPACE) -> tuple[dict, list[int]]:
    """``command run SCENARIO ...`` (quiet, no plots, into tmp_path/out) that a limit stops:
    exit 3, a report, no MemoryError nor traceback anywhere; (report, resident sizes)."""
    out = tmp_path / "out"
    code, console, rss = _run_watched(tmp_path, [*command, "-q", "--no-plots", "--out", str(out)], address_space)
    assert code == 3, console
    text = console + (out / "report.json").read_text()
    assert "MemoryError" not in text and "Traceback" not in text
    return _report(out), rss


def test_an_endless_firmware_stops_at_max_wall_with_its_time_and_bounded_memory(tmp_path):
    shutil.copy(SPIN, tmp_path / "spin.elf")
    scenario = tmp_path / "spin.yaml"
    scenario.write_text("name: spin\nseed: 1\nplatform:\n  preset: marsellus\n"
                        "workload:\n  firmware: spin.elf\nlimits: {max_wall: 3}\n")   # ~45 ms simulated
    rep, rss = _stopped_run(tmp_path, _cosim("run", str(scenario), "--set", "soc.stdout.max_lines=20"))
    assert rep["status"] == "error" and rep["error"].startswith("limits.max_wall (3 s) exceeded at simulated time")
    stopped = rep["stopped"]
    assert stopped == {"by": "max_wall", "sim_time_ps": rep["sim_time_ps"], "sim_time": rep["sim_time"],
                       "components": ["soc.fc"]}
    assert rep["sim_time_ps"] > 100_000 * NS
    # the firmware printed more lines than kept: the first 20 and the last 100, in order
    total = rep["components"]["soc.stdout"]["lines"]
    assert total > 120
    texts = [ln["text"] for ln in rep["extra"]["stdout"]]
    assert texts == [f"spin {i}" for i in range(20)] + [f"spin {i}" for i in range(total - 100, total)]
    assert rep["extra"]["capped"]["stdout"] == (f"kept the first 20 and the last 100 of {total:,} lines "
                                                "(soc.stdout.max_lines)")
    assert len(rss) > 20 and max(rss) < 400 * MIB, f"peak resident size {max(rss) / MIB:.0f} MiB"


def test_an_endless_task_list_reaches_the_default_limit_with_its_time_and_bounded_memory(tmp_path):
    """A task that waits an hour, no max_time: the run ends at the default limit (1 s of
    simulated time, 10^6 power samples at 1 us, once ~3.4 GB and a MemoryError)."""
    scenario = tmp_path / "wait.yaml"
    scenario.write_text("name: wait\nseed: 1\nplatform:\n  preset: marsellus\n"
                        "workload:\n  tasks:\n    - {op: wait, id: forever, time: 3600 s}\n")
    rep, rss = _stopped_run(tmp_path, _cosim("run", str(scenario)))
    assert rep["error"] == ("the run did not finish within the default limit of 1 s of simulated time "
                            "(set limits.max_time)")
    assert rep["sim_time_ps"] == 10 ** 12
    assert rep["stopped"] == {"by": "default_max_time", "sim_time_ps": 10 ** 12, "sim_time": "1 s",
                              "components": ["soc.host"]}
    assert rep["extra"]["capped"] == {"power_samples": "decimated to 50,000 samples of 20 us (at most 50,000, "
                                      "from 1/16 of limits.max_memory; pmu.sample_period is 1 us)"}
    assert rep["tasks"]["forever"]["end_ps"] is None
    assert max(rss) < 400 * MIB, f"peak resident size {max(rss) / MIB:.0f} MiB"


def _leaky(tmp_path: Path, limits: str) -> list[str]:
    """``cosim run`` of a scenario on the leaky_model test platform (tests/support)."""
    scenario = tmp_path / "leak.yaml"
    scenario.write_text("name: leak\nseed: 1\nplatform: leaky_model\n"
                        f"workload:\n  tasks:\n    - {{op: wait, time: 1 us}}\nlimits: {limits}\n")
    return [sys.executable, str(BUGGY), "run", str(scenario)]


def test_a_leaking_model_is_stopped_by_the_memory_watch_with_a_report(tmp_path):
    rep, rss = _stopped_run(tmp_path, _leaky(tmp_path, "{max_memory: 512 MiB}"), 2048 * MIB)
    assert rep["error"].startswith(f"limits.max_memory (512 MiB) exceeded at simulated time {rep['sim_time']}: "
                                   "the process holds")
    assert rep["stopped"]["by"] == "max_memory" and rep["stopped"]["sim_time_ps"] == rep["sim_time_ps"] > 0
    assert rep["stopped"]["components"] == ["soc"]       # soc.leaky_model's module
    assert max(rss) < 1024 * MIB, f"peak resident size {max(rss) / MIB:.0f} MiB"


def test_a_model_that_exhausts_the_address_space_still_gets_its_report(tmp_path):
    """The leak reaches RLIMIT_AS before the 4 GiB budget: the model's MemoryError ends the
    run, the reserve is released and the report is written, with the time and the model."""
    rep, _rss = _stopped_run(tmp_path, _leaky(tmp_path, "{max_wall: 50}"), 1024 * MIB)
    assert rep["stopped"] == {"by": "out_of_memory", "sim_time_ps": rep["sim_time_ps"], "sim_time": rep["sim_time"],
                              "components": ["soc.leaky_model"]}
    assert rep["sim_time_ps"] > 0 and rep["error_traceback"] is None
    assert rep["error"] == (f"out of memory at simulated time {rep['sim_time']} in soc.leaky_model: the process's "
                            "address space is exhausted (set limits.max_memory below it, so the run stops by "
                            "itself first)")


# ----- the caps, one by one -------------------------------------------------------------------------
def test_head_tail_keeps_the_first_and_the_last_and_counts_the_rest():
    log: HeadTail[int] = HeadTail(3, 2)
    for i in range(3):
        log.append(i)
    assert list(log) == [0, 1, 2] and log.dropped == 0 and log[-1] == 2
    for i in range(3, 10):
        log.append(i)
    assert list(log) == [0, 1, 2, 8, 9] and len(log) == 5 and log.total == 10 and log.dropped == 5
    assert (log[0], log[3], log[-1], log[1:4]) == (0, 8, 9, [1, 2, 8])
    with pytest.raises(IndexError):
        log[5]
    no_tail: HeadTail[int] = HeadTail(2)
    for i in range(5):
        no_tail.append(i)
    assert list(no_tail) == [0, 1] and no_tail.dropped == 3
    assert no_tail == [0, 1] and [0, 1] == no_tail and no_tail != [0, 1, 2]


def test_tlm_errors_past_the_cap_are_counted_not_kept(monkeypatch):
    import tlm.payload as payload
    monkeypatch.setattr(payload, "MAX_ERROR_RECORDS", 3)
    sim = Simulator()
    for i in range(5):
        record_error(sim, GenericPayload(address=4 * i), "soc.bad", Status.ADDRESS_ERROR, "no such register")
    assert [e.address for e in sim.errors] == [0, 4, 8]
    assert sim.stats.as_dict()["soc.bad"] == {"tlm_errors_not_kept": 2}


def test_the_trace_past_its_share_of_the_budget_is_cut_and_said(tmp_path, monkeypatch):
    from cosim import limits
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    monkeypatch.setattr(limits, "trace_records_cap", lambda max_memory: 10)
    rep = run_scenario(load_scenario("quickstart"), tmp_path / "out", trace=True, plots=False)
    assert rep.status == "passed" and "stopped" not in rep.as_dict()
    assert rep.extra["capped"] == {"trace": "kept the first 10 of 47 records (1/8 of limits.max_memory)"}
    events = json.loads((tmp_path / "out" / "trace.json").read_text())["traceEvents"]
    assert sum(1 for e in events if e["ph"] in ("X", "i")) == 10


def test_the_wall_alarm_after_the_simulation_keeps_the_time_reached(tmp_path, monkeypatch):
    """The alarm that stops a run while it reports (here a report that takes forever) gives
    the failure report, with the simulated time the run reached."""
    import cosim.runner as runner
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    made = {}

    def slow_report(*args, **kwargs):
        made["sim_time"] = args[1].sim_time
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:     # the alarm (a BaseException) ends this
            time.sleep(0.01)
        pytest.fail("max_wall did not interrupt the reporting phase")

    monkeypatch.setattr(runner, "make_report", slow_report)
    sc = load_scenario("quickstart", ["limits.max_wall=4"])
    rep = run_scenario(sc, tmp_path / "out", plots=False)
    assert rep.error == "limits.max_wall (4 s) exceeded (while reporting)"
    assert made["sim_time"] > 0 and rep.sim_time_ps >= made["sim_time"]
    assert rep.stopped == {"by": "max_wall", "sim_time_ps": rep.sim_time_ps, "sim_time": rep.as_dict()["sim_time"],
                           "components": []}
    assert _report(tmp_path / "out")["stopped"]["sim_time_ps"] == rep.sim_time_ps
