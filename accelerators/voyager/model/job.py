"""One Voyager job (a fused operator programmed through the descriptor registers) and its
two pure functions (components/accel.py ``AcceleratorModel``): bit-exact ``functional``
(operands through ``read``, outputs through ``write``) and ``timing`` (the schedule of
:mod:`accelerators.voyager.model.perf` as compute phases and DRAM bursts)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from components.accel import Burst, JobTiming, ReadFn, TimingPhase, WriteFn

from . import matrix as M
from . import vector as V
from .compiler import FusedOp
from .config import VoyagerParams
from .dtypes import FloatType, IntType, design, pack_ints, packed_bytes, parse_dtype, unpack_ints, wrap_int
from .dwc import DwcUnit, n_passes
from .errors import VoyagerError
from .perf import dwc_fetch, elem_bytes, matrix_perf, vector_perf
from .zoo import Layer

#: DTYPE register codes (registers.yaml constants)
DTYPES = ("int8", "bf16", "e4m3", "e5m2", "posit8", "mxint8", "int4", "int2")
#: integer operand types: per-tensor scales, int32 accumulation, packed in memory
INT_DTYPES = ("int8", "int4", "int2")
ELEM_BITS = {"int8": 8, "bf16": 16, "e4m3": 8, "e5m2": 8, "posit8": 8, "mxint8": 8, "int4": 4, "int2": 2}
ERR_BAD_JOB, ERR_NO_TILE, ERR_MX_BLOCK, ERR_BAD_ADDRESS = 1, 2, 3, 4
MX_BLOCK = 32
#: most phases a job's timing replays (a job of more L2 tiles replays groups of tiles)
MAX_PHASES = 4096
KIND_CONV, KIND_GEMM, KIND_VECTOR, KIND_DWC = 0, 1, 2, 3
#: VOP codes of vector-unit jobs -> layer kind
VOPS = ("maxpool", "avgpool", "softmax", "layernorm")
BF16 = FloatType("bf16")


def f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def bits_f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


@dataclass(frozen=True)
class JobProblem:
    """Why a descriptor is refused: the STATUS.ERROR code, the register field at fault
    (``REGISTER.FIELD``) and what is wrong with its value."""

    code: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(frozen=True)
class VoyagerJob:
    """A decoded descriptor: a conv (``kind`` 0) or GEMM (1) with fused post-ops, or a
    vector-unit operator (2). ``mx_block``: the MXINT8 block size along the reduction."""

    kind: int
    dtype: str
    in_addr: int
    w_addr: int
    out_addr: int
    h: int
    w: int
    c: int
    k: int
    f: int = 1
    stride: int = 1
    pad: int = 0
    bias_addr: int = 0
    scale_addr: int = 0
    skip_addr: int = 0
    out_scale: float = 1.0
    skip_scale: float = 1.0
    relu: bool = False
    gelu: bool = False
    silu: bool = False
    add: bool = False
    quant: bool = False
    bias: bool = False
    tile: tuple[int, int, int, int] = (0, 0, 0, 0)
    w_scale_addr: int = 0
    vop: int = 0
    mx_block: int = MX_BLOCK
    sigmoid: bool = False
    tanh: bool = False
    #: OP.SPLINE: the programmed spline as 27 bf16 codes (b0..b5, then c2, c1, c0 per segment)
    spline: tuple[int, ...] = ()

    @property
    def pooling(self) -> bool:
        return self.kind == KIND_VECTOR and self.vop < 2

    def problem(self) -> JobProblem | None:
        """The first rule this descriptor breaks (located at its register field), or None."""
        windowed = self.kind in (KIND_CONV, KIND_DWC) or self.pooling
        if self.kind not in (KIND_CONV, KIND_GEMM, KIND_VECTOR, KIND_DWC):
            return JobProblem(ERR_BAD_JOB, "OP.KIND", f"{self.kind} is no operator kind (0 conv, 1 GEMM, 2 vector, "
                                                      "3 depthwise conv)")
        if self.dtype not in DTYPES:
            known = ", ".join(f"{i} {n}" for i, n in enumerate(DTYPES))
            return JobProblem(ERR_BAD_JOB, "OP.DTYPE", f"{self.dtype.lstrip('#')} is no datatype code (known: {known})")
        for name, v in (("SHAPE_HW.H", self.h), ("SHAPE_HW.W", self.w), ("SHAPE_CK.C", self.c),
                        ("SHAPE_CK.K", self.k)) + ((("CONV.F", self.f), ("CONV.STRIDE", self.stride))
                                                   if windowed else ()):
            if v < 1:
                return JobProblem(ERR_BAD_JOB, name, f"{v}: must be >= 1")
        if windowed and (self.h + 2 * self.pad < self.f or self.w + 2 * self.pad < self.f):
            return JobProblem(ERR_BAD_JOB, "CONV.F", f"{self.f}: the window is larger than the padded input "
                                                     f"{self.h + 2 * self.pad}x{self.w + 2 * self.pad}")
        if self.kind == KIND_VECTOR and self.vop >= len(VOPS):
            return JobProblem(ERR_BAD_JOB, "OP.VOP", f"{self.vop} is no vector operator (0..{len(VOPS) - 1})")
        if self.kind == KIND_VECTOR and self.dtype != "bf16":
            return JobProblem(ERR_BAD_JOB, "OP.DTYPE", f"{self.dtype}: vector-unit operators take bf16 tensors")
        if self.kind == KIND_DWC and self.is_mx:
            return JobProblem(ERR_BAD_JOB, "OP.DTYPE", "mxint8: the DWC extension has no microscaling path")
        if sum((self.relu, self.gelu, self.silu, self.sigmoid, self.tanh, bool(self.spline))) > 1:
            return JobProblem(ERR_BAD_JOB, "OP", "more than one of RELU, GELU, SILU, SIGMOID, TANH, SPLINE is set")
        if self.spline:
            pr = spline_problem(self.spline)
            if pr:
                return pr
        if self.quant and self.out_scale <= 0 and self.is_int:
            return JobProblem(ERR_BAD_JOB, "OUT_SCALE", f"{self.out_scale}: an integer output scale must be > 0")
        if self.is_mx:
            if self.kind not in (KIND_CONV, KIND_GEMM):
                return JobProblem(ERR_MX_BLOCK, "OP.KIND", "MXINT8 runs convolutions and GEMMs only")
            if self.quant:
                return JobProblem(ERR_MX_BLOCK, "OP.QUANT", "an MXINT8 job writes bf16 (no re-quantisation)")
            if self.mx_block < 1 or self.c % self.mx_block:
                return JobProblem(ERR_MX_BLOCK, "MX_CFG.BLOCK", f"{self.mx_block} does not divide the reduction "
                                                            f"SHAPE_CK.C = {self.c}")
        return None

    def validate(self) -> int:
        """0, or the error code the control port reports for this descriptor."""
        pr = self.problem()
        return pr.code if pr else 0

    @property
    def out_hw(self) -> tuple[int, int]:
        if self.kind == KIND_GEMM or (self.kind == KIND_VECTOR and not self.pooling):
            return self.h, self.w
        return ((self.h + 2 * self.pad - self.f) // self.stride + 1,
                (self.w + 2 * self.pad - self.f) // self.stride + 1)

    @property
    def activation(self) -> str:
        for name in ("relu", "gelu", "silu", "sigmoid", "tanh", "spline"):
            if getattr(self, name):
                return name
        return "none"

    def apply_activation(self, y: np.ndarray) -> np.ndarray:
        """The job's activation in the vector unit (a programmed spline or a fitted one)."""
        if self.spline:
            return programmed_spline(self.spline)(y)
        return V.activation(self.activation, y)

    @property
    def bits(self) -> int:
        """Bits of one operand element in memory (sub-byte integers are packed)."""
        return ELEM_BITS.get(self.dtype, 8)

    @property
    def in_bytes(self) -> float:
        return self.bits / 8

    @property
    def out_bytes(self) -> float:
        return self.in_bytes if self.quant else 2

    def size(self, n: int) -> int:
        """Bytes of ``n`` operand elements (packed)."""
        return packed_bytes(n, self.bits)

    def out_size(self, n: int) -> int:
        """Bytes of ``n`` output elements: the operand type when re-quantised, else bf16."""
        return self.size(n) if self.quant else 2 * n

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES

    @property
    def is_mx(self) -> bool:
        return self.dtype == "mxint8"

    @property
    def design_name(self) -> str:
        """The datatype name the engine and the performance model know (MX with its block)."""
        return f"mxint8_b{self.mx_block}" if self.is_mx and self.mx_block != MX_BLOCK else self.dtype

    @property
    def taps(self) -> int:
        return self.f * self.f if self.kind in (KIND_CONV, KIND_DWC) else 1

    @property
    def n_weights(self) -> int:
        """Weight elements: [fy][fx][C][K], or [fy][fx][C] for a depthwise conv."""
        return self.taps * self.c * (1 if self.kind == KIND_DWC else self.k)

    def tensors(self, scale_bytes: int = 2) -> list[tuple[int, int]]:
        """``(address, bytes)`` of every tensor the job reads or writes (``scale_bytes``: one
        dequantisation scale in the vector unit's format, 2 for bf16, 4 for fp32)."""
        ho, wo = self.out_hw
        if self.kind == KIND_VECTOR:
            out = [(self.in_addr, self.h * self.w * self.c * 2), (self.out_addr, ho * wo * self.k * 2)]
            if VOPS[self.vop] == "layernorm":
                out += [(self.w_addr, 2 * self.c), (self.bias_addr, 2 * self.c)]
            return out
        out = [(self.in_addr, self.size(self.h * self.w * self.c)), (self.out_addr, self.out_size(ho * wo * self.k)),
               (self.w_addr, self.size(self.n_weights))]
        if self.bias:
            out.append((self.bias_addr, self.k * (4 if self.is_int else 2)))
        if self.is_int:
            out.append((self.scale_addr, self.k * scale_bytes))
        if self.is_mx:
            nb = self.c // self.mx_block
            out += [(self.scale_addr, self.h * self.w * nb), (self.w_scale_addr, self.taps * nb * self.k)]
        if self.add:
            out.append((self.skip_addr, 2 * ho * wo * self.k if self.is_mx else self.size(ho * wo * self.k)))
        return out

    def post(self) -> tuple[str, ...]:
        out = []
        if self.add:
            out.append("add")
        if self.activation != "none":
            out.append(self.activation)
        if self.quant:
            out.append("quantize")
        return tuple(out)

    def layer(self, name: str = "job") -> Layer:
        if self.kind == KIND_VECTOR:
            return Layer(name, VOPS[self.vop], h=self.h, w=self.w, c=self.c, k=self.c, f=self.f, stride=self.stride,
                         pad=self.pad, m=self.h * self.w)
        if self.kind == KIND_GEMM:
            return Layer(name, "gemm", m=self.h * self.w, c=self.c, k=self.k)
        if self.kind == KIND_DWC:
            return Layer(name, "dwconv", h=self.h, w=self.w, c=self.c, k=self.c, f=self.f, stride=self.stride,
                         pad=self.pad)
        return Layer(name, "conv", h=self.h, w=self.w, c=self.c, k=self.k, f=self.f, stride=self.stride,
                     pad=self.pad)


