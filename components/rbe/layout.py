"""Pack/unpack plain integer tensors to and from the RBE's TCDM bit-plane layouts.

A bit-plane word is one uint32 holding one bit of 32 channels: bit ``c`` of the word is
channel ``32*g + c`` of channel group ``g``. Words are stored little-endian, so a word's
bytes in memory are ``word.to_bytes(4, "little")``. Layouts (word arrays, C order):

* activations / outputs: ``(H, W, K/32, bits)``  -- the spec's (H, W, K/32, bits, 32)
* 3x3 weights:           ``(Kout, Kin/32, Wbits, 9)`` with tap ``ky*3 + kx``
* 1x1 weights:           ``(Kout, Kin/32, Wbits)``
* norm-quant:            ``Kout`` packed 6-byte records ``<u2 scale, <i4 bias``; 4 records
  (24 bytes) form the group the quantizer loads in one 288-bit access.

Everything is vectorised with ``np.packbits``/``np.unpackbits``; values are unsigned
integers in ``[0, 2**bits)``. These helpers are for software and scenarios, so bad
arguments raise ``ValueError`` (the simulation itself never calls them with user data
without validating first).
"""
from __future__ import annotations

import numpy as np

from .arch import NQ_RECORD_BYTES, SCALE_BITS, TAPS_3X3, TP

#: One norm-quant record as the quantizer sees it (48 bits: scale in 15:0, bias in 47:16).
NQ_DTYPE = np.dtype([("scale", "<u2"), ("bias", "<i4")], align=False)
assert NQ_DTYPE.itemsize == NQ_RECORD_BYTES


def _check_values(x: np.ndarray, bits: int, what: str) -> np.ndarray:
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"{what}: integer tensor expected, got {x.dtype}")
    if not 1 <= bits <= 32:
        raise ValueError(f"{what}: bits must be in 1..32, got {bits}")
    if x.size and (x.min() < 0 or int(x.max()) >= (1 << bits)):
        raise ValueError(f"{what}: values must be in [0, 2**{bits})")
    if x.ndim == 0 or x.shape[-1] % TP:
        raise ValueError(f"{what}: channel axis must be a multiple of {TP}, got shape {x.shape}")
    return x


def pack_bitplanes(x: np.ndarray, bits: int) -> np.ndarray:
    """Pack ``(..., K)`` unsigned values into ``(..., K/32, bits)`` uint32 bit-plane words."""
    x = _check_values(x, bits, "pack_bitplanes")
    lead = x.shape[:-1]
    groups = x.shape[-1] // TP
    v = x.astype(np.uint32, copy=False).reshape(*lead, groups, 1, TP)
    planes = ((v >> np.arange(bits, dtype=np.uint32)[:, None]) & 1).astype(np.uint8)
    packed = np.packbits(planes, axis=-1, bitorder="little")  # (..., G, bits, 4) bytes
    return np.ascontiguousarray(packed).view("<u4")[..., 0].astype(np.uint32)


