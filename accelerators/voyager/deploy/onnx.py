"""``network: {onnx: model.onnx}`` on the ``voyager`` platform (docs/onnx.md, "On Voyager").

The model is imported by :mod:`cosim.onnx` (a float model is first quantised there, as for
MARSELLUS; with ``soc.voyager.dtype=bf16`` it runs as bf16 jobs instead, :mod:`.onnx_bf16`)
into its integer network; every op then becomes Voyager int8 jobs programmed through the
descriptor registers:

* ``conv`` (Conv, depthwise as dense block-diagonal weights, Gemm/MatMul, AveragePool as a
  conv with 0/1 windows): conv jobs (a GEMM job for a classifier over the whole map) with
  ReLU, the int32 bias and the per-channel multiplier fused;
* ``add``: a GEMM job with identity weights whose residual-add post-op brings the second
  input (the vector unit adds the two rescaled operands, ReLU, quantises).

Tensors keep cosim.onnx's int8 storage (a uint8 tensor as ``v - 128``, zero point -128):
a conv's ``acc = sum(code w) + bias - zp_x sum(w)`` is exact in int32 with the zero-point
term in the bias, and the output's zero point joins the bias as ``zp_y / M`` accumulator
units (the quantiser's saturation at -128 is ONNX's ReLU and uint8 clamp). Voyager pads with
code 0, not with a tensor's zero point, so a tensor read with padding is stored with a
border of its zero point (real 0) loaded once; its consumers read it with padding off, and
its producer writes the interior (one job per output row). A half-unit bias (cosim.onnx's
tie breaker) becomes an integer with doubled weights when they fit int8. The vector unit
dequantises by ``M = s_x s_w / s_y`` and quantises by 1: with ``vector_dtype: fp32`` that
is onnxruntime's ``RNE(acc M) + zp`` bit for bit under the conditions :func:`_conv_jobs` and
:func:`_add_job` check; with bf16 each op is held to :data:`LSB_BOUND` codes of
:func:`onnx_integer_op` (exact integers) on its simulated inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from typing import TYPE_CHECKING, Any

import numpy as np

from accelerators.voyager.model.config import VoyagerParams
from accelerators.voyager.model.dtypes import FloatType
from accelerators.voyager.model.job import KIND_CONV, KIND_GEMM, VoyagerJob, VoyagerModel

from cosim.onnx.errors import OnnxImportError
from cosim.onnx.ir import QNet, QOp
from accelerators.voyager.deploy.jobs import Dram, tasks

if TYPE_CHECKING:
    from cosim.deploy.mapping import Deployment
    from cosim.scenario import Scenario

BF16 = FloatType("bf16")
#: a float model (quantised on import): its dequantised output may differ from the float
#: model's onnxruntime output by this fraction of its largest magnitude — the quantisation's
#: own error, as for the cores (cosim.onnx.deploy.FLOAT_TOL; measured 12.6-21.9 % on the
#: float builder models, docs/onnx.md "On Voyager")
TOLERANCE = 0.25
#: with the bf16 vector unit (or an op outside the exact form), every quantised tensor may
#: differ from onnxruntime's by at most this many output codes (docs/onnx.md, "On Voyager":
#: derived from bf16's 8-bit significand, measured on the builder models)
LSB_BOUND = 2

WHY = {
    "conv": "Voyager matrix unit (int8 conv jobs; bias, rescale, ReLU, quantise in the vector unit)",
    "fc": "Voyager matrix unit (int8 GEMM job over the flattened map)",
    "pool": "Voyager matrix unit (int8 conv job with 0/1 windows, 1/k^2 in the multiplier)",
    "add": "Voyager matrix + vector unit (int8 GEMM with identity weights, residual-add post-op)",
}
NEAREST = {"maxpool": "AveragePool (Voyager's pooling runs on bf16 tensors; the int8 path has none)",
           "concat": "Add (no Voyager operator writes a channel slice of its output)"}


def _pow2(f: Fraction) -> bool:
    n, d = f.numerator, f.denominator
    return n > 0 and n & (n - 1) == 0 and d & (d - 1) == 0


def _odd(n: int) -> int:
    n = abs(n)
    while n and n % 2 == 0:
        n //= 2
    return n


def _fp32_exact(v: np.ndarray) -> bool:
    v = np.asarray(v, np.float64)
    return bool(np.all(v.astype(np.float32).astype(np.float64) == v))


@dataclass
class VTensor:
    """A tensor in Voyager's form: the int8 storage codes (``real = (code - zp) * scale``,
    cosim.onnx.ir's storage: a uint8 tensor is ``v - 128`` with zp -128), HWC at ``addr``,
    stored with a border of ``pad`` pixels holding ``zp`` (real 0) on every side, so a
    padded convolution reads it with the accelerator's own padding off."""

    name: str
    shape: tuple[int, int, int]
    scale: Fraction
    zp: int
    pad: int = 0
    addr: int = 0

    @property
    def stored(self) -> tuple[int, int, int]:
        h, w, c = self.shape
        return h + 2 * self.pad, w + 2 * self.pad, c

    @property
    def size(self) -> int:
        return int(np.prod(self.stored))

    def interior(self, v: np.ndarray) -> np.ndarray:
        p = self.pad
        h, w, _ = self.shape
        return v[p:p + h, p:p + w]

    def bordered(self, v: np.ndarray) -> np.ndarray:
        """The stored image of interior codes ``v``."""
        p = self.pad
        return np.pad(np.asarray(v, np.int64).reshape(self.shape), ((p, p), (p, p), (0, 0)), constant_values=self.zp)


