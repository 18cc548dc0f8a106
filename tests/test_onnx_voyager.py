"""ONNX models on the ``voyager`` platform (cosim/voyager/onnx.py, docs/onnx.md "On Voyager"):
every op a Voyager int8 job programmed through the registers; the simulated tensors equal
the accelerator model's reference bit for bit; against onnxruntime, bit for bit for a model
in the exact form (signed int8, zero points 0, power-of-two scales, integer biases, bf16-exact
accumulators) and within the stated tolerance otherwise; every ONNX node is placed in the
report; an op Voyager cannot run is a located error naming node, op type and the nearest
supported op."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim.onnx import builders

SCENARIO = """name: onnx_voyager_test
seed: {seed}
platform: voyager
workload:
  network:
    onnx: model.onnx
checks:
  - no_tlm_errors: true
"""


def _run(tmp_path: Path, model, seed: int = 1) -> dict:
    import onnx

    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    onnx.save(model, str(tmp_path / "model.onnx"))
    (tmp_path / "sc.yaml").write_text(SCENARIO.format(seed=seed))
    rep = run_scenario(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out", plots=False)
    return {**rep.as_dict(), "stats": rep.stats}


def exact_model(w_even: bool = True, y_scale: float = 1.0):
    """int8 input -> 1x1 conv (+ReLU) -> 1x1 conv -> Add of the two -> output, all signed
    int8 with zero point 0 and power-of-two scales, integer biases, weights in [-2, 2]: with
    ``w_even`` every accumulator is an even number below 2^9 (a bf16 value)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def qdq(x, scale, base):
        s, z = const(base + "_s", np.array(scale, np.float32)), const(base + "_z", np.array(0, np.int8))
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [base + "_q"], name="Q_" + base))
        nodes.append(helper.make_node("DequantizeLinear", [base + "_q", s, z], [base + "_dq"], name="DQ_" + base))
        return base + "_dq"

    def conv(x, cin, cout, sx, name, relu):
        w = rng.choice([-2, 0, 2] if w_even else [-2, -1, 0, 1, 2], size=(cout, cin, 1, 1)).astype(np.int8)
        sw = np.full(cout, 0.25, np.float32)
        b = (rng.integers(-3, 4, size=cout) * 2).astype(np.int32)
        wd, bd = name + "_w", name + "_b"
        nodes.append(helper.make_node("DequantizeLinear", [const(name + "_wq", w), const(name + "_ws", sw),
                                                           const(name + "_wz", np.zeros(cout, np.int8))],
                                      [wd], axis=0, name="DQ_" + name + "_w"))
        nodes.append(helper.make_node("DequantizeLinear", [const(name + "_bq", b), const(name + "_bs", sw * sx),
                                                           const(name + "_bz", np.zeros(cout, np.int32))],
                                      [bd], axis=0, name="DQ_" + name + "_b"))
        nodes.append(helper.make_node("Conv", [x, wd, bd], [name + "_y"], name=name))
        y = name + "_y"
        if relu:
            nodes.append(helper.make_node("Relu", [y], [name + "_r"], name=name + "_relu"))
            y = name + "_r"
        return y

    x = qdq("input", 0.5, "in")
    a = qdq(conv(x, 2, 4, 0.5, "conv1", True), 0.5, "a")
    b = qdq(conv(a, 4, 4, 0.5, "conv2", False), 0.5, "b")
    nodes.append(helper.make_node("Add", [a, b], ["sum"], name="add"))
    y = qdq("sum", y_scale, "y")
    g = helper.make_graph(nodes, "exact", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 2, 4, 4])],
                          [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 4, 4, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_exact_form_model_matches_onnxruntime_bit_for_bit(tmp_path: Path) -> None:
    d = _run(tmp_path, exact_model())
    res = {c["name"]: c for c in d["checks"]}
    assert d["status"] == "passed", d["checks"]
    assert res["network == onnxruntime (bit for bit)"]["passed"]
    assert res["network == numpy reference"]["passed"]
    info = d["extra"]["layers"]
    rows = {r[0]: r for r in info["placement"]["rows"]}
    assert {"conv1", "conv2", "add", "conv1_relu", "Q_y"} <= set(rows)
    assert "Voyager matrix unit" in rows["conv1"][3] and "residual-add" in rows["add"][3]
    assert "fused into" in rows["conv1_relu"][3]


def test_exactness_is_decided_on_the_data(tmp_path: Path) -> None:
    """Odd weights make odd accumulators above 256 that bf16 cannot hold: the plan says
    not exact (checked here with ml_dtypes on conv1's accumulators), and the run compares
    with onnxruntime within the tolerance instead of bit for bit."""
    import ml_dtypes
    import onnx

    from components.voyager.config import VoyagerParams
    from cosim.onnx.deploy import prepare
    from cosim.voyager.onnx import plan
    onnx.save(exact_model(w_even=False), str(tmp_path / "odd.onnx"))
    _, net, x, _ = prepare(str(tmp_path / "odd.onnx"), 1)
    pl = plan(net, x, VoyagerParams(), 0x80000000, 1 << 24)
    op, job, exact = pl.jobs[0]
    bias = np.frombuffer(dict(pl.loads)[job.bias_addr], "<i4")
    acc = np.einsum("hwc,kc->hwk", x.astype(np.int64), op.weights[:, 0, 0, :]) + bias
    held = acc.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64) == acc
    assert not held.all() and exact is False
    d = _run(tmp_path, exact_model(w_even=False))
    names = [c["name"] for c in d["checks"]]
    assert not any("bit for bit" in n for n in names) and any("onnxruntime float" in n for n in names)
    assert d["status"] == "passed", d["checks"]


