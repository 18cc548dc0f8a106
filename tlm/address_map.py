"""Address maps: named regions of an address space, loaded from a YAML description.

Platform-neutral (no SoC is named here): a platform's facts package loads its own file with
:func:`load_memory_map` and hands the regions to the blocks it composes.

YAML layout::

    regions:            # on-chip, one global address space; must not overlap
      - {name: l2, base: 0x1C000000, size: 0xF0000, domain: soc, kind: memory,
         description: ...}
    external:           # separate address spaces (off-chip memories); optional
      - {name: hyperram, base: 0, size: 0x800000, description: ...}
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .yamlfast import load_file

__all__ = ["Region", "MemoryMap", "load_memory_map"]


@dataclass(frozen=True)
class Region:
    name: str
    base: int
    size: int
    domain: str
    kind: str
    description: str

    @property
    def end(self) -> int:
        """First address after the region."""
        return self.base + self.size

    def contains(self, address: int, length: int = 1) -> bool:
        return self.base <= address and address + length <= self.end


class MemoryMap:
    """Regions by name; ``find(addr)`` decodes an address."""

    def __init__(self, regions: list[Region], external: list[Region]):
        self.regions = sorted(regions, key=lambda r: r.base)
        self.external = external
        self._by_name = {r.name: r for r in self.regions + external}
        for a, b in zip(self.regions, self.regions[1:]):
            if a.end > b.base:
                raise ValueError(f"memory map: {a.name} overlaps {b.name}")

    def __getitem__(self, name: str) -> Region:
        return self._by_name[name]

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def find(self, address: int, length: int = 1) -> Region | None:
        for r in self.regions:
            if r.contains(address, length):
                return r
        return None


@lru_cache(maxsize=None)
def load_memory_map(path: str | Path) -> MemoryMap:
    """Parse a memory-map YAML file (cached by path)."""
    data = load_file(path)

    def mk(d: dict[str, Any], domain: str = "external", kind: str = "memory") -> Region:
        return Region(d["name"], int(d["base"]), int(d["size"]), d.get("domain", domain),
                      d.get("kind", kind), d.get("description", ""))

    return MemoryMap([mk(d) for d in data["regions"]], [mk(d) for d in data.get("external", [])])