@dataclass
class VoyagerPlan:
    """The jobs (op, job, exact on this input) in order, the tensors and the loads."""

    jobs: list[tuple[QOp, VoyagerJob, bool]] = field(default_factory=list)
    tensors: dict[str, VTensor] = field(default_factory=dict)
    loads: list[tuple[int, bytes]] = field(default_factory=list)
    values: dict[str, np.ndarray] = field(default_factory=dict)   # stored codes (H+2P, W+2P, C)
    exact: dict[str, bool] = field(default_factory=dict)          # per op: bit-exact vs onnxruntime


def _frac(x: float) -> Fraction:
    return Fraction(float(np.float32(x)))


def vtensor(net: QNet, name: str) -> VTensor:
    t = net.tensors[name]
    return VTensor(name, t.shape, _frac(t.scale), int(t.zp))


def check_supported(net: QNet) -> None:
    """A one-line error naming the first op Voyager's int8 path cannot run."""
    for op in net.ops:
        if op.kind in NEAREST:
            raise OnnxImportError(net.file, f"no Voyager int8 operator for it (the voyager platform has no "
                                            f"core to fall back onto); nearest supported: {NEAREST[op.kind]}",
                                  op.nodes[0], op.ops[0])
        t = net.tensors[op.output]
        if op.relu and t.zp not in (0, -128):
            raise OnnxImportError(net.file, f"tensor {t.onnx!r} has zero point {t.zp + t.offset} after a ReLU: "
                                            "Voyager's ReLU clips at code 0 and its quantiser at -128; nearest "
                                            "supported: zero point 0 (int8 or uint8)", op.nodes[0], op.ops[0])
        if op.kind == "add" and all(net.tensors[net.aliases.get(i, i)].zp for i in op.inputs):
            raise OnnxImportError(net.file, "both inputs of the Add have a nonzero zero point: the residual "
                                            "post-op reads its operand without one; nearest supported: one input "
                                            "with zero point 0 (int8)", op.nodes[0], op.ops[0])


def _covers(op: QOp, x: VTensor) -> bool:
    """A window over the whole (unpadded) map: a global pooling or a map-sized kernel."""
    h, w, _ = x.shape
    return op.kind == "conv" and op.note != "fc" and op.pad == 0 and op.weights.shape[1] == h \
        and op.weights.shape[2] == w and h == w


def _borders(net: QNet) -> dict[str, int]:
    """Each tensor's stored border: the largest padding a convolution reads it with, the
    same for an Add's inputs and output (the add runs over the stored maps, border too)."""
    src = lambda n: net.aliases.get(n, n)  # noqa: E731
    pad = {n: 0 for n in net.tensors}
    for op in net.ops:
        if op.kind == "conv":
            pad[src(op.inputs[0])] = max(pad[src(op.inputs[0])], op.pad)
    changed = True
    while changed:
        changed = False
        for op in net.ops:
            if op.kind == "add":
                group = [src(i) for i in op.inputs] + [op.output]
                top = max(pad[g] for g in group)
                for g in group:
                    if pad[g] != top:
                        pad[g], changed = top, True
    return pad


