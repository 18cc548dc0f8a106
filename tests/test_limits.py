"""Bounded resources (issue 16): every number in a scenario has a bound, the memory budget
(``limits.max_memory``) is checked before and during a run, and ``limits.max_wall`` holds
in every phase."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim.limits import WallLimitExceeded, estimate, wall_limit
from cosim.runner import build, execute
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text
from cosim.scenario.schema import scenario_schema

ROOT = Path(__file__).resolve().parents[1]


def cosim(*args: str, cwd: Path = ROOT, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def _numbers(node, path=()):
    """Every schema node that admits a number, with its path."""
    if isinstance(node, dict):
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if "integer" in types or "number" in types:
            yield path, node
        for k, v in node.items():
            yield from _numbers(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, path + (i,))


def test_every_number_in_the_scenario_schema_is_bounded():
    found = list(_numbers(scenario_schema()))
    assert len(found) > 40
    unbounded = [".".join(map(str, p)) for p, n in found
                 if not ({"minimum", "exclusiveMinimum"} & set(n) and "maximum" in n)]
    assert not unbounded, f"numbers without both bounds: {unbounded}"


def _scenario(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


NET = """name: t
platform: marsellus
workload:
  network:
    input: {{h: {h}, w: 16, c: 3}}
    layers:
      - {{name: c, type: conv3x3, out: 32}}
"""


@pytest.mark.parametrize("h,message", [("100000", "100000 is out of range (maximum 4096)"),
                                       ("1.0e+100", "1e+100 is out of range (maximum 4096)"),
                                       ("1e100", "expected an integer, got str '1e100'")])
def test_a_huge_network_input_is_refused_at_its_line(tmp_path, h, message):
    p = _scenario(tmp_path, NET.format(h=h))
    t0 = time.monotonic()
    r = cosim("validate", str(p))
    assert r.returncode == 2 and time.monotonic() - t0 < 30
    assert f"{p}:5: workload.network.input.h: {message}" in r.stdout


def test_a_sample_period_below_a_nanosecond_is_refused():
    r = cosim("validate", "quickstart", "--set", "pmu.sample_period=1")
    assert r.returncode == 2
    assert "pmu.sample_period" in r.stdout and "1 ps is out of range [1 ns" in r.stdout


def test_a_load_that_does_not_fit_its_region_is_refused(tmp_path):
    p = _scenario(tmp_path, """name: t
platform: marsellus
workload:
  tasks:
    - {op: load, to: l2, data: {random: {count: 1000000000}}}
""")
    r = cosim("validate", str(p))
    assert r.returncode == 2
    assert f"{p}:5: workload.tasks[0].to: the data (954 MiB at l2+0x0) does not fit l2 (" in r.stdout


def test_the_static_estimate_names_what_is_too_big(tmp_path):
    p = _scenario(tmp_path, """name: t
platform: marsellus
workload:
  tasks:
    - {op: wait, time: 1 us}
