"""The canonical byte encoding of plain data that the run hash and the order of error
records are defined on: the MessagePack format (``use_bin_type``; the smallest integer
form; floats as float64; tuples as arrays; numpy scalars as their Python values),
written in pure Python so a single-process run needs no msgpack. The bytes are those
``msgpack.packb(obj, use_bin_type=True, default=...)`` gives (tests/test_canon.py checks).
"""
from __future__ import annotations

import struct
import sys
from typing import Any, Callable

import numpy as np

__all__ = ["pack", "plain", "fast_pack"]

_F64 = struct.Struct(">Bd")


def plain(obj: Any) -> Any:
    """The encodable form of a value the format has no type for (numpy scalars, bytearray,
    memoryview, tuple); a TypeError names anything else."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"cannot encode {type(obj).__name__} in a link message: use ints, str, bytes, "
                    "None and lists")


def _int(n: int) -> bytes:
    if n >= 0:
        if n < 0x80:
            return bytes((n,))
        if n < 0x100:
            return b"\xcc" + n.to_bytes(1, "big")
        if n < 0x10000:
            return b"\xcd" + n.to_bytes(2, "big")
        if n < 0x100000000:
            return b"\xce" + n.to_bytes(4, "big")
        if n < 0x10000000000000000:
            return b"\xcf" + n.to_bytes(8, "big")
    else:
        if n >= -32:
            return bytes((n & 0xFF,))
        if n >= -0x80:
            return b"\xd0" + n.to_bytes(1, "big", signed=True)
        if n >= -0x8000:
            return b"\xd1" + n.to_bytes(2, "big", signed=True)
        if n >= -0x80000000:
            return b"\xd2" + n.to_bytes(4, "big", signed=True)
        if n >= -0x8000000000000000:
            return b"\xd3" + n.to_bytes(8, "big", signed=True)
    raise OverflowError("Integer value out of range")


def _head(n: int, fix: int, fix_max: int, codes: bytes, sizes: tuple[int, ...]) -> bytes:
    if n < fix_max:
        return bytes((fix | n,))
    for code, size in zip(codes, sizes):
        if n < 1 << (8 * size):
            return bytes((code,)) + n.to_bytes(size, "big")
    raise ValueError("object too large to encode")


def _pack(obj: Any, out: list[bytes]) -> None:
    if obj is None:
        out.append(b"\xc0")
    elif obj is True:
        out.append(b"\xc3")
    elif obj is False:
        out.append(b"\xc2")
    elif isinstance(obj, int):
        try:
            out.append(_int(int(obj)))
        except OverflowError:      # beyond 64 bits: like msgpack, ask plain() (which refuses)
            _pack(plain(obj), out)
    elif isinstance(obj, float):
        out.append(_F64.pack(0xCB, obj))
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        b = bytes(obj)
        out.append(_head(len(b), 0, 0, b"\xc4\xc5\xc6", (1, 2, 4)) + b)
    elif isinstance(obj, str):
        b = obj.encode("utf-8")
        out.append(_head(len(b), 0xA0, 32, b"\xd9\xda\xdb", (1, 2, 4)) + b)
    elif isinstance(obj, (list, tuple)):
        out.append(_head(len(obj), 0x90, 16, b"\xdc\xdd", (2, 4)))
        for x in obj:
            _pack(x, out)
    elif isinstance(obj, dict):
        out.append(_head(len(obj), 0x80, 16, b"\xde\xdf", (2, 4)))
        for k, v in obj.items():
            _pack(k, out)
            _pack(v, out)
    else:
        _pack(plain(obj), out)


def pack(obj: Any) -> bytes:
    """``obj`` in the canonical encoding (MessagePack bytes)."""
    out: list[bytes] = []
    _pack(obj, out)
    return b"".join(out)


def fast_pack() -> Callable[[Any], bytes]:
    """:func:`pack`, or msgpack's C packer when this process has loaded msgpack anyway (a
    distributed worker): the same bytes, faster. A single-process run never loads it."""
    msgpack = sys.modules.get("msgpack")
    if msgpack is None:
        return pack
    packer: Callable[[Any], bytes] = msgpack.Packer(default=plain, use_bin_type=True).pack
    return packer
