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

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.isa import (
    DataFlow, DataMove, Instruction, LoadWeight, MatMul, NoOp, Simd, SimdOp, assemble_binary,
)

from cosim.deploy.network import Layer, Network


class CompileError(ValueError):
    """A layer the compiler cannot place on the architecture (names the layer)."""


@dataclass
class Var:
    """A tensor in DRAM0: (h, w, c) with a zero ``border`` of pixels, ``cb`` vectors per
    pixel. A *view* (a concat's input placed in its output, an aligned split) shares its
    parent's storage: ``px`` vectors per stored pixel, its blocks from ``coff`` on."""

    name: str
    h: int
    w: int
    c: int
    cb: int
    base: int
    border: int = 1
    px: int = 0                 # vectors per stored pixel (0: cb)
    coff: int = 0               # first channel block inside the stored pixel
    parent: str = ""            # the tensor whose storage a view shares

    def __post_init__(self) -> None:
        self.px = self.px or self.cb

    @property
    def pitch(self) -> int:
        """Vectors per stored row (border included)."""
        return (self.w + 2 * self.border) * self.px

    @property
    def size(self) -> int:
        """Vectors of the storage (a view: its parent's)."""
        return (self.h + 2 * self.border) * self.pitch

    def addr(self, y: int, x: int, cb: int = 0) -> int:
        """Vector address of channel block ``cb`` of pixel (y, x) (unpadded coordinates)."""
        return self.base + (y + self.border) * self.pitch + (x + self.border) * self.px + self.coff + cb