limits: {max_memory: 512 MiB}
""")
    assert cosim("validate", str(p)).returncode == 0
    r = cosim("validate", str(p), "--set", "hyperram.capacity=1073741824")
    assert r.returncode == 2
    assert "over the memory budget of 512 MiB" in r.stdout and "capacity 1 GiB" in r.stdout


def test_the_estimate_grows_with_the_network():
    small = load_scenario("quickstart")
    big = load_scenario("quickstart", ["workload.network.input.h=512", "workload.network.input.w=512"])
    net = {name: n for name, n, _ in estimate(small)}["the network's reference tensors"]
    net_big = {name: n for name, n, _ in estimate(big)}["the network's reference tensors"]
    assert net_big > 200 * net


@pytest.mark.parametrize("text,message", [
    ("limits: {max_memory: lots}", "not a size: 'lots'"),
    ("limits: {max_memory: 1 KiB}", "out of range [1 MiB"),
    ("limits: {max_time: 2000000 s}", "out of range [0 ps, 3600 s]"),
])
def test_limits_are_bounded_too(text, message):
    base = "name: t\nplatform: marsellus\nworkload:\n  tasks:\n    - {op: wait, time: 1 us}\n"
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[")):
        load_scenario_text(base + text + "\n")


def test_a_power_series_over_its_share_of_the_budget_is_decimated(tmp_path):
    """483 us at 1 ns would be 483 708 samples; 300 MiB allows 300 MiB / 16 / 4 KiB = 4 800
    (cosim.limits.power_samples_cap): the series is decimated, the run passes, the report
    says so."""
    out = tmp_path / "out"
    r = cosim("run", "quickstart", "-q", "--no-plots", "--out", str(out),
              "--set", "pmu.sample_period=1 ns", "--set", "limits.max_memory=300 MiB")
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "passed" and "stopped" not in rep
    step = -(-rep["sim_time_ps"] // 4800 // 1000) * 1000      # a whole number of sample periods
    n = -(-rep["sim_time_ps"] // step)
    assert step == 101_000 and n <= 4800
    assert rep["extra"]["capped"] == {"power_samples": f"decimated to {n:,} samples of 101 ns (at most 4,800, from "
                                      "1/16 of limits.max_memory; pmu.sample_period is 1 ns)"}


def test_the_resident_size_is_watched_while_simulating():
    sc = load_scenario("quickstart")
    run = build(sc)
    sc.max_memory = 1 << 20          # below what any Python process holds
    execute(run)
    assert run.error is not None and run.error.startswith("limits.max_memory (1 MiB) exceeded at simulated time")


def test_max_wall_holds_while_building(tmp_path):
    t0 = time.monotonic()
    out = tmp_path / "o"
    r = cosim("run", "resnet20_cifar", "-q", "--no-plots", "--set", "limits.max_wall=0.05", "--out", str(out))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "error: limits.max_wall (0.05 s) exceeded (while building the platform)" in r.stdout
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "error" and rep["error_traceback"] is None
    assert time.monotonic() - t0 < 60


def test_max_wall_interrupts_any_phase_but_the_simulation_loop():
    with pytest.raises(WallLimitExceeded, match=r"limits.max_wall \(0.1 s\) exceeded"):
        with wall_limit(0.1) as wall:
            wall.phase("writing the outputs")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                pass


def test_random_data_bounds_are_checked_against_the_dtype(tmp_path):
    p = _scenario(tmp_path, """name: t
platform: marsellus
workload:
  tasks:
    - {op: load, to: l2, data: {random: {count: 16, dtype: uint8, low: 10, high: 300}}}
