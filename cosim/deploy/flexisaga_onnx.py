"""``network: {onnx: model.onnx}`` on a platform with a FlexiSAGA block (docs/onnx.md, "On
FlexiSAGA").

The model is imported by :mod:`cosim.onnx` (a float model is first quantised there, as for
MARSELLUS) into its integer network. Every Conv (im2col), Gemm and MatMul becomes one
FlexiSAGA job, ``O (Cout x N) = W (Cout x K) @ I (K x N)``, in the dataflow the fast cycle
model finds fastest for its weights (:func:`components.flexisaga.cycles.best_dataflow`; a
sparse one takes the weights as compressed tiles), programmed through the job registers:
``W`` holds the int8 weights (grouped convolutions as block-diagonal weights, whose zeros a
sparse dataflow skips), ``I`` the input's im2col ``x - zp`` (zero padding is real 0),
so ``O`` is the exact integer accumulator — in the PEs' integer mode (32-bit wrap: exact
while ``|acc| < 2^31``) or their fp32 mode (exact while every partial sum stays below 2^24).

The rest — the requantisation of each accumulator (the cluster cores' ``(acc P + B) >> S``,
:mod:`cosim.onnx.requant`), ReLU/Clip, Add, pooling, MaxPool, Concat and the im2col itself —
is the **host fallback**. The flexisaga platform's host is a task host with no core, so the
fallback runs in this deployment (numpy, untimed) and its results are loaded as the next
job's operand; every array job is simulated (registers, memory traffic, cycles) and its
output checked. Exactness against onnxruntime is then that of the cores' requantisation
(docs/onnx.md, "Quantisation mapping"): the run's checks compare every job's accumulator
with the accumulator of onnxruntime's own input tensor for that layer, bit for bit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..onnx.errors import OnnxImportError
from ..onnx.ir import QNet, QOp
from .mapping import Deployment

if TYPE_CHECKING:
    from ..scenario import Scenario

ON_ARRAY = {"conv": "FlexiSAGA array ({df} GEMM of the im2col input; requantised on the host)",
            "fc": "FlexiSAGA array ({df} GEMM, N = 1; requantised on the host)"}
ON_HOST = {"pool": "host fallback (numpy in the deployment, untimed): average pooling",
           "add": "host fallback (numpy in the deployment, untimed): requantising add",
           "concat": "host fallback (numpy in the deployment, untimed): channel concatenation",
           "maxpool": "host fallback (numpy in the deployment, untimed): max pooling"}


def flexisaga_block(sc: "Scenario") -> Any:
    """The scenario's FlexiSAGA block spec, or None."""
    if sc.composed is None:
        return None
    return next((b for b in sc.composed.blocks.values() if b.type == "flexisaga"), None)


def im2col(x: np.ndarray, kh: int, kw: int, stride: int, pad: int) -> np.ndarray:
    """``(KH*KW*Cin, Ho*Wo)``: columns of the zero-padded ``(H, W, Cin)`` input, rows in the
    weights' ``(KH, KW, Cin)`` order."""
    from numpy.lib.stride_tricks import sliding_window_view
    xp = np.pad(np.asarray(x, np.int64), ((pad, pad), (pad, pad), (0, 0)))
    win = sliding_window_view(xp, (kh, kw), axis=(0, 1))[::stride, ::stride]    # (Ho, Wo, C, kh, kw)
    ho, wo = win.shape[:2]
    return win.transpose(3, 4, 2, 0, 1).reshape(kh * kw * x.shape[2], ho * wo)


