"""ONNX import: models built in code with onnx.helper (nothing downloaded), checked against
onnxruntime bit for bit (QDQ int8) or within the stated tolerance (float), and every bad
input of issue 21 as a one-line error naming file, node and attribute."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper as nh

from cosim.onnx import OnnxImportError, builders
from cosim.onnx.deploy import FLOAT_TOL, deploy_file, deploy_qnet
from cosim.onnx.fold import fold_batchnorm
from cosim.onnx.graph import translate
from cosim.onnx.load import load_model
from cosim.onnx.ort import run_ort
from cosim.onnx.reference import forward, input_values
from cosim.onnx.requant import add_requant, conv_requant


def _save(tmp_path, model, name="m.onnx"):
    p = tmp_path / name
    onnx.save(model, str(p))
    return str(p)


def _import(tmp_path, model):
    p = _save(tmp_path, model)
    m = load_model(p)
    return m, translate(m, p)


@pytest.mark.parametrize("make", [builders.resnet20, builders.mobilenet, builders.tiny])
def test_qdq_models_match_onnxruntime_bit_for_bit(tmp_path, make):
    model, net = _import(tmp_path, make(5))
    x = input_values(net, 11)
    ours, ref = forward(net, x), run_ort(model, net, x)
    assert len(net.ops) >= 8
    for op in net.ops:                       # every quantised tensor, not only the logits
        np.testing.assert_array_equal(ours[op.output], ref[op.output], err_msg=op.name)
    # proven for any input, except ResNet-20's classifier: its input scale carries the 8x8
    # pooling's odd factor 63, so onnxruntime's worst-case float32 sums exceed 24 bits
    unproven = [op.note for op in net.ops if not op.exact]
    assert unproven == (["fc"] if make is builders.resnet20 else [])
    out = ours[net.output].reshape(-1)
    assert len(set(out.tolist())) > 3        # not a saturated constant


def test_resnet20_structure_and_placement(tmp_path):
    model, net = _import(tmp_path, builders.resnet20(0))
    kinds = [op.note or op.kind for op in net.ops]
    assert kinds.count("conv") == 19 + 2 and kinds.count("add") == 9     # 2 strided 1x1 shortcuts
    assert kinds[-2:] == ["pool", "fc"]
    assert set(net.placement) == {n.name for n in model.graph.node}     # every node accounted for


def test_depthwise_is_block_diagonal(tmp_path):
    _, net = _import(tmp_path, builders.mobilenet(1))
    dw = [op for op in net.ops if op.groups > 1 and op.note == "conv"]
    assert len(dw) == 3
    for op in dw:
        w = op.weights
        off = w.copy()
        off[np.arange(w.shape[0]), :, :, np.arange(w.shape[0])] = 0
        assert not off.any() and w[np.arange(w.shape[0]), :, :, np.arange(w.shape[0])].any()


@pytest.mark.parametrize("make", [builders.resnet20_float, builders.mobilenet_float])
def test_float_models_within_tolerance_and_their_qdq_form_bit_exact(tmp_path, make):
    p = _save(tmp_path, make(2))
    dep = deploy_file(p, seed=4)
    # the quantised model: our integers equal onnxruntime's on every tensor
    for name, (addr, want) in dep.onnx["goldens"].items():
        assert dep.goldens[name] == (addr, want), name
    f = dep.onnx["float"]
    got = np.frombuffer(f and dep.goldens[list(dep.onnx["goldens"])[-1]][1], np.int8).astype(float)
    y, ref = (got - f["zp"]) * f["scale"], np.asarray(f["reference"])
    err = np.abs(y - ref).max() / np.abs(ref).max()
    assert err <= FLOAT_TOL, err
    assert np.corrcoef(y, ref)[0, 1] > 0.9


def test_batchnorm_folding_keeps_the_float_output(tmp_path):
    import onnxruntime as ort
    m = builders.resnet20_float(3, hw=8)
    folded = fold_batchnorm(m, "m.onnx")
    assert not any(n.op_type == "BatchNormalization" for n in folded.graph.node)
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    run = lambda mm: ort.InferenceSession(mm.SerializeToString(), providers=["CPUExecutionProvider"]).run(  # noqa: E731
        None, {"input": x})[0]
    np.testing.assert_allclose(run(folded), run(m), rtol=1e-4, atol=1e-4)


def test_qlinear_ops_with_zero_points_and_padding(tmp_path):
    """QuantizeLinear -> QLinearConv (uint8 input, zero point 128, pads 1) -> Flatten ->
    QLinearMatMul -> DequantizeLinear; conv M = 1 (no rounding), matmul M = 1/15 (no ties)."""
    rng = np.random.default_rng(3)
    c, k, h = 2, 3, 4
    w = rng.integers(-2, 3, size=(k, c, 3, 3)).astype(np.int8)
    b = rng.integers(-20, 20, size=k).astype(np.int32)
    fw = rng.integers(-2, 3, size=(k * h * h, 5)).astype(np.int8)
    inits = [nh.from_array(np.array(0.5, np.float32), "xs"), nh.from_array(np.array(128, np.uint8), "xz"),
             nh.from_array(w, "w"), nh.from_array(np.array(0.25, np.float32), "ws"),
             nh.from_array(np.array(0, np.int8), "wz"), nh.from_array(np.array(0.125, np.float32), "ys"),
             nh.from_array(np.array(131, np.uint8), "yz"), nh.from_array(b, "b"), nh.from_array(fw, "fw"),
             nh.from_array(np.array(0.5, np.float32), "fs"), nh.from_array(np.array(0, np.int8), "fz"),
             nh.from_array(np.array(0.9375, np.float32), "os"), nh.from_array(np.array(127, np.uint8), "oz")]
    nodes = [helper.make_node("QuantizeLinear", ["input", "xs", "xz"], ["xq"], name="q_in"),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                              pads=[1, 1, 1, 1], name="qconv"),
             helper.make_node("Flatten", ["y"], ["yf"], name="flat"),
             helper.make_node("QLinearMatMul", ["yf", "ys", "yz", "fw", "fs", "fz", "os", "oz"], ["o"], name="qmm"),
             helper.make_node("DequantizeLinear", ["o", "os", "oz"], ["out"], name="dq_out")]
    g = helper.make_graph(nodes, "qlinear", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, h, h])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 5])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    model, net = _import(tmp_path, m)
    assert [op.note for op in net.ops] == ["conv", "fc"] and all(op.exact for op in net.ops)
    x = input_values(net, 2)
    x[0, 0] = -128                               # uint8 0 next to the padding
    ours, ref = forward(net, x), run_ort(model, net, x)
    for op in net.ops:
        np.testing.assert_array_equal(ours[op.output], ref[op.output], err_msg=op.name)
    assert len(set(ours[net.output].reshape(-1).tolist())) > 2


# ----- the integer requantisation, against exact rational arithmetic -------------------------
def _rne(v: Fraction) -> int:
    f = v.numerator // v.denominator
    r = v - f
    return f + (1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and f % 2) else 0)


@pytest.mark.parametrize("m,off", [(Fraction(1, 255), Fraction(7)), (Fraction(3, 1 << 10), Fraction(-5, 2)),
                                   (Fraction(1, 63), Fraction(0)), (Fraction(1, 1 << 6), Fraction(1, 2))])
def test_proven_requantisation_equals_round_half_even_everywhere(m, off):
    a = 70000
    rq = conv_requant([m], [off], -7, [a + 3])
    assert rq["proven"]
    acc = np.arange(-a, a + 1, dtype=np.int64)
    got = (acc * int(rq["scale"][0]) + int(rq["bias"][0])) >> rq["shift"]
    want = np.array([_rne((int(v) + off) * m) - 7 for v in acc[::97]])
    np.testing.assert_array_equal(got[::97], want)


def test_ties_are_not_claimed_exact():
    rq = conv_requant([Fraction(1, 4)], [Fraction(0)], 0, [1000])
    assert not rq["proven"]                      # 2 * 1/4 = 0.5: half-even gives 0, half-up 1
    assert (2 * int(rq["scale"][0]) + int(rq["bias"][0])) >> rq["shift"] != _rne(Fraction(2, 4))
    assert not add_requant(Fraction(1, 2), Fraction(1, 2), 0, 0, 0)["proven"]
    assert add_requant(Fraction(2, 3), Fraction(1, 3), 0, 0, 0)["proven"]


# ----- bad input: one line naming file, node and attribute -------------------------------------
def _one_line(e: Exception, *parts: str) -> str:
    msg = str(e)
    assert "\n" not in msg
    for p in parts:
        assert p in msg, (p, msg)
    return msg


def _conv_model(opset=17, dims=(1, 4, 8, 8), **conv_attrs):
    b = builders.QdqBuilder("bad", (4, 8, 8))
    b.conv(b.x, 8)
    m = b.build(list(b.shape)[-1])
    for n in m.graph.node:
        if n.op_type == "Conv":
            for k, v in conv_attrs.items():
                n.attribute.append(helper.make_attribute(k, v))
    m.opset_import[0].version = opset
    for i, dim in enumerate(m.graph.output[0].type.tensor_type.shape.dim):   # inferred: attributes change it
        dim.dim_param = f"o{i}"
    d = m.graph.input[0].type.tensor_type.shape.dim
    for i, v in enumerate(dims):
        if isinstance(v, str):
            d[i].dim_param = v
        else:
            d[i].dim_value = v
    return m


def test_not_onnx(tmp_path):
    p = tmp_path / "junk.onnx"
    p.write_bytes(b"\x00\xffnot a model at all" * 10)
    with pytest.raises(OnnxImportError) as e:
        load_model(p)
    _one_line(e.value, str(p), "not an ONNX model")


@pytest.mark.parametrize("opset", [9, 23])
def test_opset_outside_the_range(tmp_path, opset):
    p = _save(tmp_path, _conv_model(opset=opset))
    with pytest.raises(OnnxImportError) as e:
        load_model(p)
    _one_line(e.value, p, f"opset {opset}", "13..21", "opset_import")


def test_dynamic_shape_needs_a_given_shape(tmp_path):
    p = _save(tmp_path, _conv_model(dims=("N", 4, "H", 8)))
    with pytest.raises(OnnxImportError) as e:
        load_model(p)
    _one_line(e.value, p, "'input'", "dynamic shape", "'N'", "input_shape")
    m = load_model(p, input_shape=[1, 4, 8, 8])         # with the shape given, it imports
    assert translate(m, p).tensors[translate(m, p).input].shape == (8, 8, 4)


def test_unsupported_attribute_names_node_and_attribute(tmp_path):
    p = _save(tmp_path, _conv_model(dilations=[2, 2]))
    with pytest.raises(OnnxImportError) as e:
        translate(load_model(p), p)
    _one_line(e.value, p, "node 'Conv", "(Conv)", "attribute 'dilations'", "1 only")


def test_unsupported_op_names_the_nearest_alternative(tmp_path):
    m = _conv_model()
    for n in m.graph.node:
        if n.op_type == "Relu":
            n.op_type = "Sigmoid"
    p = _save(tmp_path, m)
    with pytest.raises(OnnxImportError) as e:
        translate(load_model(p), p)
    _one_line(e.value, p, "(Sigmoid)", "nearest supported: Relu")


def test_leaky_relu_names_alpha_and_relu(tmp_path):
    m = _conv_model()
    for n in m.graph.node:
        if n.op_type == "Relu":
            n.op_type = "LeakyRelu"
            n.attribute.append(helper.make_attribute("alpha", 0.1))
    p = _save(tmp_path, m)
    with pytest.raises(OnnxImportError) as e:
        translate(load_model(p), p)
    # straight after the Conv (no QuantizeLinear between): one multiplier per channel cannot do it
    _one_line(e.value, "(LeakyRelu)", "attribute 'alpha'", "unquantised", "or use Relu")


def test_maxpool_imports_and_deploys(tmp_path):
    b = builders.QdqBuilder("mp", (4, 8, 8))
    m = b.build(b.gemm(b.flatten(b.maxpool(b.conv(b.x, 8))), 4))
    model, net = _import(tmp_path, m)
    x = input_values(net, 0)
    ref = run_ort(model, net, x)
    dep = deploy_qnet(net, x, ref)
    assert [op.kind for op in net.ops].count("maxpool") == 1
    for name, (addr, want) in dep.onnx["goldens"].items():              # every tensor, the pool's too
        assert dep.goldens[name] == (addr, want), name


def test_asymmetric_weights_are_refused(tmp_path):
    m = _conv_model()
    for i in m.graph.initializer:
        if i.name.startswith("w_z"):
            i.CopyFrom(nh.from_array(np.full(nh.to_array(i).shape, 3, np.int8), i.name))
    p = _save(tmp_path, m)
    with pytest.raises(OnnxImportError) as e:
        translate(load_model(p), p)
    _one_line(e.value, "(Conv)", "w_zero_point", "symmetrically")


def test_a_model_quantised_by_onnxruntime_imports_and_is_close(tmp_path):
    """quantize_static writes float32 scales and a float32-rounded bias scale: the import
    takes it (nearest half-unit bias), marks it not proven, and onnxruntime's own float32
    rounding makes rare one-step differences (docs/onnx.md)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input": np.random.default_rng(i).standard_normal((1, 3, 16, 16)).astype(np.float32)}
                            for i in range(4)])

        def get_next(self):
            return next(self.it, None)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(fold_batchnorm(builders.mobilenet_float(0), "f.onnx"), str(src))
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    model = load_model(dst)
    net = translate(model, str(dst))
    assert [op.note for op in net.ops][:2] == ["conv", "conv"] and not any(op.exact for op in net.ops)
    x = input_values(net, 9)
    ours, ref = forward(net, x), run_ort(model, net, x)
    first = net.ops[0].output
    diff = np.abs(ours[first] - ref[first])
    assert diff.max() <= 1 and diff.mean() < 0.01
    out = net.output
    assert np.corrcoef(ours[out].reshape(-1), ref[out].reshape(-1))[0, 1] > 0.95


def test_channel_mismatch_and_zero_scale_are_named(tmp_path):
    m = _conv_model(dims=(1, 3, 8, 8))          # the weights expect 4 input channels
    p = _save(tmp_path, m)
    with pytest.raises(OnnxImportError) as e:
        translate(load_model(p), p)
    _one_line(e.value, "(Conv)", "3 input channels", "attribute 'group'")
    m = _conv_model()
    for i in m.graph.initializer:
        if i.name.startswith("a_s"):
            i.CopyFrom(nh.from_array(np.array(0.0, np.float32), i.name))
    p = _save(tmp_path, m, "z.onnx")
    with pytest.raises(OnnxImportError) as e:
        translate(load_model(p), p)
    _one_line(e.value, "(QuantizeLinear)", "positive and finite", "attribute 'y_scale'")
