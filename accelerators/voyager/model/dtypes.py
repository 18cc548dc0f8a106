"""Bit-exact Voyager datatypes (docs/voyager.md, "Datatypes"): encode, decode, and the MAC
and accumulation rules of each design.

* ``intN`` (N = 2..16): two's complement, per-tensor scale, exact products, integer
  accumulators that wrap at their width.
* ``bf16``, ``fp32``, ``e4m3`` (OCP FP8, saturating), ``e5m2`` (OCP FP8, IEEE-like): encoding
  and every rounding go through ``ml_dtypes`` (no hand-written IEEE rounding). An exact
  value that float64 cannot hold (a fused ``acc + x*w``) is first rounded *to odd* at
  float32 precision, which makes the final round-to-nearest-even of ``ml_dtypes`` exact
  (24 bits >= target bits + 2); ``ml_dtypes`` itself converts float64 through float32, which
  would round twice.
* ``posit8`` (``posit8_es<k>`` for another exponent size): :mod:`accelerators.voyager.model.posit`.
* ``mxint8``: int8 elements with one E8M0 scale per block of ``B`` along the reduction
  dimension; int32 block sums, dequantised to bf16 by the product of the two scales.
* a user type: :class:`CustomType`, a quantisation function over bf16 values.

``ml_dtypes`` is imported on first use only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import posit
from .errors import VoyagerError

#: float formats rounded through ml_dtypes: name -> (ml_dtypes attribute, bits, saturating)
_FLOATS: dict[str, tuple[str, int, bool]] = {
    "bf16": ("bfloat16", 16, False),
    "e4m3": ("float8_e4m3fn", 8, True),
    "e5m2": ("float8_e5m2", 8, False),
}


def _ml(name: str) -> Any:
    import ml_dtypes                       # lazy: only Voyager float formats need it
    return getattr(ml_dtypes, name)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = fl(a + b)`` and the exact error ``e``: ``a + b == s + e`` (Knuth). A sum beyond
    float64 gives ``s = ±inf`` (and ``e`` nan, ignored): every target format overflows too."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    return s, e


def _odd_f32(s: np.ndarray, e: np.ndarray | None = None) -> np.ndarray:
    """The exact value ``s + e`` (float64 pair) rounded to float32 precision *to odd*:
    truncate, and set the last bit when anything was dropped."""
    s = np.asarray(s, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = s.astype(np.float32)
        big = np.isinf(f) & np.isfinite(s)
        f = np.where(big, np.copysign(np.float32(np.finfo(np.float32).max), s), f).astype(np.float32)
        d = s - f.astype(np.float64)
        if e is not None:
            d = d + np.asarray(e, dtype=np.float64)
    inexact = (d != 0) & np.isfinite(s)
    toward_zero = inexact & (f != 0) & (np.sign(d) != np.sign(f))   # f overshoots |value|
    f = np.where(toward_zero, np.nextafter(f, np.float32(0)), f).astype(np.float32)
    bits = f.view(np.uint32).copy()
    bits = np.where(inexact & ~big, bits | np.uint32(1), bits).astype(np.uint32)
    return bits.view(np.float32)


def _odd_f64(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``s + e`` rounded to float64 precision to odd (for a float32 target)."""
    inexact = (e != 0) & np.isfinite(s)
    t = np.where(inexact & (np.sign(e) != np.sign(s)), np.nextafter(s, 0.0), s)
    bits = t.view(np.uint64).copy()
    return np.where(inexact, bits | np.uint64(1), bits).astype(np.uint64).view(np.float64)


def round_to(fmt: str, s: Any, e: Any = None) -> np.ndarray:
    """The exact value ``s (+ e)`` rounded to nearest-even in float format ``fmt`` ('bf16',
    'fp32', 'e4m3', 'e5m2'); returned as float64. e4m3 saturates to ±448 (NaN stays NaN)."""
    s = np.asarray(s, dtype=np.float64)
    if fmt == "fp32":
        if e is not None:
            s = _odd_f64(s, np.asarray(e, dtype=np.float64))
        with np.errstate(over="ignore"):
            return s.astype(np.float32).astype(np.float64)
    if fmt not in _FLOATS:
        raise VoyagerError("round_to", f"unknown float format {fmt!r} (known: bf16, fp32, e4m3, e5m2)")
    attr, _, saturating = _FLOATS[fmt]
    f = _odd_f32(s, e)
    if saturating:
        mx = np.float32(float(_ml("finfo")(_ml(attr)).max))
        f = np.where(np.isnan(f), f, np.clip(f, -mx, mx)).astype(np.float32)
    return f.astype(_ml(attr)).astype(np.float64)


