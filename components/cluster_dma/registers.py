"""The cluster DMA's register interface: its map (``registers.yaml``), the command word and
the error bits (the engine, :mod:`.engine`, builds its register bank from them).

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

from tlm.regmap import RegisterMap, load_regmap

__all__ = ["MAP", "REG", "ID_FULL", "LEN_MASK", "CMD_L2_TO_TCDM", "CMD_L2_2D", "CMD_EVT_EN",
           "CMD_IRQ_EN", "CMD_TCDM_2D", "CMD_AUTO_FREE", "ERROR_MASK", "DmaError", "DmaCommand"]

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
