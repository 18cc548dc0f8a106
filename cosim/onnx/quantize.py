"""Quantise a float model into the QDQ form whose deployment is bit-exact (docs/onnx.md).

Ranges are calibrated by onnxruntime on the run's own float input. Every scale is a power
of two, except after an Add (three times a power of two: its input ratios then have the
odd denominator 3, which rules out rounding ties); weights are int8 per output channel,
biases odd multiples of half of input scale x weight scale (a half-unit breaks ties);
tensors after a Relu are uint8, others int8; the inputs of a Concat share one quantisation.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import OnnxImportError
from .fold import fold_batchnorm

QUANT_OPS = ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul")
_PASS = ("Flatten", "Reshape", "MaxPool", "Identity")


def is_float_model(model: Any) -> bool:
    return not any(n.op_type in QUANT_OPS for n in model.graph.node)


def _pow2(x: float, top: int) -> float:
    """The smallest power of two ``s`` with ``top * s >= x``."""
    return 2.0 ** math.ceil(math.log2(max(x, 1e-12) / top))


def _exp2(scale: float) -> int:
    """The exponent of a scale's power-of-two part (scales are 2^e or 3 * 2^e)."""
    m = scale / 3 if math.log2(scale / 3).is_integer() else scale
    return round(math.log2(m))


def _run_all(model: Any, x: np.ndarray, file: str = "") -> dict[str, np.ndarray]:
    import onnx
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(onnx.helper.make_empty_tensor_value_info(o))
                have.add(o)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3          # no warnings on stderr
    from .ort import _first
    try:
        sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, {sess.get_inputs()[0].name: x})))
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types (a C++ extension)
        raise OnnxImportError(file, f"onnxruntime cannot run the float model (calibration): {_first(e)}") from None


def quantize(model: Any, x: np.ndarray, file: str) -> Any:
    """The QDQ model of float ``model`` calibrated on float input ``x`` (NCHW)."""
    import onnx
    from onnx import helper, numpy_helper as nh

    from .graph import NEAREST, SUPPORTED
    for n in model.graph.node:        # before calibration: name an op we could not deploy anyway
        if n.op_type not in SUPPORTED:
            alt = NEAREST.get(n.op_type, "one of " + ", ".join(SUPPORTED[:14]))
            raise OnnxImportError(file, f"op {n.op_type} is not supported; nearest supported: {alt}",
                                  n.name or n.output[0], n.op_type)
    model = fold_batchnorm(model, file)
    g = model.graph
    vals = _run_all(model, x, file)
    inits = {i.name: nh.to_array(i) for i in g.initializer}
    gin = [i for i in g.input if i.name not in inits][0].name
    vals[gin] = x
    consumers: dict[str, list[Any]] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    # which tensors get a Q/DQ pair: the input and the output of every compute op (after its
    # activation, if one follows), and their quantisation
    q: dict[str, dict] = {}
    src_of: dict[str, str] = {}        # a pass-through op's output -> the tensor it views

    def plan(t: str, after_add: list | bool = False, scale_from: float | None = None, cap: float = math.inf) -> None:
        v = np.asarray(vals[t], np.float64)
        unsigned = bool(v.min() >= 0)
        top = 255 if unsigned else 127
        rng = float(np.abs(v).max())
        if scale_from is not None:
            s = scale_from
        elif after_add is not False:
            # 3 * 2^e with 2^e at most each input's power-of-two part: each input's ratio then
            # is an integer or has the odd denominator 3, so no rounding tie can occur
            e = min([math.ceil(math.log2(max(rng, 1e-12) / (3 * top)))] + [_exp2(q[i]["scale"]) for i in after_add])
            s = 3 * 2.0 ** e
        else:
            s = _pow2(rng, top)
        if s * top > cap:        # a Clip's maximum: the int8/uint8 saturation must do it
            s = 2.0 ** math.floor(math.log2(cap / top))
        q[t] = {"scale": s, "unsigned": unsigned}

    def clip_max(node: Any) -> float:
        if node.op_type != "Clip" or len(node.input) < 3 or not node.input[2]:
            return math.inf
        return float(np.asarray(inits[node.input[2]]).reshape(-1)[0])

    plan(gin)
    for n in g.node:
        op = n.op_type
        if op in ("Relu", "Clip", "LeakyRelu"):
            continue
        if op in _PASS:
            src_of[n.output[0]] = src_of.get(n.input[0], n.input[0])
            if op == "MaxPool":
                q[n.output[0]] = dict(q[src_of[n.output[0]]])
            continue
        if op == "Constant":
            inits[n.output[0]] = nh.to_array(n.attribute[0].t)
            continue
        out = n.output[0]
        cons = consumers.get(out, [])
        cap = math.inf
        if len(cons) == 1 and cons[0].op_type in ("Relu", "Clip"):
            out = cons[0].output[0]
            cap = clip_max(cons[0])
        if op in ("AveragePool", "GlobalAveragePool"):
            src = src_of.get(n.input[0], n.input[0])
            k2 = int(np.prod(np.asarray(vals[n.input[0]]).shape[2:])) if op == "GlobalAveragePool" else \
                int(np.prod([a.ints for a in n.attribute if a.name == "kernel_shape"][0]))
            f = (k2 - 1) / k2 if k2 & (k2 - 1) == 0 and k2 > 1 else 1.0
            plan(out, scale_from=q[src]["scale"] * f)
        else:
            plan(out, after_add=[src_of.get(i, i) for i in n.input] if op == "Add" else False, cap=cap)
    for n in g.node:                    # a Concat's inputs share its output's quantisation
        if n.op_type == "Concat":
            ins = [src_of.get(i, i) for i in n.input]
            s = max(q[i]["scale"] for i in ins + [n.output[0]])
            u = all(q[i]["unsigned"] for i in ins)
            for i in ins + [n.output[0]]:
                q[i] = {"scale": s, "unsigned": u}
    return _rewrite(model, q, inits, src_of, gin, file, helper, nh, onnx)