def _conv_terms(net: QNet, op: QOp, x: VTensor) -> tuple[list[Fraction], list[Fraction]]:
    """Per output channel: ONNX's exact multiplier ``M_c = s_x s_w / s_y`` and the offset
    ``o_c`` with ``acc = sum(code * w) + o_c`` (``o_c = bias - zp_x sum(w)``), recovered from
    the cores' requantisation (``B = o P + 2^(S-1) + zp_y 2^S``); ``s_w`` is the float32
    value ``P / 2^S`` approximates (a weight scale or 1/k^2)."""
    rq = op.requant
    s = int(rq["shift"])
    yt = net.tensors[op.output]
    sy, zp_y = _frac(yt.scale), yt.zp
    ms, offs = [], []
    for p, b in zip(rq["scale"], rq["bias"]):
        sw = _frac(float(Fraction(int(p), 1 << s) * sy / x.scale))
        ms.append(x.scale * sw / sy)
        offs.append(Fraction(int(b) - (1 << s >> 1) - zp_y * (1 << s), int(p)))
    return ms, offs


def _quant_exact(m: Fraction, amax: int) -> bool:
    """``rne(fl32(acc * fl32(M)))`` (Voyager's fp32 dequantise by ``M``, quantise by 1)
    equals ``RNE(acc M)`` and onnxruntime's ``rne(fl32(y / s_y))`` for ``|acc| <= amax``:
    ``M`` dyadic and ``acc M`` an fp32 value (exact), or ``M``'s denominator ``d`` odd (no
    ties; the exact value is >= 1/(2d) from a rounding boundary) and small enough that three
    fp32 roundings (relative 2^-24 each) cannot cross one."""
    d = m.denominator
    if d & (d - 1) == 0:
        return amax * _odd(m.numerator) < 1 << 24
    qmax = int(amax * m) + 1
    return d % 2 == 1 and qmax * 2 * d * 3 < 1 << 24


def plan(net: QNet, x_stored: np.ndarray, params: VoyagerParams, base: int, size: int) -> VoyagerPlan:
    """Lay out every tensor (with its border) and weight in DRAM, build the jobs and run them
    through the accelerator's own functional model (``VoyagerModel.compute``): the reference."""
    check_supported(net)
    src = lambda n: net.aliases.get(n, n)  # noqa: E731 - a flattened view reads its source
    dram = Dram(base, size, net.file)
    pl = VoyagerPlan()
    model = VoyagerModel(params)
    borders = _borders(net)

    def new_tensor(name: str, what: str) -> VTensor:
        t = pl.tensors[name] = vtensor(net, name)
        t.pad = borders[name]
        t.addr = dram.take(t.size, what)
        if t.pad:          # the border (real 0) is loaded once; jobs write the interior
            dram.put(t.addr, np.full(t.size, t.zp, np.int8).tobytes())
            pl.loads.append((t.addr, dram.read(t.addr, t.size)))
        return t

    xin = new_tensor(net.input, "the input")
    pl.values[net.input] = xin.bordered(x_stored)
    data = pl.values[net.input].astype(np.int8).tobytes()
    dram.put(xin.addr, data)
    pl.loads = [(a, d) for a, d in pl.loads if a != xin.addr] + [(xin.addr, data)]
    for op in net.ops:
        y = new_tensor(op.output, f"tensor {net.tensors[op.output].onnx}")
        ins = [pl.tensors[src(i)] for i in op.inputs]
        if op.kind == "conv":
            jobs, exact, consts = _conv_jobs(net, op, ins[0], y, params, pl.values[ins[0].name])
        else:
            jobs, exact, consts = _add_job(op, ins, y, [pl.values[t.name] for t in ins], params)
        addrs = {}
        for key, data in consts:
            addrs[key] = dram.take(len(data), f"{key} of {op.name}")
            dram.put(addrs[key], data)
            pl.loads.append((addrs[key], data))
        for job in jobs:
            job = VoyagerJob(**{**job, "w_addr": addrs["weights"], "scale_addr": addrs["scales"],
                                "bias_addr": addrs.get("bias", 0), "out_scale": 1.0})
            err = job.validate() or model.check(job)
            if err:
                raise OnnxImportError(net.file, f"the Voyager job is refused (error {err}: too large for the "
                                                "data mode's data_limit, or an invalid shape)", op.nodes[0], op.ops[0])
            dram.put(job.out_addr, model.compute(job, dram.read))
            pl.jobs.append((op, job, exact))
        pl.values[y.name] = np.frombuffer(dram.read(y.addr, y.size), np.int8).astype(np.int64).reshape(y.stored)
        pl.exact[op.name] = exact
    return pl