APPROX_BOUNDS, APPROX_COEFFS = 6, 21


def spline_problem(codes: tuple[int, ...]) -> JobProblem | None:
    """Why a programmed spline (27 bf16 codes) cannot run, located at its APPROX_ register."""
    if len(codes) != APPROX_BOUNDS + APPROX_COEFFS:
        return JobProblem(ERR_BAD_JOB, "APPROX_B0", f"{len(codes)} values: a spline has 6 boundaries and 21 "
                                                    "coefficients")
    v = BF16.decode(np.array(codes, np.uint16))
    for i, x in enumerate(v):
        if not np.isfinite(x):
            reg = f"APPROX_B{i // 2}" if i < APPROX_BOUNDS else f"APPROX_C{(i - APPROX_BOUNDS) // 2}"
            half = "LO" if (i if i < APPROX_BOUNDS else i - APPROX_BOUNDS) % 2 == 0 else "HI"
            return JobProblem(ERR_BAD_JOB, f"{reg}.{half}", f"0x{codes[i]:04x} is not a finite bf16 value")
    b = v[:APPROX_BOUNDS]
    if np.any(np.diff(b) <= 0):
        i = int(np.argmax(np.diff(b) <= 0)) + 1
        return JobProblem(ERR_BAD_JOB, f"APPROX_B{i // 2}.{'LO' if i % 2 == 0 else 'HI'}",
                          f"boundary b{i} = {b[i]} is not above b{i - 1} = {b[i - 1]} (they must increase)")
    return None


