"""Tiling of RBE convolutions into the TCDM, with double buffering.

A layer's output is cut into bands of ``rows`` output rows (full width, all output
channels). The TCDM holds the layer's weights and norm-quant parameters once, and two
input bands and two output bands (ping-pong), so the DMA brings band i+1 in and takes band
i-1 out while the RBE computes band i. The band is the largest that fits, capped so that a
layer tall enough has about ``target_bands`` bands (otherwise a layer that fits at once
would move all its data before computing anything); band heights are multiples of the
RBE's 3-row output tiles (6 for stride 2, whose bands are computed at stride 1 and
subsampled on the way out), so only the last band has edge tiles.

``mode="gather"`` is a 3x3 convolution run by the RBE in 1x1 mode on gathered taps: each
input band holds, per *output* pixel, the 9 input pixels of its window side by side (the
DMA gathers them, ``9 * K_in`` channels), so a stride-2 layer computes only its strided
outputs (mapping.py, docs/rbe.md "Deployment").
"""
from __future__ import annotations

from dataclasses import dataclass

WORD = 4
NQ_RECORD = 6


class TilingError(ValueError):
    """The layer cannot be tiled into the TCDM (the message says what does not fit)."""


def align(n: int, a: int = 8) -> int:
    return -(-n // a) * a


def pix_bytes(k: int, bits: int) -> int:
    """Bytes of one pixel in the bit-plane layout: K/32 channel groups x bits words."""
    return (k // 32) * bits * WORD


@dataclass(frozen=True)
class ConvTiling:
    rows: int              # stride-1 output rows per band
    bands: int
    in_band: int           # bytes of one input band in TCDM
    out_band: int          # bytes of one output band in TCDM
    w_bytes: int
    nq_bytes: int
    tcdm_bytes: int        # total TCDM footprint

    @property
    def double_buffered(self) -> bool:
        return self.bands > 1


def conv_tiling(*, mode: str, stride: int, h_in: int, w_in: int, k_in: int, k_out: int,
                i_bits: int, w_bits: int, o_bits: int, tcdm_size: int, name: str = "layer",
                target_bands: int = 4) -> ConvTiling:
    """Choose the band height for one convolution (channel counts already padded to 32)."""
    taps = 9 if mode in ("conv3x3", "gather") else 1
    w_bytes = k_out * (k_in // 32) * w_bits * taps * WORD
    nq_bytes = align(k_out * NQ_RECORD)
    gathered = 9 if mode == "gather" else 1     # input pixels per output pixel in the band
    # output geometry computed by the RBE (3x3: at stride 1)
    if mode == "conv3x3":
        h_full, w_full = h_in, w_in
        halo = 2
        in_w = w_in + 2
    else:  # 1x1 / gather: the DMA brings only the strided pixels, the RBE sees the output size
        h_full, w_full = h_in // stride, w_in // stride
        halo = 0
        in_w = w_full
    fixed = align(w_bytes) + nq_bytes
    step = 2 if (stride == 2 and mode == "conv3x3") else 1
    tile = 6 if step == 2 else 3
    cap = max(tile, -(-(-(-h_full // target_bands)) // tile) * tile)
    start = min(h_full - h_full % step if step == 2 else h_full, cap)
    best = None
    for rows in range(start, 0, -step):
        in_band = align((rows + halo) * in_w * gathered * pix_bytes(k_in, i_bits))
        out_band = align(rows * w_full * pix_bytes(k_out, o_bits))
        bands = -(-h_full // rows)
        copies = 2 if bands > 1 else 1
        total = fixed + copies * (in_band + out_band)
        if total <= tcdm_size:
            best = ConvTiling(rows, bands, in_band, out_band, w_bytes, nq_bytes, total)
            break
    if best is None:
        one_in = (1 + halo) * in_w * gathered * pix_bytes(k_in, i_bits)
        raise TilingError(
            f"{name}: impossible tiling: weights ({w_bytes} B) + norm-quant ({nq_bytes} B) + "
            f"two one-row bands (in {one_in} B, out {w_full * pix_bytes(k_out, o_bits)} B) do not "
            f"fit the {tcdm_size} B TCDM (K_in={k_in}, K_out={k_out}, {w_bits}-bit weights)")
    return best


@dataclass(frozen=True)
class RowTiling:
    """Bands of rows for an element-wise cores kernel (two inputs, one output)."""

    rows: int
    bands: int
    band_bytes: tuple[int, int, int]
    tcdm_bytes: int


def eltwise_tiling(*, h: int, w: int, k: int, bits: tuple[int, int, int], tcdm_size: int,
                   name: str = "layer") -> RowTiling:
    for rows in range(h, 0, -1):
        sizes = tuple(align(rows * w * pix_bytes(k, b)) for b in bits)
        bands = -(-h // rows)
        total = (2 if bands > 1 else 1) * sum(sizes)
        if total <= tcdm_size:
            return RowTiling(rows, bands, sizes, total)  # type: ignore[arg-type]
    raise TilingError(f"{name}: impossible tiling: one row of each operand does not fit the TCDM")
