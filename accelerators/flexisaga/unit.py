"""FlexiSAGA as a GEMM unit of the ONNX pipeline (cosim/deploy/pipeline.py; docs/onnx.md,
"On FlexiSAGA"): each GEMM one job in the dataflow the fast cycle model finds fastest for its
weights (:func:`accelerators.flexisaga.model.cycles.best_dataflow`; a sparse one takes the weights as
compressed tiles), programmed through the job registers; the PEs' integer mode (32-bit wrap:
exact while ``|acc| < 2^31``) or fp32 mode (exact while every partial sum stays below 2^24).
``network.prune`` (:func:`prune_pass`) applies FlexiSAGA's structured pruning to the model's
weights first."""
from __future__ import annotations

from typing import Any

import numpy as np

from cosim.deploy.pipeline import Arena, GemmJob

ON_ARRAY = {"conv": "FlexiSAGA array ({df} GEMM of the im2col input; requantised on the host)",
            "fc": "FlexiSAGA array ({df} GEMM, N = 1; requantised on the host)"}


def words(v: np.ndarray, fp32: bool) -> bytes:
    """Values as the PEs store them: fp32, or 32-bit two's complement words."""
    if fp32:
        return np.asarray(v, np.float32).astype("<f4").tobytes()
    return (np.asarray(v, np.int64) & 0xFFFFFFFF).astype("<u4").tobytes()


class FlexiSagaUnit:
    """One FlexiSAGA block of a composed platform, as the pipeline sees it."""

    family = "flexisaga"

    def __init__(self, sc: Any, block: Any, resolved: dict[str, Any], regs: int, clock_hz: float):
        from accelerators.flexisaga.model.peripheral import FlexiSagaParams, register_map
        fields = FlexiSagaParams.__dataclass_fields__
        self.name = block.name
        self.params = FlexiSagaParams(**{k: v for k, v in resolved.items() if k in fields})
        self.fp32 = self.params.pe_dtype == "fp32"
        self.regs = regs
        self.period_ps = 1e12 / clock_hz
        self.off = {r.name: r.offset for r in register_map().registers}

    def refuse(self, op: Any, wm: np.ndarray) -> str | None:
        worst = int(np.abs(wm).sum(axis=1).max()) * 256
        if worst < (1 << 24 if self.fp32 else 1 << 31):
            return None
        return (f"worst-case accumulator {worst} does not fit the PEs' "
                f"{'fp32 significand (2^24)' if self.fp32 else 'int32 word'}; "
                "nearest supported: fewer input channels per output")

    def cost_ps(self, wm: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
        from accelerators.flexisaga.model.config import DATAFLOWS
        from accelerators.flexisaga.model.cycles import best_dataflow
        k = wm.shape[1]
        # csOS only while its signed column indices reach every column: K < 2^(bits-1)
        cands = tuple(d for d in DATAFLOWS if d != "csOS" or k < 1 << (self.params.csb_index_bits - 1))
        best = best_dataflow(wm, n, self.params.array, cands)
        return round(best.cycles * self.period_ps), {"cycles": best.cycles, "dataflow": best.dataflow}

    def words(self, acc: np.ndarray) -> bytes:
        return words(acc, self.fp32)

    def lower(self, op: Any, wm: np.ndarray, im: np.ndarray, acc: np.ndarray, arena: Arena,
              plan: dict[str, Any]) -> GemmJob:
        from accelerators.flexisaga.model.config import DATAFLOWS, SPARSE
        from accelerators.flexisaga.model.peripheral import FlexiSagaJob, encode_job
        from accelerators.flexisaga.model.tiles import pack
        cout, (k, n), df = wm.shape[0], im.shape, plan["dataflow"]
        loads: list[tuple[str, int, bytes]] = []
        if df in SPARSE:
            images, table = pack(df, wm, self.params.array)
            a_w = arena.take(4 * images.size, f"W tiles of {op.name}")
            a_t = arena.take(4 * table.size, f"W tile table of {op.name}")
            loads += [("soc", a_w, images.astype("<u4").tobytes()), ("soc", a_t, table.astype("<u4").tobytes())]
        else:
            a_w, a_t = arena.take(4 * cout * k, f"W of {op.name}"), 0
            loads.append(("soc", a_w, words(wm, self.fp32)))
        a_i = arena.take(4 * k * n, f"I of {op.name}")
        a_o = arena.take(4 * cout * n, f"O of {op.name}")
        loads.append(("soc", a_i, words(im, self.fp32)))
        job = encode_job(FlexiSagaJob(DATAFLOWS.index(df), cout, k, n, a_w, a_t, a_i, n, a_o, n,
                                      accumulate=False, integer=not self.fp32))
        accesses = [{"write": self.regs + o, "value": v} for o, v in job]
        accesses += [{"write": self.regs + self.off["CTRL"], "value": 1},
                     {"read": self.regs + self.off["STATUS"], "until": 2, "mask": 0xFF07}]
        kind = op.note or op.kind
        info = {"where": ON_ARRAY[kind].format(df=df), "gemm": [cout, k, n], "dataflow": df,
                "weight_sparsity": round(float(np.count_nonzero(wm == 0)) / wm.size, 4)}
        return GemmJob(loads, accesses, a_o, words(acc, self.fp32), info)


#: ops whose weight input (index) FlexiSAGA's pruning applies to
WEIGHT_INPUT = {"Conv": 1, "Gemm": 1, "MatMul": 1, "QLinearConv": 3, "QLinearMatMul": 3}


def prune_model(model: Any, sparsity: float, n: int) -> tuple[Any, dict[str, float]]:
    """A copy of ``model`` with FlexiSAGA's structured pruning applied to all its weights as
    one group (:func:`accelerators.flexisaga.model.pruning.prune_group`: the ``sparsity`` fraction of
    length-``n`` column vectors with the smallest L2 norm set to 0; a weight behind a
    DequantizeLinear is pruned in its integers), and each pruned node's resulting sparsity."""
    import onnx
    from onnx import numpy_helper

    from accelerators.flexisaga.model.pruning import prune_group, sparsity_of
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


def prune_pass(model: Any, sparsity: float, units: list[Any]) -> tuple[Any, dict[str, Any]]:
    """``network.prune``: the model pruned in vectors of the platform's FlexiSAGA rows, and
    what was pruned (``onnx.pruned`` in the deployment)."""
    arrays = [u for u in units if isinstance(u, FlexiSagaUnit)]
    if not arrays:
        raise ValueError("prune applies to a platform with a FlexiSAGA block (its structured pruning)")
    n = arrays[0].params.rows
    pm, per_node = prune_model(model, float(sparsity), n)
    return pm, {"pruned": {"sparsity": float(sparsity), "vector": n, "per_node": per_node}}