def _conv_jobs(net: QNet, op: QOp, x: VTensor, y: VTensor, params: VoyagerParams, vx: np.ndarray
               ) -> tuple[list[dict[str, Any]], bool, list[tuple[str, bytes]]]:
    """The conv's jobs: one over the stored input (its border is the padding) when the output
    has no border, else one per output row, each writing that row inside the output's border;
    a 1x1 conv over a bordered input reads each row's interior. The exactness conditions."""
    ms, offs = _conv_terms(net, op, x)
    cout, kh, kw, cin = op.weights.shape
    w = np.asarray(op.weights, np.int64)
    # a half-unit bias (cosim.onnx.quantize's tie breaker) becomes an integer one with doubled
    # weights when they still fit int8: every accumulator doubles, every scale halves
    half = any(o.denominator == 2 for o in offs)
    double = half and int(w.max()) <= 63 and int(w.min()) >= -64 and all(o.denominator <= 2 for o in offs)
    k = 2 if double else 1
    units = [m * y.scale / k for m in ms]                       # real value of one accumulator unit
    mult = [m / k for m in ms]                                  # dequantise by M (quantise by 1)
    shift = [Fraction(y.zp) / m for m in mult]                  # zp_y in accumulator units
    want = [k * o + sh for o, sh in zip(offs, shift)]
    bias = np.array([round(b) for b in want], np.int64)
    wk = w * k
    relu = op.relu and y.zp == 0            # at zp -128 (uint8) the quantiser's saturation clips
    fc = op.note == "fc"
    cover = _covers(op, x)
    h, wd, c = x.shape
    hs, ws, _ = x.stored
    ho, wo, _ = y.shape
    weights = wk.transpose(1, 2, 3, 0)                          # (KH, KW, Cin, Cout)
    base = dict(dtype="int8", relu=relu, quant=True, bias=True)
    jobs: list[dict[str, Any]] = []
    if fc:
        if x.pad:
            raise OnnxImportError(net.file, "the classifier's input is read with padding elsewhere (a bordered "
                                            "map): Voyager's GEMM reads it whole", op.nodes[0], op.ops[0])
        jobs.append(dict(kind=KIND_GEMM, h=1, w=1, c=h * wd * c, k=cout, in_addr=x.addr, out_addr=y.addr, **base))
    elif cover:                # the window grows over the border, whose taps weigh 0
        p = x.pad
        weights = np.pad(weights, ((p, p), (p, p), (0, 0), (0, 0)))
        jobs.append(dict(kind=KIND_CONV, h=hs, w=ws, c=c, k=cout, f=hs, stride=1, pad=0, in_addr=x.addr,
                         out_addr=y.addr + (y.pad * y.stored[1] + y.pad) * cout, **base))
    else:
        rows_in = kh == 1 and op.pad == 0 and x.pad > 0
        if not rows_in and x.pad != op.pad:
            raise OnnxImportError(net.file, f"the input is stored with a border of {x.pad} for another consumer; "
                                            f"this {kh}x{kw} conv pads by {op.pad} (Voyager reads whole rows)",
                                  op.nodes[0], op.ops[0])
        if not rows_in and y.pad == 0:
            jobs.append(dict(kind=KIND_CONV, h=hs, w=ws, c=c, k=cout, f=kh, stride=op.stride, pad=0,
                             in_addr=x.addr, out_addr=y.addr, **base))
        else:
            for r in range(ho):
                out = y.addr + ((r + y.pad) * y.stored[1] + y.pad) * cout
                if rows_in:
                    a = x.addr + ((r * op.stride + x.pad) * ws + x.pad) * c
                    jobs.append(dict(kind=KIND_CONV, h=1, w=wd, c=c, k=cout, f=1, stride=op.stride, pad=0,
                                     in_addr=a, out_addr=out, **base))
                else:
                    jobs.append(dict(kind=KIND_CONV, h=kh, w=ws, c=c, k=cout, f=kh, stride=op.stride, pad=0,
                                     in_addr=x.addr + r * op.stride * ws * c, out_addr=out, **base))
    # exactness: onnxruntime's float32 conv is exact while every partial sum, a multiple of
    # one unit, has at most 24 significant bits; Voyager's fp32 unit then computes the same
    # RNE(acc M) + zp when the bias is an integer, fl(acc * unit) is exact and so is the quantise
    # on this input (the largest sum of |products|, which bounds every partial sum in any
    # order): onnxruntime sums (x - z_x) w, Voyager code * (k w) with the offsets in the bias
    ort_abs = _conv_sum(op, x, vx - x.zp, y.shape, np.abs, 0).reshape(-1, cout).max(axis=0)
    voy_abs = k * _conv_sum(op, x, vx, y.shape, np.abs).reshape(-1, cout).max(axis=0) + np.abs(bias)
    ort_amax = [k * int(a) + abs(int(round(k * o))) for a, o in zip(ort_abs, offs)]
    exact = (params.vector_dtype == "fp32" and all(Fraction(b).denominator == 1 for b in want)
             and all(a * _odd(u.numerator) < 1 << 24 for a, u in zip(ort_amax, units))
             and all(_quant_exact(m, int(a)) for m, a in zip(mult, voy_abs)))
    fmt = "<f4" if params.vector_dtype == "fp32" else None
    scales = (np.array([float(m) for m in mult], np.float64).astype(fmt).tobytes() if fmt else
              BF16.encode(np.array([float(m) for m in mult])).astype("<u2").tobytes())
    consts = [("weights", weights.astype(np.int8).tobytes()), ("bias", bias.astype("<i4").tobytes()),
              ("scales", scales)]
    return jobs, exact, consts


