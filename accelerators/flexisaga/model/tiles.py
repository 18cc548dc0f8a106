"""Memory images of FlexiSAGA's compressed weight tiles (docs/flexisaga.md, "Memory").

Tiles follow the schedule: OS/csOS take R x K strips (one per R rows of W), WS M x C strips
(one per C columns: a K block), IS M x R strips (one per R columns). A tile's image, in
32-bit words: two-stage bitmap = outer bits, element bits (each packed LSB-first), values;
CSB = merged-column count, column indices (signed ``index_bits`` entries, slot order, packed
LSB-first), values. Values are the PE words: fp32 bit patterns or two's complement ints.
The host writes the images back to back at W_BASE and a table of their word offsets.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from accelerators.flexisaga.model.config import FAMILY, SPARSE, ArrayConfig
from accelerators.flexisaga.model.formats import (CSB, TwoStageBitmap, decode_bitmap, decode_csb, encode_bitmap,
                                          encode_csb)


def strips(dataflow: str, shape: tuple[int, int], cfg: ArrayConfig) -> list[tuple[slice, slice]]:
    """The (rows, cols) slices of W that form the tiles of ``dataflow``, in schedule order."""
    m, k = shape
    fam = FAMILY[dataflow]
    if fam in ("OS", "csOS"):
        return [(slice(m0, min(m, m0 + cfg.rows)), slice(0, k)) for m0 in range(0, m, cfg.rows)]
    step = cfg.cols if fam == "WS" else cfg.rows
    return [(slice(0, m), slice(k0, min(k, k0 + step))) for k0 in range(0, k, step)]


def orientation(dataflow: str) -> str:
    return "col" if dataflow == "sOS" else "row"


def _pack_bits(bits: np.ndarray, word_bits: int = 32) -> np.ndarray:
    n = math.ceil(bits.size / word_bits)
    padded = np.zeros(n * word_bits, dtype=np.uint64)
    padded[:bits.size] = bits.astype(np.uint64)
    weights = np.left_shift(np.uint64(1), np.arange(word_bits, dtype=np.uint64))
    return (padded.reshape(n, word_bits) * weights).sum(axis=1, dtype=np.uint64).astype(np.uint32)


def _unpack_bits(words: np.ndarray, count: int, word_bits: int = 32) -> np.ndarray:
    w = np.asarray(words, dtype=np.uint64)
    bits = (w[:, None] >> np.arange(word_bits, dtype=np.uint64)) & np.uint64(1)
    return bits.reshape(-1)[:count].astype(bool)


def to_words(values: np.ndarray, cfg: ArrayConfig) -> np.ndarray:
    """PE words of ``values``: fp32 bit patterns, or ints wrapped to 32-bit words."""
    if cfg.pe_dtype == "fp32":
        return np.asarray(values, dtype=np.float32).view(np.uint32)
    return (np.asarray(values, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def from_words(words: np.ndarray, cfg: ArrayConfig) -> np.ndarray:
    w = np.asarray(words, dtype=np.uint32)
    if cfg.pe_dtype == "fp32":
        return w.view(np.float32)
    v = w.astype(np.int64)
    v = np.where(v >= 1 << 31, v - (1 << 32), v)
    return np.array([cfg.wrap(x) for x in v], dtype=np.int64) if cfg.word_bits < 32 else v


def pack_tile(dataflow: str, tile: np.ndarray, cfg: ArrayConfig) -> np.ndarray:
    """The word image of one tile."""
    if dataflow == "csOS":
        enc = encode_csb(tile)
        ib = cfg.csb_index_bits
        # signed ib-bit entries (-1 = zero): a column index above 2^(ib-1) - 1 would wrap
        if enc.col_index.size and int(enc.col_index.max()) > (1 << (ib - 1)) - 1:
            raise TileFormatError(f"csOS tile: column index {int(enc.col_index.max())} does not fit a "
                                  f"signed {ib}-bit CSB index (tile {tile.shape[0]}x{tile.shape[1]}; "
                                  f"raise csb_index_bits or use another dataflow)")
        idx = (enc.col_index.T.reshape(-1) & ((1 << ib) - 1)).astype(np.uint64)
        bits = ((idx[:, None] >> np.arange(ib, dtype=np.uint64)) & np.uint64(1)).reshape(-1)
        return np.concatenate([np.array([enc.merged], dtype=np.uint32), _pack_bits(bits),
                               to_words(enc.values, cfg)])
    b = encode_bitmap(tile, orientation(dataflow))
    return np.concatenate([_pack_bits(b.outer), _pack_bits(b.elements), to_words(b.values, cfg)])


def pack(dataflow: str, w: np.ndarray, cfg: ArrayConfig) -> tuple[np.ndarray, np.ndarray]:
    """(tile images back to back, word offset of each tile) for a sparse dataflow."""
    if dataflow not in SPARSE:
        raise ValueError(f"flexisaga: {dataflow} takes dense weights, not compressed tiles")
    images = [pack_tile(dataflow, w[rs, cs], cfg) for rs, cs in strips(dataflow, w.shape, cfg)]
    offsets = np.cumsum([0] + [im.size for im in images[:-1]]).astype(np.uint32)
    return np.concatenate(images), offsets


class TileFormatError(ValueError):
    """A compressed tile that does not match the weight shape of its job."""


def unpack_tile(dataflow: str, read: Callable[[int, int], np.ndarray], shape: tuple[int, int],
                cfg: ArrayConfig) -> np.ndarray:
    """Decode one tile whose words ``read(word_index, count)`` returns; ``shape`` is the
    tile's. Raises :class:`TileFormatError` when the image cannot be that shape's."""
    rows, cols = shape
    if dataflow == "csOS":
        merged = int(read(0, 1)[0])
        if merged > cols:
            raise TileFormatError(f"csOS tile: {merged} merged columns for a {rows}x{cols} tile")
        ib = cfg.csb_index_bits
        nidx = rows * merged
        iw = math.ceil(nidx * ib / 32)
        bits = _unpack_bits(read(1, iw), nidx * ib).reshape(nidx, ib).astype(np.int64)
        raw = (bits << np.arange(ib)).sum(axis=1)
        idx = np.where(raw >= 1 << (ib - 1), raw - (1 << ib), raw).reshape(merged, rows).T
        if idx.size and (idx.min() < -1 or idx.max() >= cols):
            raise TileFormatError(f"csOS tile: a column index outside [-1, {cols - 1}]")
        nv = int((idx >= 0).sum())
        vals = from_words(read(1 + iw, nv), cfg)
        try:
            return decode_csb(CSB((rows, cols), idx, vals))
        except ValueError as e:
            raise TileFormatError(f"csOS tile: {e}") from None
    orient = orientation(dataflow)
    n_lines, length = (cols, rows) if orient == "col" else (rows, cols)
    ow = math.ceil(n_lines / 32)
    outer = _unpack_bits(read(0, ow), n_lines)
    kept = int(outer.sum())
    ew = math.ceil(kept * length / 32)
    elements = _unpack_bits(read(ow, ew), kept * length)
    vals = from_words(read(ow + ew, int(elements.sum())), cfg)
    out = decode_bitmap(TwoStageBitmap((rows, cols), orient, outer, elements, vals))
    if np.count_nonzero(out) != vals.size:
        raise TileFormatError(f"{dataflow} tile: a value marked non-zero is zero")
    lines = out.T if orient == "col" else out
    if kept and not (lines[outer] != 0).any(axis=1).all():
        raise TileFormatError(f"{dataflow} tile: a line marked non-zero is all zero")
    return out
