"""Float ONNX models onto the Tensil TCU: import into our network description
(cosim/deploy/network.py) with the model's own weights in the TCU's data type, compile
(:mod:`.compiler`), run (the ISA machine or a platform) and compare with onnxruntime.

The model is loaded, checked and shape-inferred by the ONNX importer's loader
(:func:`cosim.onnx.load.load_model`) and every error is its :class:`OnnxImportError`
(file, node, attribute). The integer IR of :mod:`cosim.onnx.ir` describes *quantised*
int8 models (scales, zero points); a float model instead has its weights, biases and
input rounded to the fixed-point format (FP16BP8: 8 fractional bits, round half up,
saturating), so the TCU's result differs from onnxruntime's float32 by rounding only
(the tolerance is measured in tests/test_tensil_onnx.py and stated in docs/tensil.md).

Mapped nodes (NCHW, batch 1): ``Conv`` 3x3 with pads 1 or 1x1 with pads 0, stride 1 or 2,
one group, no dilation (+ ``BatchNormalization`` folded into its weights in float, + ``Relu``
fused, each when the output before it has no other reader); ``Add`` of two feature maps
(+ ``Relu``); ``GlobalAveragePool`` followed by ``Flatten``/``Reshape`` and ``Gemm``
(alpha = beta = 1): the compiler's fused pool + fc.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.fixed import FixedFormat

from cosim.onnx.errors import OnnxImportError
from cosim.deploy.network import Network, NetworkError, parse_network


@dataclass
class TensilOnnx:
    """An imported float model: the network, its weights in the data type (raw), the
    ONNX names of its input and output, and the model (for onnxruntime)."""

    net: Network
    params: dict[str, dict[str, np.ndarray]]
    input: str
    output: str
    model: Any
    input_nchw: tuple[int, int, int, int]


def _attrs(node: Any) -> dict[str, Any]:
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def import_float(path: str, arch: TensilArch, input_shape: list[int] | None = None,
                 label: str | None = None) -> TensilOnnx:
    """The float model at ``path`` as a Tensil-compilable network (OnnxImportError if a
    node has no mapping, naming it)."""
    from onnx import numpy_helper

    from cosim.onnx.load import load_model
    file = label or str(path)
    model = load_model(path, input_shape, label=file)
    g = model.graph
    fmt = FixedFormat(arch.width, arch.frac)
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    inp = next(i for i in g.input if i.name not in inits)
    dims = tuple(int(d.dim_value) for d in inp.type.tensor_type.shape.dim)
    if len(dims) != 4:
        raise OnnxImportError(file, f"the input {inp.name!r} has shape {list(dims)}; the Tensil "
                                    "import takes an NCHW feature map")
    readers: dict[str, int] = {}
    for nd in g.node:
        for t in nd.input:
            readers[t] = readers.get(t, 0) + 1
    layer_of: dict[str, str] = {inp.name: "input"}   # ONNX tensor -> our layer
    layers: list[dict[str, Any]] = []
    params: dict[str, dict[str, np.ndarray]] = {}

    def src(nd: Any, t: str) -> str:
        if t not in layer_of:
            raise OnnxImportError(file, f"input {t!r} is not a feature map the Tensil import "
                                        "placed (a constant operand is not supported here)",
                                  nd.name, nd.op_type)
        return layer_of[t]

    def last_is(nd: Any, t: str, kinds: tuple[str, ...]) -> dict[str, Any] | None:
        name = layer_of.get(t)
        ly = layers[-1] if layers else None
        if ly is not None and ly["name"] == name and ly["type"] in kinds and readers.get(t, 0) == 1:
            return ly
        return None

    for k, nd in enumerate(g.node):
        op, a = nd.op_type, _attrs(nd)
        name = f"n{k}_{op.lower()}"
        if op == "Conv":
            w = inits.get(nd.input[1])
            if w is None:
                raise OnnxImportError(file, "the weights must be an initializer", nd.name, op)
            ks = tuple(a.get("kernel_shape", w.shape[2:]))
            pads = tuple(a.get("pads", (0, 0, 0, 0)))
            st = tuple(a.get("strides", (1, 1)))
            if a.get("group", 1) != 1 or any(d != 1 for d in a.get("dilations", (1, 1))):
                raise OnnxImportError(file, "only one group and no dilation map onto the TCU",
                                      nd.name, op, "group")
            if ks == (3, 3) and pads == (1, 1, 1, 1):
                kind = "conv3x3"
            elif ks == (1, 1) and pads == (0, 0, 0, 0):
                kind = "conv1x1"
            else:
                raise OnnxImportError(file, f"kernel {list(ks)} with pads {list(pads)}: the compiler "
                                            "takes 3x3 with pads 1 or 1x1 without", nd.name, op,
                                      "kernel_shape")
            if st[0] != st[1] or st[0] not in (1, 2):
                raise OnnxImportError(file, f"strides {list(st)}: 1 or 2 in both directions",
                                      nd.name, op, "strides")
            b = inits[nd.input[2]] if len(nd.input) > 2 and nd.input[2] else np.zeros(w.shape[0])
            layers.append({"name": name, "type": kind, "out": int(w.shape[0]), "stride": st[0],
                           "relu": False, "inputs": [src(nd, nd.input[0])]})
            params[name] = {"w": w.astype(np.float64), "b": np.asarray(b, dtype=np.float64)}
        elif op == "BatchNormalization":
            ly = last_is(nd, nd.input[0], ("conv3x3", "conv1x1"))
            if ly is None or ly["relu"] or any(t not in inits for t in nd.input[1:5]):
                raise OnnxImportError(file, "a BatchNormalization is folded into the convolution "
                                            "right before it (constant statistics)", nd.name, op)
            gamma, beta, mean, var = (inits[t].astype(np.float64) for t in nd.input[1:5])
            k = gamma / np.sqrt(var + float(a.get("epsilon", 1e-5)))
            p = params[ly["name"]]
            p["w"] = p["w"] * k[:, None, None, None]
            p["b"] = (p["b"] - mean) * k + beta
            layer_of[nd.output[0]] = ly["name"]
            continue
        elif op == "Relu":
            ly = last_is(nd, nd.input[0], ("conv3x3", "conv1x1", "add"))
            if ly is None or ly["relu"]:
                raise OnnxImportError(file, "a Relu is fused into the convolution or Add right "
                                            "before it (whose output nothing else reads)", nd.name, op)
            ly["relu"] = True
            layer_of[nd.output[0]] = ly["name"]
            continue
        elif op == "Add":
            layers.append({"name": name, "type": "add", "relu": False,
                           "inputs": [src(nd, nd.input[0]), src(nd, nd.input[1])]})
        elif op == "GlobalAveragePool":
            layers.append({"name": name, "type": "avgpool", "inputs": [src(nd, nd.input[0])]})
        elif op in ("Flatten", "Reshape"):
            if last_is(nd, nd.input[0], ("avgpool",)) is None:
                raise OnnxImportError(file, f"{op} is mapped only between GlobalAveragePool "
                                            "and Gemm", nd.name, op)
            layer_of[nd.output[0]] = layer_of[nd.input[0]]
            continue
        elif op == "Gemm":
            w = inits.get(nd.input[1])
            if w is None or last_is(nd, nd.input[0], ("avgpool",)) is None:
                raise OnnxImportError(file, "a Gemm is mapped after GlobalAveragePool, with its "
                                            "weights as an initializer", nd.name, op)
            if a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0 or a.get("transA", 0):
                raise OnnxImportError(file, "alpha = beta = 1 and no transA", nd.name, op, "alpha")
            w = w if a.get("transB", 0) else w.T            # (out, in)
            b = inits[nd.input[2]] if len(nd.input) > 2 and nd.input[2] else np.zeros(w.shape[0])
            layers.append({"name": name, "type": "fc", "out": int(w.shape[0]),
                           "inputs": [src(nd, nd.input[0])]})
            params[name] = {"w": w.astype(np.float64),
                            "b": np.asarray(b, dtype=np.float64).reshape(-1)}
        else:
            raise OnnxImportError(file, f"{op} has no Tensil mapping (Conv, BatchNormalization, "
                                        "Relu, Add, GlobalAveragePool, Flatten/Reshape, Gemm)",
                                  nd.name, op)
        layer_of[nd.output[0]] = name
    out = g.output[0].name
    if layer_of.get(out) != (layers[-1]["name"] if layers else None):
        raise OnnxImportError(file, f"the graph output {out!r} is not the last mapped layer's")
    # weights and biases (BatchNormalization folded in float) rounded to the data type
    params = {k: {"w": fmt.from_float(v["w"]), "b": fmt.from_float(v["b"])} for k, v in params.items()}
    _, c, h, w_ = dims
    spec = {"name": g.name or "onnx", "input": {"h": h, "w": w_, "c": c, "bits": 8}, "layers": layers}
    try:
        net = parse_network(spec, file)
    except NetworkError as e:
        raise OnnxImportError(file, str(e)) from None
    return TensilOnnx(net, params, inp.name, out, model, dims)


def to_raw(x_nchw: np.ndarray, fmt: FixedFormat) -> np.ndarray:
    """A float NCHW input (batch 1) as the raw HWC tensor the program reads."""
    return fmt.from_float(np.asarray(x_nchw, dtype=np.float64)[0].transpose(1, 2, 0))


def ort_output(imp: TensilOnnx, x_nchw: np.ndarray) -> np.ndarray:
    """onnxruntime's output for ``x_nchw``, as (H, W, C) (a vector as (1, 1, N))."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(imp.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    y = sess.run([imp.output], {imp.input: np.asarray(x_nchw, dtype=np.float32)})[0]
    return y.reshape(1, 1, -1) if y.ndim == 2 else y[0].transpose(1, 2, 0)