def programmed_spline(codes: tuple[int, ...]) -> V.Spline:
    """The approximation unit's spline from the APPROX_ register codes."""
    v = BF16.decode(np.array(codes, np.uint16))
    c = v[APPROX_BOUNDS:].reshape(7, 3)
    return V.Spline(tuple(float(x) for x in v[:APPROX_BOUNDS]), tuple(tuple(float(x) for x in row) for row in c))


def spline_codes(spline: V.Spline) -> tuple[int, ...]:
    """The 27 APPROX_ codes of a spline (its values rounded to bf16)."""
    vals = np.r_[np.asarray(spline.bounds, np.float64), np.asarray(spline.coeffs, np.float64).ravel()]
    return tuple(int(c) for c in BF16.encode(vals))


def _approx_regs(codes: tuple[int, ...]) -> dict[str, int]:
    b, c = list(codes[:APPROX_BOUNDS]), list(codes[APPROX_BOUNDS:]) + [0]
    out = {f"APPROX_B{i}": b[2 * i] | b[2 * i + 1] << 16 for i in range(3)}
    out.update({f"APPROX_C{i}": c[2 * i] | c[2 * i + 1] << 16 for i in range(11)})
    return out


def _approx_codes(r: dict[str, int]) -> tuple[int, ...]:
    b = [r.get(f"APPROX_B{i}", 0) >> s & 0xFFFF for i in range(3) for s in (0, 16)]
    c = [r.get(f"APPROX_C{i}", 0) >> s & 0xFFFF for i in range(11) for s in (0, 16)]
    return tuple(b + c[:APPROX_COEFFS])