class _Mem:
    def __init__(self, base: int, size: int, file: str):
        self.base, self.size, self.top, self.file = base, size, base, file

    def take(self, n: int, what: str) -> int:
        a = -(-self.top // 64) * 64
        if a + n > self.base + self.size:
            raise OnnxImportError(self.file, f"{what} ({n} B) does not fit the FlexiSAGA memory "
                                             f"({self.size} B; every job's operands are loaded at once)")
        self.top = a + n
        return a


def _words(v: np.ndarray, fp32: bool) -> bytes:
    if fp32:
        return np.asarray(v, np.float32).astype("<f4").tobytes()
    return (np.asarray(v, np.int64) & 0xFFFFFFFF).astype("<u4").tobytes()


def _array_op(op: QOp) -> bool:
    return op.kind == "conv" and op.note in ("conv", "fc", "")


#: ops whose weight input (index) FlexiSAGA's pruning applies to
WEIGHT_INPUT = {"Conv": 1, "Gemm": 1, "MatMul": 1, "QLinearConv": 3, "QLinearMatMul": 3}


def prune_model(model: Any, sparsity: float, n: int) -> tuple[Any, dict[str, float]]:
    """A copy of ``model`` with FlexiSAGA's structured pruning applied to all its weights as
    one group (:func:`components.flexisaga.pruning.prune_group`: the ``sparsity`` fraction of
    length-``n`` column vectors with the smallest L2 norm set to 0; a weight behind a
    DequantizeLinear is pruned in its integers), and each pruned node's resulting sparsity."""
    import onnx
    from onnx import numpy_helper

    from components.flexisaga.pruning import prune_group, sparsity_of
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    producer = {o: nd for nd in g.node for o in nd.output}
    targets: list[tuple[str, str]] = []             # (node, initializer)
    for nd in g.node:
        k = WEIGHT_INPUT.get(nd.op_type)
        if k is None or len(nd.input) <= k:
            continue
        t = nd.input[k]
        dq = producer.get(t)
        if dq is not None and dq.op_type == "DequantizeLinear":
            t = dq.input[0]
        if t in inits and t not in [x for _, x in targets]:
            targets.append((nd.name or nd.output[0], t))
    arrays = [numpy_helper.to_array(inits[t]) for _, t in targets]
    pruned = prune_group(arrays, sparsity, n) if arrays else []
    for (_, t), w in zip(targets, pruned):
        inits[t].CopyFrom(numpy_helper.from_array(w, t))
    return m, {node: sparsity_of(w) for (node, _), w in zip(targets, pruned)}


def deploy_onnx(sc: "Scenario", path: str, label: str, input_shape: list[int] | None,
                prune: float = 0.0) -> Deployment:
    """Import the model (pruned first when ``prune`` > 0, then onnxruntime runs the pruned
    model) and deploy its Conv/Gemm/MatMul layers as FlexiSAGA jobs."""
    from components.cluster.ops import requantize
    from components.flexisaga.config import DATAFLOWS, SPARSE
    from components.flexisaga.cycles import best_dataflow
    from components.flexisaga.peripheral import FlexiSagaParams, encode_job, register_map
    from components.flexisaga.tiles import pack

    from ..onnx.deploy import prepare
    from ..onnx.ort import run_ort
    from ..onnx.reference import forward, run_op
    from ..platforms import memory_map_of, resolved_parameters
    from .network import Layer, Network
    from .reference import NetParams
    block = flexisaga_block(sc)
    fields = FlexiSagaParams.__dataclass_fields__
    got = resolved_parameters(sc)[f"{sc.composed.top}.{block.name}"]
    params = FlexiSagaParams(**{k: v for k, v in got.items() if k in fields})
    fp32 = params.pe_dtype == "fp32"
    sparsity: dict[str, float] = {}
    if prune > 0:
        import tempfile
        from pathlib import Path

        import onnx

        from ..onnx.load import load_model
        pm, sparsity = prune_model(load_model(path, input_shape, label), prune, params.rows)
        with tempfile.TemporaryDirectory(prefix="cosim-prune-") as tmp:
            onnx.save(pm, str(Path(tmp) / "pruned.onnx"))
            model, net, x, _xf = prepare(str(Path(tmp) / "pruned.onnx"), sc.seed, label, input_shape)
    else:
        model, net, x, _xf = prepare(path, sc.seed, label, input_shape)
    ort = run_ort(model, net, x)
    ref = forward(net, x)
    mm = memory_map_of(sc)
    mem_region = mm[sc.composed.blocks[block.memory].region]
    regs = mm[block.region].base
    mem = _Mem(mem_region.base, mem_region.size, net.file)
    src = lambda n: net.aliases.get(n, n)  # noqa: E731 - a flattened view reads its source
    layers = [Layer(name=op.name, type=op.note or op.kind, inputs=[src(i) for i in op.inputs]) for op in net.ops]
    h, w, c = net.tensors[net.input].shape
    dep = Deployment(Network(net.name, (h, w, c), 8, layers), NetParams(), {})
    dep.onnx = {"file": net.file, "goldens": {}, "proven": True}
    rmap = register_map()
    off = {r.name: r.offset for r in rmap.registers}
    vals = {net.input: np.asarray(x, np.int64)}
    prev: list[str] = []
    for op in net.ops:
        kind = op.note or op.kind
        ins = [vals[src(i)] for i in op.inputs]
        info = {"type": kind, "onnx_nodes": list(op.nodes),
                "onnx_ops": "+".join(t for t in op.ops if t != "QuantizeLinear")}
        if not _array_op(op):
            vals[op.output] = run_op(op, ins)
            dep.layer_info[op.name] = info | {"runs_on": "host", "where": ON_HOST[kind],
                                              "exact_vs_onnxruntime": op.exact}
            dep.onnx["proven"] &= op.exact
            continue
        xt = net.tensors[src(op.inputs[0])]
        cout, kh, kw, cin = op.weights.shape
        wm = op.weights.reshape(cout, -1)
        i_of = lambda v: im2col(np.asarray(v, np.int64) - xt.zp, kh, kw, op.stride, op.pad)  # noqa: E731
        im = i_of(ins[0])
        acc = wm @ im                                            # the array's exact accumulator
        worst = int(np.abs(wm).sum(axis=1).max()) * 256
        fits = worst < (1 << 24 if fp32 else 1 << 31)
        if not fits:
            raise OnnxImportError(net.file, f"worst-case accumulator {worst} does not fit the PEs' "
                                            f"{'fp32 significand (2^24)' if fp32 else 'int32 word'}; "
                                            "nearest supported: fewer input channels per output", op.nodes[0],
                                  op.ops[0])
        k, n = im.shape
        # the dataflow the fast cycle model finds fastest for these weights (a grouped
        # convolution's zeros make a sparse one win); sparse ones take compressed tiles
        # (csOS only while its signed column indices reach every column: K < 2^(bits-1))
        cands = tuple(d for d in DATAFLOWS if d != "csOS" or k < 1 << (params.csb_index_bits - 1))
        df = best_dataflow(wm, n, params.array, cands).dataflow
        if df in SPARSE:
            images, table = pack(df, wm, params.array)
            a_w = mem.take(4 * images.size, f"W tiles of {op.name}")
            a_t = mem.take(4 * table.size, f"W tile table of {op.name}")
            dep.loads += [("soc", a_w, images.astype("<u4").tobytes()), ("soc", a_t, table.astype("<u4").tobytes())]
        else:
            a_w, a_t = mem.take(4 * cout * k, f"W of {op.name}"), 0
            dep.loads.append(("soc", a_w, _words(wm, fp32)))
        a_i = mem.take(4 * k * n, f"I of {op.name}")
        a_o = mem.take(4 * cout * n, f"O of {op.name}")
        dep.loads.append(("soc", a_i, _words(im, fp32)))
        dep.goldens[op.name] = (a_o, _words(acc, fp32))
        # onnxruntime's side: the accumulator of its own tensor entering this layer
        o_in = ort.get(src(op.inputs[0]), x if src(op.inputs[0]) == net.input else None)
        if o_in is not None:
            dep.onnx["goldens"][op.name] = (a_o, _words(wm @ i_of(o_in), fp32))
        # host fallback: the cores' requantisation of the accumulator (zero point folded back)
        wsum = wm.sum(axis=1)
        full = (acc + xt.zp * wsum[:, None]).T.reshape(-1, cout)
        rq = op.requant
        y = requantize(full, rq["scale"], rq["bias"], rq["shift"], 0 if op.relu else -128, 127)
        vals[op.output] = y.reshape(net.tensors[op.output].shape)
        job = encode_job(_Job(DATAFLOWS.index(df), cout, k, n, a_w, a_t, a_i, n, a_o, n, integer=not fp32))
        accesses = [{"write": regs + o, "value": v} for o, v in job]
        accesses += [{"write": regs + off["CTRL"], "value": 1},
                     {"read": regs + off["STATUS"], "until": 2, "mask": 0xFF07}]
        tid = f"{op.name}.gemm"
        dep.tasks.append({"id": tid, "op": "mmio", "layer": op.name, "category": "compute",
                          "after": prev, "accesses": accesses})
        prev = [tid]
        dep.layer_info[op.name] = info | {"runs_on": "flexisaga", "where": ON_ARRAY[kind].format(df=df),
                                          "exact_vs_onnxruntime": op.exact, "gemm": [cout, k, n], "dataflow": df,
                                          "weight_sparsity": round(float(np.count_nonzero(wm == 0)) / wm.size, 4)}
        dep.onnx["proven"] &= op.exact
    for name, v in vals.items():       # the host chain is the cores' reference, by construction
        if not np.array_equal(v, ref[name]):
            raise OnnxImportError(net.file, f"host fallback differs from the integer reference at {name!r}")
    dep.onnx["placement"] = _placement(net, dep)
    if prune > 0:
        dep.onnx["pruned"] = {"sparsity": prune, "vector": params.rows, "per_node": sparsity}
    dep.outputs = {k: v for k, v in vals.items()}
    return dep


def _Job(*a: Any, integer: bool) -> Any:
    from components.flexisaga.peripheral import FlexiSagaJob
    return FlexiSagaJob(*a, accumulate=False, integer=integer)


def _placement(net: QNet, dep: Deployment) -> list[list[str]]:
    rows = []
    for node, (op_type, ours, how) in net.placement.items():
        info = dep.layer_info.get(ours)
        if info is not None and not how:
            how = info["where"]
            if op_type in ("QuantizeLinear", "Relu", "Clip"):
                how = f"host fallback: {ours}'s requantisation (ReLU/Clip as its saturation)"
        rows.append([node, op_type, ours, how])
    return rows
