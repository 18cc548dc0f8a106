"""The canonical byte encoding of plain data that the run hash and the order of error
records are defined on: MessagePack (``use_bin_type``; tuples as arrays; numpy scalars as
their Python values), written by the msgpack library. ZeroMQ is what a single-process
run must not load; msgpack is a small C extension every run may use."""
from __future__ import annotations

from typing import Any, Callable

import msgpack
import numpy as np

__all__ = ["pack", "packer", "plain"]


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


def pack(obj: Any) -> bytes:
    """``obj`` in the canonical encoding (MessagePack bytes)."""
    return msgpack.packb(obj, use_bin_type=True, default=plain)  # type: ignore[no-any-return]


def packer() -> Callable[[Any], bytes]:
    """A reusable :func:`pack` (one msgpack Packer): faster for many small objects, such as
    every cross-link event of a run."""
    p: Callable[[Any], bytes] = msgpack.Packer(default=plain, use_bin_type=True).pack
    return p
