"""Float ONNX models (built here with onnx.helper) onto the Tensil TCU: imported into our
network description with their own weights in FP16BP8, compiled, run on the ISA machine;
bit-exact against the numpy fixed-point reference and within a stated tolerance of
onnxruntime's float32 result; unmapped nodes are import errors naming the node."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.deploy.compiler import compile_network
from accelerators.tensil.deploy.onnx_float import import_float, ort_output, to_raw
from accelerators.tensil.deploy.reference import network as reference
from accelerators.tensil.deploy.run import read_var, run_program
from cosim.onnx import OnnxImportError

#: max |TCU - onnxruntime| on the model below, in steps of the data type (2^-frac):
#: measured at most 2.7 steps (FP16BP8; 3.3 with the BatchNormalization) and 3.2 (FP32B16)
#: over 10 inputs (rounded weights, input and every layer's output); the bound
TOLERANCE_STEPS = 8


def _model(tmp_path: Path, extra: list | None = None, bn: bool = False) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)

    def init(name: str, shape: tuple, scale: float) -> object:
        return numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name)

    inits = [init("w1", (8, 3, 3, 3), 0.3), init("b1", (8,), 0.05),
             init("w2", (8, 8, 3, 3), 0.15), init("b2", (8,), 0.05),
             init("w3", (16, 8, 1, 1), 0.3), init("b3", (16,), 0.05),
             init("wf", (10, 16), 0.25), init("bf", (10,), 0.05)]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2b" if bn else "c2", "r1"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="down", strides=[2, 2]),
             helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
             helper.make_node("GlobalAveragePool", ["r3"], ["p"], name="pool"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    if bn:   # batch statistics of conv2, folded into its weights on import
        inits += [numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "g"),
                  init("be", (8,), 0.1), init("mu", (8,), 0.1),
                  numpy_helper.from_array(rng.uniform(0.5, 2.0, 8).astype(np.float32), "var")]
        nodes.insert(3, helper.make_node("BatchNormalization", ["c2", "g", "be", "mu", "var"], ["c2b"],
                                         name="bn", epsilon=1e-5))
    nodes += extra or []
    out = "y" if not extra else extra[-1].output[0]
    g = helper.make_graph(nodes, "tiny_resnet",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "tiny.onnx"
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("arch,bn", [(TensilArch(), False),
                                     (TensilArch(array_size=4, local_depth=256, accumulator_depth=64), False),
                                     (TensilArch(data_type="FP32B16"), False), (TensilArch(), True)],
                         ids=["8x8", "4x4-small-memories", "fp32b16", "8x8-batchnorm"])
def test_float_model_on_the_tcu(tmp_path: Path, arch: TensilArch, bn: bool) -> None:
    imp = import_float(str(_model(tmp_path, bn=bn)), arch)
    assert [ly.type for ly in imp.net.layers] == ["conv3x3", "conv3x3", "add", "conv1x1",
                                                  "avgpool", "fc"]
    assert [ly.relu for ly in imp.net.layers[:4]] == [True, False, True, True]
    fmt = FixedFormat(arch.width, arch.frac)
    x = np.random.default_rng(3).uniform(0, 1, (1, 3, 8, 8))
    raw = to_raw(x, fmt)
    prog = compile_network(imp.net, arch, params=imp.params)
    m = run_program(prog, raw)
    last = imp.net.layers[-1].name
    got = read_var(m, prog.vars[last])
    want = reference(imp.net, imp.params, raw, arch.array_size, arch.width, arch.frac)[last]
    assert np.array_equal(got, want) and not m.hazards
    err = np.abs(got / (1 << arch.frac) - ort_output(imp, x)).max()
    assert err <= TOLERANCE_STEPS / (1 << arch.frac), err


def test_unmapped_node_names_it(tmp_path: Path) -> None:
    from onnx import helper
    extra = [helper.make_node("Softmax", ["y"], ["z"], name="soft")]
    with pytest.raises(OnnxImportError, match=r"tiny\.onnx: node 'soft' \(Softmax\): Softmax has no Tensil mapping"):
        import_float(str(_model(tmp_path, extra)), TensilArch())


SCENARIO = """\
name: tensil_onnx
seed: 5
platform: tensil
workload:
  network: {onnx: tiny.onnx}
checks:
  - no_tlm_errors: true
"""


def test_onnx_scenario_on_the_tensil_platform(tmp_path: Path) -> None:
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    _model(tmp_path)
    (tmp_path / "sc.yaml").write_text(SCENARIO)
    rep = run_scenario(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out", plots=False)
    d = rep.as_dict()
    assert d["status"] == "passed", d["error"]
    names = [c["name"] for c in d["checks"]]
    assert "network == numpy reference" in names and all(c["passed"] for c in d["checks"])
    st = rep.stats["soc.tcu"]
    assert st["jobs"] == 1 and st["instructions.MatMul"] > 0 and st["hazards"] == 0


def test_onnx_scenario_unmapped_node_is_a_located_error(tmp_path: Path) -> None:
    from onnx import helper

    from cosim.runner import build
    from cosim.scenario import ScenarioError, load_scenario
    _model(tmp_path, [helper.make_node("Softmax", ["y"], ["z"], name="soft")])
    (tmp_path / "sc.yaml").write_text(SCENARIO)
    with pytest.raises(ScenarioError, match=r"sc\.yaml:5.*node 'soft' \(Softmax\)"):
        build(load_scenario(tmp_path / "sc.yaml"), out_dir=tmp_path / "out")