def _add_job(op: QOp, ins: list[VTensor], y: VTensor, vals: list[np.ndarray], params: VoyagerParams
             ) -> tuple[list[dict[str, Any]], bool, list[tuple[str, bytes]]]:
    """One GEMM over the stored maps (borders too: real 0 + real 0 is real 0): identity
    weights on the input with a zero point (its -zp in the bias), the other through the
    residual post-op; the output's zero point joins the bias."""
    a, b = ins if ins[1].zp == 0 else ins[::-1]
    h, w, c = a.stored
    ma, mb = a.scale / y.scale, b.scale / y.scale               # dequantise by M (quantise by 1)
    want = -a.zp + Fraction(y.zp) / ma
    relu = op.relu and y.zp == 0
    job = dict(kind=KIND_GEMM, h=h, w=w, c=c, k=c, dtype="int8", relu=relu, quant=True, add=True, bias=True,
               skip_scale=float(mb), in_addr=a.addr, skip_addr=b.addr, out_addr=y.addr)
    ia, ib = (vals[ins.index(a)] - a.zp).astype(np.float64), vals[ins.index(b)].astype(np.float64)
    # onnxruntime: fl32((a - za) s_a) + fl32(b s_b), one rounding, then / s_y; Voyager the same
    # with M = s / s_y: both exact when every term and sum is an fp32 value and M is dyadic,
    # else equal when M's common denominator d is odd and small (no ties, no crossing)
    ra, rb = ia * float(a.scale), ib * float(b.scale)
    fa, fb = ia * float(ma), ib * float(mb)
    d = lcm(ma.denominator, mb.denominator)
    qmax = int(np.abs(fa + fb).max()) + 1
    ort_exact = _fp32_exact(ra) and _fp32_exact(rb) and _fp32_exact(ra + rb)
    exact = (params.vector_dtype == "fp32" and want.denominator == 1 and ort_exact
             and ((d & (d - 1) == 0 and _fp32_exact(fa) and _fp32_exact(fb) and _fp32_exact(fa + fb))
                  or (d % 2 == 1 and qmax * 2 * d * 5 < 1 << 24)))
    fmt = "<f4" if params.vector_dtype == "fp32" else None
    sc = np.full(c, float(ma))
    consts = [("weights", np.eye(c, dtype=np.int8).tobytes()),
              ("bias", np.full(c, round(want), "<i4").tobytes()),
              ("scales", sc.astype(fmt).tobytes() if fmt else BF16.encode(sc).astype("<u2").tobytes())]
    return [job], exact, consts


