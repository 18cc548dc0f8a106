"""FlexiSAGA's structured pruning (docs/flexisaga.md, "Pruning"), one prune step of it.

Each operator's weights become a GEMM matrix (a CONV's ``(C_out, C_in, kh, kw)`` tensor by
im2col, i.e. ``(C_out, C_in*kh*kw)``; an FC's ``(M, K)`` as is), cut into row or column
vectors of length ``n`` aligned to tiles of that size (a vector at the matrix edge may be
shorter). Over a whole operator group the fraction ``s`` of vectors with the smallest L2
norm is set to zero. Retraining between steps is outside the model; the mapper prunes
seeded random weights once to the target sparsity.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

ORIENTATIONS = ("row", "col")


def gemm_matrix(w: np.ndarray) -> np.ndarray:
    """The GEMM weight matrix of a CONV (4-D, im2col order) or FC (2-D) weight tensor."""
    a = np.asarray(w)
    if a.ndim == 4:
        return a.reshape(a.shape[0], -1)
    if a.ndim == 2:
        return a
    raise ValueError(f"gemm_matrix: weights must be 2-D (FC) or 4-D (CONV), got shape {a.shape}")


def vector_ids(shape: tuple[int, int], n: int, orientation: str) -> np.ndarray:
    """For every element of a ``shape`` matrix, the index of the length-``n`` vector it
    belongs to (vectors numbered row-major over (segment, line))."""
    if n < 1:
        raise ValueError(f"vector length n must be >= 1, got {n}")
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation {orientation!r} is not one of {ORIENTATIONS}")
    rows, cols = shape
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    if orientation == "col":  # column segments of height n
        segs = -(-rows // n)
        return np.broadcast_to(c * segs + r // n, shape)
    segs = -(-cols // n)
    return np.broadcast_to(r * segs + c // n, shape)


def prune_group(weights: Sequence[np.ndarray], sparsity: float, n: int,
                orientation: str = "col") -> list[np.ndarray]:
    """Zero the ``floor(sparsity * V)`` vectors of smallest L2 norm among all V vectors of
    the group's operators; ties go to the earlier operator, then the lower vector index.
    Returns new arrays of the original shapes and dtypes."""
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}")
    mats = [gemm_matrix(w) for w in weights]
    norms: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    for m in mats:
        vid = vector_ids(m.shape, n, orientation)
        nv = int(vid.max()) + 1 if vid.size else 0
        sq = np.bincount(vid.reshape(-1), weights=np.square(m.astype(np.float64)).reshape(-1),
                         minlength=nv)
        norms.append(np.sqrt(sq))
        ids.append(vid)
    allnorms = np.concatenate(norms) if norms else np.zeros(0)
    drop = int(np.floor(sparsity * allnorms.size))
    order = np.argsort(allnorms, kind="stable")[:drop]
    dead = np.zeros(allnorms.size, dtype=bool)
    dead[order] = True
    out = []
    start = 0
    for w, m, vid, nr in zip(weights, mats, ids, norms):
        mask = dead[start:start + nr.size][vid]
        start += nr.size
        pruned = np.where(mask, np.zeros((), dtype=m.dtype), m).astype(m.dtype)
        out.append(pruned.reshape(np.asarray(w).shape))
    return out


def sparsity_of(w: np.ndarray) -> float:
    """Fraction of zero entries."""
    a = np.asarray(w)
    return float(np.count_nonzero(a == 0)) / a.size if a.size else 0.0
