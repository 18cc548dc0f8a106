"""An activation tensor's place and layout in L2 (the RBE bit-plane layout with a zero
border): what the mapping plans and the reference packs."""
from __future__ import annotations

from dataclasses import dataclass

from .tiling import pix_bytes


@dataclass
class Tensor:
    """An activation tensor in L2: (h + 2 pad) x (w + 2 pad) pixels of K/32 x bits words."""

    name: str
    h: int
    w: int
    k: int          # channels padded to a multiple of 32
    bits: int
    addr: int = 0
    pad: int = 1

    @property
    def pix(self) -> int:
        return pix_bytes(self.k, self.bits)

    @property
    def row(self) -> int:
        return (self.w + 2 * self.pad) * self.pix

    @property
    def size(self) -> int:
        return (self.h + 2 * self.pad) * self.row

    def at(self, r: int, c: int = 0) -> int:
        """L2 address of interior pixel (r, c)."""
        return self.addr + (r + self.pad) * self.row + (c + self.pad) * self.pix
