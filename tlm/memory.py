"""A memory target: numpy-backed, DMI capable, with configurable latency and width."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .clock import Clock
from .dmi import DmiRegion
from .module import Module
from .payload import (OK, READ, WRITE, Command, GenericPayload, Phase, Status, Sync,
                      record_error)
from .sockets import TargetSocket
from .timing import HopTiming

if TYPE_CHECKING:
    from .kernel import Simulator


def as_bytes_view(data: Any, n: int) -> memoryview:
    """A byte-level memoryview of the first ``n`` bytes of a bytes-like object."""
    mv = data if type(data) is memoryview else memoryview(data)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv[:n]


def byte_enable_mask(byte_enable: Any, n: int) -> np.ndarray | None:
    """The enable mask (bool) of ``n`` data bytes, the ``byte_enable`` pattern repeated over
    the data as TLM-2.0 defines it; None when every byte is enabled (the caller then moves
    the data unmasked). ``np.tile``, not ``np.resize``: resizing a short pattern to ``n``
    concatenates ``n / len`` one-element arrays, which cost a third of a ResNet-20 run."""
    if byte_enable is None:
        return None
    be: np.ndarray = np.frombuffer(bytes(byte_enable), dtype=np.uint8) != 0
    if len(be) == 0:          # np.resize's result for an empty pattern: nothing enabled
        return np.zeros(n, dtype=bool)
    if len(be) > n:
        be = be[:n]
    if be.all():
        return None
    if len(be) == n:
        return be
    mask: np.ndarray = np.tile(be, -(-n // len(be)))[:n]
    return mask


def move_payload(p: GenericPayload, mv: memoryview, array: np.ndarray, a: int,
                 streaming: bool = False) -> int:
    """Move ``p``'s data to or from a byte store (``mv`` and ``array`` view the same bytes)
    at offset ``a``; byte enables are honoured, and with ``streaming`` the address wraps
    every ``streaming_width`` bytes (for a write, the last byte to an address wins).
    Returns the bytes moved (enabled bytes). Any target backed by a byte array uses this."""
    n = p.length
    cmd = p.command
    if cmd not in (READ, WRITE):
        return 0
    mask = byte_enable_mask(p.byte_enable, n)
    if mask is None and not streaming:
        if cmd == READ:
            as_bytes_view(p.data, n)[:] = mv[a:a + n]
        else:
            mv[a:a + n] = as_bytes_view(p.data, n)
        return n
    if mask is not None and not mask.any():
        return 0                  # nothing enabled (e.g. a timing-only write)
    idx = a + (np.arange(n) % p.streaming_width if streaming else np.arange(n))
    buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
    if cmd == READ:
        if mask is None:
            buf[:] = array[idx]
        else:
            buf[mask] = array[idx[mask]]
    elif mask is None:
        array[idx] = buf
    else:
        array[idx[mask]] = buf[mask]
    return int(n if mask is None else mask.sum())


class Memory(Module):
    """``size`` bytes at local addresses ``[0, size)``.

    Timing: ``latency`` cycles of ``clock`` per access plus occupancy ``ceil(len/width)``
    cycles (see :mod:`tlm.timing`); without a clock, ``latency`` is in ps. A read-only memory
    (ROM) answers writes with COMMAND_ERROR; debug writes (loaders) still reach it.
    Byte enables and streaming width follow TLM-2.0. Statistics: reads, writes, bytes_read,
    bytes_written, errors."""

    def __init__(self, parent: "Module | Simulator", name: str, size: int, *,
                 clock: Clock | None = None, latency: int = 0, width: int | None = None,
                 read_only: bool = False, dmi: bool = True, max_bindings: int = 64,
                 contention: bool = True, response_delay: int = 0, optional: bool = False):
        super().__init__(parent, name)
        if size <= 0:
            raise ValueError(f"{self.path}: size must be > 0, got {size}")
        self.size = size
        self._buf = bytearray(size)
        self.array = np.frombuffer(self._buf, dtype=np.uint8)
        self._mv = memoryview(self._buf)
        self.timing = HopTiming(clock, latency, width, contention, self.path)
        self.read_only = read_only
        self.dmi_enabled = dmi
        self.response_delay = response_delay  # extra ps before BEGIN_RESP in nb mode
        self.socket = TargetSocket(self, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.transport_dbg,
                                   get_direct_mem_ptr=self.get_direct_mem_ptr,
                                   nb_transport_fw=self.nb_transport_fw,
                                   max_bindings=max_bindings, optional=optional)
        self.reads = self.writes = self.bytes_read = self.bytes_written = 0
        self._nb_busy: GenericPayload | None = None
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _stat_values(self) -> dict[str, int]:
        return {"reads": self.reads, "writes": self.writes, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written, "busy_ps": self.timing.busy_time}

    # ----- data movement (shared by b_transport, nb_transport and debug) -----------------
    def _check(self, p: GenericPayload, debug: bool) -> bool:
        # debug accesses (transport_dbg) ignore streaming width and byte enables, and set
        # the status without logging an error: they have no side effects
        def fail(status: Status, reason: str) -> bool:
            if debug:
                p.status = status
            else:
                record_error(self.sim, p, self.path, status, reason)
            return False

        a, n = p.address, p.length
        sw = p.streaming_width
        span = sw if not debug and sw is not None and 0 < sw < n else n  # bytes addressed
        if n <= 0 or a < 0 or a + span > self.size:
            return fail(Status.ADDRESS_ERROR,
                        "zero-length access" if n <= 0 else f"outside [0, 0x{self.size:x})")
        if p.command == WRITE and self.read_only and not debug:
            return fail(Status.COMMAND_ERROR, "write to read-only memory")
        if p.command not in (READ, WRITE, Command.IGNORE):
            return fail(Status.COMMAND_ERROR, f"unknown command {p.command!r}")
        if not debug and sw is not None and sw <= 0:
            return fail(Status.BURST_ERROR, "streaming width must be > 0")
        if not debug and p.byte_enable is not None and len(p.byte_enable) == 0:
            return fail(Status.BYTE_ENABLE_ERROR, "empty byte-enable array")
        if p.command != Command.IGNORE and (p.data is None or memoryview(p.data).nbytes < n):
            return fail(Status.GENERIC_ERROR, f"data buffer shorter than length {n}")
        return True

    def _move(self, p: GenericPayload) -> None:
        moved = move_payload(p, self._mv, self.array, p.address,
                             streaming=p.streaming_width is not None and p.streaming_width < p.length)
        if p.command == READ:
            self.reads += 1
            self.bytes_read += moved
        elif p.command == WRITE:
            self.writes += 1
            self.bytes_written += moved

    # ----- TLM interfaces -------------------------------------------------------------------
    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        a = p.address
        n = p.length
        # fast path: a bytearray buffer, in range, no byte enables or streaming width
        data = p.data
        if (data.__class__ is bytearray and p.byte_enable is None and n > 0 and a >= 0
                and a + n <= self.size and (p.streaming_width is None or p.streaming_width >= n)
                and len(data) >= n):
            cmd = p.command
            if cmd == READ:
                data[:n] = self._mv[a:a + n]
                self.reads += 1
                self.bytes_read += n
            elif cmd == WRITE and not self.read_only:
                self._mv[a:a + n] = data if len(data) == n else memoryview(data)[:n]
                self.writes += 1
                self.bytes_written += n
            else:
                return self._b_slow(p, delay)
            p.status = OK
            p.dmi_allowed = self.dmi_enabled
            return self.timing.apply(p, delay, self.sim.now)
        return self._b_slow(p, delay)

    def _b_slow(self, p: GenericPayload, delay: int) -> int:
        if self._check(p, False):
            self._move(p)
            p.status = OK
            p.dmi_allowed = self.dmi_enabled
            return self.timing.apply(p, delay, self.sim.now)
        return delay

    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug access: no time, no statistics; writes reach read-only memory (loaders)."""
        if p.command == Command.IGNORE or not self._check(p, True):
            return 0
        n = p.length
        a = p.address
        if p.command == READ:
            as_bytes_view(p.data, n)[:] = self._mv[a:a + n]
        else:
            self._mv[a:a + n] = as_bytes_view(p.data, n)
        p.status = OK
        return n

    def get_direct_mem_ptr(self, p: GenericPayload) -> DmiRegion | None:
        if not self.dmi_enabled or not 0 <= p.address < self.size:
            return None
        lat = self.timing.latency_ps()
        return DmiRegion(0, self.size - 1, self.array, True, not self.read_only, lat, lat)

    def invalidate_dmi(self, start: int = 0, end: int | None = None) -> None:
        """Revoke DMI regions over [start, end] (e.g. before the memory is powered off)."""
        self.socket.invalidate_direct_mem_ptr(start, self.size - 1 if end is None else end)

    def set_dmi(self, enabled: bool) -> None:
        if not enabled:
            self.invalidate_dmi()
        self.dmi_enabled = enabled

    def nb_transport_fw(self, p: GenericPayload, phase: Phase, delay: int) -> tuple[Sync, Phase, int]:
        """Approximately-timed base protocol: BEGIN_REQ is accepted at once (END_REQ via the
        return path); BEGIN_RESP follows on the backward path after the access time;
        the initiator's END_RESP (or COMPLETED) ends the transaction."""
        if phase == Phase.BEGIN_REQ:
            if self._check(p, False):
                self._move(p)
                p.status = OK
            resp_at = self.timing.apply(p, delay, self.sim.now) + self.response_delay
            self.sim.schedule(max(resp_at, 1), self._send_response, p)
            return Sync.UPDATED, Phase.END_REQ, delay
        if phase == Phase.END_RESP:
            return Sync.COMPLETED, Phase.END_RESP, delay
        return Sync.ACCEPTED, phase, delay

    def _send_response(self, p: GenericPayload) -> None:
        self.socket.nb_transport_bw(p, Phase.BEGIN_RESP, 0)

    # ----- loaders -------------------------------------------------------------------------
    def load(self, offset: int, data: Any) -> None:
        """Copy bytes into the memory (no time; like a debug write)."""
        mv = memoryview(data).cast("B")
        if offset < 0 or offset + len(mv) > self.size:
            raise ValueError(f"{self.path}: load of {len(mv)} bytes at 0x{offset:x} exceeds "
                             f"size 0x{self.size:x}")
        self._mv[offset:offset + len(mv)] = mv

    def dump(self, offset: int, length: int) -> bytes:
        if offset < 0 or offset + length > self.size:
            raise ValueError(f"{self.path}: dump of {length} bytes at 0x{offset:x} exceeds "
                             f"size 0x{self.size:x}")
        return bytes(self._mv[offset:offset + length])
