"""Pure numpy definitions of every cluster kernel: the single source of their semantics.

The cluster model (``kernels.py``) computes each chunk of work with these functions, and the
DNN deployment's reference network imports the same ones, so a kernel run on the simulated
cores and the reference agree by construction. Everything is exact integer arithmetic in
int64 (then reduced as stated), except the FFT, which is defined operation by operation in
the working precision (float32 or float16, one rounding per operation).

Memory layouts (what the kernels find in TCDM):

* int8 tensors: one byte per value, two's complement; int32: 4 bytes little-endian.
* sub-byte rows (int4 / int2 matmul operands): values packed along the row, little end
  first: value ``i`` of a row sits in byte ``i // per`` at bit ``(i % per) * bits``
  (``per = 8 // bits``), two's complement in ``bits`` bits (XpulpNN nibble/crumb SIMD).
* bit-plane activations (RBE layout, ``components.rbe.layout``): ``(H, W, K/32, bits)``
  uint32 words, word bit ``c`` = bit ``j`` of channel ``32 g + c``; values unsigned.
* complex vectors (FFT): interleaved ``re, im`` pairs in float32 or float16.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from components.rbe.layout import pack_bitplanes, unpack_bitplanes

__all__ = [
    "pack_bitplanes", "unpack_bitplanes", "MATMUL_BITS", "int_range", "wrap_int32", "pack_subbyte",
    "unpack_subbyte", "matmul",
    "requantize", "conv2d", "conv2d_acc", "add_requant", "add_requant_params", "add_bitplane",
    "avgpool", "avgpool_params", "avgpool_bitplane", "fc", "rbe_input", "rbe_output", "maxpool", "leaky_requant", "lut",
    "FFT_PRECISIONS", "fft_dtype", "fft_twiddles",
    "bitreverse_indices", "fft_butterflies", "fft", "complex_to_bytes", "bytes_to_complex",
]

MATMUL_BITS = (8, 4, 2)


def int_range(bits: int, signed: bool) -> tuple[int, int]:
    """Inclusive value range of a ``bits``-bit integer."""
    if signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def wrap_int32(v: np.ndarray) -> np.ndarray:
    """Reduce int64 values modulo 2**32 into int32 (the cores' 32-bit accumulators)."""
    return (np.asarray(v, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def _check_range(x: np.ndarray, bits: int, signed: bool, what: str) -> np.ndarray:
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"{what}: integer values expected, got {x.dtype}")
    lo, hi = int_range(bits, signed)
    if x.size and (int(x.min()) < lo or int(x.max()) > hi):
        raise ValueError(f"{what}: values must be in [{lo}, {hi}] ({bits}-bit "
                         f"{'signed' if signed else 'unsigned'})")
    return x.astype(np.int64)


# ----- sub-byte packing --------------------------------------------------------------------
def pack_subbyte(x: np.ndarray, bits: int) -> np.ndarray:
    """Pack signed ``bits``-bit values (2, 4 or 8) along the last axis into bytes (uint8).

    The last axis length must fill whole bytes (a multiple of ``8 // bits``)."""
    if bits not in MATMUL_BITS:
        raise ValueError(f"pack_subbyte: bits must be one of {MATMUL_BITS}, got {bits}")
    x = _check_range(x, bits, True, "pack_subbyte")
    per = 8 // bits
    if x.shape[-1] % per:
        raise ValueError(f"pack_subbyte: the last axis ({x.shape[-1]}) must be a multiple of {per}")
    u = (x & ((1 << bits) - 1)).astype(np.uint8).reshape(*x.shape[:-1], x.shape[-1] // per, per)
    shifts = (np.arange(per, dtype=np.uint8) * bits).astype(np.uint8)
    return np.bitwise_or.reduce(u << shifts, axis=-1).astype(np.uint8)


def unpack_subbyte(b: np.ndarray, bits: int) -> np.ndarray:
    """Inverse of :func:`pack_subbyte`: bytes ``(..., nbytes)`` -> int64 ``(..., nbytes*8/bits)``."""
    if bits not in MATMUL_BITS:
        raise ValueError(f"unpack_subbyte: bits must be one of {MATMUL_BITS}, got {bits}")
    b = np.asarray(b, dtype=np.uint8)
    per = 8 // bits
    shifts = (np.arange(per, dtype=np.uint8) * bits).astype(np.uint8)
    u = ((b[..., None] >> shifts) & ((1 << bits) - 1)).astype(np.int64)
    v = np.where(u >= (1 << (bits - 1)), u - (1 << bits), u)  # sign extension
    return v.reshape(*b.shape[:-1], b.shape[-1] * per)


# ----- integer kernels ---------------------------------------------------------------------
def matmul(a: np.ndarray, w: np.ndarray, bits: int = 8) -> np.ndarray:
    """``C[m, n] = sum_k A[m, k] * W[n, k]`` on signed ``bits``-bit operands, int32 result.

    ``A`` is ``(M, K)``; ``W`` is ``(N, K)`` (the second operand is stored transposed, as
    PULP-NN does, so both operands of each dot product are contiguous). The sum is exact
    and then wraps modulo 2**32 (the cores accumulate in 32-bit registers)."""
    a = _check_range(a, bits, True, "matmul A")
    w = _check_range(w, bits, True, "matmul W")
    if a.ndim != 2 or w.ndim != 2 or a.shape[1] != w.shape[1]:
        raise ValueError(f"matmul: A (M, K) and W (N, K) expected, got {a.shape} and {w.shape}")
    return wrap_int32(a @ w.T)


def requantize(v: np.ndarray, mult, add, shift: int, lo: int, hi: int) -> np.ndarray:
    """``clip((v * mult + add) >> shift, lo, hi)`` exactly in int64 (floor shift).

    ``mult``/``add`` are scalars or arrays broadcast against ``v`` (per channel: last axis)."""
    if not 0 <= shift <= 47:
        raise ValueError(f"requantize: shift must be in 0..47, got {shift}")
    r = np.asarray(v, dtype=np.int64) * np.asarray(mult, dtype=np.int64) \
        + np.asarray(add, dtype=np.int64)
    return np.clip(r >> shift, lo, hi)


def conv2d_acc(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> np.ndarray:
    """int32 accumulators of a 2-D convolution, HWC input ``(H, W, Cin)`` and weights
    ``(Cout, KH, KW, Cin)`` (PULP-NN layouts), zero padding ``pad``, ``stride``."""
    x = np.asarray(x, dtype=np.int64)
    w = np.asarray(w, dtype=np.int64)
    if x.ndim != 3 or w.ndim != 4 or w.shape[3] != x.shape[2]:
        raise ValueError(f"conv2d: x (H, W, Cin) and w (Cout, KH, KW, Cin) expected, got "
                         f"{x.shape} and {w.shape}")
    cout, kh, kw, cin = w.shape
    if pad:
        x = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    win = sliding_window_view(x, (kh, kw), axis=(0, 1))[::stride, ::stride]  # (Ho, Wo, Cin, kh, kw)
    ho, wo = win.shape[:2]
    cols = win.transpose(0, 1, 3, 4, 2).reshape(ho * wo, kh * kw * cin)
    return wrap_int32(cols @ w.reshape(cout, -1).T).reshape(ho, wo, cout)


def conv2d(x: np.ndarray, w: np.ndarray, scale: np.ndarray, bias: np.ndarray, shift: int,
           stride: int = 1, pad: int = 0, relu: bool = False) -> np.ndarray:
    """int8 convolution on the cores: ``y = clip((scale[co] * acc + bias[co]) >> shift)``.

    ``x`` int8 ``(H, W, Cin)``, ``w`` int8 ``(Cout, KH, KW, Cin)``, ``scale``/``bias`` int32
    per output channel, ``acc`` from :func:`conv2d_acc`. The output is int8 in [-128, 127],
    or [0, 127] with ``relu``."""
    _check_range(x, 8, True, "conv2d x")
    _check_range(w, 8, True, "conv2d w")
    acc = conv2d_acc(x, w, stride, pad)
    return requantize(acc, scale, bias, shift, 0 if relu else -128, 127)


def add_requant(a: np.ndarray, b: np.ndarray, m1: int, m2: int, bias: int, shift: int,
                o_bits: int = 8, signed: bool = False) -> np.ndarray:
    """Element-wise add with requantisation:
    ``clip((m1*a + m2*b + bias) >> shift)`` to ``o_bits`` (unsigned, or signed two's
    complement with ``signed``), exact in int64 with a floor shift. ``m1``/``m2`` are
    unsigned 16-bit, ``bias`` signed 32-bit, ``shift`` 0..31."""
    lo, hi = int_range(o_bits, signed)
    return np.clip((np.asarray(a, dtype=np.int64) * int(m1) + np.asarray(b, dtype=np.int64)
                    * int(m2) + int(bias)) >> int(shift), lo, hi)


def add_requant_params(a: np.ndarray, b: np.ndarray, a_bits: int, b_bits: int,
                       o_bits: int) -> dict[str, int]:
    """Requantisation parameters of a residual add (``m1, m2, bias, shift``): each input is
    taken relative to its full scale (``a / (2**a_bits - 1)``), their sum's largest value
    over the given data maps onto ``2**o_bits - 1``, with round-to-nearest (``bias`` is half
    an output step) and the largest ``shift`` that keeps ``m1, m2 < 2**16``."""
    fa, fb = (1 << a_bits) - 1, (1 << b_bits) - 1
    peak = float(np.max(np.asarray(a, dtype=np.float64) / fa + np.asarray(b, dtype=np.float64) / fb,
                        initial=0.0))
    peak = peak if peak > 0 else 2.0
    top = (1 << o_bits) - 1
    best = (1, 1, 0)
    for shift in range(0, 32):
        m1 = round(top * (1 << shift) / (fa * peak))
        m2 = round(top * (1 << shift) / (fb * peak))
        if max(m1, m2) >= 1 << 16:
            break
        best = (max(m1, 1), max(m2, 1), shift)
    m1, m2, shift = best
    return {"m1": m1, "m2": m2, "bias": (1 << shift) >> 1, "shift": shift}


def add_bitplane(wa: np.ndarray, wb: np.ndarray, m1: int, m2: int, bias: int, shift: int,
                 o_bits: int) -> np.ndarray:
    """Residual add of two bit-plane tensors into a bit-plane tensor.

    ``wa`` ``(..., G, a_bits)`` and ``wb`` ``(..., G, b_bits)`` words hold unsigned values
    ``a`` and ``b``; the result ``(..., G, o_bits)`` holds :func:`add_requant` of them
    (unsigned ``o_bits``)."""
    a = unpack_bitplanes(wa)
    b = unpack_bitplanes(wb)
    if a.shape != b.shape:
        raise ValueError(f"add_bitplane: shapes differ: {a.shape} and {b.shape}")
    return pack_bitplanes(add_requant(a, b, m1, m2, bias, shift, o_bits), o_bits)


def avgpool(x: np.ndarray, mult: int, bias: int, shift: int, signed: bool = False) -> np.ndarray:
    """Global average pooling with requantisation: ``x`` ``(..., K)`` (e.g. ``(H, W, K)`` or
    ``(pixels, K)``) -> ``(K,)``: ``clip((sum x * mult + bias) >> shift)`` over every axis but
    the last, to uint8 (or int8 with ``signed``)."""
    x = np.asarray(x, dtype=np.int64)
    s = x.reshape(-1, x.shape[-1]).sum(axis=0)
    lo, hi = int_range(8, signed)
    return requantize(s, mult, bias, shift, lo, hi)


def avgpool_params(pixels: int) -> dict[str, int]:
    """``mult, bias, shift`` of a rounded mean over ``pixels`` values:
    ``shift = 15 + ceil(log2 pixels)``, ``mult = round(2**shift / pixels)`` (< 2**16),
    ``bias = 2**(shift-1)``."""
    if pixels < 1:
        raise ValueError(f"avgpool_params: pixels must be >= 1, got {pixels}")
    shift = 15 + max(0, (pixels - 1).bit_length())
    return {"mult": round((1 << shift) / pixels), "bias": 1 << (shift - 1), "shift": shift}


def avgpool_bitplane(words: np.ndarray, mult: int, bias: int, shift: int,
                     signed: bool = False) -> np.ndarray:
    """:func:`avgpool` of a bit-plane tensor ``(..., G, bits)``: a ``(G*32,)`` vector."""
    return avgpool(unpack_bitplanes(words), mult, bias, shift, signed)


def fc(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Fully connected: ``y[n] = sum_k x[k] * W[n, k] + bias[n]`` as int32 (wraps mod 2**32).

    ``x`` 8-bit (int8 or uint8: the values are what they are), ``W`` int8 ``(N, K)``,
    ``bias`` int32 ``(N,)``."""
    x = np.asarray(x, dtype=np.int64)
    w = _check_range(w, 8, True, "fc W")
    if x.ndim != 1 or w.ndim != 2 or w.shape[1] != x.shape[0]:
        raise ValueError(f"fc: x (K,) and W (N, K) expected, got {x.shape} and {w.shape}")
    return wrap_int32(w @ x + np.asarray(bias, dtype=np.int64))


# ----- FFT -----------------------------------------------------------------------------------
FFT_PRECISIONS = ("fp32", "fp16")


def maxpool(x: np.ndarray, k: int, stride: int, pad: int) -> np.ndarray:
    """Max pooling of int8 ``(H, W, C)`` over ``k x k`` windows at ``stride``; ``pad`` rows and
    columns around the input count as -128 (the int8 minimum: never above a real value, as
    ONNX's padding with -inf)."""
    x = np.asarray(x, dtype=np.int64)
    if pad:
        x = np.pad(x, ((pad, pad), (pad, pad), (0, 0)), constant_values=-128)
    return sliding_window_view(x, (k, k), axis=(0, 1))[::stride, ::stride].max(axis=(3, 4))


def leaky_requant(x: np.ndarray, zp: int, m_pos: int, m_neg: int, shift: int, zp_out: int) -> np.ndarray:
    """int8 LeakyRelu with requantisation: ``d = x - zp``, ``p = d * m`` with ``m = m_pos`` for
    ``d >= 0`` and ``m_neg`` below (the slope), ``p / 2^shift`` rounded half to even (as
    ONNX's QuantizeLinear rounds), plus ``zp_out``, clipped to int8."""
    d = np.asarray(x, dtype=np.int64) - zp
    p = d * np.where(d >= 0, m_pos, m_neg)
    q = p >> shift
    if shift:
        r, half = p & ((1 << shift) - 1), 1 << (shift - 1)
        q = q + ((r > half) | ((r == half) & (q & 1 == 1)))
    return np.clip(q + zp_out, -128, 127)


def lut(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[x + 128]`` for int8 ``x``: any element-wise function of one int8 tensor."""
    return np.asarray(table, dtype=np.int64)[np.asarray(x, dtype=np.int64) + 128]


def rbe_input(x: np.ndarray, kh: int, kw: int, stride: int, k: int) -> np.ndarray:
    """The RBE's unsigned input from an int8 ``(H, W, C)`` tensor: per output pixel (a
    ``kh x kw`` window at ``stride``, taps in row-major order, each tap's C channels) the
    values ``x + 128``, then their complements ``127 - x`` (``255 - (x + 128)``), then zeros
    up to ``k`` channels: ``(Ho, Wo, k)`` int64 in 0..255. The complements let unsigned
    weights realise signed ones exactly (``cosim/onnx/rbe.py``)."""
    x = np.asarray(x, dtype=np.int64)
    win = sliding_window_view(x, (kh, kw), axis=(0, 1))[::stride, ::stride]   # (Ho, Wo, C, kh, kw)
    ho, wo, c = win.shape[:3]
    taps = win.transpose(0, 1, 3, 4, 2).reshape(ho, wo, kh * kw * c)
    if 2 * taps.shape[-1] > k:
        raise ValueError(f"rbe_input: {kh}x{kw} windows of {c} channels and their complements "
                         f"exceed k={k}")
    out = np.zeros((ho, wo, k), dtype=np.int64)
    n = taps.shape[-1]
    out[..., :n] = taps + 128
    out[..., n:2 * n] = 127 - taps
    return out


def rbe_output(y: np.ndarray, c: int, stride: int) -> np.ndarray:
    """int8 ``(Ho, Wo, c)`` from the RBE's unsigned 8-bit output ``(H, W, K)``: every
    ``stride``-th pixel, the first ``c`` channels, ``y - 128``."""
    return np.asarray(y, dtype=np.int64)[::stride, ::stride, :c] - 128


def fft_dtype(precision: str) -> np.dtype:
    if precision not in FFT_PRECISIONS:
        raise ValueError(f"fft: precision must be one of {FFT_PRECISIONS}, got {precision!r}")
    return np.dtype(np.float32 if precision == "fp32" else np.float16)


def fft_twiddles(n: int, precision: str) -> np.ndarray:
    """The twiddle table in TCDM: ``W_n^t = exp(-2 pi i t / n)`` for ``t < n/2``, computed
    in float64 and rounded once to the precision, interleaved ``(n/2, 2)`` re/im."""
    _check_n(n)
    t = np.arange(n // 2)
    ang = -2.0 * np.pi * t / n
    return np.stack([np.cos(ang), np.sin(ang)], axis=-1).astype(fft_dtype(precision))


def _check_n(n: int) -> None:
    if n < 2 or n & (n - 1):
        raise ValueError(f"fft: the length must be a power of two >= 2, got {n}")


def bitreverse_indices(n: int) -> np.ndarray:
    """``r[i]`` = ``i`` with its log2(n) bits reversed."""
    _check_n(n)
    bits = n.bit_length() - 1
    i = np.arange(n, dtype=np.int64)
    r = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        r |= ((i >> b) & 1) << (bits - 1 - b)
    return r


def fft_butterflies(n: int, h: int, j0: int, j1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element indices ``i0``, ``i1`` and twiddle indices of butterflies ``[j0, j1)`` of the
    radix-2 DIT stage with half-size ``h`` (butterfly ``j``: group ``j // h``, position
    ``p = j % h``; ``i0 = 2h (j // h) + p``, ``i1 = i0 + h``, twiddle ``p * n / (2h)``)."""
    j = np.arange(j0, j1, dtype=np.int64)
    p = j % h
    i0 = (j // h) * 2 * h + p
    return i0, i0 + h, p * (n // (2 * h))


def butterfly(x0: np.ndarray, x1: np.ndarray, tw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One radix-2 butterfly on ``(m, 2)`` re/im arrays of one float dtype, each operation
    rounded to that dtype: ``t = w * x1``, ``y0 = x0 + t``, ``y1 = x0 - t``."""
    wr, wi = tw[:, 0], tw[:, 1]
    ar, ai = x1[:, 0], x1[:, 1]
    # IEEE semantics as the FPU has them: overflow -> inf, invalid -> NaN, no exception
    with np.errstate(all="ignore"):
        tr = wr * ar - wi * ai
        ti = wr * ai + wi * ar
        y0 = np.stack([x0[:, 0] + tr, x0[:, 1] + ti], axis=-1)
        y1 = np.stack([x0[:, 0] - tr, x0[:, 1] - ti], axis=-1)
    return y0, y1


def fft(x: np.ndarray, precision: str = "fp32", twiddles: np.ndarray | None = None) -> np.ndarray:
    """Radix-2 decimation-in-time FFT, as the cluster kernel computes it.

    ``x``: complex ``(n,)`` or re/im ``(n, 2)`` values; they are first rounded to the
    precision. The input is read in bit-reversed order, then log2(n) stages of butterflies
    (:func:`butterfly`) use ``twiddles`` (default :func:`fft_twiddles`). Returns ``(n, 2)``
    re/im in the precision's dtype."""
    dt = fft_dtype(precision)
    x = np.asarray(x)
    data = (np.stack([x.real, x.imag], axis=-1) if np.iscomplexobj(x) or x.ndim == 1
            else x).astype(dt)
    n = data.shape[0]
    _check_n(n)
    tw = fft_twiddles(n, precision) if twiddles is None else np.asarray(twiddles, dtype=dt)
    data = data[bitreverse_indices(n)]
    h = 1
    while h < n:
        i0, i1, t = fft_butterflies(n, h, 0, n // 2)
        y0, y1 = butterfly(data[i0], data[i1], tw[t])
        data[i0] = y0
        data[i1] = y1
        h *= 2
    return data


def complex_to_bytes(x: np.ndarray, precision: str) -> bytes:
    """Complex ``(n,)`` (or re/im ``(n, 2)``) -> interleaved little-endian bytes."""
    x = np.asarray(x)
    dt = fft_dtype(precision).newbyteorder("<")
    if np.iscomplexobj(x) or x.ndim == 1:
        x = np.stack([x.real, x.imag], axis=-1)
    return np.ascontiguousarray(x, dtype=dt).tobytes()


def bytes_to_complex(b: bytes | np.ndarray, precision: str) -> np.ndarray:
    """Interleaved bytes -> ``(n, 2)`` re/im array of the precision's dtype."""
    dt = fft_dtype(precision).newbyteorder("<")
    raw = np.frombuffer(bytes(b), dtype=dt) if not isinstance(b, np.ndarray) \
        else np.ascontiguousarray(b, dtype=np.uint8).view(dt)
    return raw.reshape(-1, 2).astype(fft_dtype(precision))