@pytest.mark.parametrize("name", ["mobilenet", "resnet_small", "mobilenet_float", "resnet_small_float"])
def test_builder_models_run_within_tolerance(tmp_path: Path, name: str) -> None:
    from cosim.voyager.onnx import TOLERANCE
    model = {"mobilenet": lambda: builders.mobilenet(0),
             "resnet_small": lambda: builders.resnet20(0, hw=8, width=8),
             "mobilenet_float": lambda: builders.mobilenet_float(0),
             "resnet_small_float": lambda: builders.resnet20_float(0, hw=8, width=8)}[name]()
    d = _run(tmp_path, model)
    assert d["status"] == "passed", d["checks"]
    res = {c["name"]: c for c in d["checks"]}
    assert res["network == numpy reference"]["passed"]
    tol = next(c for n, c in res.items() if "onnxruntime float" in n)
    assert tol["passed"] and f"{TOLERANCE:.0%}" in tol["name"]
    layers = d["extra"]["layers"]
    runs_on = {row[-1] for row in layers["table"]["rows"]}
    assert runs_on == {"voyager"}
    # every ONNX node of the model is in the placement (a float model's too: its nodes stay
    # in the QDQ model quantize.py writes, BatchNormalization as folded)
    placed = {r[0] for r in layers["placement"]["rows"]}
    assert {n.name for n in model.graph.node} <= placed
    st = d["stats"]["soc.voyager"]
    assert st["jobs"] == len(layers["table"]["rows"])


def test_reference_matches_an_independent_numpy_conv(tmp_path: Path) -> None:
    """The first job of the plan against a plain numpy evaluation of Voyager's int8 path
    (int32 accumulate, bf16 dequantise, ReLU, bf16 quantise) — not the model's own code."""
    import ml_dtypes
    import onnx

    from components.voyager.config import VoyagerParams
    from cosim.onnx.deploy import prepare
    from cosim.voyager.onnx import plan
    onnx.save(builders.mobilenet(0), str(tmp_path / "m.onnx"))
    _, net, x, _ = prepare(str(tmp_path / "m.onnx"), 2)
    pl = plan(net, x, VoyagerParams(), 0x80000000, 1 << 24)
    op, job, _ = pl.jobs[0]
    bf = lambda v: np.asarray(v, np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)  # noqa: E731
    xin = np.pad(pl.values[net.input], ((job.pad,) * 2, (job.pad,) * 2, (0, 0)))
    w = op.weights                                                # (Cout, KH, KW, Cin)
    ho, wo = pl.values[op.output].shape[:2]
    acc = np.zeros((ho, wo, w.shape[0]), np.int64)
    for dy in range(w.shape[1]):
        for dx in range(w.shape[2]):
            win = xin[dy:dy + job.stride * ho:job.stride, dx:dx + job.stride * wo:job.stride]
            acc += np.einsum("hwc,kc->hwk", win, w[:, dy, dx, :])
    bias = np.frombuffer(dict(pl.loads)[job.bias_addr], "<i4")          # what the plan loaded
    scales = np.frombuffer(dict(pl.loads)[job.scale_addr], "<u2").view(ml_dtypes.bfloat16)
    y = bf(bf(acc + bias) * scales.astype(np.float64))
    y = np.maximum(y, 0) if job.relu else y
    q = np.clip(np.rint(bf(y * bf(1.0 / job.out_scale))), -128, 127)
    assert np.array_equal(q, pl.values[op.output])


