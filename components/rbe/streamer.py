"""The RBE streamer's 288-bit TCDM accesses of one job, in hardware issue order.

Loop nest (outermost first, as the RBE microcode runs it): output tile row, output tile
column, K_out tile, K_in tile, input pass; per (K_in tile, pass) a LOAD then a COMPUTE
phase, per (tile, K_out tile) a NORMQUANT then a STREAMOUT phase. One access per cycle:

* LOAD: one access per input pixel of the 5x5 (3x3 mode) or 3x3 (1x1 mode) patch, row by
  row, reading the pass's <= 4 contiguous bit-plane words of the pixel's 32-channel group.
  Pixels past the input edge (edge tiles) are not loaded.
* COMPUTE: the weight stream. 3x3: per output channel and weight bit, the 9 tap words
  (9 x 32 bit = one full access). 1x1: per output channel, the W bit-plane words.
* NORMQUANT: 8 accesses of 6 words (4 channels x 48-bit records).
* STREAMOUT: per valid output pixel and output bit, one word (32 channels).

All 9 ports share one request, so an access occupies the 9 consecutive banks starting at
its base address even when fewer words are useful (``nwords``); loads of unused ports
are discarded and stores of unused ports have byte-enable 0.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from .arch import N_PORTS, NQ_GROUP_BYTES, NQ_GROUPS, NQ_RECORD_BYTES, TILE, TP, WORD_BYTES
from .job import RbeJob


class Phase(enum.IntEnum):
    LOAD = 0
    COMPUTE = 1
    NORMQUANT = 2
    STREAMOUT = 3


@dataclass(frozen=True)
class StreamerTrace:
    """Accesses in issue order: phase code, port-0 byte address, useful words (ports)."""

    phase: np.ndarray   # uint8 (Phase)
    addr: np.ndarray    # int64 byte address of port 0
    nwords: np.ndarray  # uint8 number of ports carrying data (1..9)

    def __len__(self) -> int:
        return int(self.phase.size)

    @property
    def is_write(self) -> np.ndarray:
        return self.phase == Phase.STREAMOUT

    def counts(self) -> dict[Phase, int]:
        n = np.bincount(self.phase, minlength=len(Phase))
        return {ph: int(n[ph]) for ph in Phase}

    def select(self, phase: Phase) -> "StreamerTrace":
        m = self.phase == phase
        return StreamerTrace(self.phase[m], self.addr[m], self.nwords[m])

    def banks(self, n_banks: int = 32, all_ports: bool = True) -> np.ndarray:
        """``(N, 9)`` bank index per port; with ``all_ports=False`` idle ports are -1."""
        port = np.arange(N_PORTS)
        b = ((self.addr[:, None] // WORD_BYTES + port) % n_banks).astype(np.int16)
        if not all_ports:
            b[port[None, :] >= self.nwords[:, None]] = -1
        return b


def _blocks(job: RbeJob) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Per-phase slot blocks, each broadcast to (tiles, kout_tiles, n): (phase, addr, nw, ok)."""
    tiles_h, tiles_w, ko_t = job.tiles_h, job.tiles_w, job.kout_tiles
    th = np.repeat(np.arange(tiles_h), tiles_w)[:, None, None] * TILE
    tw = np.tile(np.arange(tiles_w), tiles_h)[:, None, None] * TILE
    kt = np.arange(ko_t)[None, :, None]
    shape = (tiles_h * tiles_w, ko_t)
    out: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []

    # LOAD geometry (row-major over the patch)
    pr = np.repeat(np.arange(job.patch), job.patch)[None, None, :]
    pc = np.tile(np.arange(job.patch), job.patch)[None, None, :]
    load_ok = ((th + pr) < job.h_in) & ((tw + pc) < job.w_in)
    load_pix = job.x_addr + (th + pr) * job.x_row_stride + (tw + pc) * job.x_pix_stride
    # COMPUTE weight stream
    ko = kt * TP + np.arange(TP)[None, None, :]  # (1, KO, 32)
    for g in range(job.kin_tiles):
        if job.is_3x3:
            rows = (ko * job.kin_tiles + g)[..., None] * job.w_bits + np.arange(job.w_bits)
            w_addr = job.w_addr + rows.reshape(1, ko_t, -1) * (job.taps * WORD_BYTES)
            w_nw = job.taps
        else:
            w_addr = job.w_addr + (ko * job.kin_tiles + g) * (job.w_bits * WORD_BYTES)
            w_nw = job.w_bits
        for p in range(job.passes):
            bits = job.pass_bits(p)
            off = (g * job.i_bits + bits.start) * WORD_BYTES
            out.append((Phase.LOAD, load_pix + off, np.uint8(len(bits)), load_ok))
            out.append((Phase.COMPUTE, w_addr, np.uint8(w_nw), np.True_))
    grp = np.arange(NQ_GROUPS)[None, None, :]
    out.append((Phase.NORMQUANT, job.nq_addr + kt * (TP * NQ_RECORD_BYTES) + grp * NQ_GROUP_BYTES,
                np.uint8(NQ_GROUP_BYTES // WORD_BYTES), np.True_))
    # STREAMOUT: pixel-major over the 3x3 tile, output bit minor
    npx = TILE * TILE
    dy = np.repeat(np.arange(npx) // TILE, job.o_bits)[None, None, :]
    dx = np.repeat(np.arange(npx) % TILE, job.o_bits)[None, None, :]
    ob = np.tile(np.arange(job.o_bits), npx)[None, None, :]
    so_ok = ((th + dy) < job.h_out) & ((tw + dx) < job.w_out)
    so_addr = (job.y_addr + (th + dy) * job.y_row_stride + (tw + dx) * job.y_pix_stride
               + (kt * job.o_bits + ob) * WORD_BYTES)
    out.append((Phase.STREAMOUT, so_addr, np.uint8(1), so_ok))
    return [(ph, np.broadcast_to(a, shape + (np.shape(a)[-1],)), nw,
             np.broadcast_to(ok, shape + (np.shape(a)[-1],))) for ph, a, nw, ok in out]


def streamer_trace(job: RbeJob) -> StreamerTrace:
    """Every streamer access of ``job`` in issue order (vectorised; no per-access Python)."""
    blocks = _blocks(job)
    addr = np.concatenate([a for _, a, _, _ in blocks], axis=2).astype(np.int64)
    ok = np.concatenate([o for _, _, _, o in blocks], axis=2)
    phase = np.concatenate([np.full(a.shape, ph, dtype=np.uint8) for ph, a, _, _ in blocks], axis=2)
    nw = np.concatenate([np.full(a.shape, n, dtype=np.uint8) for _, a, n, _ in blocks], axis=2)
    m = ok.reshape(-1)
    return StreamerTrace(phase.reshape(-1)[m], addr.reshape(-1)[m], nw.reshape(-1)[m])
