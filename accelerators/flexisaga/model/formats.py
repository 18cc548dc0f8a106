"""FlexiSAGA's sparse weight formats (docs/flexisaga.md, "Formats").

* **Two-stage bitmap** (sOS, sWS, sIS): an outer bit per column (or per row for the
  row-oriented variant), an element bit per entry of each non-zero column (row), and the
  non-zero values ordered column by column (row by row).
* **CSB** (csOS): columns merged greedily so that no two non-zeros share a row; a column
  index per (row, merged column) slot, -1 for an empty slot, and the values in slot order.

Plus the memory footprint of both against dense, CSR, CSC, COO, plain bitmap and 4-bit
run-length encoding, in bits, under the assumptions listed on :func:`footprint_bits`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: orientations of the two-stage bitmap: outer bits per column or per row
ORIENTATIONS = ("col", "row")


def _matrix(w: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(w)
    if a.ndim != 2:
        raise ValueError(f"{what}: a weight matrix must be 2-D, got shape {a.shape}")
    return a


@dataclass(frozen=True)
class TwoStageBitmap:
    """A matrix in two-stage bitmap form.

    ``outer`` has one bit per column (``orientation='col'``) or row (``'row'``);
    ``elements`` concatenates, for every non-zero column (row), one bit per entry;
    ``values`` lists the non-zeros in that same order."""

    shape: tuple[int, int]
    orientation: str
    outer: np.ndarray
    elements: np.ndarray
    values: np.ndarray

    @property
    def nnz(self) -> int:
        return int(self.values.size)

    def words(self, word_bits: int = 32) -> int:
        """Memory image size: each bit array packed in ``ceil(bits/word_bits)`` words, one
        word per value."""
        return (math.ceil(self.outer.size / word_bits) + math.ceil(self.elements.size / word_bits)
                + self.nnz)


def encode_bitmap(w: np.ndarray, orientation: str = "col") -> TwoStageBitmap:
    """Encode ``w`` as a two-stage bitmap; ``orientation`` is ``'col'`` or ``'row'``."""
    a = _matrix(w, "encode_bitmap")
    if orientation not in ORIENTATIONS:
        raise ValueError(f"encode_bitmap: orientation {orientation!r} is not one of {ORIENTATIONS}")
    lines = a.T if orientation == "col" else a
    nz = lines != 0
    outer = nz.any(axis=1)
    kept = nz[outer]
    return TwoStageBitmap(shape=(int(a.shape[0]), int(a.shape[1])), orientation=orientation,
                          outer=outer.copy(), elements=kept.reshape(-1).copy(),
                          values=lines[outer][kept].copy())


def decode_bitmap(enc: TwoStageBitmap, dtype: np.dtype | type | None = None) -> np.ndarray:
    """The dense matrix a two-stage bitmap stands for; a bitmap that does not match its
    shape raises ValueError."""
    rows, cols = enc.shape
    n_lines, length = (cols, rows) if enc.orientation == "col" else (rows, cols)
    if enc.orientation not in ORIENTATIONS:
        raise ValueError(f"decode_bitmap: orientation {enc.orientation!r} is not one of {ORIENTATIONS}")
    if enc.outer.size != n_lines:
        raise ValueError(f"decode_bitmap: {enc.outer.size} outer bits for {n_lines} "
                         f"{'columns' if enc.orientation == 'col' else 'rows'} of a {rows}x{cols} matrix")
    kept = int(np.count_nonzero(enc.outer))
    if enc.elements.size != kept * length:
        raise ValueError(f"decode_bitmap: {enc.elements.size} element bits, expected "
                         f"{kept} non-zero lines x {length}")
    bits = enc.elements.reshape(kept, length).astype(bool)
    if int(bits.sum()) != enc.values.size:
        raise ValueError(f"decode_bitmap: {int(bits.sum())} set element bits but {enc.values.size} values")
    lines = np.zeros((n_lines, length), dtype=dtype or enc.values.dtype)
    sub = np.zeros((kept, length), dtype=lines.dtype)
    sub[bits] = enc.values
    lines[np.asarray(enc.outer, dtype=bool)] = sub
    return lines.T.copy() if enc.orientation == "col" else lines


def column_masks(w: np.ndarray) -> list[int]:
    """One Python int per column of ``w``: bit r set when row r is non-zero."""
    nz = np.asarray(w) != 0
    if nz.shape[0] <= 63:
        weights = np.left_shift(np.int64(1), np.arange(nz.shape[0], dtype=np.int64))
        return [int(x) for x in (nz.T.astype(np.int64) * weights).sum(axis=1)]
    return [int("".join("1" if b else "0" for b in col[::-1]) or "0", 2) for col in nz.T]


def greedy_merge(masks: list[int]) -> list[list[int]]:
    """The CSB merge over column row-masks (see :func:`csb_groups`).

    A linked list of the unused columns makes each group one scan from the head; a scan
    stops as soon as the group covers every row that any unused column still uses."""
    n = len(masks)
    order = [c for c in range(n) if masks[c]]
    if not order:
        return []
    link = [-1] * n
    prev = [-1] * n
    for a, b in zip(order, order[1:]):
        link[a] = b
        prev[b] = a
    head = order[0]
    width = max(masks).bit_length()
    counts = [0] * width
    for c in order:
        m = masks[c]
        while m:
            low = m & -m
            counts[low.bit_length() - 1] += 1
            m ^= low
    live = sum(1 << r for r in range(width) if counts[r])
    groups: list[list[int]] = []
    while head >= 0:
        first = head
        union = masks[first]
        group = [first]
        taken = [first]
        j = link[first]
        head = j
        if j >= 0:
            prev[j] = -1
        while j >= 0 and live & ~union:
            m = masks[j]
            nj = link[j]
            if not m & union:
                group.append(j)
                union |= m
                taken.append(j)
                p = prev[j]
                if p >= 0:
                    link[p] = nj
                else:
                    head = nj
                if nj >= 0:
                    prev[nj] = p
            j = nj
        for c in taken:
            m = masks[c]
            while m:
                low = m & -m
                r = low.bit_length() - 1
                counts[r] -= 1
                if not counts[r]:
                    live &= ~low
                m ^= low
        groups.append(group)
    return groups


def csb_groups(w: np.ndarray) -> list[list[int]]:
    """The greedy column merge of CSB: walk the columns in order; each column not yet used
    opens a group, which takes every later unused column whose non-zero rows are all zero
    rows of the group so far. All-zero columns join no group. Groups come in the order of
    their first column, columns inside a group in scan order."""
    return greedy_merge(column_masks(_matrix(w, "csb_groups")))


@dataclass(frozen=True)
class CSB:
    """A matrix in compressed-sparse-block form: ``col_index`` is rows x merged columns,
    the original column of each slot or -1; ``values`` follow slot order (merged column by
    merged column, top to bottom), skipping -1 slots."""

    shape: tuple[int, int]
    col_index: np.ndarray
    values: np.ndarray

    @property
    def merged(self) -> int:
        return int(self.col_index.shape[1])

    @property
    def nnz(self) -> int:
        return int(self.values.size)

    def words(self, word_bits: int = 32, index_bits: int = 8) -> int:
        """Memory image size: one header word (merged-column count), the column indices
        packed ``word_bits // index_bits`` per word, one word per value."""
        return 1 + math.ceil(self.col_index.size * index_bits / word_bits) + self.nnz


