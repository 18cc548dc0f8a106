"""FlexiSAGA workloads: CIFAR-10 layer shapes against hand-derived values and known MAC
totals, pruning per operator group, the best-dataflow search, and the bench script."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from accelerators.flexisaga.model.config import DATAFLOWS, ArrayConfig
from accelerators.flexisaga.model.cycles import estimate
from accelerators.flexisaga.model.pruning import sparsity_of
from accelerators.flexisaga.model.workloads import (VARIANTS, Operator, evaluate, operators, prune, summary,
                                            weights)

ROOT = Path(__file__).resolve().parents[1]


def test_alexnet_cifar_shapes_by_hand() -> None:
    ops = operators("alexnet")
    # conv1 3->64 k3 s2 p1 on 32x32 -> 16x16; pools halve: 8, 4, then 2x2x256 into fc1
    assert ops[0] == Operator("conv1", "conv", 64, 27, 256)
    assert ops[1] == Operator("conv2", "conv", 192, 64 * 9, 64)
    assert ops[4] == Operator("conv5", "conv", 256, 256 * 9, 16)
    assert ops[5] == Operator("fc1", "fc", 4096, 256 * 2 * 2, 1)
    assert [o.kind for o in ops] == ["conv"] * 5 + ["fc"] * 3


@pytest.mark.parametrize("net,n_ops,mmacs", [("vgg16", 14, 313.2), ("resnet50", 54, 1297.8),
                                             ("googlenet", 65, 1521.8)])
def test_network_sizes(net: str, n_ops: int, mmacs: float) -> None:
    # published MAC counts of the pytorch-cifar models (VGG16 0.31 G, ResNet-50 1.30 G,
    # GoogLeNet 1.53 G; their counts include the few MACs of pooling-free FC heads)
    ops = operators(net)
    assert len(ops) == n_ops
    assert sum(o.macs for o in ops) / 1e6 == pytest.approx(mmacs, rel=2e-3)


def test_groups_are_pruned_separately_to_their_sparsity() -> None:
    ops = operators("alexnet")
    cfg = ArrayConfig(rows=8, cols=9)
    ws = prune(ops, weights(ops), VARIANTS[1], cfg)   # column vectors of length R
    conv_zero = sum(int((w == 0).sum()) for o, w in zip(ops, ws) if o.kind == "conv")
    conv_all = sum(w.size for o, w in zip(ops, ws) if o.kind == "conv")
    assert conv_zero / conv_all == pytest.approx(0.7, abs=0.01)
    assert sparsity_of(np.concatenate([w.ravel() for o, w in zip(ops, ws) if o.kind == "fc"])) \
        == pytest.approx(0.9, abs=0.01)


def test_best_dataflow_search_and_summary() -> None:
    ops = [Operator("a", "conv", 16, 36, 20), Operator("b", "fc", 30, 64, 1)]
    cfg = ArrayConfig(rows=4, cols=4)
    ws = prune(ops, weights(ops, 3), VARIANTS[1], cfg)
    res = evaluate(ops, ws, cfg)
    for r, op, w in zip(res, ops, ws):
        cyc = {df: estimate(df, w, op.n, cfg).cycles for df in DATAFLOWS}
        assert r.best.cycles == min(cyc.values())
        assert r.dense_best.cycles == min(cyc[d] for d in ("dOS", "dWS", "dIS"))
    s = summary(res)
    assert s["sparse_cycles"] == sum(r.best.cycles for r in res) <= s["dense_cycles"]
    assert sum(s["chosen"].values()) == 2


def test_bench_script_runs() -> None:
    r = subprocess.run([sys.executable, "bench/flexisaga.py", "--shapes", "4x18", "--variants", "col-R",
                        "--max-ops", "2"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert " 4x18 " in r.stdout and "col-R" in r.stdout
    assert "sweep: 14 points in" in r.stdout and " s CPU " in r.stdout and "faster" in r.stdout, r.stdout


def test_bench_footprint_table() -> None:
    r = subprocess.run([sys.executable, "bench/flexisaga.py", "--footprint"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln.split() for ln in r.stdout.splitlines()[1:]]
    assert [row[0] for row in rows] == ["0.5", "0.6", "0.7", "0.8", "0.9"]
    assert all(row[1] == "256.0" for row in rows)   # 128 x 512 x 4 B dense
    # the bitmaps shrink with sparsity; CSB pays for its indices but stays below dense
    tsb = [float(row[7]) for row in rows]
    assert tsb == sorted(tsb, reverse=True) and all(float(row[8]) < 256 for row in rows)
