"""``network: {onnx: model.onnx}`` on the ``voyager`` platform (docs/onnx.md, "On Voyager").

The model is imported by :mod:`cosim.onnx` (a float model is first quantised there, as for
MARSELLUS; with ``soc.voyager.dtype=bf16`` it runs as bf16 jobs instead, :mod:`.onnx_bf16`)
into its integer network; every op then becomes one Voyager int8 job programmed through the
descriptor registers:

* ``conv`` (Conv, depthwise as dense block-diagonal weights, Gemm/MatMul, AveragePool as a
  conv with 0/1 windows): a conv job (a GEMM job for a classifier over the whole map) with
  ReLU/Clip, the int32 bias and the per-channel dequantisation scale fused;
* ``add``: a GEMM job with identity weights whose residual-add post-op brings the second
  input (the vector unit adds the two dequantised operands, ReLU, quantises).

Voyager's int8 tensors are symmetric (zero point 0, zero padding): a signed int8 ONNX tensor
with zero point 0 keeps its codes and scale; a uint8 one with zero point 0 (after a ReLU)
becomes 7-bit codes ``rne(v / 2)`` at twice its scale. Other zero points are an error naming
the node. The platform is a task host, a crossbar, DRAM and the accelerator: there is no
core to fall back onto, so MaxPool (Voyager pools bf16 tensors only) and Concat are errors
naming the node and the nearest supported op.

Exactness (per op, on the run's input; docs/onnx.md): onnxruntime's ``RNE((acc + b) * M)``
equals Voyager's ``rne(bf16(bf16(acc + b) * s) * bf16(1 / s_y))`` when the op is proven exact
for onnxruntime's float32 (:mod:`cosim.onnx.requant`), its tensors are signed with zero point
0, its bias is an integer, the scales ``s`` and ``1 / s_y`` are powers of two and every
``acc + b`` (Add: every ``a s_a + b s_b``) is a bf16 value. Then the run's checks compare
every tensor with onnxruntime bit for bit; otherwise the dequantised output with
onnxruntime's float output within :data:`TOLERANCE`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from components.voyager.config import VoyagerParams
from components.voyager.dtypes import FloatType, round_to
from components.voyager.job import KIND_CONV, KIND_GEMM, VoyagerJob, VoyagerModel, job_registers

from ..onnx.errors import OnnxImportError
from ..onnx.ir import QNet, QOp

if TYPE_CHECKING:
    from ..deploy.mapping import Deployment
    from ..scenario import Scenario

BF16 = FloatType("bf16")
#: the dequantised output may differ from onnxruntime's by this fraction of its largest
#: magnitude when the model is outside the exact form (measured: docs/onnx.md, "On Voyager")
TOLERANCE = 0.8

WHY = {
    "conv": "Voyager matrix unit (int8 conv job; bias, dequantise, ReLU, quantise in the vector unit)",
    "fc": "Voyager matrix unit (int8 GEMM job over the flattened map)",
    "pool": "Voyager matrix unit (int8 conv job with 0/1 windows, 1/k^2 in the dequantise scale)",
    "add": "Voyager matrix + vector unit (int8 GEMM with identity weights, residual-add post-op)",
}
NEAREST = {"maxpool": "AveragePool (Voyager's pooling runs on bf16 tensors; the int8 path has none)",
           "concat": "Add (no Voyager operator writes a channel slice of its output)"}


def _pow2(f: Fraction) -> bool:
    n, d = f.numerator, f.denominator
    return n > 0 and n & (n - 1) == 0 and d & (d - 1) == 0


def _is_bf16(v: np.ndarray) -> bool:
    v = np.asarray(v, np.float64)
    return bool(np.all(round_to("bf16", v) == v))


@dataclass
class VTensor:
    """A tensor in Voyager's form: symmetric int8 codes at ``scale`` (``ratio`` = Voyager
    scale / ONNX scale: 1, or 2 for a uint8 tensor), HWC at ``addr``."""

    name: str
    shape: tuple[int, int, int]
    scale: Fraction
    ratio: int
    zp: int
    unsigned: bool = False
    addr: int = 0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass
class VoyagerPlan:
    """The jobs (op, job, exact on this input) in order, the tensors and the loads."""

    jobs: list[tuple[QOp, VoyagerJob, bool]] = field(default_factory=list)
    tensors: dict[str, VTensor] = field(default_factory=dict)
    loads: list[tuple[int, bytes]] = field(default_factory=list)
    values: dict[str, np.ndarray] = field(default_factory=dict)   # Voyager codes (H, W, C)


def _frac(x: float) -> Fraction:
    return Fraction(float(np.float32(x)))


def vtensor(net: QNet, name: str, node: str, op_type: str) -> VTensor:
    t = net.tensors[name]
    if t.offset == 128 and t.zp == -128:
        return VTensor(name, t.shape, _frac(t.scale) * 2, 2, t.zp, True)
    if t.offset == 0 and t.zp == 0:
        return VTensor(name, t.shape, _frac(t.scale), 1, 0)
    raise OnnxImportError(net.file, f"tensor {t.onnx!r} has zero point {t.zp + t.offset}: Voyager's int8 "
                                    "tensors are symmetric; nearest supported: zero point 0 (int8 or uint8)",
                          node, op_type)


def to_codes(t: VTensor, stored: np.ndarray) -> np.ndarray:
    """Voyager codes of a tensor from its int8 storage (cosim.onnx.ir: ``v - zp``, halved
    with ties to even for a uint8 tensor)."""
    v = np.asarray(stored, np.int64) - t.zp
    if t.ratio == 2:
        v = np.rint(v / 2.0).astype(np.int64)
    return np.clip(v, -128, 127)


def check_supported(net: QNet) -> None:
    """A one-line error naming the first op Voyager's int8 path cannot run."""
    for op in net.ops:
        if op.kind in NEAREST:
            raise OnnxImportError(net.file, f"no Voyager int8 operator for it (the voyager platform has no "
                                            f"core to fall back onto); nearest supported: {NEAREST[op.kind]}",
                                  op.nodes[0], op.ops[0])


