"""MaxPool and LeakyRelu of imported models on the cluster cores: the kernels' integer
arithmetic against exact rationals and against onnxruntime on every int8 value, and a
Darknet-style model (LeakyRelu 0.1 and 0.125, padded 3x3 stride-2 max pooling) simulated on
MARSELLUS, bit for bit against onnxruntime."""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from components.cluster import ops
from cosim.onnx import builders
from cosim.onnx.ir import QTensor
from cosim.onnx.requant import leaky_onnx, leaky_requant

ROOT = Path(__file__).resolve().parents[1]


def test_leaky_kernel_rounds_half_to_even_exactly():
    rng = np.random.default_rng(0)
    for _ in range(30):
        zp, zo = (int(v) for v in rng.integers(-128, 128, 2))
        mp, mn = (int(v) for v in rng.integers(0, 1 << 16, 2))
        s = int(rng.integers(0, 32))
        x = np.arange(-128, 128)
        got = ops.leaky_requant(x, zp, mp, mn, s, zo)
        for xi, g in zip(x[::7], got[::7]):
            d = int(xi) - zp
            v = Fraction(d * (mp if d >= 0 else mn), 1 << s)
            q = round(v)                  # Python's round on a Fraction: half to even
            assert g == max(-128, min(127, q + zo)), (xi, zp, mp, mn, s, zo)


def _ort_leaky(sx: float, zx: int, sy: float, zy: int, alpha: float) -> np.ndarray:
    """onnxruntime's DequantizeLinear -> LeakyRelu -> QuantizeLinear on all 256 int8 values."""
    import onnxruntime as ort
    inits = [onnx.numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in
             (("sx", sx, np.float32), ("zx", zx, np.int8), ("sy", sy, np.float32), ("zy", zy, np.int8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["d"]),
             helper.make_node("LeakyRelu", ["d"], ["l"], alpha=alpha),
             helper.make_node("QuantizeLinear", ["l", "sy", "zy"], ["y"])]
    g = helper.make_graph(nodes, "leaky", [helper.make_tensor_value_info("x", TensorProto.INT8, [256])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, [256])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": np.arange(-128, 128).astype(np.int8)})[0].astype(np.int64)


@pytest.mark.parametrize("sx,zx,sy,zy,alpha,kernel", [
    (2.0 ** -4, 0, 2.0 ** -4, 0, 0.125, "leaky_int8"),       # dyadic slope: a fixed-point multiplier
    (2.0 ** -3, -7, 2.0 ** -5, 3, 0.0625, "leaky_int8"),
    (2.0 ** -4, 0, 2.0 ** -4, 0, 0.1, "lut_int8"),           # 0.1 * 5 rounds to a float32 tie
    (0.05, 10, 0.03, -4, 0.2, None),                          # whichever reproduces onnxruntime
])
def test_leaky_mapping_equals_onnxruntime_on_every_int8_value(sx, zx, sy, zy, alpha, kernel):
    want = _ort_leaky(sx, zx, sy, zy, alpha)
    x, y = QTensor("x", "x", (1, 1, 256), sx, zx), QTensor("y", "y", (1, 1, 256), sy, zy)
    np.testing.assert_array_equal(leaky_onnx(x, y, float(np.float32(alpha))), want)
    rq = leaky_requant(x, y, float(np.float32(alpha)))
    assert kernel is None or rq["kernel"] == kernel
    xs = np.arange(-128, 128)
    got = ops.leaky_requant(xs, **rq["args"]) if "args" in rq else ops.lut(xs, rq["table"])
    np.testing.assert_array_equal(got, want)


def test_maxpool_pads_with_the_int8_minimum():
    x = np.array([[[-128], [-100]], [[-90], [-128]]])
    np.testing.assert_array_equal(ops.maxpool(x, 3, 2, 1)[..., 0], [[-90]])
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (5, 6, 3))
    got = ops.maxpool(x, 3, 2, 1)
    for i in range(got.shape[0]):
        for j in range(got.shape[1]):
            win = x[max(0, 2 * i - 1):2 * i + 2, max(0, 2 * j - 1):2 * j + 2]
            np.testing.assert_array_equal(got[i, j], win.max(axis=(0, 1)))


def test_darknet_style_model_runs_on_the_cores_bit_for_bit(tmp_path):
    onnx.save(builders.darknet(0), str(tmp_path / "dk.onnx"))
    sc = tmp_path / "dk.yaml"
    sc.write_text("name: dk\nseed: 2\nplatform: {preset: marsellus}\nworkload:\n  network: {onnx: dk.onnx}\n")
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", str(sc), "--out", str(tmp_path / "o"),
                        "--quiet", "--no-plots"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    res = {c["name"]: c for c in rep["checks"]}
    assert res["network == onnxruntime (bit for bit)"]["detail"] == "10 tensors identical"
    rows = {row[0]: row for row in rep["extra"]["layers"]["placement"]["rows"]}
    leaky = [rows[n][3] for n in rows if rows[n][1] == "LeakyRelu"]
    assert [w.split(")")[0] for w in leaky] == ["cluster cores (lut_int8", "cluster cores (lut_int8",
                                                 "cluster cores (leaky_int8"]
    pools = [rows[n][3] for n in rows if rows[n][1] == "MaxPool"]
    assert len(pools) == 2 and all("maxpool_int8" in w for w in pools)
    runs = {r[0]: r[-1] for r in rep["extra"]["layers"]["table"]["rows"]}
    assert sum(v == "cores" for v in runs.values()) >= 7