def _rne_div(num: np.ndarray, den: int) -> np.ndarray:
    """Round ``num / den`` (integers, ``den > 0``) to nearest, ties to even, exactly."""
    q = num // den
    r2 = 2 * (num - q * den)
    return q + ((r2 > den) | ((r2 == den) & (q % 2 == 1)))


def _conv_sum(op: QOp, x: VTensor, vx: np.ndarray, out_shape: tuple[int, int, int],
              fn: Any = None, fill: int | None = None) -> np.ndarray:
    """``sum(fn(v) * fn(w))`` over each output's window (``v`` the stored values, padded
    with ``fill``, default the zero point; ``fn`` e.g. ``np.abs`` for a bound on every
    partial sum), int64 (H, W, Cout)."""
    fn = fn or (lambda v: v)
    w = fn(np.asarray(op.weights, np.int64))                    # (Cout, KH, KW, Cin)
    cout, kh, kw, _ = w.shape
    p = op.pad
    xin = fn(np.pad(x.interior(vx), ((p, p), (p, p), (0, 0)), constant_values=x.zp if fill is None else fill))
    ho, wo, _ = out_shape
    acc = np.zeros((ho, wo, cout), np.int64)
    for dy in range(kh):
        for dx in range(kw):
            win = xin[dy:dy + op.stride * (ho - 1) + 1:op.stride, dx:dx + op.stride * (wo - 1) + 1:op.stride]
            acc += np.einsum("hwc,kc->hwk", win, w[:, dy, dx, :])
    return acc


def onnx_integer_op(net: QNet, op: QOp, ins: list[VTensor], vals: list[np.ndarray]) -> np.ndarray:
    """ONNX's integer semantics of ``op`` on the given (stored) inputs, in exact integer
    arithmetic (numpy, independent of the accelerator model): conv ``RNE((sum (x - zx) w +
    bias) M) + zy``, Add ``RNE((a - za) s_a / s_y + (b - zb) s_b / s_y) + zy``, ReLU,
    saturated to int8 storage. With identical inputs this is onnxruntime's result when its
    float32 arithmetic is exact (cosim.onnx.requant); its interior (H, W, C)."""
    yt = net.tensors[op.output]
    sy, zy = _frac(yt.scale), int(yt.zp)
    if op.kind == "add":
        (a, va), (b, vb) = zip(ins, vals)
        ma, mb = a.scale / sy, b.scale / sy
        den = ma.denominator * mb.denominator
        num = ((a.interior(va) - a.zp) * (ma.numerator * mb.denominator)
               + (b.interior(vb) - b.zp) * (mb.numerator * ma.denominator))
        q = _rne_div(np.asarray(num, np.int64), den)
    else:
        x, vx = ins[0], vals[0]
        ms, offs = _conv_terms(net, op, x)
        acc = _conv_sum(op, x, vx, yt.shape)
        q = np.zeros_like(acc)
        for c, (m, o) in enumerate(zip(ms, offs)):
            den = m.denominator * o.denominator
            q[..., c] = _rne_div((acc[..., c] * o.denominator + o.numerator) * m.numerator, den)
    if op.relu:
        q = np.maximum(q, 0)
    return np.clip(q + zy, -128, 127)


def local_goldens(net: QNet, pl: VoyagerPlan) -> dict[str, tuple[int, bytes]]:
    """Per op: :func:`onnx_integer_op` on the op's inputs as the plan computed them, in the
    output's stored layout (what a target with inexact arithmetic is held to, per op)."""
    src = lambda n: net.aliases.get(n, n)  # noqa: E731
    out = {}
    for op in net.ops:
        ins = [pl.tensors[src(i)] for i in op.inputs]
        y = pl.tensors[op.output]
        ref = onnx_integer_op(net, op, ins, [pl.values[t.name] for t in ins])
        out[op.output] = (y.addr, y.bordered(ref).astype(np.int8).tobytes())
    return out


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