class _Dram:
    """A bump allocator and byte image of the DRAM (the reference reads it like the model)."""

    def __init__(self, base: int, size: int, file: str):
        self.base, self.size, self.top, self.file = base, size, base, file
        self.image = bytearray()

    def take(self, n: int, what: str) -> int:
        a = -(-self.top // 64) * 64
        if a + n > self.base + self.size:
            raise OnnxImportError(self.file, f"{what} ({n} B) does not fit the DRAM ({self.size} B)")
        self.top = a + n
        need = self.top - self.base
        if len(self.image) < need:
            self.image.extend(bytes(need - len(self.image)))
        return a

    def put(self, addr: int, data: bytes) -> None:
        self.image[addr - self.base:addr - self.base + len(data)] = data

    def read(self, addr: int, n: int) -> bytes:
        return bytes(self.image[addr - self.base:addr - self.base + n])


def _conv_terms(net: QNet, op: QOp, x: VTensor, y: VTensor) -> tuple[list[Fraction], list[Fraction]]:
    """Per output channel: ONNX's multiplier ``M_c`` and bias ``b_c`` (accumulator units),
    recovered from the cores' requantisation (``B = off P + 2^(S-1) + zp_y 2^S``)."""
    rq = op.requant
    s = int(rq["shift"])
    ms = [Fraction(int(p), 1 << s) for p in rq["scale"]]
    wsum = op.weights.reshape(op.weights.shape[0], -1).sum(axis=1)
    zp_y = net.tensors[op.output].zp
    bs = []
    for p, b, ws in zip(rq["scale"], rq["bias"], wsum):
        off = Fraction(int(b) - (1 << s >> 1) - zp_y * (1 << s), int(p))
        bs.append(off + x.zp * int(ws))
    return ms, bs


def plan(net: QNet, x_stored: np.ndarray, params: VoyagerParams, base: int, size: int) -> VoyagerPlan:
    """Lay out every tensor and weight in DRAM, build the jobs and run them through the
    accelerator's own functional model (``VoyagerModel.compute``): the reference values."""
    check_supported(net)
    src = lambda n: net.aliases.get(n, n)  # noqa: E731 - a flattened view reads its source
    dram = _Dram(base, size, net.file)
    pl = VoyagerPlan()
    model = VoyagerModel(params)
    first = net.ops[0] if net.ops else None
    xin = pl.tensors[net.input] = vtensor(net, net.input, first.nodes[0] if first else "", "input")
    xin.addr = dram.take(xin.size, "the input")
    pl.values[net.input] = to_codes(xin, x_stored)
    dram.put(xin.addr, pl.values[net.input].astype(np.int8).tobytes())
    pl.loads.append((xin.addr, dram.read(xin.addr, xin.size)))
    for op in net.ops:
        y = pl.tensors[op.output] = vtensor(net, op.output, op.nodes[0], op.ops[0])
        y.addr = dram.take(y.size, f"tensor {net.tensors[op.output].onnx}")
        ins = [pl.tensors[src(i)] for i in op.inputs]
        relu = op.relu or y.unsigned           # uint8: ONNX saturates at real 0
        sy = y.scale
        if op.kind == "conv":
            job, exact, consts = _conv_job(net, op, ins[0], y, relu, pl.values[ins[0].name], params)
        else:
            job, exact, consts = _add_job(net, op, ins, y, relu, [pl.values[t.name] for t in ins])
        addrs = {}
        for key, data in consts:
            addrs[key] = dram.take(len(data), f"{key} of {op.name}")
            dram.put(addrs[key], data)
            pl.loads.append((addrs[key], data))
        job = VoyagerJob(**{**job, "in_addr": ins[0].addr, "out_addr": y.addr, "w_addr": addrs["weights"],
                            "scale_addr": addrs["scales"], "bias_addr": addrs.get("bias", 0),
                            "skip_addr": ins[1].addr if op.kind == "add" else 0, "out_scale": float(sy)})
        err = job.validate() or model.check(job)
        if err:
            raise OnnxImportError(net.file, f"the Voyager job is refused (error {err}: too large for the "
                                            "data mode's data_limit, or an invalid shape)", op.nodes[0], op.ops[0])
        out = np.frombuffer(model.compute(job, dram.read), np.int8).astype(np.int64)
        dram.put(y.addr, out.astype(np.int8).tobytes())
        pl.values[y.name] = out.reshape(y.shape)
        pl.jobs.append((op, job, exact))
    return pl


def _conv_job(net: QNet, op: QOp, x: VTensor, y: VTensor, relu: bool, xv: np.ndarray,
              params: VoyagerParams) -> tuple[dict[str, Any], bool, list[tuple[str, bytes]]]:
    from components.voyager import matrix as M
    from components.voyager.dtypes import design
    cout, kh, kw, cin = op.weights.shape
    ms, bs = _conv_terms(net, op, x, y)
    sy_onnx = _frac(net.tensors[op.output].scale)
    # real y = (acc_v + b / r_x) * (r_x * M_c * s_y): acc_v on Voyager codes, zero padding
    scales = [x.ratio * m * sy_onnx for m in ms]
    bias = np.array([round(b / x.ratio) for b in bs], np.int64)
    fc = op.note == "fc"
    w = op.weights.transpose(1, 2, 3, 0)                     # (KH, KW, Cin, Cout)
    h, wd, c = x.shape
    if fc:
        job = dict(kind=KIND_GEMM, h=1, w=1, c=h * wd * c, k=cout)
    else:
        job = dict(kind=KIND_CONV, h=h, w=wd, c=c, k=cout, f=kh, stride=op.stride, pad=op.pad)
    job.update(dtype="int8", relu=relu, quant=True, bias=True)
    # onnxruntime's float32 is exact for power-of-two scales while every partial sum, a
    # multiple of s_x s_w, stays below 2^24 of them
    worst = [128 * int(a) + abs(b) for a, b in zip(np.abs(op.weights).reshape(cout, -1).sum(axis=1), bs)]
    exact = (not x.unsigned and not y.unsigned and all(b.denominator == 1 for b in bs)
             and all(_pow2(s) for s in scales) and _pow2(1 / y.scale) and max(worst) < 1 << 24)
    if exact:                    # the data condition: every acc + b is a bf16 value
        des = design("int8")
        if fc:
            acc = M.gemm(des, xv.reshape(1, -1), w.reshape(-1, cout), params.ic_dim, bias=bias)
        else:
            acc = M.conv2d(des, xv, w, params.ic_dim, stride=op.stride, pad=op.pad, bias=bias)
        exact = _is_bf16(acc)
    consts = [("weights", w.astype(np.int8).tobytes()), ("bias", bias.astype("<i4").tobytes()),
              ("scales", BF16.encode(np.array([float(s) for s in scales])).astype("<u2").tobytes())]
    return job, exact, consts


def _add_job(net: QNet, op: QOp, ins: list[VTensor], y: VTensor, relu: bool,
             vals: list[np.ndarray]) -> tuple[dict[str, Any], bool, list[tuple[str, bytes]]]:
    a, b = ins
    h, w, c = a.shape
    job = dict(kind=KIND_GEMM, h=h, w=w, c=c, k=c, dtype="int8", relu=relu, quant=True, add=True,
               skip_scale=float(b.scale))
    exact = (not (a.unsigned or b.unsigned or y.unsigned) and _pow2(a.scale) and _pow2(b.scale)
             and _pow2(1 / y.scale))
    if exact:                    # the data condition: every a s_a + b s_b is a bf16 value
        exact = _is_bf16(vals[0] * float(a.scale) + vals[1] * float(b.scale))
    consts = [("weights", np.eye(c, dtype=np.int8).tobytes()),
              ("scales", BF16.encode(np.full(c, float(a.scale))).astype("<u2").tobytes())]
    return job, exact, consts


def placement(net: QNet, pl: VoyagerPlan) -> list[list[str]]:
    """Per ONNX node: [node, op type, our op, where it ran and why]."""
    kinds = {op.name: op.note or op.kind for op, _, _ in pl.jobs}
    rows = []
    for node, (op_type, ours, how) in net.placement.items():
        if ours in kinds and not how:
            how = WHY[kinds[ours]]
            if op_type in ("QuantizeLinear", "Relu", "Clip"):
                how = f"fused into {ours}'s vector-unit post-ops (ReLU, quantise)"
        rows.append([node, op_type, ours, how])
    return rows


def tasks(jobs: list[tuple[Any, VoyagerJob, bool]], regs_base: int) -> list[dict[str, Any]]:
    """One mmio task per job: program the descriptor, start, wait for the interrupt, check
    STATUS (done, no error) and clear it."""
    from components.voyager.accel import MAP
    off = lambda n: MAP.register(n).offset  # noqa: E731
    out: list[dict[str, Any]] = []
    prev: list[str] = []
    for i, (op, job, _) in enumerate(jobs):
        acc: list[dict[str, Any]] = [{"write": regs_base + off("IRQ_ENABLE"), "value": 1}] if i == 0 else []
        acc += [{"write": regs_base + off(n), "value": v} for n, v in job_registers(job).items()]
        acc += [{"write": regs_base + off("CTRL"), "value": 4}, {"wait_irq": "voyager_done"},
                {"read": regs_base + off("STATUS"), "expect": 0x100},
                {"write": regs_base + off("STATUS"), "value": 0x100},
                {"write": regs_base + off("IRQ_STATUS"), "value": 1}]
        out.append({"id": f"{op.name}.job", "op": "mmio", "layer": op.name, "category": "compute",
                    "after": prev, "accesses": acc})
        prev = [out[-1]["id"]]
    return out


def voyager_params(sc: "Scenario") -> VoyagerParams:
    """The scenario's Voyager instance parameters (``soc.voyager.*`` after the overrides)."""
    from ..platforms import resolved_parameters
    got = resolved_parameters(sc)
    key = next(k for k in sorted(got) if k.endswith(".voyager"))
    return VoyagerParams(**{k: v for k, v in got[key].items() if k in VoyagerParams.__dataclass_fields__})


def deploy_onnx(sc: "Scenario", path: str, label: str, input_shape: list[int] | None) -> "Deployment":
    """Import, plan and deploy the model; goldens: the reference in DRAM (bit for bit) and
    onnxruntime (bit for bit when every op is exact on this input, else the tolerance)."""
    from ..deploy.mapping import Deployment
    from ..deploy.network import Layer, Network
    from ..deploy.reference import NetParams
    from ..onnx.deploy import float_reference, prepare
    from ..onnx.ort import run_ort
    from ..platforms import memory_map_of
    params = voyager_params(sc)
    if not params.data:
        raise OnnxImportError(label, "soc.voyager.data is off (timing only): an ONNX run checks values")
    if params.dtype == "bf16":          # a float model through bf16 jobs (onnx_bf16.py)
        from ..onnx.load import load_model
        from ..onnx.quantize import is_float_model
        if is_float_model(load_model(path, input_shape, label)):
            from .onnx_bf16 import deploy_bf16
            return deploy_bf16(sc, path, label, input_shape, params)
    model, net, x, xf = prepare(path, sc.seed, label, input_shape)
    mm = memory_map_of(sc)
    dram = mm["dram"]
    pl = plan(net, x, params, dram.base, dram.size)
    ort = run_ort(model, net, x)
    src = lambda n: net.aliases.get(n, n)  # noqa: E731
    layers = [Layer(name=op.name, type=op.note or op.kind, inputs=[src(i) for i in op.inputs])
              for op, _, _ in pl.jobs]
    h, w, c = net.tensors[net.input].shape
    dep = Deployment(Network(net.name, (h, w, c), 8, layers), NetParams(), {})
    dep.loads = [("soc", a, d) for a, d in pl.loads]
    dep.tasks = tasks(pl.jobs, mm["voyager"].base)
    for name, t in pl.tensors.items():
        if name != net.input:
            dep.goldens[name] = (t.addr, pl.values[name].astype(np.int8).tobytes())
    for op, job, exact in pl.jobs:
        kind = op.note or op.kind
        dep.layer_info[op.name] = {"type": kind, "onnx_nodes": list(op.nodes),
                                   "onnx_ops": "+".join(t for t in op.ops if t != "QuantizeLinear"),
                                   "runs_on": "voyager", "where": WHY[kind], "exact_vs_onnxruntime": exact}
    proven = all(e for _, _, e in pl.jobs)
    dep.onnx = {"file": net.file, "placement": placement(net, pl), "proven": proven, "goldens": {}}
    out = pl.tensors[net.output]
    if proven and xf is None:
        dep.onnx["goldens"] = {n: (pl.tensors[n].addr, to_codes(pl.tensors[n], v).astype(np.int8).tobytes())
                               for n, v in ort.items() if n in pl.tensors and n != net.input}
    else:
        ref = float_reference(path, xf, input_shape, label) if xf is not None else ort["output:float"]
        if xf is None and np.issubdtype(np.asarray(ref).dtype, np.integer):   # a quantised graph output
            t = net.tensors[net.output]
            ref = (np.asarray(ref, np.float64) - t.offset - t.zp) * float(np.float32(t.scale))
        ref = np.asarray(ref, np.float64)
        if ref.ndim == 4:
            ref = ref[0].transpose(1, 2, 0)
        dep.onnx["float"] = {"addr": out.addr, "size": out.size, "scale": float(out.scale), "zp": 0,
                             "reference": ref.reshape(-1).tolist(), "tolerance": TOLERANCE}
    return dep
