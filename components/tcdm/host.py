"""What the port transports (:mod:`.burst`, :mod:`.word`) use of the TCDM they serve: a
typing Protocol, so that they need not import :mod:`.tcdm`, which builds on them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from tlm import Clock, Simulator
    from tlm.payload import GenericPayload, Status

    from .params import TcdmParams


class TcdmHost(Protocol):
    """The storage, decoding and (word mode) arbiter entry of :class:`.tcdm.Tcdm`."""

    sim: Simulator
    clock: Clock
    params: TcdmParams
    base: int
    size: int
    #: a swapped bank (word mode) or None (see :class:`.tcdm.Tcdm`)
    bank_port: Any
    _mv: memoryview
    _nbanks: int

    def _fail(self, p: GenericPayload, status: Status, reason: str, delay: int) -> int: ...

    def _access(self, p: GenericPayload, a: int) -> tuple[np.ndarray, int] | None: ...

    def _row_beats(self, rows: np.ndarray, row_len: int, port_words: int) -> np.ndarray: ...

    def _chunks_1d(self, a: int, n: int, k: int) -> list[list[int]]: ...

    def _chunks(self, rows: np.ndarray, row_len: int, k: int) -> list[list[int]]: ...

    def _submit(self, port: Any, txn: Any) -> None: ...
