"""The TCDM module: storage, ports and the decoding shared by both modes (see the package
docstring)."""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tlm import Clock, Module
from tlm.address_map import Region
from tlm.dmi import DmiRegion
from tlm.memory import as_bytes_view, byte_enable_mask
from tlm.payload import OK, READ, WRITE, Command, GenericPayload, Status, record_error
from tlm.sockets import TargetSocket
from tlm.params import check_params

from .burst import BurstPort
from .params import PATTERN, WORD, TcdmParams
from .word import WordArbiter, WordPort, _Txn

if TYPE_CHECKING:
    from tlm import Simulator


class TcdmPort(BurstPort, WordPort):
    """One initiator port: its socket, width and counters (and word-mode queue)."""

    tcdm: Tcdm

    def __init__(self, tcdm: Tcdm, name: str, index: int, width: int, lic: bool):
        self.tcdm = tcdm
        self.name = name
        self.index = index
        self.width = width
        self.words = width // WORD
        self.lic = lic
        self.busy_until = 0                     # burst mode: the port's own busy interval
        self.transactions = self.bytes = self.word_count = 0
        self.stall_cycles = self.conflicts = 0
        # word-mode state
        self.queue: deque[_Txn] = deque()
        self.txn: _Txn | None = None
        self.chunk = 0
        self.cur: list[int] = []
        b = self._b_word if tcdm.params.mode == "word" else self._b_burst
        self.socket = TargetSocket(tcdm, f"{name}_port", b_transport=b,
                                   transport_dbg=tcdm.transport_dbg,
                                   get_direct_mem_ptr=tcdm.get_direct_mem_ptr, optional=True)
        self._event_name = f"{tcdm.path}.{name}.done"

    def __repr__(self) -> str:
        return f"<TcdmPort {self.tcdm.path}.{self.name} {self.width} B>"

    def beats(self, p: GenericPayload) -> int:
        """Accesses (cycles without conflicts) the transaction ``p`` needs on this port."""
        rows, row_len = self.tcdm._rows(p)
        return int(self.tcdm._row_beats(rows, row_len, self.words).sum())


