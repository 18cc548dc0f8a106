"""Multi-head attention as the compiler maps it (docs/voyager.md, "Compiler"): the head
split, Kᵀ and the head merge are not passes of their own but permutations the address
generators apply while reading (:func:`accelerators.voyager.model.vector.permuted_read`); the two
matmuls run on the matrix unit, the scaling and softmax in the vector unit."""
from __future__ import annotations

import numpy as np

from . import matrix as M
from . import vector as V
from .dtypes import Design
from .errors import VoyagerError


def attention(design: Design, qkv: np.ndarray, heads: int, ic_dim: int) -> np.ndarray:
    """``qkv``: [S, 3·H·d] values as a fused QKV projection leaves them (row-major in memory);
    returns [S, H·d] in the vector format."""
    s, width = qkv.shape
    if width % (3 * heads):
        raise VoyagerError("attention", f"QKV width {width} is not 3 x {heads} heads x head size")
    d = width // (3 * heads)
    flat = np.ascontiguousarray(qkv).reshape(-1)
    # head split: [S, 3, H, d] read as [3, H, S, d]; Kᵀ: [S, 3, H, d] read as [3, H, d, S]
    split = V.permuted_read(flat, (s, 3, heads, d), (1, 2, 0, 3))
    k_t = V.permuted_read(flat, (s, 3, heads, d), (1, 2, 3, 0))[1]
    scale = V.rnd(1.0 / np.sqrt(d))
    outs = []
    for h in range(heads):
        scores = V.mul(V.rnd(M.gemm(design, split[0, h], k_t[h], ic_dim)), scale)
        probs = V.softmax(scores)
        outs.append(V.rnd(M.gemm(design, probs, split[2, h], ic_dim)))
    # head merge: [H, S, d] read as [S, H, d]
    merged = np.stack(outs).reshape(-1)
    return V.permuted_read(merged, (heads, s, d), (1, 0, 2)).reshape(s, heads * d)
