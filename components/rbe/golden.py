"""Plain numpy reference for an RBE layer, independent of the bit decomposition.

Arithmetic (the definition the engine must match bit for bit):

1. ``acc[h, w, ko] = sum_{ky, kx, ki} x[h+ky, w+kx, ki] * w[ko, ki, ky, kx]`` over unsigned
   operands (valid 3x3 convolution, stride 1; 1x1 is the same with one tap), computed
   exactly in int64 and then reduced to the RBE's 32-bit two's-complement accumulator
   (wrap modulo 2**32). The wrap can only happen when ``K_in * taps * (2**W-1) * (2**I-1)``
   exceeds ``2**31 - 1``, i.e. 3x3 at 8/8 bits with K_in > 3669 (see ``job.acc_can_wrap``).
2. ``v = scale[ko] * acc + bias[ko]`` with ``scale`` unsigned 16-bit and ``bias`` signed
   32-bit; ``|v| <= 65535 * 2**31 + 2**31 = 2**47``, so the 48-bit hardware product never
   overflows and int64 is exact.
3. ``v >>= S``: arithmetic (floor) shift, ``0 <= S <= 31``.
4. ReLU: ``v = max(v, 0)``. Outputs are unsigned O-bit values, so negatives clip to 0 with
   or without ReLU: the RELU bit does not change the result (see docs/rbe.md).
5. ``out = min(v, 2**O - 1)``.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def wrap_int32(v: np.ndarray) -> np.ndarray:
    """Reduce int64 values modulo 2**32 into int32 (two's complement)."""
    return (np.asarray(v, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def conv_acc(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Integer convolution accumulators, int32 ``(Hout, Wout, Kout)``.

    ``x`` is ``(Hin, Win, Kin)``; ``w`` is ``(Kout, Kin, 3, 3)`` (valid 3x3, output
    ``(Hin-2, Win-2)``) or ``(Kout, Kin)`` / ``(Kout, Kin, 1, 1)`` (1x1).
    """
    x = np.asarray(x, dtype=np.int64)
    w = np.asarray(w, dtype=np.int64)
    if w.ndim == 2:
        w = w[:, :, None, None]
    kout, kin, fh, fw = w.shape
    if x.ndim != 3 or x.shape[2] != kin:
        raise ValueError(f"conv_acc: x {x.shape} does not match weights {w.shape}")
    # im2col: (Hout, Wout, Kin, fh, fw) windows -> one int64 matmul with (Kin*fh*fw, Kout)
    cols = sliding_window_view(x, (fh, fw), axis=(0, 1))
    hout, wout = cols.shape[:2]
    a_mat = cols.reshape(hout * wout, kin * fh * fw)
    b_mat = w.reshape(kout, kin * fh * fw).T
    if _exact_in_float64(x, w, kin * fh * fw):
        # BLAS instead of numpy's unvectorised int64 matmul (10-50x faster): every partial
        # sum is an integer below 2**53, so float64 is exact in any summation order
        acc = (a_mat.astype(np.float64) @ b_mat.astype(np.float64)).astype(np.int64)
    else:
        acc = a_mat @ b_mat
    return wrap_int32(acc).reshape(hout, wout, kout)


def _exact_in_float64(x: np.ndarray, w: np.ndarray, terms: int) -> bool:
    """Whether sums of ``terms`` products of an element of x and one of w stay below 2**53."""
    if x.size == 0 or w.size == 0:
        return True
    mx = int(np.abs(x).max())
    mw = int(np.abs(w).max())
    return mx * mw * terms < 1 << 53


def normquant(acc: np.ndarray, scale: np.ndarray, bias: np.ndarray, shift: int, o_bits: int,
              relu: bool = True) -> np.ndarray:
    """Normalise and quantise int32 accumulators ``(..., Kout)`` to unsigned ``o_bits``."""
    v = np.asarray(scale, dtype=np.int64) * np.asarray(acc, dtype=np.int64) \
        + np.asarray(bias, dtype=np.int64)
    v = v >> shift
    if relu:
        v = np.maximum(v, 0)
    return np.clip(v, 0, (1 << o_bits) - 1)


def golden_layer(x: np.ndarray, w: np.ndarray, scale: np.ndarray, bias: np.ndarray, shift: int,
                 o_bits: int, relu: bool = True) -> np.ndarray:
    """Reference RBE layer: conv + norm-quant, int64 ``(Hout, Wout, Kout)`` outputs."""
    return normquant(conv_acc(x, w), scale, bias, shift, o_bits, relu)
