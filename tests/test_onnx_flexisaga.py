"""ONNX models on a platform with a FlexiSAGA block (cosim/deploy/pipeline.py with accelerators/flexisaga/unit.py,
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
    from cosim.deploy.pipeline import im2col
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


def test_pruned_model_runs_bit_for_bit_against_onnxruntime_on_the_pruned_model(tmp_path: Path) -> None:
    """``prune: 0.5``: FlexiSAGA's structured pruning zeroes half of the weight vectors
    first (checked here on the pruned model's own weights); onnxruntime runs that model; the
    sparse dataflows then skip the zeros: fewer MACs than the unpruned run."""
    import onnx
    from onnx import numpy_helper

    from accelerators.flexisaga.unit import prune_model
    model = builders.mobilenet(0)
    pm, per_node = prune_model(model, 0.5, 8)
    ws = [numpy_helper.to_array(i) for i in pm.graph.initializer if i.data_type == onnx.TensorProto.INT8
          and len(i.dims) in (2, 4) and np.prod(i.dims) > 8]
    # count the all-zero column pieces of 8 rows (the array's tile height) independently
    dead = total = 0
    for w in ws:
        mat = w.reshape(w.shape[0], -1)
        for m0 in range(0, mat.shape[0], 8):
            seg = mat[m0:m0 + 8]
            dead += int(np.count_nonzero(~seg.any(axis=0)))
            total += seg.shape[1]
    assert dead >= int(0.5 * total)
    assert set(per_node) == {n.name for n in model.graph.node if n.op_type in ("Conv", "Gemm")}
    (tmp_path / "a").mkdir()
    dense = _run(tmp_path / "a", model)
    sc = SCENARIO.replace("onnx: model.onnx", "onnx: model.onnx\n    prune: 0.5")
    (tmp_path / "b").mkdir()
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    onnx.save(model, str(tmp_path / "b" / "model.onnx"))
    (tmp_path / "b" / "fs.yaml").write_text((ROOT / "scenarios/platforms/flexisaga_onnx.yaml").read_text())
    (tmp_path / "b" / "sc.yaml").write_text(sc.format(seed=1))
    rep = run_scenario(load_scenario(tmp_path / "b" / "sc.yaml"), out_dir=tmp_path / "b" / "out", plots=False)
    d = rep.as_dict()
    assert d["status"] == "passed", d["checks"]
    assert {c["name"] for c in d["checks"]} >= {"network == onnxruntime (bit for bit)", "network == numpy reference"}
    assert rep.stats["soc.flexisaga"]["ops"] < dense["stats"]["soc.flexisaga"]["ops"]


def test_prune_elsewhere_is_a_located_error(tmp_path: Path) -> None:
    import onnx

    from cosim.runner import build
    from cosim.scenario import ScenarioError, load_scenario
    onnx.save(builders.mobilenet(0), str(tmp_path / "model.onnx"))
    (tmp_path / "sc.yaml").write_text("name: p\nseed: 1\nplatform: voyager\nworkload:\n  network:\n"
                                      "    onnx: model.onnx\n    prune: 0.5\n")
    with pytest.raises(ScenarioError, match=r"sc\.yaml:7.*prune applies to the units deployment"):
        build(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out")