def unpack_bitplanes(words: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_bitplanes`: ``(..., G, bits)`` words -> ``(..., G*32)`` int64."""
    w = np.ascontiguousarray(words, dtype="<u4")
    if w.ndim < 2:
        raise ValueError("unpack_bitplanes: expected (..., groups, bits) words")
    bits = w.shape[-1]
    planes = np.unpackbits(w.view(np.uint8).reshape(*w.shape, 4), axis=-1, bitorder="little")
    weights = (np.int64(1) << np.arange(bits, dtype=np.int64))[:, None]
    vals = (planes.astype(np.int64) * weights).sum(axis=-2)  # (..., G, 32)
    return vals.reshape(*w.shape[:-2], w.shape[-2] * TP)


def pack_activations(x: np.ndarray, bits: int) -> np.ndarray:
    """``(H, W, K)`` activations -> ``(H, W, K/32, bits)`` words."""
    if np.ndim(x) != 3:
        raise ValueError(f"pack_activations: (H, W, K) expected, got shape {np.shape(x)}")
    return pack_bitplanes(x, bits)


def unpack_activations(words: np.ndarray) -> np.ndarray:
    """``(H, W, K/32, bits)`` words -> ``(H, W, K)`` int64 activations."""
    if np.ndim(words) != 4:
        raise ValueError(f"unpack_activations: (H, W, G, bits) expected, got {np.shape(words)}")
    return unpack_bitplanes(words)


# Outputs use the activation layout with O bits (they feed the next layer unchanged).
pack_outputs = pack_activations
unpack_outputs = unpack_activations


def pack_weights_3x3(w: np.ndarray, bits: int) -> np.ndarray:
    """``(Kout, Kin, 3, 3)`` weights -> ``(Kout, Kin/32, bits, 9)`` words, tap = ky*3+kx."""
    w = np.asarray(w)
    if w.ndim != 4 or w.shape[2:] != (3, 3):
        raise ValueError(f"pack_weights_3x3: (Kout, Kin, 3, 3) expected, got {w.shape}")
    kout, kin = w.shape[:2]
    per_tap = w.reshape(kout, kin, TAPS_3X3).transpose(0, 2, 1)  # (Kout, 9, Kin)
    words = pack_bitplanes(per_tap, bits)  # (Kout, 9, G, bits)
    return np.ascontiguousarray(words.transpose(0, 2, 3, 1))


def unpack_weights_3x3(words: np.ndarray) -> np.ndarray:
    """``(Kout, Kin/32, bits, 9)`` words -> ``(Kout, Kin, 3, 3)`` int64 weights."""
    if np.ndim(words) != 4 or np.shape(words)[3] != TAPS_3X3:
        raise ValueError(f"unpack_weights_3x3: (Kout, G, bits, 9) expected, got {np.shape(words)}")
    per_tap = unpack_bitplanes(np.asarray(words).transpose(0, 3, 1, 2))  # (Kout, 9, Kin)
    kout, _, kin = per_tap.shape
    return per_tap.transpose(0, 2, 1).reshape(kout, kin, 3, 3)


def pack_weights_1x1(w: np.ndarray, bits: int) -> np.ndarray:
    """``(Kout, Kin)`` or ``(Kout, Kin, 1, 1)`` weights -> ``(Kout, Kin/32, bits)`` words."""
    w = np.asarray(w)
    if w.ndim == 4 and w.shape[2:] == (1, 1):
        w = w[:, :, 0, 0]
    if w.ndim != 2:
        raise ValueError(f"pack_weights_1x1: (Kout, Kin) expected, got {w.shape}")
    return pack_bitplanes(w, bits)


def unpack_weights_1x1(words: np.ndarray) -> np.ndarray:
    """``(Kout, Kin/32, bits)`` words -> ``(Kout, Kin)`` int64 weights."""
    if np.ndim(words) != 3:
        raise ValueError(f"unpack_weights_1x1: (Kout, G, bits) expected, got {np.shape(words)}")
    return unpack_bitplanes(words)


def pack_normquant(scale: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Per-output-channel ``scale`` (uint16) and ``bias`` (int32) -> ``Kout*6`` bytes (uint8)."""
    scale = np.asarray(scale)
    bias = np.asarray(bias)
    if scale.ndim != 1 or scale.shape != bias.shape or scale.size % TP:
        raise ValueError("pack_normquant: scale and bias must be 1-D, same length, multiple of 32")
    if not (np.issubdtype(scale.dtype, np.integer) and np.issubdtype(bias.dtype, np.integer)):
        raise ValueError("pack_normquant: integer scale and bias expected")
    if scale.size and (scale.min() < 0 or int(scale.max()) >= (1 << SCALE_BITS)):
        raise ValueError("pack_normquant: scale must be in [0, 65535]")
    if bias.size and (int(bias.min()) < -(1 << 31) or int(bias.max()) >= (1 << 31)):
        raise ValueError("pack_normquant: bias must fit int32")
    rec = np.empty(scale.size, dtype=NQ_DTYPE)
    rec["scale"] = scale
    rec["bias"] = bias
    return rec.view(np.uint8).copy()


def unpack_normquant(data: bytes | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Kout*6`` bytes -> ``(scale, bias)`` as int64 arrays."""
    raw = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) \
        else np.ascontiguousarray(data, dtype=np.uint8)
    if raw.size % NQ_RECORD_BYTES:
        raise ValueError(f"unpack_normquant: length must be a multiple of {NQ_RECORD_BYTES}")
    rec = raw.view(NQ_DTYPE)
    return rec["scale"].astype(np.int64), rec["bias"].astype(np.int64)


def to_bytes(words: np.ndarray) -> bytes:
    """Little-endian memory image of a word array (C order)."""
    return np.ascontiguousarray(words, dtype="<u4").tobytes()


def from_bytes(data: bytes | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Word array of ``shape`` from a little-endian memory image."""
    raw = np.frombuffer(bytes(data), dtype="<u4") if isinstance(data, (bytes, bytearray)) \
        else np.ascontiguousarray(data, dtype=np.uint8).view("<u4")
    return raw.reshape(shape).astype(np.uint32)
