"""Compile our network description (cosim/deploy/network.py) into a Tensil program.

Stages of the compiler (mirroring Tensil's, docs/tensil.md "Compiler"):

1. **Layers**: the network's layers in order; each becomes one Tensil layer (a matrix
   multiplication or a data movement, a chain of accumulator operations, a move out).
2. **Memory manager**: variables (the input, every layer output) in DRAM0 as HWC with one
   pixel of zero border and channels padded to whole vectors; constants (weight blocks with
   their bias vectors, pooling factors) in DRAM1.
3. **Scheduler**: splits each layer into *stages* (bands of output rows) whose inputs fit
   local memory and whose outputs fit the accumulators; stages share nothing.
4. **LIR**: each stage is emitted as instructions (:class:`Lir`), with the SIMD -> DataMove
   hazard NoOps, strides that the architecture can encode (or one instruction per vector).
5. **Backend**: ``.tprog`` bytes, the DRAM1 constants image and a JSON manifest.

Weights are generated from a seed (no downloads) and quantised to the data type; the numpy
reference (:mod:`.reference`) evaluates the same schedule in the same arithmetic.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from components.tensil.arch import TensilArch
from components.tensil.fixed import FixedFormat
from components.tensil.isa import (
    DataFlow, DataMove, Instruction, LoadWeight, MatMul, NoOp, Simd, SimdOp, assemble_binary,
)

from ..network import Layer, Network


class CompileError(ValueError):
    """A layer the compiler cannot place on the architecture (names the layer)."""


@dataclass
class Var:
    """A tensor in DRAM0: (h, w, c) with a zero border, ``cb`` vectors per pixel."""

    name: str
    h: int
    w: int
    c: int
    cb: int
    base: int
    padded: bool = True

    @property
    def pitch(self) -> int:
        """Vectors per (padded) row."""
        return (self.w + 2) * self.cb if self.padded else self.w * self.cb

    @property
    def size(self) -> int:
        return (self.h + 2) * self.pitch if self.padded else self.h * self.pitch

    def addr(self, y: int, x: int, cb: int = 0) -> int:
        """Vector address of channel block ``cb`` of pixel (y, x) (unpadded coordinates)."""
        if self.padded:
            return self.base + (y + 1) * self.pitch + (x + 1) * self.cb + cb
        return self.base + y * self.pitch + x * self.cb + cb


@dataclass
class Program:
    """A compiled network: instructions, constants image, memory map, and the quantised
    parameters the reference needs."""

    arch: TensilArch
    instructions: list[Instruction]
    consts: np.ndarray                  # (vectors, N) raw, the DRAM1 image
    vars: dict[str, Var]
    params: dict[str, dict[str, np.ndarray]]
    net: Network
    stages: int = 0
    dram0_vectors: int = 0

    def binary(self) -> bytes:
        return assemble_binary(self.instructions, self.arch)

    def consts_bytes(self) -> bytes:
        return FixedFormat(self.arch.width, self.arch.frac).to_bytes(self.consts)

    def manifest(self, name: str) -> dict[str, Any]:
        """``.tmodel``-like JSON: program, constants, inputs/outputs (base/size in vectors)."""
        out = self.vars[self.net.layers[-1].name]
        a = self.arch
        return {"name": name,
                "prog": {"file_name": f"{name}.tprog", "size": len(self.instructions) * a.instruction_bytes},
                "consts": [{"file_name": f"{name}.tdata", "base": 0, "size": int(self.consts.shape[0])}],
                "inputs": [{"name": "input", "base": self.vars["input"].base, "size": self.vars["input"].size}],
                "outputs": [{"name": out.name, "base": out.base, "size": out.size}],
                "arch": {k: getattr(a, k) for k in ("data_type", "array_size", "dram0_depth", "dram1_depth",
                                                    "local_depth", "accumulator_depth", "simd_registers_depth",
                                                    "stride0_depth", "stride1_depth")}}

    def manifest_json(self, name: str) -> str:
        return json.dumps(self.manifest(name), indent=1, sort_keys=True)


@dataclass
class Lir:
    """Instruction emitter: encodable strides or one instruction per vector."""

    arch: TensilArch
    prog: list[Instruction] = field(default_factory=list)

    def _ok(self, stride: int, depth: int) -> bool:
        return stride >= 1 and not stride & (stride - 1) and stride.bit_length() <= depth

    def move(self, flow: DataFlow, local: int, addr: int, n: int, lstride: int = 1, stride: int = 1) -> None:
        if n <= 0:
            return
        if n == 1 or (self._ok(lstride, self.arch.stride0_depth) and self._ok(stride, self.arch.stride1_depth)):
            self.prog.append(DataMove(flow, local, addr, n, lstride if n > 1 else 1, stride if n > 1 else 1))
            return
        self.prog += [DataMove(flow, local + i * lstride, addr + i * stride, 1) for i in range(n)]

    def matmul(self, local: int, acc: int, n: int, lstride: int, accumulate: bool) -> None:
        if n == 1 or self._ok(lstride, self.arch.stride0_depth):
            self.prog.append(MatMul(local, acc, n, lstride if n > 1 else 1, 1, accumulate))
            return
        # a prev-instruction MatMul keeps the array full: per-vector MatMuls cost n + 2N once
        self.prog += [MatMul(local + i * lstride, acc + i, 1, 1, 1, accumulate) for i in range(n)]

    def weights(self, const_addr: int, local: int) -> None:
        n = self.arch.array_size + 1
        self.prog.append(DataMove(DataFlow.DRAM1_TO_LOCAL, local, const_addr, n))
        self.prog.append(LoadWeight(local, n))

    def relu(self, count: int) -> None:
        self.prog.append(Simd(SimdOp.ZERO, dest=1))
        self.prog += [Simd(SimdOp.MAX, left=0, right=1, read=True, write=True, read_address=i,
                           write_address=i) for i in range(count)]

    def settle(self) -> None:
        """The NoOps a SIMD result needs before a DataMove reads the accumulators."""
        self.prog += [NoOp(), NoOp()]


def _blocks(c: int, n: int) -> int:
    return -(-c // n)


def generate_params(net: Network, seed: int, fmt: FixedFormat) -> dict[str, dict[str, np.ndarray]]:
    """Seeded float weights (He-scaled) quantised to the data type, per layer."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, np.ndarray]] = {}
    for ly in net.layers:
        c = ly.in_shape[2]
        if ly.type in ("conv3x3", "conv1x1"):
            k = 3 if ly.type == "conv3x3" else 1
            w = rng.normal(0, np.sqrt(1.0 / (c * k * k)), (ly.out, c, k, k))
            b = rng.normal(0, 0.05, ly.out)
            out[ly.name] = {"w": fmt.from_float(w), "b": fmt.from_float(b)}
        elif ly.type == "fc":
            w = rng.normal(0, np.sqrt(1.0 / c), (ly.out, c))
            out[ly.name] = {"w": fmt.from_float(w), "b": fmt.from_float(rng.normal(0, 0.05, ly.out))}
    return out


