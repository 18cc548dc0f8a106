"""bench/voyager.py and `cosim voyager` run against the current API (speed targets are the
script's own verdicts), the timing run agrees with the performance model, and bad input
ends with a located message and exit code 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from accelerators.voyager.model import config as C
from accelerators.voyager.model import zoo
from accelerators.voyager.model.perf import network_perf
from accelerators.voyager.network import run_timing, totals

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", "voyager", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_bench_prints_its_parts_and_verdicts():
    r = subprocess.run([sys.executable, "bench/voyager.py", "--arrays", "8x8,64x64"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    assert "ResNet-50 on 32x32:" in out and "target <= 30 s" in out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("8x8 ", "64x64 "))]
    assert [row[0] for row in rows] == ["8x8", "64x64"] and [int(row[1]) for row in rows] == [48, 384]
    assert int(rows[0][2]) > int(rows[1][2])                   # the bigger array is faster
    assert all(f"objective {m}" in out for m in ("perf", "energy", "coarse"))


def test_timing_run_agrees_with_the_performance_model():
    layers = zoo.model("mobilenetv2")
    p = C.array_config("16x16")
    runs = run_timing(layers, p)
    net = network_perf(layers, p)
    assert [r.name for r in runs] == [lp.name for lp in net.layers]
    for r, lp in zip(runs, net.layers):
        assert r.ideal == lp.ideal and r.model_cycles == lp.cycles
        if r.unit == "matrix":                                 # DRAM latency and burst timing differ a little
            assert abs(r.cycles - lp.cycles) <= 0.05 * lp.cycles + 200, (r, lp)
    t = totals(runs)
    assert abs(t["cycles"] - net.cycles) < 0.01 * net.cycles


def test_cosim_voyager_writes_the_table_and_the_plot(tmp_path):
    r = _cli("resnet18", "--array", "16x16", "--tlm", "--layers", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "voyager.json").read_text())
    mats = [row for row in doc["layers"] if row["unit"] == "matrix"]
    assert doc["totals"]["utilisation"] == sum(m["ideal_cycles"] for m in mats) / sum(m["cycles"] for m in mats)
    assert (tmp_path / "utilisation.png").stat().st_size > 1000
    assert "layer1.0.conv1" in r.stdout


def test_cosim_voyager_bad_input_is_located():
    r = _cli("resnet18", "--dtype", "fp9")
    assert r.returncode == 2 and "unknown datatype 'fp9'" in r.stdout
    r = _cli("vgg16")
    assert r.returncode == 2 and "unknown model 'vgg16'" in r.stdout
    r = _cli("resnet18", "--array", "0x16")
    assert r.returncode == 2 and "voyager.ic_dim" in r.stdout
    r = _cli("resnet18", "--model", "fast")
    assert r.returncode == 2 and "unknown performance model 'fast'" in r.stdout