""")
    r = cosim("run", str(p), "-q", "--no-plots", "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert f"{p}:5: workload.tasks[0].data.random:" in r.stderr
    assert "random uint8 values need 0 <= low < high <= 256, got low 10, high 300" in r.stderr


def test_every_text_in_the_scenario_schema_is_bounded():
    def strings(node):
        if isinstance(node, dict):
            t = node.get("type")
            if t == "string" or (isinstance(t, list) and "string" in t):
                yield node
            for v in node.values():
                yield from strings(v)
        elif isinstance(node, list):
            for v in node:
                yield from strings(v)
    found = list(strings(scenario_schema()))
    assert found and all("maxLength" in n for n in found)


def test_a_huge_name_is_refused_quickly_and_briefly(tmp_path):
    p = _scenario(tmp_path, "name: " + "x" * 1_000_000 + "\nplatform: marsellus\nworkload:\n"
                  "  tasks:\n    - {op: wait, time: 1 ns}\n")
    r = cosim("validate", str(p))
    assert r.returncode == 2
    assert r.stdout.strip() == f"error: {p}:1: name: a text of 1,000,000 characters is too long (at most 128)"


# ----- split runs ---------------------------------------------------------------------------------
@pytest.mark.slow(reason="max_wall: test_unbounded.py::"
                         "test_an_endless_firmware_stops_at_max_wall_with_its_time_and_bounded_memory; "
                         "a split run stopped with its report: "
                         "test_dist_faults.py::test_coordinator_signals_stop_everything_cleanly")
def test_max_wall_ends_a_split_run_with_a_report(tmp_path):
    out = tmp_path / "o"
    r = cosim("run", "resnet20_cifar", "-q", "--no-plots", "--processes", "2", "--out", str(out),
              "--set", "limits.max_wall=1.5", timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "error" and rep["error"].startswith("limits.max_wall (1.5 s) exceeded at simulated time")


def test_each_worker_watches_its_resident_size():
    from cosim.distributed import DistOptions, DistributedError, run_distributed
    with pytest.raises(DistributedError) as ei:
        run_distributed("support.dist_platforms:compute_pair", {"rounds": 100_000, "work": 2}, "node0|node1",
                        options=DistOptions(max_memory=1 << 20))
    assert ei.value.kind == "raised" and ei.value.exit_code == 3
    assert "limits.max_memory (1 MiB) exceeded at simulated time" in str(ei.value)


@pytest.mark.parametrize("text,key", [
    ("platform: marsellus\nlimits: {max_wall: .nan}", "limits.max_wall"),
    ("platform: marsellus\nchecks: [{stat: {path: cluster.rbe, name: busy_ps, max: .nan}}]",
     "checks[0].stat.max"),
    ("platform: {preset: marsellus, overrides: {cluster.tcdm.conflict_factor: -.inf}}",
     "platform.overrides.cluster.tcdm.conflict_factor"),
])
def test_no_nan_or_inf_anywhere(text, key):
    body = f"name: t\n{text}\nworkload:\n  tasks:\n    - {{op: wait, time: 1 us}}\n"
    with pytest.raises(ScenarioError, match=re.escape(key) + ": (nan|-inf) is not a finite number"):
        load_scenario_text(body)


def test_the_deployed_network_must_fit_the_memories_as_parameterised():
    r = cosim("validate", "resnet20_cifar", "--set", "hyperram.capacity=1024")
    assert r.returncode == 2
    assert ("resnet20_cifar.yaml:9: workload.network: the deployed network's data (1.19 KiB at hyperram+0x0) "
            "does not fit hyperram (1 KiB, as its capacity parameter says)") in r.stdout


def test_a_stuck_simulation_slice_is_interrupted_after_the_grace(monkeypatch):
    """The simulation loop normally stops itself at max_wall (with a report); a model stuck
    inside one slice is interrupted SIMULATION_GRACE later, and no `except Exception`
    on the way can swallow it (a BaseException, like KeyboardInterrupt)."""
    import cosim.limits as lim
    monkeypatch.setattr(lim, "SIMULATION_GRACE", 0.3)
    t0 = time.monotonic()
    with pytest.raises(WallLimitExceeded):
        with wall_limit(0.2) as wall:
            wall.phase("simulating")
            while time.monotonic() < t0 + 20:
                try:
                    sum(range(1000))
                except Exception:   # a model's broad handler
                    pass
    assert 0.4 < time.monotonic() - t0 < 5


def test_an_onnx_network_counts_in_the_budget(tmp_path):
    """An ONNX model's tensors (from shape inference, as our int64 reference and onnxruntime's
    float32 hold them) count: a ResNet-20 on a 512x512 input is refused before anything runs."""
    import onnx

    from cosim.onnx import builders
    onnx.save(builders.resnet20(0, hw=32), str(tmp_path / "small.onnx"))
    onnx.save(builders.resnet20(0, hw=512), str(tmp_path / "big.onnx"))
    text = ("name: t\nplatform: marsellus\nworkload:\n  network: {onnx: %s}\n"
            "limits: {max_memory: 1 GiB}\n")
    (tmp_path / "small.yaml").write_text(text % "small.onnx")
    (tmp_path / "big.yaml").write_text(text % "big.onnx")
    small = {name: n for name, n, _ in estimate(load_scenario(tmp_path / "small.yaml"))}
    net = small["the network's reference tensors"]
    # ResNet-20 at 32x32 in QDQ form: every float, quantised and dequantised tensor of its
    # 20 layers (~1.5 M elements) and 0.27 M weights, 12 bytes each: ~19 MiB
    assert 10 << 20 < net < 40 << 20
    r = cosim("validate", str(tmp_path / "big.yaml"))
    assert r.returncode == 2
    assert "over the memory budget of 1 GiB" in r.stdout and "the network's reference tensors" in r.stdout
    assert "big.yaml:4" in r.stdout          # located at the network key