def round_sum(fmt: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``round_fmt(a + b)`` with one rounding of the exact sum."""
    s, e = _two_sum(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return round_to(fmt, s, e)


def fused_mac(fmt: str, acc: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A fused MAC: ``round_fmt(acc + x*w)``, the product exact (operands of at most 26
    significand bits, so float64 holds it), one rounding."""
    p = np.asarray(x, np.float64) * np.asarray(w, np.float64)
    return round_sum(fmt, acc, p)


def wrap_int(v: np.ndarray, bits: int) -> np.ndarray:
    """Two's complement wrap of integers to ``bits`` (an integer accumulator's overflow)."""
    v = np.asarray(v, dtype=np.int64)
    half = np.int64(1) << np.int64(bits - 1)
    return ((v + half) & ((np.int64(1) << np.int64(bits)) - 1)) - half


def pack_ints(codes: np.ndarray, bits: int) -> bytes:
    """Two's complement codes of ``bits`` (2, 4 or 8) packed ``8 // bits`` to a byte, the
    first element in the least significant bits (the memory layout of sub-byte tensors)."""
    if bits not in (2, 4, 8):
        raise VoyagerError(f"int{bits}", "only 2-, 4- and 8-bit integers are packed in memory")
    c = (np.asarray(codes, np.int64).reshape(-1) & ((1 << bits) - 1)).astype(np.uint8)
    per = 8 // bits
    c = np.concatenate([c, np.zeros((-c.size) % per, np.uint8)]).reshape(-1, per)
    shifts = (np.arange(per, dtype=np.uint8) * bits).astype(np.uint8)
    return np.bitwise_or.reduce(c << shifts, axis=1).astype(np.uint8).tobytes()


def unpack_ints(data: bytes, n: int, bits: int) -> np.ndarray:
    """The first ``n`` signed ``bits``-wide codes of a packed tensor (inverse of :func:`pack_ints`)."""
    if bits not in (2, 4, 8):
        raise VoyagerError(f"int{bits}", "only 2-, 4- and 8-bit integers are packed in memory")
    b = np.frombuffer(bytes(data), np.uint8)
    per = 8 // bits
    shifts = (np.arange(per, dtype=np.uint8) * bits).astype(np.uint8)
    u = ((b[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:n].astype(np.int64)
    return np.where(u >= 1 << (bits - 1), u - (1 << bits), u)


def packed_bytes(n: int, bits: int) -> int:
    """Bytes of ``n`` elements of ``bits`` each, packed (a partial byte rounds up)."""
    return -(-n * bits // 8)


# ----- element formats -----------------------------------------------------------------------
class DType:
    """An element format: ``encode`` (values -> codes, with this format's rounding),
    ``decode`` (codes -> exact float64 values), ``quantize`` (both)."""

    name = "dtype"
    bits = 0
    is_int = False

    def encode(self, x: np.ndarray) -> np.ndarray:
        raise VoyagerError(self.name, "cannot encode")

    def decode(self, codes: np.ndarray) -> np.ndarray:
        raise VoyagerError(self.name, "cannot decode")

    def quantize(self, x: Any) -> np.ndarray:
        return self.decode(self.encode(np.asarray(x, dtype=np.float64)))

    def __repr__(self) -> str:
        return f"DType({self.name})"


class IntType(DType):
    """Signed N-bit two's complement; ``encode`` rounds (ties to even) and saturates values
    already divided by the tensor's scale."""

    is_int = True

    def __init__(self, bits: int):
        if not 2 <= bits <= 16:
            raise VoyagerError(f"int{bits}", "integer width must be 2..16")
        self.bits = bits
        self.name = f"int{bits}"
        self.lo = -(1 << (bits - 1))
        self.hi = (1 << (bits - 1)) - 1

    def encode(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.rint(np.asarray(x, np.float64)), self.lo, self.hi).astype(np.int32)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(codes, dtype=np.float64)


class FloatType(DType):
    """bf16 / fp32 / OCP FP8 E4M3 / E5M2, rounded through ml_dtypes."""

    def __init__(self, name: str):
        self.name = name
        self.bits = 32 if name == "fp32" else _FLOATS[name][1]

    def _np(self) -> Any:
        return np.float32 if self.name == "fp32" else _ml(_FLOATS[self.name][0])

    def encode(self, x: np.ndarray) -> np.ndarray:
        v = round_to(self.name, x).astype(self._np())
        return v.view(np.uint32 if self.bits == 32 else np.uint16 if self.bits == 16 else np.uint8)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(codes).view(self._np()).astype(np.float64)

    def quantize(self, x: Any) -> np.ndarray:
        return round_to(self.name, x)


class PositType(DType):
    """posit<n, es> (NaR = 100..0; pattern rounding, no underflow to 0, no overflow to NaR)."""

    def __init__(self, n: int = 8, es: int = 1):
        if not (2 <= n <= 16 and 0 <= es <= 4):
            raise VoyagerError(f"posit{n}_es{es}", "posit width must be 2..16 and es 0..4")
        self.bits, self.es = n, es
        self.name = f"posit{n}" + ("" if es == 1 else f"_es{es}")

    def encode(self, x: np.ndarray) -> np.ndarray:
        return posit.encode(x, self.bits, self.es)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return posit.decode(codes, self.bits, self.es)


class CustomType(DType):
    """A user type: ``quantise`` maps bf16 values (float64 array) to values of the type,
    which must themselves be bf16 values (the vector unit and the PEs hold them as bf16).
    Codes are the bf16 patterns of those values."""

    def __init__(self, name: str, quantise: Callable[[np.ndarray], np.ndarray], bits: int = 16):
        self.name, self.bits, self._fn = name, bits, quantise

    def encode(self, x: np.ndarray) -> np.ndarray:
        v = np.asarray(self._fn(round_to("bf16", x)), dtype=np.float64)
        if v.shape != np.shape(x):
            raise VoyagerError(self.name, f"quantisation function returned shape {v.shape}, expected {np.shape(x)}")
        ok = np.isnan(v) | (round_to("bf16", v) == v)
        if not ok.all():
            bad = v[~ok].flat[0]
            raise VoyagerError(self.name, f"quantisation function returned {bad!r}, not a bf16 value")
        return FloatType("bf16").encode(v)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return FloatType("bf16").decode(codes)


# ----- microscaling --------------------------------------------------------------------------
E8M0_NAN = 0xFF


def e8m0_decode(e: np.ndarray) -> np.ndarray:
    """E8M0 scale value 2**(e-127); 0xFF is NaN."""
    e = np.asarray(e, dtype=np.int64)
    return np.where(e == E8M0_NAN, np.nan, np.ldexp(1.0, (e - 127).astype(np.int32)))


@dataclass(frozen=True)
class MXTensor:
    """An MXINT8 tensor: int8 elements ``q`` and E8M0 scales ``e``, one per block of
    ``block`` elements along ``axis`` (element value = q * 2**-6 * 2**(e-127))."""

    q: np.ndarray
    e: np.ndarray
    block: int
    axis: int

    def values(self) -> np.ndarray:
        scale = np.repeat(e8m0_decode(self.e), self.block, axis=self.axis)
        return self.q.astype(np.float64) * 2.0 ** -6 * scale


class MXInt8(DType):
    """MXINT8: int8 elements, an E8M0 scale per block of ``block`` along the reduction."""

    is_int = True
    bits = 8

    def __init__(self, block: int = 32):
        if block < 1:
            raise VoyagerError("mxint8", f"block size must be >= 1 (got {block})")
        self.block = block
        self.name = "mxint8" if block == 32 else f"mxint8_b{block}"

    def quantize_blocks(self, x: np.ndarray, axis: int, where: str = "mxint8") -> MXTensor:
        """Quantise float values in blocks along ``axis`` (OCP MX rule, docs/voyager.md)."""
        x = np.asarray(x, dtype=np.float64)
        axis = axis % x.ndim
        n = x.shape[axis]
        if n % self.block:
            raise VoyagerError(where, f"MX block size {self.block} does not divide the reduction "
                                      f"dimension {n} (use a block size dividing {n})")
        xb = np.moveaxis(x, axis, -1).reshape(*np.delete(x.shape, axis), n // self.block, self.block)
        amax = np.max(np.abs(xb), axis=-1)
        with np.errstate(divide="ignore"):
            e = np.floor(np.log2(np.where(amax > 0, amax, 1.0))) + 127
        e = np.where(amax > 0, np.clip(e, 0, 254), 0).astype(np.int64)
        q = np.clip(np.rint(xb * np.ldexp(1.0, (127 - e)[..., None].astype(np.int32)) * 64.0), -127, 127)
        q = np.moveaxis(q.reshape(*q.shape[:-2], n), -1, axis).astype(np.int8)
        e = np.moveaxis(e, -1, axis).astype(np.uint8)
        return MXTensor(q, e, self.block, axis)

    def encode(self, x: np.ndarray) -> np.ndarray:
        return self.quantize_blocks(x, -1).q

    def quantize(self, x: Any) -> np.ndarray:
        return self.quantize_blocks(np.asarray(x, np.float64), -1).values()


def mx_dot_blocks(xq: np.ndarray, xe: np.ndarray, wq: np.ndarray, we: np.ndarray,
                  block: int, acc: np.ndarray | None = None) -> np.ndarray:
    """MX GEMM ``[P,K] x [K,N]``: per block an exact int32 sum, dequantised to bf16 with the
    product of the two scales, added into a bf16 accumulator, blocks in order.
    ``xe``: [P, K/B], ``we``: [K/B, N]."""
    p, k = xq.shape
    n = wq.shape[1]
    out = np.zeros((p, n)) if acc is None else np.asarray(acc, np.float64).copy()
    for b in range(k // block):
        sl = slice(b * block, (b + 1) * block)
        ps = wrap_int(xq[:, sl].astype(np.int64) @ wq[sl].astype(np.int64), 32)
        sh = xe[:, b].astype(np.int64)[:, None] + we[b].astype(np.int64)[None, :] - 254 - 12
        deq = round_to("bf16", ps.astype(np.float64) * np.ldexp(1.0, sh.astype(np.int32)))
        out = round_sum("bf16", out, deq)
    return out


# ----- designs (type combinations) -----------------------------------------------------------
@dataclass(frozen=True)
class Design:
    """A Voyager type combination: operands, PE accumulate, accumulation buffer, vector unit.
    ``accum`` is ``int<N>`` or a float format name."""

    name: str
    operand: DType
    accum: str
    accum_buffer: str
    vector: str = "bf16"

    @property
    def int_accum(self) -> bool:
        return self.accum.startswith("int")

    def accum_bits(self) -> int:
        return int(self.accum[3:]) if self.int_accum else {"bf16": 16, "fp32": 32}.get(self.accum, 16)

    def mac(self, acc: Any, x: Any, w: Any) -> np.ndarray:
        """One PE step: ``acc + x*w`` in the PE accumulator format (integers: exact product,
        wrap at the accumulator width; floats: fused, one rounding). ``x``/``w`` are operand
        values (integer codes for integer designs)."""
        if self.int_accum:
            return wrap_int(np.asarray(acc, np.int64) + np.asarray(x, np.int64) * np.asarray(w, np.int64),
                            self.accum_bits())
        return fused_mac(self.accum, acc, x, w)

    def accumulate(self, acc: Any, column_sum: Any) -> np.ndarray:
        """Add a column sum into the accumulation buffer (its format: wrap or one rounding)."""
        if self.int_accum:
            return wrap_int(np.asarray(acc, np.int64) + np.asarray(column_sum, np.int64), int(self.accum_buffer[3:]))
        return round_sum(self.accum_buffer, acc, column_sum)


def parse_dtype(name: str, where: str = "dtype") -> DType:
    """The element format called ``name``: int2..int16, bf16, fp32, e4m3, e5m2,
    posit8 (es 1), posit8_es<k>, mxint8 (block 32), mxint8_b<B>."""
    s = str(name).strip().lower()
    try:
        if s.startswith("int") and s[3:].isdigit():
            return IntType(int(s[3:]))
        if s in _FLOATS or s == "fp32":
            return FloatType(s)
        if s.startswith("posit"):
            body, _, es = s[5:].partition("_es")
            return PositType(int(body), int(es) if es else 1)
        if s == "mxint8":
            return MXInt8(32)
        if s.startswith("mxint8_b") and s[8:].isdigit():
            return MXInt8(int(s[8:]))
    except VoyagerError as e:
        raise VoyagerError(where, str(e)) from e
    except ValueError:
        pass
    raise VoyagerError(where, f"unknown datatype {name!r} (known: int2..int16, bf16, fp32, e4m3, e5m2, "
                              "posit8, posit8_es<k>, mxint8, mxint8_b<B>, or a CustomType)")


def design(operand: DType | str, accum: str | None = None, where: str = "dtype") -> Design:
    """The default type combination for an operand format (docs/voyager.md table);
    ``accum`` overrides the PE accumulator (e.g. 'int24')."""
    dt = operand if isinstance(operand, DType) else parse_dtype(operand, where)
    if isinstance(dt, MXInt8):
        return Design(dt.name, dt, "int32", "bf16")
    if isinstance(dt, IntType):
        acc = accum or "int32"
        if not (acc.startswith("int") and acc[3:].isdigit() and 8 <= int(acc[3:]) <= 32):
            raise VoyagerError(where, f"integer accumulator {acc!r} must be int8..int32")
        return Design(dt.name, dt, acc, acc)
    if dt.name == "fp32":
        return Design("fp32", dt, "fp32", "fp32", "fp32")
    acc = accum or "bf16"
    if acc not in ("bf16", "fp32"):
        raise VoyagerError(where, f"float accumulator {acc!r} must be bf16 or fp32")
    return Design(dt.name, dt, acc, acc)