@dataclass
class Program:
    """A compiled network: instructions, constants image, memory map, and the quantised
    parameters the reference needs. A timing-only compile (``data=False``) leaves the
    constants image empty (``dram1_vectors`` still counts it)."""

    arch: TensilArch
    instructions: list[Instruction]
    consts: np.ndarray                  # (vectors, N) raw, the DRAM1 image
    vars: dict[str, Var]
    params: dict[str, dict[str, np.ndarray]]
    net: Network
    stages: int = 0
    dram0_vectors: int = 0
    dram1_vectors: int = 0
    data: bool = True

    def binary(self) -> bytes:
        return assemble_binary(self.instructions, self.arch)

    def consts_bytes(self) -> bytes:
        return FixedFormat(self.arch.width, self.arch.frac).to_bytes(self.consts)

    def manifest(self, name: str) -> dict[str, Any]:
        """``.tmodel``-like JSON: program, constants, inputs/outputs (base/size in vectors)."""
        outs = [self.vars[ly.name] for ly in self.net.layers if ly.name in self.vars and
                not any(ly.name in o.inputs for o in self.net.layers)]
        a = self.arch
        return {"name": name,
                "prog": {"file_name": f"{name}.tprog", "size": len(self.instructions) * a.instruction_bytes},
                "consts": [{"file_name": f"{name}.tdata", "base": 0, "size": self.dram1_vectors}],
                "inputs": [{"name": "input", "base": self.vars["input"].base, "size": self.vars["input"].size}],
                "outputs": [{"name": o.name, "base": o.base, "size": o.size} for o in outs],
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

    def relu(self, count: int, base: int = 0) -> None:
        self.prog.append(Simd(SimdOp.ZERO, dest=1))
        self.prog += [Simd(SimdOp.MAX, left=0, right=1, read=True, write=True, read_address=i,
                           write_address=i) for i in range(base, base + count)]

    def leaky(self, count: int, alpha_const: int, local: int, acc: int) -> None:
        """``max(x, alpha * x)`` with one register: alpha (a DRAM1 constant vector) into the
        accumulators at ``acc``; per vector ``reg1 = x * reg1``, ``x = max(x, reg1)``, then
        alpha back into reg1 (3 SIMD per vector)."""
        self.prog.append(DataMove(DataFlow.DRAM1_TO_LOCAL, local, alpha_const, 1))
        self.prog.append(DataMove(DataFlow.LOCAL_TO_ACC, local, acc, 1))
        self.prog.append(Simd(SimdOp.MOVE, left=0, dest=1, read=True, read_address=acc))
        for i in range(count):
            self.prog.append(Simd(SimdOp.MULTIPLY, left=0, right=1, dest=1, read=True, read_address=i))
            self.prog.append(Simd(SimdOp.MAX, left=0, right=1, read=True, write=True, read_address=i,
                                  write_address=i))
            if i < count - 1:
                self.prog.append(Simd(SimdOp.MOVE, left=0, dest=1, read=True, read_address=acc))

    def settle(self) -> None:
        """The NoOps a SIMD result needs before a DataMove reads the accumulators."""
        self.prog += [NoOp(), NoOp()]


def _blocks(c: int, n: int) -> int:
    return -(-c // n)


def generate_params(net: Network, seed: int, fmt: FixedFormat,
                    data: bool = True) -> dict[str, dict[str, np.ndarray]]:
    """Seeded float weights (He-scaled) quantised to the data type, per layer. Without
    ``data`` only what shapes the program (the per-channel ``bn`` layers) is drawn."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, np.ndarray]] = {}
    for ly in net.layers:
        c = ly.in_shape[2]
        if ly.type in ("conv3x3", "conv1x1", "conv") and data:
            k = {"conv3x3": 3, "conv1x1": 1}.get(ly.type, ly.kernel)
            w = rng.normal(0, np.sqrt(1.0 / (c * k * k)), (ly.out, c, k, k))
            b = rng.normal(0, 0.05, ly.out)
            out[ly.name] = {"w": fmt.from_float(w), "b": fmt.from_float(b)}
        elif ly.type == "fc" and data:
            w = rng.normal(0, np.sqrt(1.0 / c), (ly.out, c))
            out[ly.name] = {"w": fmt.from_float(w), "b": fmt.from_float(rng.normal(0, 0.05, ly.out))}
        elif ly.type == "bn":  # a folded batch normalisation: gamma / sqrt(var), beta - mean * that
            out[ly.name] = {"scale": fmt.from_float(rng.uniform(0.5, 1.5, c)),
                            "offset": fmt.from_float(rng.normal(0, 0.1, c))}
    return out


class _Consts:
    """The DRAM1 image; without ``data`` only its size is counted."""

    def __init__(self, n: int, data: bool = True):
        self.n = n
        self.data = data
        self.vecs: list[np.ndarray] = []
        self.size = 0

    def add(self, vectors: np.ndarray | int) -> int:
        at = self.size
        if isinstance(vectors, (int, np.integer)):
            self.size += int(vectors)
            return at
        self.vecs.append(vectors.reshape(-1, self.n))
        self.size += self.vecs[-1].shape[0]
        return at

    def image(self) -> np.ndarray:
        return np.concatenate(self.vecs) if self.vecs else np.zeros((0, self.n), dtype=np.int64)


def weight_block(w: np.ndarray, bias: np.ndarray | None, n: int) -> np.ndarray:
    """N+1 LoadWeight vectors of one block ``w`` (out n, in n): column n-1 first, bias last."""
    b = np.zeros(n, dtype=np.int64) if bias is None else bias
    return np.stack([w[:, j] for j in reversed(range(n))] + [b])


def kernel_of(ly: Layer) -> int:
    """The window of a conv / maxpool layer."""
    return {"conv3x3": 3, "conv1x1": 1}.get(ly.type, ly.kernel or 1)


def _pad_of(ly: Layer) -> int:
    """Zero border a layer needs around its (first) input."""
    if ly.type in ("conv3x3", "conv1x1", "conv", "maxpool"):
        return (kernel_of(ly) - 1) // 2
    return 0


def plan_storage(net: Network, n: int) -> tuple[dict[str, tuple[str, int]], dict[str, int]]:
    """Address placement: ``views`` (tensor -> (storage tensor, first channel block)) for
    the inputs of a concat written straight into its output and for an aligned split, and
    the zero ``border`` of every storage tensor (the largest padding of its readers).

    A concat is placed (no copy) when every input is a layer output (not the network input,
    not a view) with a whole number of vectors per pixel, read by no other placed concat;
    a split is a view when its channel group starts and ends on a vector boundary."""
    views: dict[str, tuple[str, int]] = {}
    for ly in net.layers:
        if ly.type == "concat":
            shapes = [net.shape_of(s)[2] for s in ly.inputs]
            ok = (len(set(ly.inputs)) == len(ly.inputs) and all(c % n == 0 for c in shapes)
                  and all(s != "input" and s not in views and net.layer(s).type not in ("split", "concat")
                          for s in ly.inputs))
            if ok:
                off = 0
                for s_, c in zip(ly.inputs, shapes):
                    views[s_] = (ly.name, off)
                    off += c // n
        elif ly.type == "split":
            c = ly.k
            if c % n == 0 and (ly.group * c) % n == 0:
                views[ly.name] = (ly.inputs[0], ly.group * c // n)

    def root(t: str) -> str:
        while t in views:
            t = views[t][0]
        return t

    border: dict[str, int] = {}
    for ly in net.layers:
        for i, s_ in enumerate(ly.inputs):
            r = root(s_)
            border[r] = max(border.get(r, 0), _pad_of(ly) if i == 0 else 0)
    return views, border


def plan_vars(net: Network, n: int) -> tuple[dict[str, Var], int]:
    """The DRAM0 variables of ``net`` on an ``n``-lane array (the input, every stored layer
    output, then the views into them) and the vectors they take (what DRAM0 must hold
    besides the program), without compiling."""
    views, border = plan_storage(net, n)
    vars_: dict[str, Var] = {}
    dram0 = 0

    def alloc(name: str, h: int, w: int, c: int) -> None:
        nonlocal dram0
        v = Var(name, h, w, c, _blocks(c, n), dram0, border.get(name, 0))
        dram0 += v.size
        vars_[name] = v

    alloc("input", *net.input_shape)
    for ly in net.layers:
        if ly.type != "avgpool" and ly.name not in views:
            alloc(ly.name, ly.h, ly.w, ly.k)
    for ly in net.layers:            # views, in order: a view's parent may be a view
        if ly.name in views:
            parent, off = views[ly.name]
            p = vars_[parent]
            vars_[ly.name] = Var(ly.name, ly.h, ly.w, ly.k, _blocks(ly.k, n), p.base, p.border,
                                 p.px, p.coff + off, parent)
    return vars_, dram0


def compile_network(net: Network, arch: TensilArch, seed: int = 1,
                    params: dict[str, dict[str, np.ndarray]] | None = None, *,
                    data: bool = True, grow_dram: bool = False) -> Program:
    """The program, constants and memory map of ``net`` on ``arch``. ``data=False``: the
    timing-only compile (the same instructions, no weight values). ``grow_dram``: a network
    larger than the DRAM banks gets banks of the next power of two (the instruction widens;
    the cycles do not change) instead of a CompileError."""
    arch = arch.checked()
    n = arch.array_size
    fmt = FixedFormat(arch.width, arch.frac)
    if params is None:
        params = generate_params(net, seed, fmt, data)
    consts = _Consts(n, data)
    lir = Lir(arch)
    views = plan_storage(net, n)[0]
    vars_, dram0 = plan_vars(net, n)
    if dram0 > arch.dram0_depth and not grow_dram:
        full = next(v.name for v in vars_.values() if not v.parent and v.base + v.size > arch.dram0_depth)
        raise CompileError(f"{full}: DRAM0 ({arch.dram0_depth} vectors) is full")
    from . import ops
    stages = 0
    for i, ly in enumerate(net.layers):
        out = vars_.get(ly.name)
        srcs = [vars_[s_] for s_ in ly.inputs if s_ in vars_]
        if ly.type == "avgpool" or (ly.type == "split" and ly.name in views) or (ly.type == "concat" and all(
                views.get(s_, ("",))[0] == ly.name for s_ in ly.inputs)):
            continue           # fused with the fc after it, or placed (a view): nothing to move
        assert out is not None
        if ly.type in ("conv3x3", "conv1x1", "conv"):
            stages += ops.conv(lir, ly, srcs[0], out, params.get(ly.name), consts, arch)
        elif ly.type == "bn":
            stages += ops.bn(lir, ly, srcs[0], out, params[ly.name], consts, arch)
        elif ly.type in ("concat", "split"):
            stages += ops.gather(lir, ly, srcs, out, consts, arch)
        elif ly.type == "maxpool":
            stages += ops.maxpool(lir, ly, srcs[0], out, arch)
        elif ly.type == "upsample":
            stages += ops.upsample(lir, ly, srcs[0], out, arch)
        elif ly.type == "add":
            stages += ops.add(lir, ly, srcs[0], srcs[1], out, consts, arch, fmt)
        elif ly.type == "fc":
            pool = net.layers[i - 1]
            stages += ops.pool_fc(lir, ly, vars_[pool.inputs[0]], out, params.get(ly.name), consts,
                                  arch, fmt)
    if consts.size > arch.dram1_depth and not grow_dram:
        raise CompileError(f"the constants ({consts.size} vectors) do not fit DRAM1 ({arch.dram1_depth})")
    if grow_dram:
        grow = {}
        for key, need in (("dram0_depth", dram0), ("dram1_depth", consts.size)):
            if need > getattr(arch, key):
                grow[key] = 1 << max(1, (need - 1).bit_length())
        if grow:
            arch = dataclasses.replace(arch, **grow).checked()
    return Program(arch, lir.prog, consts.image(), vars_, params, net, stages, dram0, consts.size, data)
