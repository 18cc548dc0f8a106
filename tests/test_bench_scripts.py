"""The benchmark scripts run against the current API (they are not timed here: speed
targets are judged by the scripts themselves, in one run against their baselines)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow(reason="a benchmark script (bench/, slow like a pasted one): "
                         "test_kernel_bench_compares_with_simpy_and_says_what_it_found_of_systemc runs one; both "
                         "scenarios: test_golden_hashes.py")
def test_scenario_bench_runs_both_scenarios_to_a_pass():
    r = subprocess.run([sys.executable, "bench/scenarios.py", "--repeat", "1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith(("quickstart", "resnet20_cifar"))]
    assert len(rows) == 2 and all(" passed" in ln for ln in rows), r.stdout
    assert "ResNet-20 simulation part:" in r.stdout and "whole process:" in r.stdout, r.stdout


def test_kernel_bench_compares_with_simpy_and_says_what_it_found_of_systemc():
    r = subprocess.run([sys.executable, "bench/kernel.py", "--scale", "0.02"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    [sc_line] = [ln for ln in r.stdout.splitlines() if ln.startswith("SystemC: ")]
    rows = {ln.split("  ")[0]: ln.split() for ln in r.stdout.splitlines()
            if ln.startswith(("ping-pong", "1000 procs", "LT b_transport", "DMI"))}
    assert len(rows) == 5
    if Path("/usr/include/systemc.h").exists() and "SYSTEMC_HOME" not in os.environ:
        # Debian's libsystemc-dev is installed here: the C++ workloads ran and were compared
        assert sc_line.startswith("SystemC: SystemC 2.") or sc_line.startswith("SystemC: SystemC 3."), sc_line
        assert all(float(rows[k][-1]) > 0 for k in rows if not k.startswith("DMI")), r.stdout
    else:
        assert "no SystemC" in sc_line or "no g++" in sc_line, sc_line