def test_unsupported_op_is_a_located_error_naming_node_and_alternative(tmp_path: Path) -> None:
    import onnx

    from cosim.runner import build
    from cosim.scenario import ScenarioError, load_scenario
    onnx.save(builders.tiny(0), str(tmp_path / "model.onnx"))       # has a Concat
    (tmp_path / "sc.yaml").write_text(SCENARIO.format(seed=1))
    with pytest.raises(ScenarioError, match=r"sc\.yaml:6.*node '[^']+' \(Concat\).*nearest supported: Add"):
        build(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out")


def test_the_library_model_regenerates_byte_for_byte() -> None:
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, str(root / "scenarios/data/onnx_mobilenet_make.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


BF16_SCENARIO = SCENARIO.replace("platform: voyager", """platform:
  preset: voyager
  overrides:
    soc.voyager.dtype: bf16""")


def test_float_model_through_bf16_jobs(tmp_path: Path) -> None:
    """soc.voyager.dtype=bf16: a float model (BatchNormalization folded) runs as bf16 jobs
    (convs with the residual Add and ReLU fused, pooling on the vector unit, the classifier
    GEMM); output against onnxruntime's float output within the bf16 tolerance."""
    import onnx

    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    from cosim.voyager.onnx_bf16 import TOLERANCE
    model = builders.resnet20_float(0, hw=8, width=8)
    onnx.save(model, str(tmp_path / "model.onnx"))
    (tmp_path / "sc.yaml").write_text(BF16_SCENARIO.format(seed=2))
    rep = run_scenario(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out", plots=False)
    d = rep.as_dict()
    assert d["status"] == "passed", d["checks"]
    res = {c["name"]: c for c in d["checks"]}
    assert res["network == numpy reference"]["passed"]
    assert f"network ~ onnxruntime float (max error <= {TOLERANCE:.0%} of max |y|)" in res
    rows = {r[0]: r for r in d["extra"]["layers"]["placement"]["rows"]}
    convs = [n.name for n in model.graph.node if n.op_type == "Conv"]
    adds = [n.name for n in model.graph.node if n.op_type == "Add"]
    assert all("bf16 conv job" in rows[n][3] for n in convs)
    assert all(rows[n][3].startswith("fused into") for n in adds)       # the residual post-op
    assert rep.stats["soc.voyager"]["jobs"] == len(convs) + 2           # + pooling + classifier


def test_bf16_path_clip_is_a_located_error(tmp_path: Path) -> None:
    import onnx

    from cosim.runner import build
    from cosim.scenario import ScenarioError, load_scenario
    onnx.save(builders.mobilenet_float(0), str(tmp_path / "model.onnx"))     # ReLU6 = Clip
    (tmp_path / "sc.yaml").write_text(BF16_SCENARIO.format(seed=1))
    with pytest.raises(ScenarioError, match=r"sc\.yaml:9.*\(Clip\).*nearest supported: Relu"):
        build(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out")


def test_quantised_graph_output_is_dequantised_for_the_tolerance_check(tmp_path: Path) -> None:
    """A QDQ graph that ends at its QuantizeLinear (an int8 output): onnxruntime's codes are
    dequantised before the comparison (else the check would compare codes with reals)."""
    from onnx import TensorProto, helper
    m = exact_model(w_even=False, y_scale=0.25)      # codes are 4x the real values
    assert m.graph.node[-1].op_type == "DequantizeLinear"
    q = m.graph.node[-1].input[0]
    del m.graph.node[-1]
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(q, TensorProto.INT8, [1, 4, 4, 4]))
    d = _run(tmp_path, m)
    tol = next(c for c in d["checks"] if "onnxruntime float" in c["name"])
    assert tol["passed"], tol
    err = float(tol["detail"].split("max error ")[1].split("%")[0])
    assert err < 10.0, tol        # a few codes of a 4x4x4 map: far below the bound
