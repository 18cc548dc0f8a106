"""Float ONNX models through Voyager's bf16 jobs (``soc.voyager.dtype=bf16``; docs/onnx.md,
"On Voyager").

The float model (BatchNormalization folded, :func:`cosim.onnx.fold.fold_batchnorm`) is walked
node by node: Conv (+ a residual Add of an earlier tensor + Relu fused into its post-ops),
Gemm/MatMul after Flatten/Reshape (a one-row GEMM job over the HWC-flattened map: the weight
rows are permuted from ONNX's CHW order), Add (a GEMM with identity weights and the
residual-add post-op, + Relu), AveragePool/GlobalAveragePool and MaxPool (vector-unit
pooling jobs). Weights, biases and the input are rounded to bf16; every job accumulates in
bf16 (the int8 path's exactness does not apply: :data:`TOLERANCE`). Anything else (Clip:
the vector unit has ReLU only) is an error naming the node and the nearest supported op.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.voyager.model.config import VoyagerParams
from accelerators.voyager.model.dtypes import FloatType
from accelerators.voyager.model.job import KIND_CONV, KIND_GEMM, KIND_VECTOR, VOPS, VoyagerJob, VoyagerModel

from cosim.onnx.errors import OnnxImportError
from accelerators.voyager.deploy.jobs import Dram, tasks

BF16 = FloatType("bf16")
#: largest |simulated - onnxruntime| over the largest |onnxruntime output| (bf16 operands and
#: bf16 accumulation; measured in docs/onnx.md, "On Voyager")
TOLERANCE = 0.05
NEAREST = {"Clip": "Relu (the vector unit has ReLU, no clipping; or the int8 path, soc.voyager.dtype=int8, "
                   "where Clip is the quantiser's saturation)",
           "Concat": "Add (no Voyager operator writes a channel slice)"}
WHY = {"conv": "Voyager matrix unit (bf16 conv job; bias, residual add, ReLU in the vector unit)",
       "gemm": "Voyager matrix unit (bf16 GEMM job over the flattened map)",
       "add": "Voyager matrix + vector unit (bf16 GEMM with identity weights, residual-add post-op)",
       "avgpool": "Voyager vector unit (bf16 average pooling job)",
       "maxpool": "Voyager vector unit (bf16 max pooling job)"}


@dataclass
class FLayer:
    """One bf16 job: its kind, ONNX nodes, input tensors, output tensor and constants."""

    name: str
    kind: str
    nodes: list[str]
    ops: list[str]
    inputs: list[str]
    output: str
    shape: tuple[int, int, int]
    job: dict[str, Any] = field(default_factory=dict)
    w: np.ndarray | None = None               # conv (KH, KW, Cin, Cout) / gemm (K, N)
    b: np.ndarray | None = None


def _attrs(node: Any) -> dict[str, Any]:
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def import_bf16(model: Any, file: str) -> tuple[list[FLayer], str, tuple[int, int, int], dict[str, list[str]]]:
    """(layers, input tensor, input (H, W, C), placement rows) of a float model."""
    from onnx import numpy_helper

    from cosim.onnx.fold import fold_batchnorm
    from cosim.onnx.graph import NEAREST as IMPORT_NEAREST
    model = fold_batchnorm(model, file)
    g = model.graph
    inits = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in g.initializer}
    inp = next(i for i in g.input if i.name not in inits)
    dims = [int(d.dim_value) for d in inp.type.tensor_type.shape.dim]
    if len(dims) != 4 or dims[0] != 1:
        raise OnnxImportError(file, f"the input {inp.name!r} has shape {dims}; the bf16 path takes one NCHW map")
    shape = {inp.name: (dims[2], dims[3], dims[1])}
    alias: dict[str, str] = {}          # ONNX tensor -> our tensor (a view)
    flat: set[str] = set()
    readers: dict[str, int] = {}
    for nd in g.node:
        for t in nd.input:
            readers[t] = readers.get(t, 0) + 1
    layers: list[FLayer] = []
    rows: dict[str, list[str]] = {}
    src = lambda t: alias.get(t, t)  # noqa: E731

    def last_open(t: str) -> FLayer | None:
        ly = layers[-1] if layers else None
        return ly if ly is not None and ly.output == src(t) and readers.get(t, 0) == 1 else None

    for k, nd in enumerate(g.node):
        op, a, name = nd.op_type, _attrs(nd), nd.name or f"{nd.op_type}{k}"
        out = nd.output[0]
        if op == "Conv":
            w = inits.get(nd.input[1])
            if w is None or src(nd.input[0]) not in shape:
                raise OnnxImportError(file, "the weights must be an initializer", name, op)
            h, wd, c = shape[src(nd.input[0])]
            ks, st = list(a.get("kernel_shape", w.shape[2:])), list(a.get("strides", [1, 1]))
            pads, gr = list(a.get("pads", [0, 0, 0, 0])), int(a.get("group", 1))
            dil = a.get("dilations", [1, 1])
            if ks[0] != ks[1] or st[0] != st[1] or len(set(pads)) > 1 or any(d != 1 for d in dil):
                raise OnnxImportError(file, "square kernel, equal strides, symmetric pads, no dilation",
                                      name, op, "kernel_shape")
            cout = w.shape[0]
            full = np.zeros((cout, c, ks[0], ks[1]))
            og, ig = cout // gr, c // gr
            for gi in range(gr):                   # grouped: block-diagonal dense weights
                full[gi * og:(gi + 1) * og, gi * ig:(gi + 1) * ig] = w[gi * og:(gi + 1) * og]
            b = inits[nd.input[2]] if len(nd.input) > 2 and nd.input[2] else np.zeros(cout)
            f, s, p = ks[0], st[0], pads[0]
            ho, wo = (h + 2 * p - f) // s + 1, (wd + 2 * p - f) // s + 1
            layers.append(FLayer(name, "conv", [name], [op], [src(nd.input[0])], out, (ho, wo, cout),
                                 dict(kind=KIND_CONV, h=h, w=wd, c=c, k=cout, f=f, stride=s, pad=p),
                                 full.transpose(2, 3, 1, 0), np.asarray(b)))
        elif op == "Relu":
            ly = last_open(nd.input[0])
            if ly is None or ly.kind not in ("conv", "gemm", "add") or ly.job.get("relu"):
                raise OnnxImportError(file, "a Relu fuses into the conv, GEMM or Add right before it "
                                            "(whose output nothing else reads)", name, op)
            ly.job["relu"] = True
            ly.nodes.append(name)
            ly.ops.append(op)
            alias[out] = ly.output
            continue
        elif op == "Add":
            xa, xb = src(nd.input[0]), src(nd.input[1])
            if xa not in shape or xb not in shape or shape[xa] != shape[xb]:
                raise OnnxImportError(file, "an Add of two feature maps of one shape", name, op)
            ly = next((last_open(t) for t in nd.input if last_open(t) is not None), None)
            if ly is not None and ly.kind == "conv" and not ly.job.get("relu") and not ly.job.get("add"):
                other = xb if ly.output == xa else xa
                ly.job["add"] = True
                ly.inputs.append(other)
                ly.nodes.append(name)
                ly.ops.append(op)
                alias[out] = ly.output
                continue
            h, wd, c = shape[xa]
            layers.append(FLayer(name, "add", [name], [op], [xa, xb], out, (h, wd, c),
                                 dict(kind=KIND_GEMM, h=h, w=wd, c=c, k=c, add=True), np.eye(c), None))
        elif op in ("GlobalAveragePool", "AveragePool", "MaxPool"):
            h, wd, c = shape[src(nd.input[0])]
            if op == "GlobalAveragePool":
                f, s, p = h, 1, 0
                if h != wd:
                    raise OnnxImportError(file, "a square map (Voyager's pooling window is square)", name, op)
            else:
                ks, st, pads = list(a["kernel_shape"]), list(a.get("strides", [1, 1])), list(a.get("pads", [0] * 4))
                if ks[0] != ks[1] or st[0] != st[1] or len(set(pads)) > 1 or a.get("ceil_mode", 0):
                    raise OnnxImportError(file, "square window, equal strides, symmetric pads, no ceil_mode",
                                          name, op, "kernel_shape")
                if op == "AveragePool" and pads[0]:
                    raise OnnxImportError(file, "Voyager's average divides by k^2 (count_include_pad); "
                                                "nearest supported: no pads", name, op, "pads")
                f, s, p = ks[0], st[0], pads[0]
            kind = "maxpool" if op == "MaxPool" else "avgpool"
            ho, wo = (h + 2 * p - f) // s + 1, (wd + 2 * p - f) // s + 1
            layers.append(FLayer(name, kind, [name], [op], [src(nd.input[0])], out, (ho, wo, c),
                                 dict(kind=KIND_VECTOR, vop=VOPS.index(kind), h=h, w=wd, c=c, k=c, f=f,
                                      stride=s, pad=p)))
        elif op in ("Flatten", "Reshape"):
            alias[out] = src(nd.input[0])
            flat.add(out)
            rows[name] = [name, op, "", "view (no data moves)"]
            continue
        elif op in ("Gemm", "MatMul"):
            x = src(nd.input[0])
            w = inits.get(nd.input[1])
            if w is None or x not in shape:
                raise OnnxImportError(file, "constant weights after a feature map", name, op)
            if op == "Gemm":
                if a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0 or a.get("transA", 0):
                    raise OnnxImportError(file, "alpha = beta = 1 and no transA", name, op, "alpha")
                w = w.T if a.get("transB", 0) else w                # (in, out)
            h, wd, c = shape[x]
            n = w.shape[1]
            # ONNX flattens CHW; our map is HWC: permute the weight rows
            w = w.reshape(c, h, wd, n).transpose(1, 2, 0, 3).reshape(h * wd * c, n)
            b = inits[nd.input[2]].reshape(-1) if op == "Gemm" and len(nd.input) > 2 and nd.input[2] else np.zeros(n)
            layers.append(FLayer(name, "gemm", [name], [op], [x], out, (1, 1, n),
                                 dict(kind=KIND_GEMM, h=1, w=1, c=h * wd * c, k=n), w, np.asarray(b)))
        elif op in ("Identity", "Dropout"):
            alias[out] = src(nd.input[0])
            rows[name] = [name, op, "", "folded"]
            continue
        else:
            near = NEAREST.get(op) or IMPORT_NEAREST.get(op, "Conv, Gemm, Relu, Add, pooling")
            raise OnnxImportError(file, f"no Voyager bf16 job for {op} (the voyager platform has no core to "
                                        f"fall back onto); nearest supported: {near}", name, op)
        shape[out] = layers[-1].shape
    for ly in layers:
        for n, t in zip(ly.nodes, ly.ops):
            rows[n] = [n, t, ly.name, WHY[ly.kind] if n == ly.name else f"fused into {ly.name}'s post-ops"]
    for nd in g.node:
        bn = nd.name or nd.output[0]
        if bn not in rows:
            rows[bn] = [bn, nd.op_type, "", "folded"]
    outt = src(g.output[0].name)
    if not layers or layers[-1].output != outt:
        raise OnnxImportError(file, f"the graph output {g.output[0].name!r} is not the last job's")
    return layers, inp.name, shape[inp.name], rows


def plan_bf16(layers: list[FLayer], inp: str, in_shape: tuple[int, int, int], xf: np.ndarray,
              params: VoyagerParams, dram: Any) -> tuple[list[tuple[FLayer, VoyagerJob]], dict[str, int],
                                                        list[tuple[int, bytes]], dict[str, bytes]]:
    """Jobs, tensor addresses, loads and every tensor's reference bytes (run through
    ``VoyagerModel.compute``, the code the simulated accelerator runs)."""
    model = VoyagerModel(params)
    addr = {inp: dram.take(2 * int(np.prod(in_shape)), "the input")}
    x = BF16.encode(np.asarray(xf, np.float64)[0].transpose(1, 2, 0)).astype("<u2").tobytes()
    dram.put(addr[inp], x)
    loads, values, jobs = [(addr[inp], x)], {inp: x}, []
    for ly in layers:
        addr[ly.output] = dram.take(2 * int(np.prod(ly.shape)), f"the output of {ly.name}")
        extra: dict[str, Any] = {"w_addr": 0}
        if ly.w is not None:
            wa = dram.take(2 * ly.w.size, f"weights of {ly.name}")
            data = BF16.encode(ly.w).astype("<u2").tobytes()
            dram.put(wa, data)
            loads.append((wa, data))
            extra["w_addr"] = wa
        if ly.b is not None:
            ba = dram.take(2 * ly.b.size, f"bias of {ly.name}")
            data = BF16.encode(ly.b).astype("<u2").tobytes()
            dram.put(ba, data)
            loads.append((ba, data))
            extra.update(bias_addr=ba, bias=True)
        if ly.job.get("add"):
            extra["skip_addr"] = addr[ly.inputs[1]]
        job = VoyagerJob(**{**ly.job, **extra, "dtype": "bf16", "in_addr": addr[ly.inputs[0]],
                            "out_addr": addr[ly.output]})
        err = job.validate() or model.check(job)
        if err:
            raise OnnxImportError(dram.file, f"the Voyager job is refused (error {err}: too large for the data "
                                             "mode's data_limit, or an invalid shape)", ly.nodes[0], ly.ops[0])
        out = model.compute(job, dram.read)
        dram.put(addr[ly.output], out)
        values[ly.output] = out
        jobs.append((ly, job))
    return jobs, addr, loads, values


def deploy_bf16(sc: Any, path: str, label: str, input_shape: list[int] | None, params: VoyagerParams) -> Any:
    """The float model as bf16 jobs; goldens: every tensor (bit for bit, the accelerator's
    own model) and the output against onnxruntime's float output within :data:`TOLERANCE`."""
    from cosim.deploy.mapping import Deployment
    from cosim.deploy.network import Layer, Network
    from cosim.deploy.reference import NetParams
    from cosim.deploy.weights import layer_rng
    from cosim.onnx.deploy import float_reference
    from cosim.onnx.load import load_model
    from cosim.platforms import memory_map_of
    model = load_model(path, input_shape, label)
    layers, inp, in_shape, rows = import_bf16(model, label)
    h, w, c = in_shape
    xf = layer_rng(sc.seed, "onnx-float-input").standard_normal((1, c, h, w)).astype(np.float32)
    mm = memory_map_of(sc)
    dram = Dram(mm["dram"].base, mm["dram"].size, label)
    jobs, addr, loads, values = plan_bf16(layers, inp, in_shape, xf, params, dram)
    dep = Deployment(Network(model.graph.name or "onnx", in_shape, 16,
                             [Layer(name=ly.name, type=ly.kind, inputs=list(ly.inputs)) for ly in layers]),
                     NetParams(), {})
    dep.loads = [("soc", a, d) for a, d in loads]
    dep.tasks = tasks([(ly, job, False) for ly, job in jobs], mm["voyager"].base)
    for ly, _ in jobs:
        dep.goldens[ly.output] = (addr[ly.output], values[ly.output])
        dep.layer_info[ly.name] = {"type": ly.kind, "onnx_nodes": list(ly.nodes), "onnx_ops": "+".join(ly.ops),
                                   "runs_on": "voyager", "where": WHY[ly.kind], "exact_vs_onnxruntime": False}
    ref = np.asarray(float_reference(path, xf, input_shape, label), np.float64)
    out = layers[-1]
    if len(out.shape) == 3 and out.shape[:2] != (1, 1):         # an NCHW output: compare as HWC
        ref = ref.reshape(out.shape[2], out.shape[0], out.shape[1]).transpose(1, 2, 0).reshape(-1)
    dep.onnx = {"file": label, "placement": list(rows.values()), "proven": False, "goldens": {},
                "float": {"addr": addr[out.output], "size": int(np.prod(out.shape)), "scale": 1.0, "zp": 0,
                          "dtype": "bf16", "reference": ref.tolist(), "tolerance": TOLERANCE}}
    return dep