def _rewrite(model: Any, q: dict, inits: dict, src_of: dict, gin: str, file: str, helper: Any, nh: Any,
             onnx: Any) -> Any:
    g = model.graph
    new_inits: list[Any] = []
    nodes: list[Any] = []
    rename: dict[str, str] = {}
    cnt = [0]

    def uid(base: str) -> str:
        cnt[0] += 1
        return f"{base}__q{cnt[0]}"

    def const(name: str, arr: np.ndarray) -> str:
        new_inits.append(nh.from_array(arr, name))
        return name

    def qdq(t: str) -> str:
        d = q[t]
        s = const(uid(t + "_scale"), np.array(d["scale"], np.float32))
        z = const(uid(t + "_zp"), np.array(0, np.uint8 if d["unsigned"] else np.int8))
        qn, dn = uid(t + "_q"), uid(t + "_dq")
        nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [qn], name=uid("Q_" + t)))
        nodes.append(helper.make_node("DequantizeLinear", [qn, s, z], [dn], name=uid("DQ_" + t)))
        return dn

    def scale_of(t: str) -> float:
        return q[src_of.get(t, t)]["scale"]

    rename[gin] = qdq(gin)
    for n in g.node:
        ins = [rename.get(i, i) for i in n.input]
        if n.op_type in ("Conv", "Gemm", "MatMul"):
            if n.input[1] not in inits:
                raise OnnxImportError(file, "weights must be constant initializers", n.name, n.op_type)
            w = inits[n.input[1]].astype(np.float64)
            trans_b = n.op_type == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
            axis = 0 if n.op_type == "Conv" or trans_b else 1
            red = tuple(i for i in range(w.ndim) if i != axis)
            ws = np.array([_pow2(v, 127) for v in np.abs(w).max(axis=red)], np.float32)
            shp = [1] * w.ndim
            shp[axis] = -1
            wq = np.clip(np.round(w / ws.reshape(shp)), -127, 127).astype(np.int8)
            wn = uid(n.input[1])
            nodes.append(helper.make_node("DequantizeLinear", [const(wn, wq), const(wn + "_s", ws),
                                                              const(wn + "_z", np.zeros(ws.shape, np.int8))],
                                          [wn + "_dq"], axis=axis, name=uid("DQ_w")))
            ins[1] = wn + "_dq"
            b = inits[n.input[2]].astype(np.float64) if len(n.input) > 2 and n.input[2] else np.zeros(ws.size)
            bs = (scale_of(n.input[0]) * ws.astype(np.float64) / 2).astype(np.float32)
            bq = np.round(b / bs)
            bq = (bq + (bq % 2 == 0) * np.where(b >= bq * bs, 1, -1)).astype(np.int32)   # odd: half units
            bn = uid("bias")
            nodes.append(helper.make_node("DequantizeLinear", [const(bn, bq), const(bn + "_s", bs),
                                                              const(bn + "_z", np.zeros(bs.shape, np.int32))],
                                          [bn + "_dq"], axis=0, name=uid("DQ_b")))
            if len(ins) > 2:
                ins[2] = bn + "_dq"
            else:
                ins.append(bn + "_dq")
        node = helper.make_node(n.op_type, ins, list(n.output), name=n.name or uid(n.op_type))
        node.attribute.extend(n.attribute)
        nodes.append(node)
        for o in n.output:
            if o in q and n.op_type != "MaxPool":
                rename[o] = qdq(o)
            elif o in q:
                rename[o] = o
    out = g.output[0].name
    if out in rename and rename[out] != out:
        final = rename[out]
    else:
        final = qdq(out) if out in q else out
    gout = helper.make_tensor_value_info(final, onnx.TensorProto.FLOAT, None)
    used = {i for n in nodes for i in n.input}
    graph = helper.make_graph(nodes, g.name or "model", list(g.input), [gout],
                              initializer=[i for i in list(g.initializer) + new_inits if i.name in used])
    m = helper.make_model(graph, opset_imports=list(model.opset_import), producer_name="cosim.onnx.quantize")
    m.ir_version = model.ir_version
    m.metadata_props.extend(model.metadata_props)
    return onnx.shape_inference.infer_shapes(m)
