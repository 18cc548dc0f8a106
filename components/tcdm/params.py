"""TCDM parameters, the word size and access patterns (rows of a transaction)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

from tlm.params import param

import numpy as np


WORD = 4                   #: bytes per TCDM word (bank width)
PATTERN = "tcdm.pattern"   #: payload extension key for a :class:`TcdmPattern`


@dataclass(frozen=True)
class TcdmPattern:
    """Rows of ``row_bytes`` each: ``count`` rows ``stride`` bytes apart from the payload
    address, or the explicit absolute row addresses ``rows`` (then ``count``/``stride`` are
    ignored). The payload's data holds the rows back to back; its length must be
    ``rows * row_bytes``."""

    row_bytes: int
    count: int = 1
    stride: int = 0
    rows: Sequence[int] | np.ndarray | None = None

    def row_addresses(self, base: int) -> np.ndarray:
        if self.rows is not None:
            return np.asarray(self.rows, dtype=np.int64)
        return base + np.arange(self.count, dtype=np.int64) * self.stride

    @property
    def n_rows(self) -> int:
        return len(self.rows) if self.rows is not None else self.count


@dataclass
class TcdmParams:
    """``cluster.tcdm`` parameters (times in cycles of the cluster clock)."""

    #: ``burst``: analytical per transaction; ``word``: per-bank, per-cycle arbitration.
    mode: Literal["burst", "word"] = field(default="burst", metadata={"doc": "fidelity level"})
    #: Word-interleaved banks (bank = (address >> 2) % banks).
    banks: int = param(32, "SRAM banks", lo=1, hi=1024)
    #: Core ports on the LIC.
    cores: int = param(16, "core ports", lo=0, hi=64)
    #: DMA ports on the LIC.
    dma_ports: int = param(1, "DMA ports", lo=0, hi=16)
    core_port_bytes: int = param(4, "core port width (bytes)", lo=4, hi=1024)
    dma_port_bytes: int = param(8, "DMA port width (bytes, 64 bit)", lo=4, hi=1024)
    soc_port_bytes: int = param(4, "SOC port width (bytes, 32 bit)", lo=4, hi=1024)
    rbe_port_bytes: int = param(36, "RBE branch width (bytes, 288 bit)", lo=4, hi=1024)
    #: Accelerator (HWPE) branches beside the LIC: the RBE's, then ``accel1`` ... (word mode
    #: arbitrates them round robin per bank before the LIC/accelerator multiplexer).
    accel_ports: int = param(1, "accelerator branches (the first is the RBE's)", lo=1, hi=8)
    accel_port_bytes: int = param(32, "width of the accelerator branches after the RBE's (bytes)",
                                  lo=4, hi=1024)
    #: Cycles added to every transaction beyond its data cycles (0: 0-wait-state SRAM, the
    #: response of an access comes the cycle after its grant).
    latency: int = param(0, "extra latency (cycles)", lo=0, hi=1000)
    #: Burst mode only: data cycles are multiplied by this (>= 1) to stand for the average
    #: bank conflicts that word mode would simulate.
    conflict_factor: float = param(1.0, "burst-mode conflict factor", lo=1.0, hi=64.0)

    def validate(self) -> None:
        for name in ("core_port_bytes", "dma_port_bytes", "soc_port_bytes", "rbe_port_bytes",
                     "accel_port_bytes"):
            v = getattr(self, name)
            if v < WORD or v % WORD:
                raise ValueError(f"{name} must be a positive multiple of {WORD}, got {v}")
            if v // WORD > self.banks:
                raise ValueError(f"{name} ({v} B) spans more than the {self.banks} banks")
