"""The benchmark scripts run against the current API (they are not timed here: speed
targets are judged by the scripts themselves, in one run against their baselines)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_scenario_bench_runs_both_scenarios_to_a_pass():
    r = subprocess.run([sys.executable, "bench/scenarios.py", "--repeat", "1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith(("quickstart", "resnet20_cifar"))]
    assert len(rows) == 2 and all(" passed" in ln for ln in rows), r.stdout
    assert "ResNet-20 simulation part:" in r.stdout and "whole process:" in r.stdout, r.stdout