class _Consts:
    def __init__(self, n: int):
        self.n = n
        self.vecs: list[np.ndarray] = []
        self.size = 0

    def add(self, vectors: np.ndarray) -> int:
        at = self.size
        self.vecs.append(vectors.reshape(-1, self.n))
        self.size += self.vecs[-1].shape[0]
        return at

    def image(self) -> np.ndarray:
        return np.concatenate(self.vecs) if self.vecs else np.zeros((0, self.n), dtype=np.int64)


def weight_block(w: np.ndarray, bias: np.ndarray | None, n: int) -> np.ndarray:
    """N+1 LoadWeight vectors of one block ``w`` (out n, in n): column n-1 first, bias last."""
    b = np.zeros(n, dtype=np.int64) if bias is None else bias
    return np.stack([w[:, j] for j in reversed(range(n))] + [b])


def compile_network(net: Network, arch: TensilArch, seed: int = 1,
                    params: dict[str, dict[str, np.ndarray]] | None = None) -> Program:
    """The program, constants and memory map of ``net`` on ``arch``."""
    arch = arch.checked()
    n = arch.array_size
    fmt = FixedFormat(arch.width, arch.frac)
    params = params if params is not None else generate_params(net, seed, fmt)
    consts = _Consts(n)
    lir = Lir(arch)
    dram0 = 0
    vars_: dict[str, Var] = {}

    def alloc(name: str, h: int, w: int, c: int, padded: bool = True) -> Var:
        nonlocal dram0
        v = Var(name, h, w, c, _blocks(c, n), dram0, padded)
        dram0 += v.size
        if dram0 > arch.dram0_depth:
            raise CompileError(f"{name}: DRAM0 ({arch.dram0_depth} vectors) is full")
        return v

    h, w, c = net.input_shape
    vars_["input"] = alloc("input", h, w, c)
    stages = 0
    for i, ly in enumerate(net.layers):
        if ly.type == "avgpool":
            continue           # fused with the fc after it
        if ly.type in ("conv3x3", "conv1x1"):
            src = vars_[ly.inputs[0]]
            out = vars_[ly.name] = alloc(ly.name, ly.h, ly.w, ly.k)
            stages += _conv(lir, ly, src, out, params[ly.name], consts, arch)
        elif ly.type == "add":
            out = vars_[ly.name] = alloc(ly.name, ly.h, ly.w, ly.k)
            stages += _add(lir, ly, vars_[ly.inputs[0]], vars_[ly.inputs[1]], out, arch)
        elif ly.type == "fc":
            pool = net.layers[i - 1]
            out = vars_[ly.name] = alloc(ly.name, 1, 1, ly.out, padded=False)
            stages += _pool_fc(lir, ly, vars_[pool.inputs[0]], out, params[ly.name], consts, arch, fmt)
    return Program(arch, lir.prog, consts.image(), vars_, params, net, stages, dram0)


