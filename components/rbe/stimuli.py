"""Layer stimuli for scenarios, benchmarks and tests: random tensors, TCDM placement.

``random_layer`` draws unsigned operands and picks norm-quant parameters so the outputs
spread over the whole O-bit range (some clipped at 0, some saturated), which is what makes
an engine-vs-golden comparison informative. ``place_layer`` packs a layer into a byte
memory image and returns the dense ``RbeJob`` that computes it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .arch import WORD_BYTES
from .golden import golden_layer
from .job import Mode, RbeJob
from .layout import pack_activations, pack_normquant, pack_weights_1x1, pack_weights_3x3, to_bytes


@dataclass(frozen=True)
class Layer:
    """Plain integer tensors of one layer plus its precisions and norm-quant settings."""

    x: np.ndarray      # (Hin, Win, Kin)
    w: np.ndarray      # (Kout, Kin, 3, 3) or (Kout, Kin)
    scale: np.ndarray  # (Kout,) uint16 values
    bias: np.ndarray   # (Kout,) int32 values
    shift: int
    w_bits: int
    i_bits: int
    o_bits: int
    mode: int
    relu: bool = True

    @property
    def golden(self) -> np.ndarray:
        return golden_layer(self.x, self.w, self.scale, self.bias, self.shift, self.o_bits,
                            self.relu)


def random_layer(rng: np.random.Generator, *, h_out: int, w_out: int, k_in: int, k_out: int,
                 w_bits: int, i_bits: int, o_bits: int, mode: int = Mode.CONV3X3,
                 relu: bool = True) -> Layer:
    """Uniform random operands with norm-quant parameters that exercise the full O range."""
    halo = 2 if mode == Mode.CONV3X3 else 0
    taps = 9 if mode == Mode.CONV3X3 else 1
    x = rng.integers(0, 1 << i_bits, size=(h_out + halo, w_out + halo, k_in), dtype=np.int64)
    wshape = (k_out, k_in, 3, 3) if mode == Mode.CONV3X3 else (k_out, k_in)
    w = rng.integers(0, 1 << w_bits, size=wshape, dtype=np.int64)
    # Centre +-2 sigma of the accumulator distribution on the O-bit output range so that
    # outputs are spread out and both clipping ends are hit for some channels.
    n = k_in * taps
    aw, ai = (1 << w_bits) - 1, (1 << i_bits) - 1
    mean = n * aw * ai / 4
    var = n * ((aw * (2 * aw + 1) / 6) * (ai * (2 * ai + 1) / 6) - (aw * ai / 4) ** 2)
    sigma = math.sqrt(max(var, 1.0))
    s_max = int(max(1, min((1 << 16) - 1, (1 << 30) / (mean + 4 * sigma))))  # bias fits int32
    scale = rng.integers(max(1, s_max // 4), s_max + 1, size=k_out, dtype=np.int64)
    shift = int(np.clip(math.ceil(math.log2(max(1.0, scale.mean() * 4 * sigma / (1 << o_bits)))),
                        0, 31))
    offset = mean - 2 * sigma * rng.uniform(0.6, 1.4, size=k_out)
    bias = np.clip(np.round(-scale * offset), -(1 << 31), (1 << 31) - 1).astype(np.int64)
    return Layer(x, w, scale, bias, shift, w_bits, i_bits, o_bits, int(mode), relu)


class ByteMemory:
    """A flat byte memory at ``base`` with the engine's ``read``/``write`` callables."""

    def __init__(self, size: int, base: int = 0):
        self.base = base
        self.data = np.zeros(size, dtype=np.uint8)

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        off = addr - self.base
        if off < 0 or off + nbytes > self.data.size:
            raise IndexError(f"read [{addr:#x}, +{nbytes}) outside memory")
        return self.data[off:off + nbytes].copy()

    def write(self, addr: int, data: np.ndarray | bytes) -> None:
        buf = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) \
            else np.asarray(data, dtype=np.uint8).reshape(-1)
        off = addr - self.base
        if off < 0 or off + buf.size > self.data.size:
            raise IndexError(f"write [{addr:#x}, +{buf.size}) outside memory")
        self.data[off:off + buf.size] = buf


def _align(v: int) -> int:
    return -(-v // WORD_BYTES) * WORD_BYTES


def place_layer(layer: Layer, mem: ByteMemory, addr: int | None = None) -> RbeJob:
    """Write ``layer``'s packed operands into ``mem`` from ``addr`` on; return its dense job."""
    addr = mem.base if addr is None else addr
    hin, win, kin = layer.x.shape
    k_out = layer.w.shape[0]
    halo = 2 if layer.mode == Mode.CONV3X3 else 0
    xw = pack_activations(layer.x, layer.i_bits)
    ww = (pack_weights_3x3(layer.w, layer.w_bits) if layer.mode == Mode.CONV3X3
          else pack_weights_1x1(layer.w, layer.w_bits))
    nq = pack_normquant(layer.scale, layer.bias)
    x_addr = _align(addr)
    w_addr = _align(x_addr + xw.nbytes)
    nq_addr = _align(w_addr + ww.nbytes)
    y_addr = _align(nq_addr + nq.nbytes)
    mem.write(x_addr, to_bytes(xw))
    mem.write(w_addr, to_bytes(ww))
    mem.write(nq_addr, nq)
    return RbeJob.dense(x_addr=x_addr, w_addr=w_addr, nq_addr=nq_addr, y_addr=y_addr,
                        h_out=hin - halo, w_out=win - halo, k_in=kin, k_out=k_out,
                        w_bits=layer.w_bits, i_bits=layer.i_bits, o_bits=layer.o_bits,
                        mode=layer.mode, shift=layer.shift, relu=layer.relu)
