"""Tensil fixed-point arithmetic (spec §2): FP16BP8 and FP32B16 on raw two's-complement
integers held in numpy int64 arrays.

* ``mac(x, w, z)``: ``t = x*w + (z << F)`` exactly, rounded to nearest, ties to even, at
  bit F, then saturated to W bits. The rounding applies to the whole sum.
* ``add(a, b)``: exact sum, saturated. SIMD Multiply is ``mac(x, y, 0)``.
* float -> fixed (compiler and loader only): ``sat(floor(f * 2^F + 0.5))``.

int64 holds every intermediate: |x*w| <= 2^62 and |z << 16| < 2^47 for FP32B16.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .arch import FORMATS


@dataclass(frozen=True)
class FixedFormat:
    """W-bit two's complement with F fractional bits."""

    width: int
    frac: int

    @classmethod
    def named(cls, data_type: str) -> FixedFormat:
        w, f = FORMATS[data_type]
        return cls(w, f)

    @property
    def lo(self) -> int:
        return -(1 << (self.width - 1))

    @property
    def hi(self) -> int:
        return (1 << (self.width - 1)) - 1

    @property
    def one(self) -> int:
        """Raw value of 1.0 (also the boolean 'true' of the SIMD ops)."""
        return 1 << self.frac

    @property
    def dtype(self) -> Any:
        """Little-endian numpy storage type of one scalar."""
        return np.dtype("<i2") if self.width == 16 else np.dtype("<i4")

    def sat(self, x: Any) -> Any:
        """Saturate raw integers to the format's range."""
        return np.minimum(np.maximum(x, self.lo), self.hi)

    def round_shift(self, t: Any) -> Any:
        """``t >> F`` rounded to nearest, ties to even (arithmetic shift): adding
        2^(F-1) - 1 plus the kept part's lowest bit before the shift rounds up exactly when
        the dropped bits exceed one half, or equal it and the kept part is odd."""
        t = np.array(t, dtype=np.int64)
        f = self.frac
        odd = (t >> f) & 1
        t += (1 << (f - 1)) - 1
        t += odd
        t >>= f
        return t

    def chain(self, x: Any, w: Any, b: Any) -> Any:
        """One pass through the array: rows ``x`` (n, N) against weights ``w`` (out N, in N)
        from bias ``b``: ``p = b; p = mac(x[:, j], w[:, j], p)`` for j in lane order."""
        x = np.asarray(x, dtype=np.int64)
        w = np.asarray(w, dtype=np.int64)
        f, lo, hi = self.frac, self.lo, self.hi
        bias_round = (1 << (f - 1)) - 1
        p = np.empty((x.shape[0], w.shape[0]), dtype=np.int64)
        p[:] = b
        t = np.empty_like(p)
        odd = np.empty_like(p)
        for j in range(x.shape[1]):
            np.multiply(x[:, j:j + 1], w[None, :, j], out=t)
            p <<= f
            t += p
            np.right_shift(t, f, out=odd)
            odd &= 1
            t += bias_round
            t += odd
            np.right_shift(t, f, out=p)
            np.maximum(p, lo, out=p)
            np.minimum(p, hi, out=p)
        return p

    def mac(self, x: Any, w: Any, z: Any) -> Any:
        """``sat(rne((x*w + (z << F)) >> F))`` element-wise on raw integers."""
        t = np.asarray(x, dtype=np.int64) * np.asarray(w, dtype=np.int64) \
            + (np.asarray(z, dtype=np.int64) << self.frac)
        return self.sat(self.round_shift(t))

    def add(self, a: Any, b: Any) -> Any:
        """Saturating sum of raw integers."""
        return self.sat(np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64))

    def from_float(self, f: Any) -> Any:
        """Raw integers of real values: ``sat(floor(f * 2^F + 0.5))``."""
        scaled = np.floor(np.asarray(f, dtype=np.float64) * self.one + 0.5)
        return self.sat(np.clip(scaled, self.lo - 1, self.hi + 1)).astype(np.int64)

    def to_float(self, raw: Any) -> Any:
        """Real values of raw integers."""
        return np.asarray(raw, dtype=np.float64) / self.one

    def to_bytes(self, raw: Any) -> bytes:
        """Little-endian bytes of raw scalars (lane 0 at the lowest address)."""
        return np.asarray(raw, dtype=np.int64).astype(self.dtype).tobytes()

    def from_bytes(self, data: bytes | bytearray | memoryview) -> Any:
        """Raw scalars (int64) of little-endian bytes."""
        return np.frombuffer(bytes(data), dtype=self.dtype).astype(np.int64)
