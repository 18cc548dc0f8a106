"""Bit-exact functional core of the RBE, working from the TCDM bit-plane words.

It computes what the datapath computes and in the same structure:

* BinConv: ``popcount(wbit[ko, g, i, tap] AND xbit[pixel+tap, g, j])`` over 32 channels;
* Block/column: the 9 taps (3x3) of a Core are summed, each input bit scaled by ``2**j``;
* weight bits are serial in 3x3 mode (parallel over Blocks in 1x1): ``<< i``;
* I > 4 runs two passes of 4 bits, the second pass shifted by 4;
* K_in > 32 loops over 32-channel tiles, accumulating into 32-bit accumulators (wrap);
* outputs are computed per 3x3 output tile; edge tiles compute on the zero-filled part of
  the input buffer and the streamer never stores those pixels;
* the quantizer: 48-bit ``scale*acc + bias``, arithmetic shift, saturation to O bits.

The popcounts over (taps x 32 channels) of all pixels, input bits, output channels and
weight bits of one (K_in tile, pass) are one float32 matmul of 0/1 bit-plane matrices;
every partial sum is an integer <= 9*32, so the result is exact. Python loops only over
K_in tiles and passes, never per bit or per pixel.

Memory goes through two callables so the TLM wrapper can route it through the TCDM model:
``read(addr, nbytes) -> uint8 array`` and ``write(addr, data: uint8 array)``. The engine
expects a job that passed ``job.validate``; it reads all operands before writing (so
outputs must not overlap inputs, weights or norm-quant parameters).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .arch import ACC_BITS, BITS_PER_PASS, NQ_RECORD_BYTES, TILE, TP, WORD_BYTES
from .job import RbeJob
from .layout import NQ_DTYPE, pack_outputs

Reader = Callable[[int, int], "np.ndarray | bytes"]
Writer = Callable[[int, np.ndarray], None]

_PROD_BITS = 16 + ACC_BITS  # width of the quantizer's product register (rbe_normquant)
_POW2 = np.ldexp(np.float32(1), np.arange(32)).astype(np.float32)


@dataclass(frozen=True)
class EngineResult:
    """What a job produced: quantised outputs, raw accumulators and the stored words."""

    outputs: np.ndarray  # (Hout, Wout, Kout) int64, unsigned O-bit values
    acc: np.ndarray      # (Hout, Wout, Kout) int32 accumulators before norm-quant
    y_words: np.ndarray  # (Hout, Wout, Kout/32, O) uint32 as written to TCDM
    bytes_read: int
    bytes_written: int


def _as_u8(data: "np.ndarray | bytes") -> np.ndarray:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8)
    return np.ascontiguousarray(data, dtype=np.uint8).reshape(-1)


def _gather_pixels(words: np.ndarray, rows: int, cols: int, row_stride: int, pix_stride: int,
                   pixel_words: int) -> np.ndarray:
    """Pick ``(rows, cols, pixel_words)`` words out of a strided span of words."""
    base = (np.arange(rows)[:, None] * row_stride + np.arange(cols)[None, :] * pix_stride)
    idx = base[..., None] // WORD_BYTES + np.arange(pixel_words)
    return words[idx]


def read_inputs(job: RbeJob, read: Reader) -> np.ndarray:
    """Input words ``(Hin, Win, Kin/32, I)`` read with the job's strides (one read call)."""
    first, end = job.x_extent()
    words = _as_u8(read(first, end - first)).view("<u4")
    px = _gather_pixels(words, job.h_in, job.w_in, job.x_row_stride, job.x_pix_stride,
                        job.kin_tiles * job.i_bits)
    return px.reshape(job.h_in, job.w_in, job.kin_tiles, job.i_bits).astype(np.uint32)


def read_weights(job: RbeJob, read: Reader) -> np.ndarray:
    """Weight words ``(Kout, Kin/32, W, taps)`` (1x1 has taps = 1)."""
    first, end = job.w_extent()
    words = _as_u8(read(first, end - first)).view("<u4")
    return words.reshape(job.k_out, job.kin_tiles, job.w_bits, job.taps).astype(np.uint32)


def read_normquant(job: RbeJob, read: Reader) -> tuple[np.ndarray, np.ndarray]:
    """``(scale, bias)`` int64 per output channel from the packed 6-byte records."""
    first, end = job.nq_extent()
    rec = _as_u8(read(first, end - first)).view(NQ_DTYPE)
    assert rec.size * NQ_RECORD_BYTES == end - first
    return rec["scale"].astype(np.int64), rec["bias"].astype(np.int64)


def _bits01(words: np.ndarray) -> np.ndarray:
    """uint32 words ``(...)`` -> float32 0/1 channel bits ``(..., 32)``, bit c = channel c."""
    w = np.ascontiguousarray(words, dtype="<u4")
    bits = np.unpackbits(w.view(np.uint8).reshape(*w.shape, WORD_BYTES), axis=-1,
                         bitorder="little")
    return bits.astype(np.float32)


def _fold_bits(planes: np.ndarray, axis: int) -> np.ndarray:
    """Sum of ``planes`` over bit axis ``axis`` weighted by 2**bit, in float32 (exact: the
    values are 0/1). Elementwise adds over whole planes: a matmul by the weight vector would
    run numpy's unblocked loop once per output element."""
    index: list[slice | int] = [slice(None)] * planes.ndim
    index[axis] = 0
    out = np.array(planes[tuple(index)], dtype=np.float32, copy=True)
    for b in range(1, planes.shape[axis]):
        index[axis] = b
        out += planes[tuple(index)] * _POW2[b]
    return out