def voyager_params(sc: "Scenario") -> VoyagerParams:
    """The scenario's Voyager instance parameters (``soc.voyager.*`` after the overrides)."""
    from cosim.platforms import resolved_parameters
    got = resolved_parameters(sc)
    key = next(k for k in sorted(got) if k.endswith(".voyager"))
    return VoyagerParams(**{k: v for k, v in got[key].items() if k in VoyagerParams.__dataclass_fields__})


def deploy_onnx(sc: "Scenario", path: str, label: str, input_shape: list[int] | None) -> "Deployment":
    """Import, plan and deploy the model; goldens: the reference in DRAM (bit for bit) and
    onnxruntime (bit for bit when every op is exact on this input, else the tolerance)."""
    from cosim.deploy.mapping import Deployment
    from cosim.deploy.network import Layer, Network
    from cosim.deploy.reference import NetParams
    from cosim.onnx.deploy import float_reference, prepare
    from cosim.onnx.ort import run_ort
    from cosim.platforms import memory_map_of
    params = voyager_params(sc)
    if not params.data:
        raise OnnxImportError(label, "soc.voyager.data is off (timing only): an ONNX run checks values")
    if params.dtype == "bf16":          # a float model through bf16 jobs (onnx_bf16.py)
        from cosim.onnx.load import load_model
        from cosim.onnx.quantize import is_float_model
        if is_float_model(load_model(path, input_shape, label)):
            from accelerators.voyager.deploy.onnx_bf16 import deploy_bf16
            return deploy_bf16(sc, path, label, input_shape, params)
    model, net, x, xf = prepare(path, sc.seed, label, input_shape)
    mm = memory_map_of(sc)
    dram = mm["dram"]
    pl = plan(net, x, params, dram.base, dram.size)
    ort = run_ort(model, net, x)
    src = lambda n: net.aliases.get(n, n)  # noqa: E731
    layers = [Layer(name=op.name, type=op.note or op.kind, inputs=[src(i) for i in op.inputs]) for op in net.ops]
    h, w, c = net.tensors[net.input].shape
    dep = Deployment(Network(net.name, (h, w, c), 8, layers), NetParams(), {})
    dep.loads = [("soc", a, d) for a, d in pl.loads]
    dep.tasks = tasks(pl.jobs, mm["voyager"].base)
    for name, t in pl.tensors.items():
        if name != net.input:
            dep.goldens[name] = (t.addr, pl.values[name].astype(np.int8).tobytes())
    for op in net.ops:
        kind = op.note or op.kind
        dep.layer_info[op.name] = {"type": kind, "onnx_nodes": list(op.nodes),
                                   "onnx_ops": "+".join(t for t in op.ops if t != "QuantizeLinear"),
                                   "runs_on": "voyager", "where": WHY[kind],
                                   "exact_vs_onnxruntime": pl.exact[op.name]}
    proven = all(pl.exact.values())
    dep.onnx = {"file": net.file, "placement": placement(net, pl), "proven": proven, "goldens": {}}
    out = pl.tensors[net.output]
    if proven:      # the QDQ model (a float model's as quantised on import): onnxruntime, every tensor
        dep.onnx["goldens"] = {n: (pl.tensors[n].addr, pl.tensors[n].bordered(v).astype(np.int8).tobytes())
                               for n, v in ort.items() if n in pl.tensors and n != net.input}
    else:           # each op within LSB_BOUND codes of ONNX's exact integer result on its simulated inputs
        dep.onnx["goldens"] = local_goldens(net, pl)
        dep.onnx["lsb"] = LSB_BOUND
        dep.onnx["lsb_reference"] = "ONNX integer requantisation of each op on its simulated inputs"
    if xf is not None:
        ref = np.asarray(float_reference(path, xf, input_shape, label), np.float64)
        if ref.ndim == 4:
            ref = ref[0].transpose(1, 2, 0)
        if out.pad:
            raise OnnxImportError(label, "the network's output is stored with a border (read with padding)")
        dep.onnx["float"] = {"addr": out.addr, "size": out.size, "scale": float(out.scale), "zp": out.zp,
                             "reference": ref.reshape(-1).tolist(), "tolerance": TOLERANCE}
    return dep