def encode_csb(w: np.ndarray) -> CSB:
    """Encode ``w`` in CSB form (greedy merge of :func:`csb_groups`)."""
    a = _matrix(w, "encode_csb")
    groups = csb_groups(a)
    idx = np.full((a.shape[0], len(groups)), -1, dtype=np.int64)
    vals = []
    for g, cols in enumerate(groups):
        for r in range(a.shape[0]):
            for c in cols:
                if a[r, c] != 0:
                    idx[r, g] = c
                    break
    for g in range(len(groups)):
        for r in range(a.shape[0]):
            if idx[r, g] >= 0:
                vals.append(a[r, idx[r, g]])
    return CSB(shape=(int(a.shape[0]), int(a.shape[1])), col_index=idx,
               values=np.asarray(vals, dtype=a.dtype))


def decode_csb(enc: CSB, dtype: np.dtype | type | None = None) -> np.ndarray:
    """The dense matrix a CSB encoding stands for; an encoding that does not match its
    shape raises ValueError."""
    rows, cols = enc.shape
    idx = np.asarray(enc.col_index)
    if idx.ndim != 2 or idx.shape[0] != rows:
        raise ValueError(f"decode_csb: column index array of shape {idx.shape} does not have "
                         f"one row per matrix row ({rows})")
    if idx.size and (idx.min() < -1 or idx.max() >= cols):
        raise ValueError(f"decode_csb: column index outside [-1, {cols - 1}]")
    used = idx.T >= 0  # slot order: merged column by merged column, top to bottom
    if int(used.sum()) != enc.values.size:
        raise ValueError(f"decode_csb: {int(used.sum())} filled slots but {enc.values.size} values")
    out = np.zeros((rows, cols), dtype=dtype or enc.values.dtype)
    r_of = np.broadcast_to(np.arange(rows), idx.T.shape)[used]
    c_of = idx.T[used]
    if np.unique(r_of * cols + c_of).size != c_of.size:
        raise ValueError("decode_csb: two slots name the same matrix element")
    out[r_of, c_of] = enc.values
    return out