def fields(r: dict[str, int]) -> VoyagerJob:
    """The descriptor register values ``r`` (name -> value) as a job, not yet checked (an
    unknown DTYPE code becomes the name ``#<code>``)."""
    op = r["OP"]
    code = (op >> 4) & 0xF
    job = VoyagerJob(
        kind=op & 3, dtype=DTYPES[code] if code < len(DTYPES) else f"#{code}", in_addr=r["IN_ADDR"],
        w_addr=r["W_ADDR"], out_addr=r["OUT_ADDR"],
        h=r["SHAPE_HW"] & 0xFFFF, w=r["SHAPE_HW"] >> 16, c=r["SHAPE_CK"] & 0xFFFF, k=r["SHAPE_CK"] >> 16,
        f=r["CONV"] & 0xFF, stride=(r["CONV"] >> 8) & 0xFF, pad=(r["CONV"] >> 16) & 0xFF,
        bias_addr=r["BIAS_ADDR"], scale_addr=r["SCALE_ADDR"], skip_addr=r["SKIP_ADDR"],
        out_scale=bits_f32(r["OUT_SCALE"]), skip_scale=bits_f32(r["SKIP_SCALE"]),
        relu=bool(op >> 8 & 1), gelu=bool(op >> 9 & 1), silu=bool(op >> 10 & 1), add=bool(op >> 11 & 1),
        quant=bool(op >> 12 & 1), bias=bool(op >> 13 & 1),
        tile=(r["TILE_YX"] & 0xFFFF, r["TILE_YX"] >> 16, r["TILE_CK"] & 0xFFFF, r["TILE_CK"] >> 16),
        w_scale_addr=r["W_SCALE_ADDR"], vop=(op >> 16) & 7, mx_block=(r.get("MX_CFG", 0) & 0xFFFF) or MX_BLOCK,
        sigmoid=bool(op >> 14 & 1), tanh=bool(op >> 15 & 1), spline=_approx_codes(r) if op >> 19 & 1 else ())
    if job.kind in (KIND_VECTOR, KIND_DWC):        # a vector operator keeps its channels
        job = replace(job, k=job.c)
    return job


