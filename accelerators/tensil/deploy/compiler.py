"""Compile our network description (cosim/deploy/network.py) into a Tensil program.

Stages of the compiler (mirroring Tensil's, docs/tensil.md "Compiler"):

1. **Layers**: the network's layers in order; each becomes one Tensil layer (a matrix
   multiplication or a data movement, a chain of accumulator operations, a move out).
2. **Memory manager**: variables (the input, every layer output) in DRAM0 as HWC with one
   pixel of zero border and channels padded to whole vectors; constants (weight blocks with
   their bias vectors, pooling factors) in DRAM1.
3. **Scheduler**: splits each layer into *stages* (bands of output rows) whose inputs fit
   local memory and whose outputs fit the accumulators; stages share nothing.
4. **LIR**: each stage is emitted as instructions (:class:`.lir.Lir`), with the SIMD -> DataMove
   hazard NoOps, strides that the architecture can encode (or one instruction per vector).
5. **Backend**: ``.tprog`` bytes, the DRAM1 constants image and a JSON manifest.

Weights are generated from a seed (no downloads) and quantised to the data type; the numpy
reference (:mod:`.reference`) evaluates the same schedule in the same arithmetic.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.isa import Instruction, assemble_binary

from cosim.deploy.network import Layer, Network
from accelerators.tensil.deploy import ops
from accelerators.tensil.deploy.lir import CompileError, Consts, Lir, Var, kernel_of

__all__ = ["CompileError", "Program", "Var", "compile_network", "generate_params", "plan_storage", "plan_vars"]


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
    consts = Consts(n, data)
    lir = Lir(arch)
    views = plan_storage(net, n)[0]
    vars_, dram0 = plan_vars(net, n)
    if dram0 > arch.dram0_depth and not grow_dram:
        full = next(v.name for v in vars_.values() if not v.parent and v.base + v.size > arch.dram0_depth)
        raise CompileError(f"{full}: DRAM0 ({arch.dram0_depth} vectors) is full")
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
