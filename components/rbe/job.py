"""One RBE job: its decoded description, derived sizes, and validation.

``RbeJob`` is what the register file decodes from a context and what the engine, the
streamer trace and the cycle model consume. Validation returns an ``RbeError`` code and
never raises, because it runs inside the simulation on values firmware wrote.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from .arch import (ACC_BITS, BITS_PER_PASS, MAX_BITS, MAX_CHANNELS, MIN_BITS, NQ_RECORD_BYTES,
                   PATCH_1X1, PATCH_3X3, SHIFT_BITS, TAPS_1X1, TAPS_3X3, TILE, TP, WORD_BYTES)


class Mode(enum.IntEnum):
    """Convolution mode (CONFIG.MODE field)."""

    CONV3X3 = 0
    CONV1X1 = 1


class RbeError(enum.IntEnum):
    """Job validation result; the first failing check in this order wins."""

    OK = 0
    W_BITS = 1      # weight precision outside 2..8
    I_BITS = 2      # input precision outside 2..8
    O_BITS = 3      # output precision outside 2..8
    K_IN = 4        # K_in zero, not a multiple of 32, or above MAX_CHANNELS
    K_OUT = 5       # K_out zero, not a multiple of 32, or above MAX_CHANNELS
    SIZE = 6        # H_out or W_out is zero
    MODE = 7        # reserved CONFIG.MODE encoding
    ALIGN = 8       # an address or stride not a multiple of 4 bytes
    X_RANGE = 9     # input tensor not inside the TCDM window
    W_RANGE = 10    # weights not inside the TCDM window
    NQ_RANGE = 11   # norm-quant parameters not inside the TCDM window
    Y_RANGE = 12    # output tensor not inside the TCDM window


@dataclass(frozen=True)
class RbeJob:
    """A decoded RBE job. Addresses and strides are in bytes."""

    x_addr: int
    w_addr: int
    nq_addr: int
    y_addr: int
    h_out: int
    w_out: int
    k_in: int
    k_out: int
    x_row_stride: int
    x_pix_stride: int
    y_row_stride: int
    y_pix_stride: int
    w_bits: int
    i_bits: int
    o_bits: int
    mode: int = Mode.CONV3X3
    shift: int = 0
    relu: bool = True

    # ---- derived sizes -------------------------------------------------------------------
    @property
    def is_3x3(self) -> bool:
        return self.mode == Mode.CONV3X3

    @property
    def taps(self) -> int:
        return TAPS_3X3 if self.is_3x3 else TAPS_1X1

    @property
    def patch(self) -> int:
        """Edge of the input patch loaded per output tile (5 or 3)."""
        return PATCH_3X3 if self.is_3x3 else PATCH_1X1

    @property
    def h_in(self) -> int:
        return self.h_out + (2 if self.is_3x3 else 0)

    @property
    def w_in(self) -> int:
        return self.w_out + (2 if self.is_3x3 else 0)

    @property
    def kin_tiles(self) -> int:
        return self.k_in // TP

    @property
    def kout_tiles(self) -> int:
        return self.k_out // TP

    @property
    def passes(self) -> int:
        return math.ceil(self.i_bits / BITS_PER_PASS)

    def pass_bits(self, p: int) -> range:
        """Input bit indices handled by pass ``p``."""
        return range(BITS_PER_PASS * p, min(BITS_PER_PASS * (p + 1), self.i_bits))

    @property
    def tiles_h(self) -> int:
        return math.ceil(self.h_out / TILE)

    @property
    def tiles_w(self) -> int:
        return math.ceil(self.w_out / TILE)

    @property
    def x_pixel_bytes(self) -> int:
        return self.kin_tiles * self.i_bits * WORD_BYTES

    @property
    def y_pixel_bytes(self) -> int:
        return self.kout_tiles * self.o_bits * WORD_BYTES

    @property
    def w_bytes(self) -> int:
        return self.k_out * self.kin_tiles * self.w_bits * self.taps * WORD_BYTES

    @property
    def nq_bytes(self) -> int:
        return self.k_out * NQ_RECORD_BYTES

    def x_extent(self) -> tuple[int, int]:
        """``[first, end)`` byte range the input reads can touch."""
        end = (self.x_addr + (self.h_in - 1) * self.x_row_stride
               + (self.w_in - 1) * self.x_pix_stride + self.x_pixel_bytes)
        return self.x_addr, end

    def y_extent(self) -> tuple[int, int]:
        end = (self.y_addr + (self.h_out - 1) * self.y_row_stride
               + (self.w_out - 1) * self.y_pix_stride + self.y_pixel_bytes)
        return self.y_addr, end

    def w_extent(self) -> tuple[int, int]:
        return self.w_addr, self.w_addr + self.w_bytes

    def nq_extent(self) -> tuple[int, int]:
        return self.nq_addr, self.nq_addr + self.nq_bytes

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the layer (an op is a multiply or an add: ops = 2*macs)."""
        return self.h_out * self.w_out * self.k_out * self.k_in * self.taps

    @classmethod
    def dense(cls, *, x_addr: int, w_addr: int, nq_addr: int, y_addr: int, h_out: int,
              w_out: int, k_in: int, k_out: int, w_bits: int, i_bits: int, o_bits: int,
              mode: int = Mode.CONV3X3, shift: int = 0, relu: bool = True) -> "RbeJob":
        """A job whose input and output tensors are densely packed (the usual case)."""
        halo = 2 if mode == Mode.CONV3X3 else 0
        xps = (k_in // TP) * i_bits * WORD_BYTES
        yps = (k_out // TP) * o_bits * WORD_BYTES
        return cls(x_addr=x_addr, w_addr=w_addr, nq_addr=nq_addr, y_addr=y_addr,
                   h_out=h_out, w_out=w_out, k_in=k_in, k_out=k_out,
                   x_row_stride=(w_out + halo) * xps, x_pix_stride=xps,
                   y_row_stride=w_out * yps, y_pix_stride=yps,
                   w_bits=w_bits, i_bits=i_bits, o_bits=o_bits, mode=mode, shift=shift,
                   relu=relu)


def _bits_ok(b: int) -> bool:
    return MIN_BITS <= b <= MAX_BITS


def _channels_ok(k: int) -> bool:
    return 0 < k <= MAX_CHANNELS and k % TP == 0


def validate(job: RbeJob, tcdm_base: int, tcdm_size: int) -> RbeError:
    """Check ``job`` against the hardware limits and the TCDM window ``[base, base+size)``."""
    if not _bits_ok(job.w_bits):
        return RbeError.W_BITS
    if not _bits_ok(job.i_bits):
        return RbeError.I_BITS
    if not _bits_ok(job.o_bits):
        return RbeError.O_BITS
    if not _channels_ok(job.k_in):
        return RbeError.K_IN
    if not _channels_ok(job.k_out):
        return RbeError.K_OUT
    if job.h_out <= 0 or job.w_out <= 0:
        return RbeError.SIZE
    if job.mode not in (Mode.CONV3X3, Mode.CONV1X1):
        return RbeError.MODE
    words = (job.x_addr, job.w_addr, job.nq_addr, job.y_addr, job.x_row_stride,
             job.x_pix_stride, job.y_row_stride, job.y_pix_stride)
    if any(v % WORD_BYTES for v in words):
        return RbeError.ALIGN
    lo, hi = tcdm_base, tcdm_base + tcdm_size
    for extent, err in ((job.x_extent(), RbeError.X_RANGE), (job.w_extent(), RbeError.W_RANGE),
                        (job.nq_extent(), RbeError.NQ_RANGE), (job.y_extent(), RbeError.Y_RANGE)):
        first, end = extent
        if first < lo or end > hi:
            return err
    return RbeError.OK


def acc_can_wrap(job: RbeJob) -> bool:
    """True when the 32-bit accumulator can wrap for this job's worst-case operands."""
    worst = job.k_in * job.taps * ((1 << job.w_bits) - 1) * ((1 << job.i_bits) - 1)
    return worst > (1 << (ACC_BITS - 1)) - 1


assert (1 << SHIFT_BITS) == 32  # CONFIG.SHIFT is a 5-bit field: 0..31
