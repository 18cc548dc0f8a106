"""Activation tiling on the ONNX path: layers whose data do not fit the TCDM run in bands of
output rows (conv, LeakyRelu, Add, Concat, MaxPool), still bit for bit against onnxruntime
in simulation; a layer of which not even one output row fits is a located error."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from cosim.deploy.tiling import TilingError
from cosim.onnx import builders
from cosim.onnx.deploy import deploy_qnet, prepare
from cosim.onnx.place import TCDM_USABLE

ROOT = Path(__file__).resolve().parents[1]


def test_layers_beyond_the_tcdm_run_in_bands(tmp_path):
    p = tmp_path / "wide.onnx"
    onnx.save(builders.wide(0), str(p))
    _, net, x, _ = prepare(str(p), 1)
    dep = deploy_qnet(net, x)
    tiled = {}
    size = {n: t.size for n, t in net.tensors.items()}
    for op in net.ops:
        info = dep.layer_info[op.name]
        h = net.tensors[op.output].shape[0]
        if "bands" in info:
            tiled[op.kind] = info["bands"]
            assert info["rows"] * (info["bands"] - 1) < h <= info["rows"] * info["bands"]
            assert "tiled:" in op.why
        # what it would hold at once: its inputs and output (LeakyRelu: in place), beyond the TCDM
        held = size[op.output] + (0 if op.kind == "leaky" else sum(size[i] for i in op.inputs))
        assert ("bands" in info) == (held > TCDM_USABLE), op.name
    assert set(tiled) == {"conv", "leaky", "add", "concat", "maxpool"}
    assert all(b > 1 for b in tiled.values())
    rows = {r[0]: r[3] for r in dep.onnx["placement"]}
    assert any("tiled:" in v for v in rows.values())


def test_tiled_model_matches_onnxruntime_in_simulation(tmp_path):
    onnx.save(builders.wide(0), str(tmp_path / "wide.onnx"))
    sc = tmp_path / "wide.yaml"
    sc.write_text("name: wide\nseed: 1\nplatform: {preset: marsellus}\nworkload:\n  network: {onnx: wide.onnx}\n")
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", str(sc), "--out", str(tmp_path / "o"),
                        "--quiet", "--no-plots"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    res = {c["name"]: c for c in rep["checks"]}
    assert res["network == onnxruntime (bit for bit)"]["passed"]
    assert res["network == onnxruntime (bit for bit)"]["detail"] == "11 tensors identical"


def test_a_layer_without_a_single_row_that_fits_is_named(tmp_path):
    b = builders.QdqBuilder("huge", (128, 4, 4))
    p = tmp_path / "huge.onnx"
    onnx.save(b.build(b.conv(b.x, 128)), str(p))       # 3x3x128x128 int8 weights: 144 KiB
    _, net, x, _ = prepare(str(p), 0)
    with pytest.raises(TilingError) as e:
        deploy_qnet(net, x, convs_on="cores")
    msg = str(e.value)
    assert "\n" not in msg and str(p) in msg and "(Conv)" in msg and "even one output row" in msg
