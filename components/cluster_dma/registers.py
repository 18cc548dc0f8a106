"""The cluster DMA's register front end: its map (``registers.yaml``), the command word, and
the register bank that turns register accesses into calls of the DMA's Python API.

The register map and the command-word fields are in ``registers.yaml`` (generated tables in
docs/registers.md; docs/memory.md describes the semantics). Software reserves an ID by
reading CMD, stages the address registers and pushes a command word by writing CMD; the
push takes the oldest reserved ID, else the lowest free one; with none free the command is
dropped (ERROR.FULL). In 2D, ``LEN`` is the total over all rows (a multiple of
``ROW_LEN``); a side without its 2D bit is contiguous.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag
from pathlib import Path
from typing import TYPE_CHECKING

from tlm import RegisterBank
from tlm.regmap import RegisterMap, load_regmap

if TYPE_CHECKING:
    from .engine import ClusterDma

__all__ = ["MAP", "REG", "ID_FULL", "LEN_MASK", "CMD_L2_TO_TCDM", "CMD_L2_2D", "CMD_EVT_EN",
           "CMD_IRQ_EN", "CMD_TCDM_2D", "CMD_AUTO_FREE", "DmaError", "DmaCommand",
           "build_register_bank"]

#: The register map (the single source of the offsets and fields below).
MAP: RegisterMap = load_regmap(Path(__file__).with_name("registers.yaml"))

#: Register offsets by name.
REG = MAP.offsets()
ID_FULL = MAP.constant("ID_FULL")
_CMD = MAP.register("CMD")
LEN_MASK = _CMD.field("LEN").mask
CMD_L2_TO_TCDM = _CMD.field("L2_TO_TCDM").mask
CMD_L2_2D = _CMD.field("L2_2D").mask
CMD_EVT_EN = _CMD.field("EVT_EN").mask
CMD_IRQ_EN = _CMD.field("IRQ_EN").mask
CMD_TCDM_2D = _CMD.field("TCDM_2D").mask
CMD_AUTO_FREE = _CMD.field("AUTO_FREE").mask
_ERR = MAP.register("ERROR")


class DmaError(IntFlag):
    """Bits of the ERROR register (and of :attr:`DmaTransfer.error`)."""

    NONE = 0
    FULL = _ERR.field("FULL").mask              #: push with no free ID: the command was dropped
    ZERO_LEN = _ERR.field("ZERO_LEN").mask      #: LEN = 0, or ROW_LEN = 0 in 2D
    L2_RANGE = _ERR.field("L2_RANGE").mask      #: some byte outside the L2 window
    TCDM_RANGE = _ERR.field("TCDM_RANGE").mask  #: some byte outside the TCDM
    GEOMETRY = _ERR.field("GEOMETRY").mask      #: 2D row/stride not word multiples, ...
    BUS = _ERR.field("BUS").mask                #: error response during the transfer


#: every ERROR bit (a write-1-to-clear touches these only)
ERROR_MASK = sum(f.mask for f in _ERR.fields)


@dataclass(frozen=True)
class DmaCommand:
    """One transfer. Addresses are global. ``row_len`` set = 2D: ``length`` is the total
    (``length // row_len`` rows); ``l2_stride``/``tcdm_stride`` are the row pitches on each
    side (``None``: rows contiguous on that side)."""

    l2: int
    tcdm: int
    length: int
    to_tcdm: bool = True
    row_len: int | None = None
    l2_stride: int | None = None
    tcdm_stride: int | None = None
    event: bool = False
    irq: bool = False
    auto_free: bool = True

    @property
    def is_2d(self) -> bool:
        return self.row_len is not None

    @property
    def rows(self) -> int:
        if not self.is_2d:
            return 1
        return self.length // self.row_len if self.row_len else 0

    @property
    def row_bytes(self) -> int:
        return self.row_len if self.is_2d else self.length

    @property
    def l2_step(self) -> int:
        return self.l2_stride if self.l2_stride is not None else self.row_bytes

    @property
    def tcdm_step(self) -> int:
        return self.tcdm_stride if self.tcdm_stride is not None else self.row_bytes

    def word(self) -> int:
        """The CMD register word for this command (the address registers hold the rest)."""
        if not 0 <= self.length <= LEN_MASK:
            raise ValueError(f"length {self.length} does not fit the 18-bit LEN field")
        w = self.length
        w |= CMD_L2_TO_TCDM if self.to_tcdm else 0
        w |= CMD_L2_2D if self.is_2d and self.l2_stride is not None else 0
        w |= CMD_TCDM_2D if self.is_2d and self.tcdm_stride is not None else 0
        w |= CMD_EVT_EN if self.event else 0
        w |= CMD_IRQ_EN if self.irq else 0
        w |= CMD_AUTO_FREE if self.auto_free else 0
        return w

    @classmethod
    def decode(cls, word: int, l2: int, tcdm: int, row_len: int, l2_stride: int,
               tcdm_stride: int) -> "DmaCommand":
        """The command a CMD write of ``word`` pushes, given the staged registers."""
        is_2d = bool(word & (CMD_L2_2D | CMD_TCDM_2D))
        return cls(l2=l2, tcdm=tcdm, length=word & LEN_MASK,
                   to_tcdm=bool(word & CMD_L2_TO_TCDM),
                   row_len=row_len if is_2d else None,
                   l2_stride=l2_stride if word & CMD_L2_2D else None,
                   tcdm_stride=tcdm_stride if word & CMD_TCDM_2D else None,
                   event=bool(word & CMD_EVT_EN), irq=bool(word & CMD_IRQ_EN),
                   auto_free=bool(word & CMD_AUTO_FREE))


def build_register_bank(dma: "ClusterDma") -> RegisterBank:
    """The DMA's register bank ``regs`` (a child of ``dma``), hooked to its Python API."""
    rb = RegisterBank(dma, "regs", dma.region.size, clock=dma.clock, latency=1)

    def push(word: int) -> None:
        r = rb
        dma.submit(DmaCommand.decode(word, r["L2_ADDR"].value, r["TCDM_ADDR"].value,
                                     r["ROW_LEN"].value, r["L2_STRIDE"].value,
                                     r["TCDM_STRIDE"].value))

    def free(value: int) -> None:
        for i in range(dma.params.queue_depth):
            if value >> i & 1:
                dma.free(i)

    def w1c(value: int) -> None:
        dma.error_bits = DmaError(int(dma.error_bits) & ~value & ERROR_MASK)

    hooks = {
        "CMD": dict(read=dma.reserve, write=push),
        "STATUS": dict(read=dma.busy_mask),
        "FREE": dict(read=dma.allocated_mask, write=free),
        "ERROR": dict(read=lambda: int(dma.error_bits), write=w1c),
        "ERR_ID": dict(read=lambda: dma.err_id),
        "LAST_ID": dict(read=lambda: dma.last_id),
        "DONE": dict(read=dma.done_mask),
    }
    rb.add_map(MAP, hooks)  # the staged address registers keep plain stored values
    return rb