def _band(rows_out: int, fits: Any) -> int:
    band = rows_out
    while band > 1 and not fits(band):
        band -= 1
    return band


def _conv(lir: Lir, ly: Layer, src: Var, out: Var, prm: dict[str, np.ndarray], consts: _Consts,
          arch: TensilArch) -> int:
    n, s = arch.array_size, ly.stride
    k = 3 if ly.type == "conv3x3" else 1
    off = 0 if k == 3 else 1                     # padded-row offset of tap 0
    cb_in, ob_n = src.cb, out.cb
    w = np.zeros((ob_n * n, cb_in * n, k, k), dtype=np.int64)
    w[:ly.out, :src.c] = prm["w"]
    b = np.zeros(ob_n * n, dtype=np.int64)
    b[:ly.out] = prm["b"]
    taps = [(ky, kx) for ky in range(k) for kx in range(k)]
    blocks: dict[tuple[int, int, int], int] = {}
    for ob in range(ob_n):
        for cb in range(cb_in):
            for t, (ky, kx) in enumerate(taps):
                last = cb == cb_in - 1 and t == len(taps) - 1
                blk = w[ob * n:(ob + 1) * n, cb * n:(cb + 1) * n, ky, kx]
                blocks[ob, cb, t] = consts.add(weight_block(blk, b[ob * n:(ob + 1) * n] if last else None, n))

    def rows_in(band: int) -> int:
        return (band - 1) * s + k

    def fits(band: int) -> bool:
        return (rows_in(band) * src.pitch + (n + 1) + band * out.w <= arch.local_depth
                and band * out.w <= arch.accumulator_depth)

    band = _band(out.h, fits)
    if not fits(band):
        raise CompileError(f"layer {ly.name}: one output row does not fit local memory "
                           f"({arch.local_depth}) and accumulators ({arch.accumulator_depth})")
    stages = 0
    for y0 in range(0, out.h, band):
        y1 = min(out.h, y0 + band)
        r0 = y0 * s + off                        # first padded input row of the stage
        nrows = (y1 - 1 - y0) * s + k
        wl = nrows * src.pitch
        ol = wl + n + 1
        lir.move(DataFlow.DRAM0_TO_LOCAL, 0, src.base + r0 * src.pitch, nrows * src.pitch)
        for ob in range(ob_n):
            first = True
            for cb in range(cb_in):
                for t, (ky, kx) in enumerate(taps):
                    lir.weights(blocks[ob, cb, t], wl)
                    for oy in range(y0, y1):
                        row = (oy * s + ky + off) - r0
                        lir.matmul(row * src.pitch + (kx + off) * src.cb + cb, (oy - y0) * out.w,
                                   out.w, s * src.cb, not first)
                    first = False
            count = (y1 - y0) * out.w
            if ly.relu:
                lir.relu(count)
                lir.settle()
            lir.move(DataFlow.ACC_TO_LOCAL, ol, 0, count)
            for oy in range(y0, y1):
                lir.move(DataFlow.LOCAL_TO_DRAM0, ol + (oy - y0) * out.w, out.addr(oy, 0, ob), out.w,
                         1, out.cb)
        stages += 1
    return stages