def decode(r: dict[str, int]) -> VoyagerJob | int:
    """The job of the descriptor register values ``r`` (name -> value), or an error code."""
    job = fields(r)
    return job.validate() or job


class VoyagerModel:
    """The functional engine and the cycle model of one instance (``params``)."""

    def __init__(self, params: VoyagerParams):
        self.params = params
        self._schedules: dict[tuple[VoyagerJob, str], Any] = {}

    # ----- functional ----------------------------------------------------------------------
    def _tensor(self, read: ReadFn, addr: int, n: int, dtype: str) -> np.ndarray:
        """``n`` operand values at ``addr`` (integers: codes, unpacked; floats: exact values)."""
        if dtype in INT_DTYPES or dtype == "mxint8":
            bits = ELEM_BITS[dtype]
            return unpack_ints(read(addr, packed_bytes(n, bits)), n, bits)
        if dtype == "bf16":
            return BF16.decode(np.frombuffer(bytes(read(addr, 2 * n)), np.uint16))
        return parse_dtype(dtype).decode(np.frombuffer(bytes(read(addr, n)), np.uint8))

    def problem(self, job: VoyagerJob) -> JobProblem | None:
        """Why this instance cannot run ``job`` (MX block vs array rows, data-mode size), or None."""
        if job.is_mx and job.mx_block % self.params.ic_dim:
            return JobProblem(ERR_MX_BLOCK, "MX_CFG.BLOCK", f"{job.mx_block} is not a multiple of the array rows "
                                                        f"(ic_dim {self.params.ic_dim})")
        ho, wo = job.out_hw
        if job.kind == KIND_DWC and not self.params.dwc_unit:
            return JobProblem(ERR_BAD_JOB, "OP.KIND", "3 (depthwise conv) needs the DWC extension (dwc_unit)")
        taps = job.f * job.f if job.kind in (KIND_CONV, KIND_DWC) or job.pooling else 1
        if self.params.data and ho * wo * taps * job.c > self.params.data_limit:
            return JobProblem(ERR_BAD_JOB, "SHAPE_CK.C", f"{ho * wo}x{taps * job.c} operand matrix exceeds "
                                                         f"data_limit {self.params.data_limit} in data mode")
        return None

    def check(self, job: VoyagerJob) -> int:
        """0, or the error code of a job this instance cannot run (MX block vs array rows)."""
        pr = self.problem(job)
        return pr.code if pr else 0

    def _mx(self, job: VoyagerJob, read: ReadFn) -> np.ndarray:
        """MXINT8 conv or GEMM: reduction blocks of ``mx_block`` channels, taps outer, blocks
        inner; input scales [H][W][C/B], weight scales [fy][fx][C/B][K]; zeros outside the image."""
        b = job.mx_block
        nb = job.c // b
        x = self._tensor(read, job.in_addr, job.h * job.w * job.c, "int8").reshape(job.h, job.w, job.c)
        xe = np.frombuffer(bytes(read(job.scale_addr, job.h * job.w * nb)), np.uint8).reshape(job.h, job.w, nb)
        w = self._tensor(read, job.w_addr, job.taps * job.c * job.k, "int8").reshape(-1, job.k)
        we = np.frombuffer(bytes(read(job.w_scale_addr, job.taps * nb * job.k)), np.uint8).reshape(-1, job.k)
        if job.kind == KIND_CONV:
            cols = M.im2col(x, job.f, job.f, job.stride, job.pad)
            ecols = M.im2col(xe.astype(np.int64), job.f, job.f, job.stride, job.pad)
        else:
            cols, ecols = x.reshape(-1, job.c), xe.reshape(-1, nb)
        bias = BF16.decode(np.frombuffer(bytes(read(job.bias_addr, 2 * job.k)), "<u2")) if job.bias else None
        return M.gemm(design(job.design_name), cols, w, self.params.ic_dim, bias=bias, x_scale=ecols, w_scale=we)

    def _vector(self, job: VoyagerJob, read: ReadFn) -> np.ndarray:
        x = self._tensor(read, job.in_addr, job.h * job.w * job.c, "bf16").reshape(job.h, job.w, job.c)
        kind = VOPS[job.vop]
        if job.pooling:
            return V.pool2d(x, job.f, job.stride, kind[:3], job.pad)
        rows = x.reshape(-1, job.c)
        if kind == "softmax":
            return V.softmax(rows)
        gamma = self._tensor(read, job.w_addr, job.c, "bf16")
        beta = self._tensor(read, job.bias_addr, job.c, "bf16")
        return V.layer_norm(rows, gamma, beta)

    def compute(self, job: VoyagerJob, read: ReadFn) -> bytes:
        """The output bytes of ``job`` (NHWC)."""
        p = self.params
        if job.kind == KIND_VECTOR:
            return BF16.encode(self._vector(job, read)).astype("<u2").tobytes()
        ho, wo = job.out_hw
        if job.is_mx:
            y = self._mx(job, read)
            if job.add:
                y = V.add(y, BF16.decode(np.frombuffer(bytes(read(job.skip_addr, 2 * y.size)), "<u2")).reshape(y.shape))
            return BF16.encode(job.apply_activation(y)).astype("<u2").tobytes()
        des = design(job.dtype)
        x = self._tensor(read, job.in_addr, job.h * job.w * job.c, job.dtype).reshape(job.h, job.w, job.c)
        w = self._tensor(read, job.w_addr, job.n_weights, job.dtype)
        if job.is_int:
            bias = np.frombuffer(bytes(read(job.bias_addr, 4 * job.k)), "<i4").astype(np.int64) if job.bias else None
        else:
            bias = BF16.decode(np.frombuffer(bytes(read(job.bias_addr, 2 * job.k)), "<u2")) if job.bias else None
        if job.kind == KIND_DWC:
            acc = self.dwc_unit(des).run(x, w.reshape(job.f, job.f, job.c), job.stride, job.pad).acc
            acc = acc.reshape(ho * wo, job.c)
            if bias is not None:                  # the vector unit adds the bias to the summed passes
                acc = wrap_int(acc + bias, 32) if job.is_int else V.add(acc, bias)
        elif job.kind == KIND_CONV:
            acc = M.conv2d(des, x, w.reshape(job.f, job.f, job.c, job.k), p.ic_dim, stride=job.stride,
                           pad=job.pad, bias=bias).reshape(ho * wo, job.k)
        else:
            acc = M.gemm(des, x.reshape(-1, job.c), w.reshape(job.c, job.k), p.ic_dim, bias=bias)
        vf = p.vector_dtype
        if job.is_int:
            y = V.dequantize(acc, self.scales(job, read), vf)
        else:
            y = V.rnd(acc, vf)
        if job.add:
            skip = self._tensor(read, job.skip_addr, ho * wo * job.k, job.dtype).reshape(ho * wo, job.k)
            if job.is_int:
                skip = V.mul(skip, V.rnd(job.skip_scale, vf), vf)
            y = V.add(y, skip, vf)
        y = job.apply_activation(y)          # ReLU is exact; the splines stay the bf16 approximation unit
        if job.quant:
            if job.is_int:
                return pack_ints(V.quantize(y, IntType(job.bits), job.out_scale, vf), job.bits)
            return np.asarray(des.operand.encode(y)).tobytes()
        return BF16.encode(y).astype("<u2").tobytes()

    @property
    def scale_bytes(self) -> int:
        """Bytes of one dequantisation scale: the vector unit's format (bf16 2, fp32 4)."""
        return 4 if self.params.vector_dtype == "fp32" else 2

    def scales(self, job: VoyagerJob, read: ReadFn) -> np.ndarray:
        """The K per-output-channel dequantisation scales at SCALE_ADDR (vector format)."""
        raw = bytes(read(job.scale_addr, self.scale_bytes * job.k))
        if self.scale_bytes == 4:
            return np.frombuffer(raw, "<f4").astype(np.float64)
        return BF16.decode(np.frombuffer(raw, "<u2"))

    def dwc_unit(self, des: Any) -> DwcUnit:
        """The DWC extension of this instance for design ``des`` (fetch rate from the bandwidth)."""
        p = replace(self.params, dtype=des.name)
        fc, wl = dwc_fetch(p)
        return DwcUnit(des, p.trees, p.dwc_kernel, line_rows=p.dwc_line_rows, fetch_cycles=fc, weight_load=wl)

    def functional(self, job: VoyagerJob, read: ReadFn, write: WriteFn) -> None:
        write(job.out_addr, self.compute(job, read))

    # ----- timing ----------------------------------------------------------------------------
    def schedule(self, job: VoyagerJob, name: str = "job"):
        """The performance model's schedule of ``job`` (the descriptor's tile if it gives one)."""
        key = (job, name)
        if key not in self._schedules:
            p = self.params
            if p.dtype != job.design_name:
                p = replace(p, dtype=job.design_name)
            if len(self._schedules) > 256:
                self._schedules.clear()
            if job.kind in (KIND_VECTOR, KIND_DWC):
                unit = "dwc" if job.kind == KIND_DWC else "vector"
                self._schedules[key] = vector_perf(FusedOp(job.layer(name), unit, job.post()), p)
            else:
                self._schedules[key] = matrix_perf(FusedOp(job.layer(name), "matrix", job.post()), p,
                                                   force=job.tile)
        return self._schedules[key]

    def _vector_timing(self, job: VoyagerJob, lp: Any) -> JobTiming:
        """A vector (or DWC) operator streams: 8 phases, each a share of the fetches (every
        pass over the input), of the writes and of the unit's work."""
        ho, wo = job.out_hw
        passes = 1 if job.pooling else 3
        cyc = lp.compute + passes * self.params.vector_pipeline_depth
        extra: list[Burst] = []
        ops = job.h * job.w * job.c * passes
        if job.kind == KIND_DWC:
            n_in, n_out = job.size(job.h * job.w * job.c), job.out_size(ho * wo * job.c)
            passes, cyc, ops = n_passes(job.f, self.params.dwc_kernel), lp.cycles, lp.macs
            extra.append(Burst("dram", job.w_addr, job.size(job.n_weights)))
            if job.add:
                extra.append(Burst("dram", job.skip_addr, job.size(ho * wo * job.c)))
        else:
            n_in, n_out = job.h * job.w * job.c * 2, ho * wo * job.c * 2
        parts = 8
        phases = []
        for i in range(parts):
            bursts = list(extra) if i == 0 else []
            for _ in range(passes):
                lo, hi = n_in * i // parts, n_in * (i + 1) // parts
                if hi > lo:
                    bursts.append(Burst("dram", job.in_addr + lo, hi - lo))
            lo, hi = n_out * i // parts, n_out * (i + 1) // parts
            if hi > lo:
                bursts.append(Burst("dram", job.out_addr + lo, hi - lo, True))
            phases.append(TimingPhase(f"part{i}", -(-cyc * (i + 1) // parts) - -(-cyc * i // parts), tuple(bursts)))
        return JobTiming(tuple(phases), ops=ops, ideal_cycles=0)

    def timing(self, job: VoyagerJob, name: str = "job") -> JobTiming:
        """Phases: the first tile's loads, then one phase per L2 tile (its compute, the
        next tile's loads, the output it completes); bursts partition each tensor."""
        lp = self.schedule(job, name)
        if job.kind in (KIND_VECTOR, KIND_DWC):
            return self._vector_timing(job, lp)
        tiles = max(1, lp.l2_tiles)
        ho, wo = job.out_hw
        eb = elem_bytes(self.params) if job.design_name == self.params.dtype else job.in_bytes
        n_in = job.size(job.h * job.w * job.c)
        n_w = job.size(job.taps * job.c * job.k)
        n_out = job.out_size(ho * wo * job.k)
        moved = max(0, lp.dram_bytes - int(ho * wo * job.k * eb * (2 if job.add else 1)))
        in_share = n_in / (n_in + n_w) if n_in + n_w else 0.0
        read_in, read_w = int(moved * in_share), moved - int(moved * in_share)
        out_tiles = max(1, min(tiles, n_out))
        phases = []

        def chunks(total: int, parts: int, base: int, size: int, port_write: bool) -> list[list[Burst]]:
            out: list[list[Burst]] = [[] for _ in range(parts)]
            done = 0
            for i in range(parts):
                n = (total * (i + 1)) // parts - done
                off = done % size if size else 0
                while n > 0:
                    step = min(n, size - off)
                    out[i].append(Burst("dram", base + off, step, port_write))
                    n -= step
                    done += step
                    off = 0
            return out

        # one phase per L2 tile, or per group of tiles for a job of very many (bounded replay)
        groups = min(tiles, MAX_PHASES)
        ins = chunks(read_in, groups + 1, job.in_addr, n_in, False)
        ws = chunks(read_w, groups + 1, job.w_addr, n_w, False)
        out_groups = min(out_tiles, groups)
        outs = chunks(n_out, out_groups, job.out_addr, n_out, True)
        if job.add:                                           # the residual is fetched per output tile
            n_skip = 2 * ho * wo * job.k if job.is_mx else job.size(ho * wo * job.k)
            skips = chunks(n_skip, out_groups, job.skip_addr, n_skip, False)
            outs = [s + o for s, o in zip(skips, outs)]
        phases.append(TimingPhase("load", 0, tuple(ins[0] + ws[0])))
        # a tile's own time is its compute; its memory time is the bursts' real duration;
        # without a double-buffered accumulation buffer the vector unit's share joins the
        # tiles that complete an output tile
        tc = lp.compute / tiles
        tv = 0.0 if self.params.double_buffered_accum else lp.vector / out_tiles
        extra = max(0.0, tv - tc)
        j = 0
        for g in range(groups):
            t0, t1 = tiles * g // groups, tiles * (g + 1) // groups
            completes = (t1 * out_tiles) // tiles - (t0 * out_tiles) // tiles   # output tiles ending here
            bursts = list(ins[g + 1] + ws[g + 1])
            while j < out_groups and (j + 1) * groups <= (g + 1) * out_groups:
                bursts += outs[j]
                j += 1
            phases.append(TimingPhase(f"tile{t0}", int(np.ceil((t1 - t0) * tc + completes * extra)), tuple(bursts)))
        if self.params.double_buffered_accum:
            phases.append(TimingPhase("drain", int(np.ceil(lp.vector / out_tiles)), ()))
        return JobTiming(tuple(phases), ops=lp.macs, ideal_cycles=lp.ideal)


def job_registers(job: VoyagerJob) -> dict[str, int]:
    """The descriptor register values that program ``job`` (for hosts and tests)."""
    if job.dtype not in DTYPES:
        raise VoyagerError("job.dtype", f"{job.dtype!r} has no DTYPE code (known: {', '.join(DTYPES)})")
    op = (job.kind | DTYPES.index(job.dtype) << 4 | job.relu << 8 | job.gelu << 9 | job.silu << 10
          | job.add << 11 | job.quant << 12 | job.bias << 13 | job.sigmoid << 14 | job.tanh << 15 | job.vop << 16
          | bool(job.spline) << 19)
    return {"OP": op, "IN_ADDR": job.in_addr, "W_ADDR": job.w_addr, "BIAS_ADDR": job.bias_addr,
            "SCALE_ADDR": job.scale_addr, "SKIP_ADDR": job.skip_addr, "OUT_ADDR": job.out_addr,
            "SHAPE_HW": job.h | job.w << 16, "SHAPE_CK": job.c | job.k << 16,
            "CONV": job.f | job.stride << 8 | job.pad << 16, "OUT_SCALE": f32_bits(job.out_scale),
            "SKIP_SCALE": f32_bits(job.skip_scale), "TILE_YX": job.tile[0] | job.tile[1] << 16,
            "TILE_CK": job.tile[2] | job.tile[3] << 16, "W_SCALE_ADDR": job.w_scale_addr,
            "MX_CFG": job.mx_block, **(_approx_regs(job.spline) if job.spline else {})}


def describe(job: VoyagerJob) -> str:
    """A one-line name of the job's operator (report rows)."""
    if job.kind == KIND_VECTOR:
        return f"{VOPS[job.vop]} {job.h}x{job.w}x{job.c} bf16"
    kind = {KIND_CONV: "conv", KIND_GEMM: "gemm", KIND_DWC: "dwconv"}[job.kind]
    return f"{kind} {job.h}x{job.w}x{job.c}->{job.k} {job.dtype}"