class Tcdm(WordArbiter, Module):
    """The TCDM: storage, ports and (in word mode) the per-bank arbiter. See the module
    docstring for the port list, the two modes and their timing."""

    def __init__(self, parent: "Module | Simulator", name: str, clock: Clock,
                 params: TcdmParams | None = None, *, region: Region):
        super().__init__(parent, name)
        self.params = params or TcdmParams()
        check_params(self.params, self.path)
        # global addressing kept (accepts local offsets too): cores, the DMA and the RBE
        # address the TCDM with global addresses; the composer gives the region
        self.region = region
        self.base = self.region.base
        self.size = self.region.size
        self.clock = clock
        prm = self.params
        if self.size % (prm.banks * WORD):
            raise ValueError(f"{self.path}: size 0x{self.size:x} is not a multiple of "
                             f"{prm.banks} banks x {WORD} B")
        self._buf = bytearray(self.size)
        self._mv = memoryview(self._buf)
        self.array = np.frombuffer(self._buf, dtype=np.uint8)
        #: read-only (size - n + 1, n) window views of the array by row length n (_access)
        self._windows: dict[int, np.ndarray] = {}
        self._nbanks = prm.banks
        #: a swapped bank (word mode), or None. An object with ``bank`` (its index),
        #: ``access(command, rows, row_len, data, byte_enable, initiator)`` -- called after
        #: the TCDM moved the data of a transaction touching any bank (``rows``: local row
        #: start addresses, ``data``: the payload's buffer, rows back to back; on a READ the
        #: port may overwrite its bank's bytes in ``data`` and in the array; ``initiator``:
        #: the port name, ``"debug"`` or ``"load"``) -- and ``replaced()`` (the whole array
        #: was overwritten, e.g. by :meth:`clear`). Set by cosim.rtl; plain attribute.
        self.bank_port: object | None = None
        # ports: LIC initiators first (their index is the round-robin order), then the
        # accelerator branches (the RBE's first; their index is their round-robin order)
        self.ports: dict[str, TcdmPort] = {}
        idx = 0
        for i in range(prm.cores):
            self._add_port(f"core{i}", idx, prm.core_port_bytes, True)
            idx += 1
        for i in range(prm.dma_ports):
            self._add_port(f"dma{i}", idx, prm.dma_port_bytes, True)
            idx += 1
        self._add_port("soc", idx, prm.soc_port_bytes, True)
        self._add_port("rbe", idx + 1, prm.rbe_port_bytes, False)
        for i in range(1, prm.accel_ports):
            self._add_port(f"accel{i}", idx + 1 + i, prm.accel_port_bytes, False)
        self.core_ports = [self.ports[f"core{i}"].socket for i in range(prm.cores)]
        self.dma_ports = [self.ports[f"dma{i}"].socket for i in range(prm.dma_ports)]
        self.soc_port = self.ports["soc"].socket
        self.rbe_port = self.ports["rbe"].socket
        #: every accelerator branch, the RBE's first (``accel_ports`` of them)
        self.accel_ports = [self.rbe_port] + [self.ports[f"accel{i}"].socket
                                              for i in range(1, prm.accel_ports)]
        # word-mode arbiter state
        self._lic_last = [-1] * prm.banks       # last granted LIC port index, per bank
        self._mux_rbe = [False] * prm.banks     # True when an accelerator branch won last, per bank
        self._acc_last = [-1] * prm.banks       # last granted accelerator port index, per bank
        self._active: list[tuple[int, TcdmPort]] = []  # ports with a transaction, by index
        self._edge = 0                          # edge of the cycle being collected
        self._running = False
        self.cycles = 0
        self.conflict_cycles = 0
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _add_port(self, name: str, index: int, width: int, lic: bool) -> None:
        self.ports[name] = TcdmPort(self, name, index, width, lic)

    def port(self, name: str) -> TargetSocket:
        """The target socket of port ``name`` (``core3``, ``dma0``, ``soc``, ``rbe``,
        ``accel1``)."""
        try:
            return self.ports[name].socket
        except KeyError:
            raise KeyError(f"{self.path} has no port {name!r}; ports: "
                           f"{', '.join(self.ports)}") from None

    def _stat_values(self) -> dict:
        out: dict = {"cycles": self.cycles, "conflict_cycles": self.conflict_cycles}
        for n, pt in self.ports.items():
            if pt.transactions:
                out[f"{n}.transactions"] = pt.transactions
                out[f"{n}.bytes"] = pt.bytes
                out[f"{n}.words"] = pt.word_count
                out[f"{n}.stall_cycles"] = pt.stall_cycles
                out[f"{n}.conflicts"] = pt.conflicts
        return out

    # ----- contents (no time) ---------------------------------------------------------------
    def local(self, address: int) -> int:
        return address - self.base if address >= self.base else address

    def load(self, address: int, data) -> None:
        """Copy bytes in at a local or global address (no time)."""
        a = self.local(address)
        mv = memoryview(data).cast("B")
        if a < 0 or a + len(mv) > self.size:
            raise ValueError(f"{self.path}: load of {len(mv)} bytes at 0x{address:x} does not fit")
        self._mv[a:a + len(mv)] = mv
        if self.bank_port is not None and len(mv):
            self.bank_port.access(WRITE, (a,), len(mv), mv, None, "load")

    def dump(self, address: int, length: int) -> bytes:
        a = self.local(address)
        if a < 0 or length < 0 or a + length > self.size:
            raise ValueError(f"{self.path}: dump of {length} bytes at 0x{address:x} does not fit")
        return bytes(self._mv[a:a + length])

    def clear(self) -> None:
        """Lose the contents (power-off): zero the SRAM and revoke DMI grants."""
        self.array[:] = 0
        if self.bank_port is not None:
            self.bank_port.replaced()
        for pt in self.ports.values():
            pt.socket.invalidate_direct_mem_ptr(0, self.size - 1)
            pt.socket.invalidate_direct_mem_ptr(self.base, self.base + self.size - 1)

    # ----- decoding shared by both modes ---------------------------------------------------------
    def _fail(self, p: GenericPayload, status: Status, reason: str, delay: int) -> int:
        self.stats.add("errors")
        record_error(self.sim, p, self.path, status, reason)
        return delay

    def _rows(self, p: GenericPayload) -> tuple[np.ndarray, int]:
        """Local row start addresses and the row length of a transaction."""
        pat = p.get_extension(PATTERN)
        if pat is None:
            a = p.address
            return np.array([a - self.base if a >= self.base else a], dtype=np.int64), p.length
        rows = pat.row_addresses(p.address)
        rows = np.where(rows >= self.base, rows - self.base, rows)
        return rows, pat.row_bytes

    @staticmethod
    def _row_beats(rows: np.ndarray, row_len: int, port_words: int) -> np.ndarray:
        words = ((rows + row_len - 1) >> 2) - (rows >> 2) + 1
        return -(-words // port_words)

    def _access(self, p: GenericPayload, a: int) -> tuple[np.ndarray, int] | None:
        """Check ``p`` and move its data; returns (local rows, row length) or None."""
        n = p.length
        if p.command not in (READ, WRITE, Command.IGNORE):
            self._fail(p, Status.COMMAND_ERROR, f"unknown command {p.command!r}", 0)
            return None
        if n <= 0:
            self._fail(p, Status.ADDRESS_ERROR, "zero-length access", 0)
            return None
        if p.streaming_width is not None and p.streaming_width < n:
            self._fail(p, Status.BURST_ERROR, "streaming width below the length is not supported", 0)
            return None
        pat = p.get_extension(PATTERN)
        if pat is None:
            rows = np.array([a], dtype=np.int64)
            row_len = n
        else:
            rows, row_len = self._rows(p)
            if row_len <= 0 or len(rows) == 0 or len(rows) * row_len != n:
                self._fail(p, Status.BURST_ERROR, f"pattern of {len(rows)} rows x {row_len} B "
                           f"does not match the length {n}", 0)
                return None
        if rows.min() < 0 or rows.max() + row_len > self.size:
            self._fail(p, Status.ADDRESS_ERROR, f"0x{p.address:x}+{n} reaches outside the TCDM "
                       f"[0x{self.base:x}, 0x{self.base + self.size:x})", 0)
            return None
        if p.command == Command.IGNORE:
            return rows, row_len
        buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
        if len(rows) == 1 and p.byte_enable is None:
            r0 = int(rows[0])
            if p.command == READ:
                buf[:] = self.array[r0:r0 + n]
            else:
                self.array[r0:r0 + n] = buf
            return rows, row_len
        mask = byte_enable_mask(p.byte_enable, n)
        if mask is not None and not mask.any():
            return rows, row_len  # nothing enabled: a timing-only access (the RBE's writes)
        if mask is None and p.command == READ:
            # whole rows out of a (size - row_len + 1, row_len) window view: a row at a time,
            # 5-10x faster than gathering through a per-byte int64 index
            win = self._windows.get(row_len)
            if win is None:
                win = self._windows[row_len] = sliding_window_view(self.array, row_len)
            buf.reshape(len(rows), row_len)[:] = win[rows]
            return rows, row_len
        idx = (rows[:, None] + np.arange(row_len)).reshape(-1)
        if p.command == READ:
            if mask is None:
                buf[:] = self.array[idx]
            else:
                buf[mask] = self.array[idx[mask]]
        else:
            if mask is None:
                self.array[idx] = buf
            else:
                self.array[idx[mask]] = buf[mask]
        return rows, row_len

    def _chunks_1d(self, a: int, n: int, k: int) -> list[list[int]]:
        """Accesses of one contiguous burst at local address ``a`` (see :meth:`_chunks`)."""
        w0 = a >> 2
        w1 = (a + n - 1) >> 2
        nb = self.params.banks
        if k == 1:
            if w0 == w1:
                return [[w0 % nb]]
            return [[w % nb] for w in range(w0, w1 + 1)]
        return [[w % nb for w in range(s, min(s + k, w1 + 1))] for s in range(w0, w1 + 1, k)]

    def _chunks(self, rows: np.ndarray, row_len: int, k: int) -> list[list[int]]:
        """Per access (cycle), the banks of its words: rows split in groups of k words."""
        mask = self.params.banks - 1
        pow2 = self.params.banks & mask == 0
        out: list[list[int]] = []
        for r in rows.tolist():
            w0 = r >> 2
            w1 = (r + row_len - 1) >> 2
            w = np.arange(w0, w1 + 1)
            b = (w & mask) if pow2 else (w % self.params.banks)
            nw = len(b)
            full = nw - nw % k
            if k == 1:
                out.extend([[x] for x in b.tolist()])
                continue
            if full:
                out.extend(b[:full].reshape(-1, k).tolist())
            if full < nw:
                out.append(b[full:].tolist())
        return out

    # ----- TLM debug / DMI ------------------------------------------------------------------------
    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug access on any port: no time, no statistics (patterns honoured)."""
        if p.command == Command.IGNORE or p.length <= 0:
            return 0
        a = self.local(p.address)
        pat = p.get_extension(PATTERN)
        n = p.length
        buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
        if pat is None:
            if a < 0 or a + n > self.size:
                return 0
            idx = slice(a, a + n)
        else:
            rows, row_len = self._rows(p)
            if len(rows) * row_len != n or rows.min() < 0 or rows.max() + row_len > self.size:
                return 0
            idx = (rows[:, None] + np.arange(row_len)).reshape(-1)
        if p.command == READ:
            buf[:] = self.array[idx]
        else:
            self.array[idx] = buf
        if self.bank_port is not None:
            rows, row_len = ((a,), n) if pat is None else (rows, row_len)
            self.bank_port.access(p.command, rows, row_len, buf, None, "debug")
        p.status = OK
        return n

    def get_direct_mem_ptr(self, p: GenericPayload) -> DmiRegion | None:
        """Burst mode grants DMI over the whole TCDM (local or global view, like the
        request); word mode refuses, since every access must meet the arbiter, and so
        does a TCDM with a swapped bank (its accesses must reach the bank)."""
        if self.params.mode == "word" or self.bank_port is not None:
            return None
        start = self.base if p.address >= self.base else 0
        if not 0 <= p.address - start < self.size:
            return None
        lat = (self.params.latency + 1) * self.clock.period
        return DmiRegion(start, start + self.size - 1, self.array, True, True, lat, lat)