def _add(lir: Lir, ly: Layer, a: Var, b: Var, out: Var, arch: TensilArch) -> int:
    row = a.w * a.cb                              # vectors of one row's interior

    def fits(band: int) -> bool:
        return 3 * band * row <= arch.local_depth and band * row <= arch.accumulator_depth

    band = _band(out.h, fits)
    if not fits(band):
        raise CompileError(f"layer {ly.name}: one row does not fit local memory")
    stages = 0
    for y0 in range(0, out.h, band):
        y1 = min(out.h, y0 + band)
        nb = (y1 - y0) * row
        for oy in range(y0, y1):
            lir.move(DataFlow.DRAM0_TO_LOCAL, (oy - y0) * row, a.addr(oy, 0), row)
            lir.move(DataFlow.DRAM0_TO_LOCAL, nb + (oy - y0) * row, b.addr(oy, 0), row)
        lir.move(DataFlow.LOCAL_TO_ACC, 0, 0, nb)
        lir.move(DataFlow.LOCAL_TO_ACC_ADD, nb, 0, nb)
        if ly.relu:
            lir.relu(nb)
            lir.settle()
        lir.move(DataFlow.ACC_TO_LOCAL, 2 * nb, 0, nb)
        for oy in range(y0, y1):
            lir.move(DataFlow.LOCAL_TO_DRAM0, 2 * nb + (oy - y0) * row, out.addr(oy, 0), row)
        stages += 1
    return stages


def _pool_fc(lir: Lir, ly: Layer, src: Var, out: Var, prm: dict[str, np.ndarray], consts: _Consts,
             arch: TensilArch, fmt: FixedFormat) -> int:
    n, cb = arch.array_size, src.cb
    pixels = src.h * src.w
    if src.size + 2 * cb + 2 * (n + 1) + out.cb > arch.local_depth or 2 * cb + 1 + out.cb > arch.accumulator_depth:
        raise CompileError(f"layer {ly.name}: the pooled tensor does not fit local memory")
    factor = consts.add(np.full(n, int(fmt.from_float(1.0 / pixels)), dtype=np.int64))
    ob_n = out.cb
    w = np.zeros((ob_n * n, cb * n), dtype=np.int64)
    w[:ly.out, :src.c] = prm["w"]
    b = np.zeros(ob_n * n, dtype=np.int64)
    b[:ly.out] = prm["b"]
    blocks = {(ob, k): consts.add(weight_block(w[ob * n:(ob + 1) * n, k * n:(k + 1) * n],
                                               b[ob * n:(ob + 1) * n] if k == cb - 1 else None, n))
              for ob in range(ob_n) for k in range(cb)}
    kl, pl, wl = src.size, src.size + 1, src.size + 1 + cb
    ol = wl + n + 1
    lir.move(DataFlow.DRAM0_TO_LOCAL, 0, src.base, src.size)
    for p in range(pixels):
        y, x = divmod(p, src.w)
        local = src.addr(y, x) - src.base
        lir.move(DataFlow.LOCAL_TO_ACC if p == 0 else DataFlow.LOCAL_TO_ACC_ADD, local, 0, cb)
    lir.move(DataFlow.DRAM1_TO_LOCAL, kl, factor, 1)
    lir.move(DataFlow.LOCAL_TO_ACC, kl, cb, 1)
    lir.prog.append(Simd(SimdOp.MOVE, left=0, dest=1, read=True, read_address=cb))
    lir.prog += [Simd(SimdOp.MULTIPLY, left=0, right=1, read=True, write=True, read_address=k,
                      write_address=k) for k in range(cb)]
    lir.settle()
    lir.move(DataFlow.ACC_TO_LOCAL, pl, 0, cb)
    acc0 = cb + 1
    for ob in range(ob_n):
        for k in range(cb):
            lir.weights(blocks[ob, k], wl)
            lir.matmul(pl + k, acc0 + ob, 1, 1, k > 0)
    lir.move(DataFlow.ACC_TO_LOCAL, ol, acc0, ob_n)
    lir.move(DataFlow.LOCAL_TO_DRAM0, ol, out.base, ob_n)
    return 1
