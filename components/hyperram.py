"""HyperRAM (L3) device model: a TLM target for HyperBus transactions.

One ``b_transport`` is one HyperBus transaction (one CS# low period): a linear burst of
``length`` bytes at a byte address of the device. Timing, in clocks of the HyperBus clock
CK (docs/hyperram_udma.md has the derivation)::

    clocks = CA + LAT * (2 if doubled else 1) + ceil((address % 2 + length) / 2)
             + row_cross_clocks * (rows crossed by the burst)

* CA: the 48-bit command/address phase, 6 bytes on the 8-bit DDR bus = 3 clocks.
* LAT: the initial access latency (``initial_latency`` clocks). The device asks for twice
  that by driving RWDS high during CA: always in ``fixed`` latency mode, and in ``variable``
  mode only when the transaction starts while an internal refresh is running (refreshes
  are due every ``refresh_interval``, last ``initial_latency`` clocks, and wait for CS# to
  go high when they fall inside a transaction): deterministic, no RNG.
* DDR data: one 16-bit word per clock; a burst that starts at an odd byte wastes the
  masked first byte.
* Bursts are serialised on the bus: a transaction starts at
  ``max(arrival, end of the previous one + cs_high_clocks)``.
* tCSM: a transaction whose CS# low time exceeds ``t_csm`` would starve the refresh, so the
  device refuses it with BURST_ERROR (the real part would lose data). Controllers split
  transfers into bursts of at most :meth:`HyperRamParams.max_burst_bytes`.

Data lives in a numpy ``uint8`` array (``array``); it can be loaded from and saved to
``.bin`` (raw bytes) or ``.npy`` files. Out-of-range or zero-length accesses get
ADDRESS_ERROR (the real part would wrap around: silent corruption we refuse to model).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping

import numpy as np

from tlm.clock import Clock
from tlm.files import FileAccessError, load_npy, read_bytes
from tlm.memory import as_bytes_view, byte_enable_mask
from tlm.module import Module
from tlm.params import ParameterError, freq_field, param, resolve, time_field
from tlm.payload import OK, READ, WRITE, Command, GenericPayload, Status, record_error
from tlm.sockets import TargetSocket
from tlm.units import period_ps

if TYPE_CHECKING:
    from tlm.kernel import Simulator

__all__ = ["HyperRam", "HyperRamParams", "burst_clocks"]




@dataclass
class HyperRamParams:
    """HyperRAM device parameters (defaults: a 64 Mbit part at 166 MHz)."""

    # 64 Mbit part; a platform sets its memory map's hyperram size
    capacity: int = param(8 << 20, "capacity in bytes (memory map: hyperram)", lo=1, hi=1 << 30)
    freq_hz: float = freq_field(166e6, "HyperBus clock CK in Hz (2 bytes per clock)")
    max_freq_hz: float = freq_field(200e6, "rated maximum CK; a faster freq_hz is an error")
    ca_clocks: int = param(3, "command/address phase in CK clocks (48 bit on 8-bit DDR)", lo=1, hi=16)
    initial_latency: int = param(6, "initial access latency tACC in CK clocks (6 at 166 MHz)", lo=1, hi=64)
    latency_mode: Literal["fixed", "variable"] = param(
        "fixed", "fixed: latency always doubled; variable: doubled on a refresh collision")
    refresh_interval: int = time_field(7_812_500, "row refresh interval (64 ms / 8192 rows)")
    t_csm: int = time_field(4_000_000, "max CS# low time tCSM; longer bursts: BURST_ERROR")
    cs_high_clocks: int = param(1, "min CS# high time tCSHI between transactions, CK clocks", lo=0, hi=64)
    row_bytes: int = param(1024, "row (page) size in bytes", lo=1, hi=1 << 20)
    row_cross_clocks: int = param(0, "stall clocks per row boundary a burst crosses (0: none)", lo=0, hi=64)
    load_file: str | None = param(None, "image loaded at construction (.bin raw bytes or .npy)")
    load_offset: int = param(0, "byte offset of the loaded image", lo=0, hi=1 << 30)
    save_file: str | None = param(None, "default destination of HyperRam.save() (.bin or .npy)")

    @property
    def period(self) -> int:
        """CK period in ps."""
        return period_ps(self.freq_hz)

    def max_burst_bytes(self) -> int:
        """The largest even burst whose worst-case CS# low time (odd start address, doubled
        latency, most row crossings) fits in ``t_csm``: what a controller may issue."""
        avail = self.t_csm // self.period

        def worst(n: int) -> int:
            crossings = (n + self.row_bytes - 2) // self.row_bytes if n > 0 else 0
            return (self.ca_clocks + 2 * self.initial_latency + n // 2 + 1
                    + self.row_cross_clocks * crossings)

        lo, hi = 0, self.capacity
        while lo < hi:  # largest n with worst(n) <= avail (worst is monotonic)
            mid = (lo + hi + 1) // 2
            if worst(mid) <= avail:
                lo = mid
            else:
                hi = mid - 1
        return lo & ~1

    def validate(self) -> None:
        if self.capacity <= 0:
            raise ValueError(f"capacity must be > 0, got {self.capacity}")
        if not 0 < self.freq_hz <= self.max_freq_hz:
            raise ValueError(f"freq_hz {self.freq_hz / 1e6:g} MHz is outside (0, "
                             f"{self.max_freq_hz / 1e6:g} MHz] (max_freq_hz, the part's rating)")
        for name in ("ca_clocks", "initial_latency", "row_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("cs_high_clocks", "row_cross_clocks", "load_offset"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.max_burst_bytes() < 2:
            raise ValueError(f"t_csm {self.t_csm} ps is too short for a single word at "
                             f"{self.freq_hz / 1e6:g} MHz")
        # at most one refresh may be postponed by a transaction (see _refresh_collides)
        t_rfc = self.initial_latency * self.period
        if self.refresh_interval <= self.t_csm + 2 * t_rfc:
            raise ValueError(f"refresh_interval ({self.refresh_interval} ps) must exceed t_csm "
                             f"+ 2 refresh times ({self.t_csm + 2 * t_rfc} ps)")
        for name in ("load_file", "save_file"):
            f = getattr(self, name)
            if f is not None and Path(f).suffix.lower() not in (".bin", ".npy"):
                raise ValueError(f"{name} {f!r}: use a .bin or .npy file")


def burst_clocks(p: HyperRamParams, address: int, length: int, doubled: bool) -> int:
    """CK clocks of one transaction (CS# low time), per the formula in the module doc."""
    rows = (address + length - 1) // p.row_bytes - address // p.row_bytes
    return (p.ca_clocks + p.initial_latency * (2 if doubled else 1)
            + (address % 2 + length + 1) // 2 + p.row_cross_clocks * rows)


class HyperRam(Module):
    """The HyperRAM device. Bind a HyperBus initiator (normally a link channel from the
    uDMA) to ``socket``. ``params`` is a :class:`HyperRamParams` or a mapping of overrides.

    Statistics: reads, writes, bytes_read, bytes_written, bursts, latency_cycles (initial
    latency clocks, doubled ones counted twice), doubled_latency, refreshes, busy_ps, errors.
    """

    def __init__(self, parent: "Module | Simulator", name: str,
                 params: HyperRamParams | Mapping[str, Any] | None = None, *,
                 clock: Clock | None = None):
        super().__init__(parent, name)
        if not isinstance(params, HyperRamParams):
            params = resolve(HyperRamParams, params, self.path)
        self.params = params
        # CK is generated by the controller only while CS# is low, so bursts need no edge
        # alignment; the Clock serves the cycle <-> time conversion.
        self.clock = clock or Clock(self.sim, f"{self.path}.ck", params.freq_hz)
        self.array = np.zeros(params.capacity, dtype=np.uint8)
        self.socket = TargetSocket(self, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.transport_dbg, max_bindings=4)
        self._bus_free: int | None = None   # end of the last transaction (CS# high)
        self._next_refresh = params.refresh_interval
        self._refresh_end = 0               # end of the latest refresh
        self.reads = self.writes = self.bytes_read = self.bytes_written = 0
        self.bursts = self.latency_cycles = self.doubled_latency = 0
        self.refreshes = self.busy_ps = self.errors = 0
        self.sim.stats.add_provider(self.path, self._stat_values)
        if params.load_file is not None:
            self.load_file(params.load_file, params.load_offset)

    def _stat_values(self) -> dict:
        return {"reads": self.reads, "writes": self.writes, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written, "bursts": self.bursts,
                "latency_cycles": self.latency_cycles, "doubled_latency": self.doubled_latency,
                "refreshes": self.refreshes, "busy_ps": self.busy_ps, "errors": self.errors}

    # ----- timing ----------------------------------------------------------------------------
    def _refresh_collides(self, start: int) -> bool:
        """Variable latency: True when a refresh is running at ``start`` (CS# falling).
        Refreshes due while CS# was low wait for the end of that transaction."""
        p = self.params
        nxt = self._next_refresh
        if nxt <= start:
            t_rfc = self.clock.cycles(p.initial_latency)
            count = (start - nxt) // p.refresh_interval + 1
            bus_free = self._bus_free if self._bus_free is not None else 0
            end = max(nxt, bus_free, self._refresh_end) + t_rfc
            if count > 1:  # later ones fell in idle time (validate() guarantees it): on time
                end = nxt + (count - 1) * p.refresh_interval + t_rfc
            self._refresh_end = end
            self._next_refresh = nxt + count * p.refresh_interval
            self.refreshes += count
        return start < self._refresh_end

    # ----- TLM interface -----------------------------------------------------------------------
    def _check(self, p: GenericPayload) -> bool:
        a, n = p.address, p.length
        if n <= 0 or a < 0 or a + n > self.params.capacity:
            cap = self.params.capacity
            reason = ("zero-length access" if n <= 0 else
                      f"[0x{a:x}, 0x{a + n:x}) is outside the device [0, 0x{cap:x})")
            record_error(self.sim, p, self.path, Status.ADDRESS_ERROR, reason)
        elif p.command not in (READ, WRITE):
            record_error(self.sim, p, self.path, Status.COMMAND_ERROR,
                         f"command {Command(p.command).name} is not a HyperBus transaction")
        elif p.streaming_width is not None and p.streaming_width < n:
            record_error(self.sim, p, self.path, Status.BURST_ERROR,
                         "streaming width < length: HyperBus bursts here are linear only")
        elif p.byte_enable is not None and len(p.byte_enable) == 0:
            record_error(self.sim, p, self.path, Status.BYTE_ENABLE_ERROR,
                         "empty byte-enable array")
        else:
            return True
        self.errors += 1
        return False

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        if not self._check(p):
            return delay
        prm = self.params
        a, n = p.address, p.length
        arrive = self.sim.now + delay
        start = arrive
        if self._bus_free is not None:
            start = max(arrive, self._bus_free + self.clock.cycles(prm.cs_high_clocks))
        doubled = prm.latency_mode == "fixed" or self._refresh_collides(start)
        clocks = burst_clocks(prm, a, n, doubled)
        duration = self.clock.cycles(clocks)
        if duration > prm.t_csm:
            self.errors += 1
            record_error(self.sim, p, self.path, Status.BURST_ERROR,
                         f"burst of {n} bytes keeps CS# low {duration} ps > tCSM {prm.t_csm} ps")
            return delay
        self._move(p)
        self._bus_free = start + duration
        self.bursts += 1
        lat = prm.initial_latency * (2 if doubled else 1)
        self.latency_cycles += lat
        self.doubled_latency += doubled
        self.busy_ps += duration
        p.status = OK
        tr = self.sim.tracer
        if tr is not None:
            tr.span(self.path, "read" if p.command == READ else "write", start, start + duration,
                    address=a, length=n, doubled=doubled)
        return delay + (start - arrive) + duration

    def _move(self, p: GenericPayload) -> None:
        a, n = p.address, p.length
        buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
        mask = byte_enable_mask(p.byte_enable, n)  # RWDS masks bytes of write data; reads leave them
        if p.command == READ:
            if mask is None:
                buf[:] = self.array[a:a + n]
            else:
                buf[mask] = self.array[a:a + n][mask]
            self.reads += 1
            self.bytes_read += n
        else:
            if mask is None:
                self.array[a:a + n] = buf
            else:
                self.array[a:a + n][mask] = buf[mask]
            self.writes += 1
            self.bytes_written += n

    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug access: no time, no statistics."""
        a, n = p.address, p.length
        if n <= 0 or a < 0 or a + n > self.params.capacity or p.command not in (READ, WRITE):
            return 0
        buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
        if p.command == READ:
            buf[:] = self.array[a:a + n]
        else:
            self.array[a:a + n] = buf
        p.status = OK
        return n

    # ----- contents -------------------------------------------------------------------------------
    def load(self, offset: int, data: Any) -> None:
        """Copy bytes (anything bytes-like, or a numpy array as its raw bytes) in, no time."""
        if isinstance(data, np.ndarray):
            raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        else:
            raw = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        if offset < 0 or offset + raw.size > self.params.capacity:
            raise ValueError(f"{self.path}: {raw.size} bytes at 0x{offset:x} do not fit the "
                             f"0x{self.params.capacity:x}-byte device")
        self.array[offset:offset + raw.size] = raw

    def dump(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.params.capacity:
            raise ValueError(f"{self.path}: dump of {length} bytes at 0x{offset:x} exceeds "
                             f"0x{self.params.capacity:x}")
        return self.array[offset:offset + length].tobytes()

    def load_file(self, path: str | Path, offset: int = 0) -> int:
        """Load a ``.bin`` (raw bytes) or ``.npy`` (any dtype, its raw C-order bytes) image
        at ``offset``. Returns the number of bytes loaded. A missing file, another
        extension, or an image that does not fit is a :class:`ParameterError`."""
        key = f"{self.path}.load_file"
        path = Path(path)
        if not path.exists():
            raise ParameterError(f"HyperRAM image {str(path)!r} does not exist", key)
        suffix = path.suffix.lower()
        if suffix not in (".npy", ".bin"):
            raise ParameterError(f"HyperRAM image {str(path)!r}: use a .bin or .npy file", key)
        try:        # bounded (tlm.files): a regular file of at most the data cap, no pickles
            if suffix == ".npy":
                raw = np.ascontiguousarray(load_npy(path, "data")).reshape(-1).view(np.uint8)
            else:
                raw = np.frombuffer(read_bytes(path, "data"), dtype=np.uint8)
        except FileAccessError as e:
            raise ParameterError(f"HyperRAM image {e}", key) from None
        cap = self.params.capacity
        if offset < 0 or offset + raw.size > cap:
            raise ParameterError(
                f"size mismatch: image {str(path)!r} holds {raw.size} bytes, which at offset "
                f"0x{offset:x} exceed the {cap}-byte (0x{cap:x}) device", key)
        self.array[offset:offset + raw.size] = raw
        return int(raw.size)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the whole device to ``path`` (default: the ``save_file`` parameter) as
        ``.bin`` raw bytes or a ``.npy`` uint8 array. Returns the path written."""
        key = f"{self.path}.save_file"
        if path is None:
            if self.params.save_file is None:
                raise ParameterError("no path given and no save_file parameter set", key)
            path = self.params.save_file
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".npy":
            np.save(path, self.array, allow_pickle=False)
        elif suffix == ".bin":
            self.array.tofile(path)
        else:
            raise ParameterError(f"cannot save to {str(path)!r}: use a .bin or .npy file", key)
        return path