def compute_acc(job: RbeJob, x_words: np.ndarray, w_words: np.ndarray) -> np.ndarray:
    """32-bit accumulators ``(Hout, Wout, Kout)`` from bit-plane words, as the datapath does."""
    ho, wo = job.tiles_h * TILE, job.tiles_w * TILE  # output grid of whole 3x3 tiles
    halo = job.patch - TILE
    # Input buffer contents of every tile at once: pixels past the input edge are never
    # loaded by the streamer and read as zero.
    xb = np.zeros((ho + halo, wo + halo, job.kin_tiles, job.i_bits, TP), dtype=np.float32)
    xb[:job.h_in, :job.w_in] = _bits01(x_words)
    wb = _bits01(w_words)  # (Kout, G, W, taps, 32)
    taps_k = job.taps * TP
    acc = np.zeros((ho * wo, job.k_out), dtype=np.int64)
    for g in range(job.kin_tiles):
        # One Core-cycle's operand: (taps x 32 input channels) for each (ko, weight bit),
        # with the weight bits' shifts (psum << i) applied before the product rather than
        # after: the same exact integers (every sum stays below 2**24), W times fewer flops.
        b_mat = _fold_bits(wb[:, g], 1).reshape(job.k_out, taps_k).T  # (taps x 32, Kout)
        for p in range(job.passes):
            bits = job.pass_bits(p)
            # The pass's input bits (the BinConvs' operands), shifted by their bit (<< j) before
            # the product too: the same exact integers, nb times fewer flops.
            xg = _fold_bits(xb[:, :, g, bits.start:bits.stop, :], 2)  # (Hb, Wb, 32)
            if job.is_3x3:
                win = sliding_window_view(xg, (3, 3), axis=(0, 1))  # (ho, wo, 32, 3, 3)
                a_mat = win.transpose(0, 1, 3, 4, 2)  # (ho, wo, ky, kx, 32)
            else:
                a_mat = xg  # (ho, wo, 32)
            a_mat = a_mat.reshape(ho * wo, taps_k)
            # BinConv popcounts summed over the Blocks (taps) of each Core, over the weight
            # bits and over the pass's input bits. Every partial sum is an integer below
            # 9*32*255*15 < 2**24, so float32 stays exact.
            psum = a_mat @ b_mat  # (pixels, Kout)
            acc += np.rint(psum).astype(np.int64) << (BITS_PER_PASS * p)
    acc32 = (acc & 0xFFFFFFFF).astype(np.uint32).view(np.int32)  # 32-bit accumulators wrap
    return acc32.reshape(ho, wo, job.k_out)[:job.h_out, :job.w_out]


def quantize(acc: np.ndarray, scale: np.ndarray, bias: np.ndarray, shift: int,
             o_bits: int) -> np.ndarray:
    """The quantizer datapath: 48-bit product, arithmetic shift, saturate to unsigned O bits."""
    prod = scale.astype(np.int64) * acc.astype(np.int64) + bias.astype(np.int64)
    half = np.int64(1) << (_PROD_BITS - 1)
    prod = ((prod + half) & ((half << 1) - 1)) - half  # the product register is 48 bits wide
    shifted = prod >> shift
    # Saturation as in hardware: a negative value (sign bit) gives 0, any set bit at or
    # above O gives all ones; ReLU therefore cannot change an unsigned result.
    over = (shifted >> o_bits) != 0
    return np.where(shifted < 0, 0, np.where(over, (1 << o_bits) - 1, shifted))


def write_outputs(job: RbeJob, y_words: np.ndarray, write: Writer) -> int:
    """Store ``(Hout, Wout, Kout/32, O)`` words with the job's strides; returns bytes written.

    Contiguous runs are coalesced: one call for a dense tensor, one per row when only the
    row stride is padded, one per pixel otherwise.
    """
    pix = job.y_pixel_bytes
    data = np.ascontiguousarray(y_words, dtype="<u4").view(np.uint8).reshape(
        job.h_out, job.w_out, pix)
    if job.y_pix_stride == pix and job.y_row_stride == job.w_out * pix:
        write(job.y_addr, data.reshape(-1))
    elif job.y_pix_stride == pix:
        for h in range(job.h_out):
            write(job.y_addr + h * job.y_row_stride, data[h].reshape(-1))
    else:
        for h in range(job.h_out):
            for w in range(job.w_out):
                write(job.y_addr + h * job.y_row_stride + w * job.y_pix_stride, data[h, w])
    return data.size


def run_job(job: RbeJob, read: Reader, write: Writer) -> EngineResult:
    """Execute a validated job: read operands, compute, quantise, store outputs."""
    x_words = read_inputs(job, read)
    w_words = read_weights(job, read)
    scale, bias = read_normquant(job, read)
    acc = compute_acc(job, x_words, w_words)
    out = quantize(acc, scale, bias, job.shift, job.o_bits)
    y_words = pack_outputs(out, job.o_bits)
    written = write_outputs(job, y_words, write)
    x0, x1 = job.x_extent()
    return EngineResult(outputs=out, acc=acc, y_words=y_words,
                        bytes_read=(x1 - x0) + job.w_bytes + job.nq_bytes, bytes_written=written)
