"""cosim.canon (the run hash's encoding, pure Python) gives exactly msgpack's bytes."""
from __future__ import annotations

from enum import IntEnum

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim.canon import pack, plain

REFERENCE = msgpack.Packer(default=plain, use_bin_type=True)

leaves = (st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 64) - 1)
          | st.floats(allow_nan=False) | st.text(max_size=300) | st.binary(max_size=300))
values = st.recursive(leaves, lambda kids: st.lists(kids, max_size=20)
                      | st.tuples(kids, kids) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
                      max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(values)
def test_same_bytes_as_msgpack(v):
    assert pack(v) == REFERENCE.pack(v)


class Kind(IntEnum):
    A = 3


@pytest.mark.parametrize("v", [
    0, 127, 128, -32, -33, 255, 256, 65535, 65536, (1 << 32) - 1, 1 << 32, -(1 << 63),
    "x" * 31, "x" * 32, "é" * 200, "y" * 70000, b"z" * 256, b"z" * 70000, [0] * 15, [0] * 16,
    [0] * 70000, {i: i for i in range(20)}, bytearray(b"ab"), memoryview(b"cd"), Kind.A,
    np.int64(-5), np.uint8(200), np.float32(1.25), np.float64(2.5), np.bool_(True),
    [7, ("soc_cluster", "a", 12), 0, ["req", 3, [1, 4096, 64, b"", None, 0, "host"], 0]]])
def test_edge_values(v):
    assert pack(v) == REFERENCE.pack(v)


def test_unencodable_is_a_type_error():
    with pytest.raises(TypeError, match="cannot encode object"):
        pack(object())
    for big in (1 << 64, -(1 << 63) - 1):
        with pytest.raises(TypeError, match="cannot encode int"):
            REFERENCE.pack(big)
        with pytest.raises(TypeError, match="cannot encode int"):
            pack(big)


def test_fast_pack_gives_the_same_bytes():
    """With msgpack loaded (as here, and in every distributed worker) the hasher uses its
    C packer: the same bytes as the pure-Python writer."""
    from cosim.canon import fast_pack
    fast = fast_pack()
    assert fast is not pack
    v = [7, ["soc_cluster", "a", 12], 0, ["req", 3, [1, 4096, 64, b"x" * 100, None, 0, "host"], 0]]
    assert fast(v) == pack(v)
