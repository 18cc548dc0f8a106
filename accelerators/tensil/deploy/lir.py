"""The building blocks the compiler (:mod:`.compiler`) and its layer emitters (:mod:`.ops`)
share: the LIR instruction emitter, DRAM0 variables, the DRAM1 constants image, weight
blocks, and the compile error."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.isa import DataFlow, DataMove, Instruction, LoadWeight, MatMul, NoOp, Simd, SimdOp

from cosim.deploy.network import Layer


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


class Consts:
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
