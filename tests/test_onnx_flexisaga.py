"""ONNX models on a platform with a FlexiSAGA block (cosim/deploy/flexisaga_onnx.py,
docs/onnx.md "On FlexiSAGA"): Conv (im2col) and Gemm/MatMul are array jobs programmed
through the job registers, the rest the host fallback; every job's accumulator equals numpy's
``W @ I`` and the accumulator of onnxruntime's own input tensor, bit for bit, in the PEs'
integer and fp32 modes; the report places every ONNX node; an op nothing can run is a
located error naming node, op type and the nearest supported op."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim.onnx import builders

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = """name: onnx_flexisaga_test
seed: {seed}
platform:
  file: fs.yaml
workload:
  network:
    onnx: model.onnx
checks:
  - no_tlm_errors: true
"""


def _run(tmp_path: Path, model, pe_dtype: str = "int", seed: int = 1) -> dict:
    import onnx

    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    onnx.save(model, str(tmp_path / "model.onnx"))
    plat = (ROOT / "scenarios/platforms/flexisaga_onnx.yaml").read_text()
    (tmp_path / "fs.yaml").write_text(plat.replace("pe_dtype: int", f"pe_dtype: {pe_dtype}"))
    (tmp_path / "sc.yaml").write_text(SCENARIO.format(seed=seed))
    rep = run_scenario(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out", plots=False)
    return {**rep.as_dict(), "stats": rep.stats}


MODELS = {"mobilenet": lambda: builders.mobilenet(0),
          "resnet_small": lambda: builders.resnet20(0, hw=8, width=8),
          "mobilenet_float": lambda: builders.mobilenet_float(0),
          "resnet_small_float": lambda: builders.resnet20_float(0, hw=8, width=8)}


@pytest.mark.parametrize("name,pe", [("mobilenet", "int"), ("resnet_small", "fp32"),
                                     ("mobilenet_float", "fp32"), ("resnet_small_float", "int")])
def test_builder_models_match_onnxruntime_bit_for_bit(tmp_path: Path, name: str, pe: str) -> None:
    model = MODELS[name]()
    d = _run(tmp_path, model, pe)
    assert d["status"] == "passed", d["checks"]
    res = {c["name"]: c for c in d["checks"]}
    assert res["network == numpy reference"]["passed"] and res["network == onnxruntime (bit for bit)"]["passed"]
    layers = d["extra"]["layers"]
    on = [row[-1] for row in layers["table"]["rows"]]
    n_conv = sum(1 for nd in model.graph.node if nd.op_type in ("Conv", "Gemm", "MatMul"))
    assert on.count("flexisaga") == n_conv                   # every Conv/Gemm one array job
    assert d["stats"]["soc.flexisaga"]["jobs"] == n_conv
    rows = {r[0]: r for r in layers["placement"]["rows"]}
    assert {nd.name for nd in model.graph.node} <= set(rows)
    for nd in model.graph.node:
        where = rows[nd.name][3]
        if nd.op_type in ("Conv", "Gemm"):
            assert where.startswith("FlexiSAGA array"), (nd.name, where)
        if nd.op_type in ("Add", "GlobalAveragePool"):
            assert where.startswith("host fallback"), (nd.name, where)
        groups = next((a.i for a in nd.attribute if a.name == "group"), 1)
        if nd.op_type == "Conv" and groups > 1:     # block-diagonal weights: a sparse dataflow wins
            assert "(sOS " in where or "(csOS " in where or "(sWS " in where or "(sIS " in where, where


def test_job_output_is_w_times_im2col_of_the_input(tmp_path: Path) -> None:
    """The first job's golden against a direct numpy convolution of the seeded input (an
    independent formula: sum over taps of shifted input times weights)."""
    import onnx

    from cosim.onnx.deploy import prepare
    onnx.save(builders.mobilenet(0), str(tmp_path / "m.onnx"))
    _, net, x, _ = prepare(str(tmp_path / "m.onnx"), 1)
    op = net.ops[0]
    xt = net.tensors[net.input]
    from cosim.deploy.flexisaga_onnx import im2col
    cout, kh, kw, cin = op.weights.shape
    got = op.weights.reshape(cout, -1) @ im2col(x - xt.zp, kh, kw, op.stride, op.pad)
    xp = np.pad(x - xt.zp, ((op.pad,) * 2, (op.pad,) * 2, (0, 0)))
    ho, wo = net.tensors[op.output].shape[:2]
    want = np.zeros((ho, wo, cout), np.int64)
    for dy in range(kh):
        for dx in range(kw):
            win = xp[dy:dy + op.stride * ho:op.stride, dx:dx + op.stride * wo:op.stride]
            want += np.einsum("hwc,kc->hwk", win, op.weights[:, dy, dx, :])
    assert np.array_equal(got, want.reshape(-1, cout).T)


def test_concat_and_pool_fall_back_to_the_host(tmp_path: Path) -> None:
    d = _run(tmp_path, builders.tiny(0))
    assert d["status"] == "passed", d["checks"]
    rows = d["extra"]["layers"]["placement"]["rows"]
    concat = [r for r in rows if r[1] == "Concat"]
    assert concat and all(r[3].startswith("host fallback") for r in concat)


def test_unsupported_op_is_a_located_error(tmp_path: Path) -> None:
    from onnx import helper

    from cosim.runner import build
    from cosim.scenario import ScenarioError, load_scenario
    import onnx
    m = builders.mobilenet(0)
    out = m.graph.output[0].name
    m.graph.node.append(helper.make_node("Softmax", [out], ["probs"], name="soft"))
    m.graph.output[0].name = "probs"
    onnx.save(m, str(tmp_path / "model.onnx"))
    (tmp_path / "fs.yaml").write_text((ROOT / "scenarios/platforms/flexisaga_onnx.yaml").read_text())
    (tmp_path / "sc.yaml").write_text(SCENARIO.format(seed=1))
    with pytest.raises(ScenarioError, match=r"sc\.yaml:7.*node 'soft' \(Softmax\).*(nearest|logits)"):
        build(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out")