#: formats :func:`footprint_bits` knows
FOOTPRINT_FORMATS = ("dense", "csr", "csc", "coo", "bitmap", "rle4", "two_stage_bitmap", "csb")


def footprint_bits(w: np.ndarray, fmt: str, value_bits: int = 32, index_bits: int = 32,
                   word_bits: int = 32, csb_index_bits: int = 8) -> int:
    """Memory footprint of ``w`` stored in ``fmt``, in bits.

    Assumptions: CSR/CSC hold nnz values, nnz ``index_bits`` indices and rows+1 (cols+1)
    ``index_bits`` pointers; COO holds a value and two indices per non-zero; the plain
    bitmap one bit per element plus the values; RLE-4 walks row-major, storing each
    non-zero with a 4-bit count of the zeros before it, a run longer than 15 zeros costing
    an extra (zero value, 15) entry per 16 zeros; the two-stage bitmap (column variant)
    and CSB use their memory images (:meth:`TwoStageBitmap.words`, :meth:`CSB.words`)."""
    a = _matrix(w, "footprint_bits")
    rows, cols = a.shape
    nnz = int(np.count_nonzero(a))
    if fmt == "dense":
        return rows * cols * value_bits
    if fmt == "csr":
        return nnz * (value_bits + index_bits) + (rows + 1) * index_bits
    if fmt == "csc":
        return nnz * (value_bits + index_bits) + (cols + 1) * index_bits
    if fmt == "coo":
        return nnz * (value_bits + 2 * index_bits)
    if fmt == "bitmap":
        return rows * cols + nnz * value_bits
    if fmt == "rle4":
        flat = a.reshape(-1)
        pos = np.flatnonzero(flat)
        gaps = np.diff(np.concatenate(([-1], pos))) - 1
        entries = nnz + int((gaps // 16).sum())
        return entries * (value_bits + 4)
    if fmt == "two_stage_bitmap":
        return encode_bitmap(a, "col").words(word_bits) * word_bits
    if fmt == "csb":
        return encode_csb(a).words(word_bits, csb_index_bits) * word_bits
    raise ValueError(f"footprint_bits: format {fmt!r} is not one of {FOOTPRINT_FORMATS}")
