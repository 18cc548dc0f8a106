"""Direct memory interface: a target grants a numpy view of its storage; initiators cache
regions and drop them when the target invalidates a range."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class DmiRegion:
    """``array[i]`` is the byte at address ``start + i``; ``end`` is inclusive (TLM style).
    Latencies are per access, in ps."""

    start: int
    end: int
    array: np.ndarray
    read_allowed: bool = True
    write_allowed: bool = True
    read_latency: int = 0
    write_latency: int = 0

    def contains(self, address: int, length: int = 1) -> bool:
        return self.start <= address and address + length - 1 <= self.end

    def translated(self, offset: int) -> "DmiRegion":
        """The same region seen at addresses shifted by ``offset`` (routers use this)."""
        return DmiRegion(self.start + offset, self.end + offset, self.array, self.read_allowed,
                         self.write_allowed, self.read_latency, self.write_latency)

    def view(self, address: int, length: int) -> np.ndarray:
        i = address - self.start
        return self.array[i:i + length]


class DmiCache:
    """An initiator's DMI regions. ``lookup`` is a linear scan: initiators hold few regions."""

    def __init__(self) -> None:
        self.regions: list[DmiRegion] = []
        self.invalidations = 0

    def lookup(self, address: int, length: int = 1, write: bool = False) -> DmiRegion | None:
        for r in self.regions:
            if r.start <= address and address + length - 1 <= r.end:
                if write and not r.write_allowed or not write and not r.read_allowed:
                    return None
                return r
        return None

    def add(self, region: DmiRegion) -> None:
        self.regions.append(region)

    def invalidate(self, start: int, end: int) -> None:
        """Drop every region overlapping ``[start, end]``."""
        before = len(self.regions)
        self.regions = [r for r in self.regions if r.end < start or r.start > end]
        self.invalidations += before - len(self.regions)
