"""The MARSELLUS SOC core (fabric controller): real RV32IMC firmware on ``unicorn``, as a
TLM-2.0 initiator.

How it works (docs/firmware.md has the long version):

* **Memory.** Regions named in ``local_regions`` (default: the FC's private L2 bank) are
  plain RAM inside the emulator, backed by a :class:`tlm.Memory` child (zero-copy: its
  numpy array *is* the emulator's memory). Other memories (shared L2, TCDM, ROM) are mapped
  zero-copy through DMI when their target grants it. Everything else in the memory map
  (peripherals, memories without DMI) is MMIO: each access becomes a ``b_transport`` on
  :attr:`SocCore.socket`.
* **The async bridge.** ``b_transport`` is a coroutine, unicorn callbacks are synchronous.
  A memory access (no side effects) runs the coroutine right inside the callback; when the
  target completes without waiting (memories, register banks, routers) that is the whole
  story. When a target suspends (e.g. a link to the cluster) — and before every peripheral
  access when ``sync_on_io`` is set — the callback stops the emulator. unicorn aborts the
  access instruction (the PC stays on it), the core's process awaits the transaction (or
  first synchronises time), then resumes the emulator, which re-executes the instruction:
  its callback is answered from the completed transaction, so every access happens
  exactly once.
* **Time.** Instructions are counted exactly (a translation-block hook plus the stop PC),
  time advances by instructions x ``cpi`` cycles of the core clock plus the latency the
  targets annotate, through a :class:`tlm.QuantumKeeper`. Runs are cut by instruction
  counts computed from the quantum boundary, never by wall-clock time, so a given ELF gives
  the same instruction counts and times on every machine and in every process.
* **Interrupts** (machine mode): lines 0..31 of ``mip`` are driven by Events (edge:
  latched, cleared when the trap is taken) or Signals (level). Between runs, if
  ``mstatus.MIE`` and ``mie & mip`` select a line, the core takes the trap itself (mepc,
  mcause, mstatus.MPIE/MIE/MPP, pc = mtvec, direct or vectored); the firmware returns with
  ``mret`` (executed by unicorn). ``wfi`` with nothing pending idles until an interrupt
  line or an exit request: simulated time jumps, nothing spins.
* **Faults** (illegal instruction, access fault = a TLM error response or an address no
  region maps, fetch from unmapped/non-executable memory, ebreak/ecall, instruction limit)
  stop the core with a :class:`FirmwareFault` record (PC, instruction word, simulated time,
  address, symbol) and, by default, raise :class:`FirmwareFaultError`.
* **Exit.** A peripheral (stdout EOC / soc_ctrl CORESTATUS) or the platform calls
  :meth:`SocCore.request_exit` when the firmware writes its exit code; the core retires
  that store and stops.
"""
from __future__ import annotations

import bisect
import ctypes
import dataclasses
import types
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from tlm import (READ, WRITE, Clock, Event, GenericPayload, InitiatorSocket, Memory, Module,
                 QuantumKeeper, Signal, SimulationError, Status, fmt_time)
from tlm.params import resolve, time_field
from tlm.units import US

from components.marsellus.memory_map import MEMORY_MAP, MemoryMap, Region
from components.soc_core_counter import add_counter_hook
from components.soc_core_elf import ElfImage, load_elf

try:  # unicorn is an optional extra ("iss"); the error below says how to get it
    import unicorn as _uc
    from unicorn import riscv_const as _rv
except ImportError:  # pragma: no cover - exercised only without the extra
    _uc = None
    _rv = None

__all__ = ["SocCore", "SocCoreParams", "FirmwareFault", "FirmwareFaultError", "IRQ_LINES",
           "irq_number"]

PAGE = 0x1000
MASK32 = 0xFFFFFFFF

#: Interrupt lines of the fabric controller (bit numbers of mip/mie). The firmware header
#: (firmware/include/marsellus_map.h) is generated from this table. Lines 16..31 are the
#: CV32E40P "fast" local interrupts PULP uses for its peripherals.
IRQ_LINES: dict[str, tuple[int, str]] = {
    "software":    (3,  "machine software interrupt (MSIP)"),
    "timer":       (7,  "SOC timer compare (MTIP)"),
    "external":    (11, "generic external interrupt (MEIP)"),
    "cluster_dma": (16, "cluster DMA end of transfer"),
    "rbe":         (17, "RBE end of job (through the cluster Event Unit)"),
    "cluster":     (18, "cluster end of job / Event Unit event to the FC"),
    "udma":        (19, "I/O DMA (uDMA) channel done"),
    "pmu":         (20, "PMU event (domain switched, ABB alert)"),
    "gpio":        (21, "GPIO"),
}
#: Priority when several enabled lines are pending (highest first; CV32E40P order).
_PRIORITY = list(range(31, 15, -1)) + [11, 3, 7]

CSR_MSTATUS, CSR_MIE, CSR_MIP = 0x300, 0x304, 0x344
#: Counter CSRs read deterministically by the core (unicorn would return host ticks):
#: mcycle/cycle, minstret/instret and their high halves. Writes are ignored.
CSR_COUNTERS = {0xB00: ("cycles", 0), 0xB80: ("cycles", 32), 0xC00: ("cycles", 0),
                0xC80: ("cycles", 32), 0xB02: ("instret", 0), 0xB82: ("instret", 32),
                0xC02: ("instret", 0), 0xC82: ("instret", 32)}
MSTATUS_MIE = 1 << 3
MSTATUS_MPIE = 1 << 7
MSTATUS_MPP = 3 << 11
WFI = 0x10500073
EBREAK, C_EBREAK, ECALL = 0x00100073, 0x9002, 0x00000073

_EXC_NAMES = {0: "instruction_misaligned", 1: "fetch_fault", 2: "illegal_instruction",
              3: "breakpoint", 4: "load_misaligned", 5: "access_fault", 6: "store_misaligned",
              7: "access_fault", 8: "ecall", 9: "ecall", 11: "ecall", 12: "fetch_fault",
              13: "access_fault", 15: "access_fault"}


def irq_number(line: int | str) -> int:
    """``'timer'`` -> 7; an int is checked and returned."""
    if isinstance(line, str):
        try:
            return IRQ_LINES[line][0]
        except KeyError:
            raise SimulationError(f"unknown interrupt line {line!r}; known: "
                                  f"{', '.join(IRQ_LINES)}") from None
    if not 0 <= line < 32:
        raise SimulationError(f"interrupt line {line} outside 0..31")
    return line


@dataclass
class SocCoreParams:
    """Parameters of the SOC core (path ``soc.fc`` in the MARSELLUS platform)."""

    cpi: float = field(default=1.25, metadata={"doc": "average cycles per instruction "
                       "(CV32E40P-class 4-stage pipeline: load-use and taken-branch stalls)"})
    quantum: int = time_field(1 * US, "run length between synchronisations when the "
                              "simulator has no global quantum")
    max_run_instructions: int = field(default=100_000, metadata={
        "doc": "upper bound of instructions per emulator run"})
    sync_on_io: bool = field(default=True, metadata={
        "doc": "synchronise simulated time before every peripheral access (exact ordering "
               "with other processes); false: loosely timed with an annotated delay"})
    dmi: bool = field(default=True, metadata={"doc": "map DMI-capable memories straight "
                                              "into the emulator"})
    local_regions: tuple = field(default=(), metadata={
        "doc": "memory-map regions the core holds as its own RAM (standalone use, e.g. "
               "('l2_private',)); by default every memory comes through the socket, by DMI"})
    max_instructions: int = field(default=0, metadata={
        "doc": "stop with an 'instruction_limit' fault after this many (0: no limit)"})
    on_fault: Literal["raise", "stop"] = field(default="raise", metadata={
        "doc": "raise: a fault raises FirmwareFaultError (the run fails); stop: record it "
               "in .fault, stop the simulation"})
    stop_on_exit: bool = field(default=True, metadata={
        "doc": "stop the simulation when the firmware exits"})
    counting: Literal["auto", "native", "python"] = field(default="auto", metadata={
        "doc": "instruction counting: a native 5-byte hook (x86-64 Linux, fast), a Python "
               "translation-block hook (portable), or auto (native when available)"})

    def validate(self) -> None:
        if not self.cpi > 0:
            raise ValueError(f"cpi must be > 0, got {self.cpi}")
        if self.quantum <= 0:
            raise ValueError(f"quantum must be > 0 ps, got {self.quantum}")
        if self.max_run_instructions < 1:
            raise ValueError("max_run_instructions must be >= 1")
        if self.max_instructions < 0:
            raise ValueError("max_instructions must be >= 0")


@dataclass(frozen=True)
class FirmwareFault:
    """Why the firmware stopped abnormally. ``kind``: illegal_instruction, access_fault,
    fetch_fault, breakpoint, ecall, misaligned variants, instruction_limit, exception."""

    kind: str
    pc: int
    instruction: int | None
    time: int
    instret: int
    address: int | None = None
    access: str | None = None          # 'read', 'write' or 'fetch'
    status: str | None = None          # TLM response status of an access fault
    symbol: str | None = None          # function+offset of the PC
    detail: str = ""

    def message(self) -> str:
        insn = ("?" if self.instruction is None else
                f"0x{self.instruction:04x}" if self.instruction < 0x10000 and
                (self.instruction & 3) != 3 else f"0x{self.instruction:08x}")
        where = f" ({self.symbol})" if self.symbol else ""
        s = f"firmware {self.kind.replace('_', ' ')} at pc=0x{self.pc:08x}{where}, insn={insn}"
        if self.address is not None:
            s += f", {self.access or 'access'} address 0x{self.address:08x}"
        if self.status:
            s += f" -> {self.status}"
        if self.detail:
            s += f": {self.detail}"
        return s + f", after {self.instret} instructions at {fmt_time(self.time)}"

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["message"] = self.message()
        return d


class FirmwareFaultError(SimulationError):
    """Raised (from the core's process) when the firmware faults; ``.fault`` is the record."""

    def __init__(self, fault: FirmwareFault, path: str):
        self.fault = fault
        super().__init__(fault.message(), path, fault.time)


# Stop reasons of one emulator run
_R_COUNT, _R_IO, _R_WFI, _R_FAULT, _R_EXIT, _R_REMAP = range(6)


@types.coroutine
def _finish(coro, first):
    """Drive a coroutine that already yielded ``first`` to completion, re-yielding what it
    waits on to the kernel from the calling process (the rest of an async b_transport)."""
    y = first
    while True:
        yield y
        try:
            y = coro.send(None)
        except StopIteration as stop:
            return stop.value


class _Access:
    """A memory access the emulator asked for and that is being (or has been) served."""

    __slots__ = ("address", "size", "write", "value", "pc", "region", "done", "coro", "first",
                 "status", "sync")

    def __init__(self, address: int, size: int, write: bool, value: int, pc: int,
                 region: Region | None, sync: bool):
        self.address = address
        self.size = size
        self.write = write
        self.value = value
        self.pc = pc
        self.region = region
        self.done = False
        self.coro = None
        self.first = None
        self.status = Status.INCOMPLETE
        self.sync = sync


class SocCore(Module):
    """The fabric controller. ``socket`` is its initiator socket onto the SOC interconnect.

    ``SocCore(parent, name, clock=soc_clock, elf='firmware/build/hello.elf')``; interrupt
    lines with :meth:`connect_irq` / :meth:`raise_irq` / :meth:`set_irq`; the exit hook is
    :meth:`request_exit`. After the run: ``exit_code``, ``fault``, ``instret``, ``state``.
    """

    def __init__(self, parent, name: str = "fc", *, clock: Clock,
                 elf: str | Path | bytes | ElfImage | None = None,
                 params: SocCoreParams | dict | None = None,
                 memory_map: MemoryMap = MEMORY_MAP,
                 private_memory: Any = None):
        super().__init__(parent, name)
        if _uc is None:
            raise SimulationError("the SOC core needs the 'unicorn' package (pip install "
                                  "'tlm-cosim[iss]' or pip install 'unicorn>=2.1,<2.2')",
                                  self.path)
        if isinstance(params, SocCoreParams):
            params.validate()
            self.params = params
        else:
            self.params = resolve(SocCoreParams, params, self.path)
        self.clock = clock
        self.memory_map = memory_map
        self.socket = InitiatorSocket(self, "socket", invalidate_direct_mem_ptr=self._invalidate)
        self.image: ElfImage | None = None
        self._cpi = Fraction(self.params.cpi).limit_denominator(1000)

        # local RAM regions: tlm.Memory children (or the given memory for the first one)
        self.local: dict[str, Memory] = {}
        for i, rname in enumerate(self.params.local_regions):
            if rname not in memory_map:
                raise SimulationError(f"local region {rname!r} is not in the memory map",
                                      self.path)
            reg = memory_map[rname]
            if reg.base % PAGE or reg.size % PAGE:
                raise SimulationError(f"local region {rname} must be 4 KiB aligned", self.path)
            mem = private_memory if (i == 0 and private_memory is not None) else None
            if mem is None:
                mem = Memory(self, rname, reg.size)
                mem.socket.optional = True  # others may bind it (e.g. the uDMA); not required
            elif getattr(mem, "array", None) is None or mem.array.dtype.itemsize != 1:
                raise SimulationError("private_memory needs a uint8 numpy .array (a "
                                      "tlm.Memory or a BankedMemory)", self.path)
            elif mem.array.size < reg.size:
                raise SimulationError(f"private memory {mem.path} is smaller than region "
                                      f"{rname} (0x{reg.size:x} bytes)", self.path)
            self.local[rname] = mem

        # architectural/run state
        self.state = "reset"          # reset, running, wfi, exited, faulted, halted
        self.exit_code: int | None = None
        self.exit_time: int | None = None
        self.fault: FirmwareFault | None = None
        self.instret = 0
        self.cycles = 0
        self.done = self.event("done")            # notified when the core stops
        self._wake = self.event("wake")
        self._mie = 0                             # mie (all 32 bits; see _on_csr)
        self._csr_ops: dict[int, tuple[int, int, int, int]] = {}
        self._run_count = 0
        self._pending = 0                         # edge-latched interrupt lines
        self._levels = 0                          # level-sensitive lines
        self._exit_req: int | None = None
        self._qk: QuantumKeeper | None = None
        self._uc = None
        self._pc = 0
        self._cyc_rem = 0                         # fractional cycles (x cpi denominator)
        self._stall = 0                           # ps of access latency in the current run
        # instruction counting inside one emulator run
        self._blocks: dict[int, list[int]] = {}
        self._native = False
        self._counter = ctypes.c_uint64(0)       # native mode: instructions started
        self._cnt0 = 0
        self._base = 0
        self._cur: list[int] | None = None
        # access bridge state
        self._acc: _Access | None = None         # access waiting for the process
        self._replay: _Access | None = None      # completed access, answer on re-execution
        self._stop_reason = _R_COUNT
        self._exc: tuple[int, int] | None = None  # (cause, pc) from the interrupt hook
        self._invalid: tuple[int, int, int] | None = None  # (type, address, pc)
        self._hook_error: BaseException | None = None
        self._payload = GenericPayload(READ, 0, bytearray(8), 4, initiator=self.path)
        self._emulating = False
        self._dmi_maps: list[tuple[int, int, Any]] = []   # (start, end excl, array view)
        self._mmio_pages: dict[int, Region | None] = {}
        self._remap: list[tuple[int, int]] = []
        self._retry_dmi = False
        # statistics (plain attributes on the hot path)
        self.n_mmio = self.n_sync_stops = self.n_async = self.n_runs = 0
        self.n_wfi = self.n_irq = 0
        self.idle_ps = 0
        self.stall_ps = 0
        self.sim.stats.add_provider(self.path, self._stat_values)

        if elf is not None:
            self.load(elf)
        self.spawn(self._run(), "run")

    # ----- public API ---------------------------------------------------------------------
    def load(self, elf: str | Path | bytes | ElfImage) -> ElfImage:
        """Use this firmware (loaded into memory when the core starts at time 0)."""
        if self.state != "reset":
            raise SimulationError("load() after the core started", self.path, self.sim.now)
        try:
            self.image = elf if isinstance(elf, ElfImage) else load_elf(elf)
        except ValueError as e:
            raise SimulationError(str(e), self.path) from None
        for seg in self.image.segments:
            r = self.memory_map.find(seg.address, max(seg.memsz, 1))
            if r is None:
                raise SimulationError(
                    f"{self.image.path}: segment at 0x{seg.address:08x} (+0x{seg.memsz:x}) "
                    "is not inside one region of the memory map", self.path)
        return self.image

    def connect_irq(self, line: int | str, source: Any) -> None:
        """Drive interrupt ``line`` from ``source``: an :class:`Event` (or LinkEvent) is an
        edge (each notification latches the line until the trap is taken); a
        :class:`Signal` (or LinkSignal) is a level (pending while truthy)."""
        n = irq_number(line)
        if not isinstance(source, (Event, Signal)):
            inner = getattr(source, "signal", None) or getattr(source, "event", None)
            if isinstance(inner, (Event, Signal)):
                source = inner
        if isinstance(source, Signal):
            sig = source
            sig.changed.add_callback(lambda _e, n=n, s=sig: self.set_irq(n, bool(s.value)))
            if sig.value:
                self._levels |= 1 << n
        elif isinstance(source, Event):
            source.add_callback(lambda _e, n=n: self.raise_irq(n))
        else:
            raise SimulationError(f"connect_irq({line!r}): expected an Event or a Signal, "
                                  f"got {source!r}", self.path)

    def raise_irq(self, line: int | str) -> None:
        """Latch an edge on ``line`` (it stays pending until the trap is taken)."""
        n = irq_number(line)
        self._pending |= 1 << n
        self._wake.notify()

    def set_irq(self, line: int | str, level: bool) -> None:
        """Drive a level-sensitive ``line``."""
        n = irq_number(line)
        if level:
            self._levels |= 1 << n
            self._wake.notify()
        else:
            self._levels &= ~(1 << n)

    @property
    def mip(self) -> int:
        """Pending interrupt lines (edge-latched | level)."""
        return self._pending | self._levels

    def connect_exit(self, source: Any) -> None:
        """Stop when ``source`` (e.g. :class:`components.stdout.Stdout`) fires its
        ``exited`` event; its ``exit_code`` becomes the core's."""
        ev = getattr(source, "exited", None)
        if not isinstance(ev, Event):
            raise SimulationError(f"connect_exit: {source!r} has no 'exited' Event", self.path)
        ev.add_callback(lambda _e: self.request_exit(getattr(source, "exit_code", 0) or 0))

    def request_exit(self, code: int) -> None:
        """The firmware wrote its exit code (called by the EOC register's model). The core
        retires the store that did it and stops."""
        if self._exit_req is None and self.state not in ("exited", "faulted", "halted"):
            self._exit_req = code & MASK32
            self._wake.notify()

    def symbol(self, name: str) -> int:
        if self.image is None:
            raise SimulationError("no firmware loaded", self.path)
        return self.image.symbol(name)

    def read_memory(self, address: int, length: int) -> bytes:
        """Debug read of the core's view of memory (local RAM, DMI, or transport_dbg)."""
        out = bytearray(length)
        self._debug(address, out, write=False)
        return bytes(out)

    def write_memory(self, address: int, data: bytes) -> None:
        """Debug write through the core's view of memory (no time, no side effects)."""
        self._debug(address, bytearray(data), write=True)

    @property
    def pc(self) -> int:
        return self._pc

    def reg(self, name: str) -> int:
        """Read a register by ABI or CSR name ('a0', 'sp', 'mepc', ...) (after/between runs)."""
        if self._uc is None:
            raise SimulationError("the core has not started", self.path)
        if name.lower() == "mie":
            return self._mie
        if name.lower() == "mip":
            return self.mip
        if name.lower() == "pc":
            return self._pc
        return self._uc.reg_read(getattr(_rv, f"UC_RISCV_REG_{name.upper()}"))

    # ----- statistics ---------------------------------------------------------------------
    def _stat_values(self) -> dict:
        return {"instructions": self.instret, "cycles": self.cycles, "mmio_accesses": self.n_mmio,
                "sync_stops": self.n_sync_stops, "async_accesses": self.n_async,
                "emulator_runs": self.n_runs, "wfi": self.n_wfi, "interrupts": self.n_irq,
                "idle_ps": self.idle_ps, "stall_ps": self.stall_ps,
                "dmi_regions": len(self._dmi_maps)}

    # ----- set-up ---------------------------------------------------------------------------
    def _setup(self) -> None:
        uc = _uc.Uc(_uc.UC_ARCH_RISCV, _uc.UC_MODE_RISCV32)
        self._uc = uc
        ram_ranges: list[tuple[int, int]] = []
        for rname, mem in self.local.items():
            reg = self.memory_map[rname]
            uc.mem_map_ptr(reg.base, reg.size, _uc.UC_PROT_ALL, mem.array.ctypes.data)
            ram_ranges.append((reg.base, reg.end))
        # DMI for the other memories, MMIO pages for everything else
        for reg in self.memory_map.regions:
            if reg.name in self.local:
                continue
            covered = None
            if self.params.dmi and reg.kind in ("memory", "rom"):
                covered = self._map_dmi(reg.base, reg.end)
            for page in range(reg.base // PAGE, -(-reg.end // PAGE)):
                a = page * PAGE
                if covered and covered[0] <= a and a + PAGE <= covered[1]:
                    continue
                if any(lo <= a < hi for lo, hi in ram_ranges):
                    continue
                # a page shared by several small regions decodes per access
                self._mmio_pages.setdefault(page, reg)
        self._map_mmio_runs(sorted(self._mmio_pages))
        if self.params.counting != "python":
            self._native = add_counter_hook(uc, self._counter)
            if not self._native and self.params.counting == "native":
                raise SimulationError("counting='native' is not available on this machine "
                                      "(x86-64 Linux only); use 'auto'", self.path)
        if not self._native:
            uc.hook_add(_uc.UC_HOOK_BLOCK, self._on_block)
        uc.hook_add(_uc.UC_HOOK_INTR, self._on_exception)
        uc.hook_add(_uc.UC_HOOK_MEM_INVALID, self._on_invalid)
        for addr, op in self._scan_csr_ops().items():
            self._csr_ops[addr] = op
            uc.hook_add(_uc.UC_HOOK_CODE, self._on_csr, None, addr, addr)
        # load the image
        for seg in self.image.segments:
            if not seg.data:
                continue  # NOLOAD only (.l2_shared/.tcdm buffers): memory starts zeroed
            data = seg.data + bytes(seg.memsz - len(seg.data))
            self._debug(seg.address, bytearray(data), write=True, loading=True)
        self._blocks.clear()
        self._pc = self.image.entry
        uc.reg_write(_rv.UC_RISCV_REG_PC, self._pc)
        uc.reg_write(_rv.UC_RISCV_REG_MSTATUS, 3 << 11)  # machine mode, interrupts off

    def _map_dmi(self, start: int, end: int) -> tuple[int, int] | None:
        """Ask for DMI over [start, end) and map its page-aligned part; return it."""
        p = GenericPayload(READ, start, bytearray(4), 4, initiator=self.path)
        region = self.socket.get_direct_mem_ptr(p) if self.socket.target is not None else None
        if region is None or not region.read_allowed:
            return None
        lo = max(start, region.start)
        hi = min(end, region.end + 1)
        lo = -(-lo // PAGE) * PAGE
        hi = hi // PAGE * PAGE
        if hi <= lo:
            return None
        view = region.array[lo - region.start:hi - region.start]
        if not view.flags["C_CONTIGUOUS"]:
            return None
        perms = _uc.UC_PROT_READ | _uc.UC_PROT_EXEC
        if region.write_allowed:
            perms |= _uc.UC_PROT_WRITE
        self._uc.mem_map_ptr(lo, hi - lo, perms, view.ctypes.data)
        self._dmi_maps.append((lo, hi, view))
        return lo, hi

    def _map_mmio_runs(self, pages: list[int]) -> None:
        i = 0
        while i < len(pages):
            j = i
            while j + 1 < len(pages) and pages[j + 1] == pages[j] + 1:
                j += 1
            base = pages[i] * PAGE
            size = (pages[j] - pages[i] + 1) * PAGE
            self._uc.mmio_map(base, size, self._mmio_read, base, self._mmio_write, base)
            i = j + 1

    def _debug(self, address: int, buf: bytearray, *, write: bool, loading: bool = False) -> None:
        n = len(buf)
        for rname, mem in self.local.items():
            reg = self.memory_map[rname]
            if reg.contains(address, n):
                off = address - reg.base
                if write:
                    mem.array[off:off + n] = memoryview(buf)
                else:
                    buf[:] = mem.array[off:off + n].tobytes()
                return
        for lo, hi, view in self._dmi_maps:
            if lo <= address and address + n <= hi:
                if write:
                    view[address - lo:address - lo + n] = memoryview(buf)
                else:
                    buf[:] = view[address - lo:address - lo + n].tobytes()
                return
        p = GenericPayload(WRITE if write else READ, address, buf, n, initiator=self.path)
        done = self.socket.transport_dbg(p) if self.socket.target is not None else 0
        if done != n:
            what = "load a firmware segment" if loading else "access"
            raise SimulationError(f"cannot {what} at 0x{address:08x} (+{n}): no local RAM, DMI "
                                  "region or debug-capable target there", self.path, self.sim.now)

    # ----- emulator hooks (synchronous; never raise into unicorn) ---------------------------
    def _on_block(self, uc, address: int, size: int, _ud) -> None:
        cur = self._cur
        if cur is not None:
            self._base += len(cur) - 1
        key = address * 8192 + size
        offs = self._blocks.get(key)
        if offs is None:
            offs = self._block_offsets(address, size)
            self._blocks[key] = offs
        self._cur = offs

    def _block_offsets(self, address: int, size: int) -> list[int]:
        """Start address of each instruction of a translation block, then its end."""
        try:
            code = bytes(self._uc.mem_read(address, size))
        except _uc.UcError:
            return [address, address + max(size, 2)]
        offs, i = [], 0
        while i < size:
            offs.append(address + i)
            i += 4 if (code[i] & 3) == 3 else 2
        offs.append(address + i)
        return offs

    def _retired(self, pc: int) -> int:
        """Instructions retired in this run before ``pc`` (the next one to execute).

        The block hook has counted every earlier block of the run; the current block (whose
        hook fired last) is retired up to ``pc`` when ``pc`` lies inside it, else entirely
        (it ended with a jump, a wfi or an unmapped fetch)."""
        cur = self._cur
        if cur is None:
            return self._base
        if cur[0] <= pc < cur[-1]:
            return self._base + bisect.bisect_left(cur, pc)
        return self._base + len(cur) - 1

    def _count(self, pc: int, aborted: bool) -> int:
        """Instructions retired so far in this run, ``pc`` being the next one or the one
        being executed (``aborted``: it started but does not retire). The native counter
        counts instructions as they start; the block counter derives it from ``pc``."""
        if self._native:
            n = self._counter.value - self._cnt0
            return n - 1 if aborted else n
        return self._retired(pc)

    def _stopped_on_wfi(self, pc: int) -> bool:
        """The run ended early because a wfi halted the hart: the instruction executed
        last (just before ``pc`` in the current block) is a wfi."""
        if self._native:
            return self._insn_at(pc - 4) == WFI
        cur = self._cur
        if cur is None:
            return False
        i = bisect.bisect_left(cur, pc - 4)
        return (i < len(cur) - 1 and cur[i] == pc - 4 and cur[i + 1] == pc
                and self._insn_at(pc - 4) == WFI)

    def _local_time(self, retired: int) -> int:
        """Local time offset (ps, ahead of sim.now) after ``retired`` instructions of the
        current run."""
        c = self._cpi
        cyc = (self._cyc_rem + retired * c.numerator) // c.denominator
        return self._qk.local + self._stall + cyc * self.clock.period

    def _scan_csr_ops(self) -> dict[int, tuple[int, int, int, int]]:
        """Find the CSR instructions on mstatus, mie and mip in the executable segments
        (every halfword offset: RVC code aligns 32-bit instructions on 2 bytes). Each gets a
        code hook that emulates it (see _on_csr); a data word that happens to match is
        harmless (its hook never fires, or it *is* that instruction)."""
        ops: dict[int, tuple[int, int, int, int]] = {}
        for seg in self.image.segments:
            if not seg.executable:
                continue
            d = seg.data
            for off in range(0, len(d) - 3, 2):
                w = int.from_bytes(d[off:off + 4], "little")
                f3 = (w >> 12) & 7
                csr = w >> 20
                if (w & 0x7F) == 0x73 and f3 not in (0, 4) and (
                        csr in (CSR_MSTATUS, CSR_MIE, CSR_MIP) or csr in CSR_COUNTERS):
                    ops[seg.address + off] = (f3, (w >> 7) & 31, (w >> 15) & 31, w >> 20)
        return ops

    def _on_csr(self, uc, address: int, size: int, _ud) -> None:
        """Emulate ``csrr*`` on mstatus/mie/mip, then skip the instruction.

        unicorn (QEMU 5) only keeps the standard bits of mie and never shows our interrupt
        lines in mip; the FC has CV32E40P-style lines 16..31. So mie is kept here (all 32
        bits), mip reads the lines' state and writes to it set/clear edge-latched lines
        (software clear), and an instruction that makes an interrupt deliverable ends the
        run so the trap is taken right after it."""
        retired = self._count(address, aborted=True)
        if retired >= self._run_count:
            return  # beyond this run's count: unicorn stops before executing it
        f3, rd, rs1, csr = self._csr_ops[address]
        if csr in CSR_COUNTERS:
            what, shift = CSR_COUNTERS[csr]
            if what == "instret":
                value = self.instret + retired
            else:
                c = self._cpi
                value = self.cycles + (self._cyc_rem + retired * c.numerator) // c.denominator \
                    + self._stall // self.clock.period
            if rd:
                uc.reg_write(_rv.UC_RISCV_REG_X0 + rd, (value >> shift) & MASK32)
            self._skip(uc, address, retired)
            return
        if csr == CSR_MSTATUS:
            old = uc.reg_read(_rv.UC_RISCV_REG_MSTATUS)
        else:
            old = self._mie if csr == CSR_MIE else self.mip
        src = rs1 if f3 >= 5 else (uc.reg_read(_rv.UC_RISCV_REG_X0 + rs1) if rs1 else 0)
        op = f3 & 3
        if op == 1 or rs1 != 0:   # csrrs/csrrc with x0 (or uimm 0) do not write
            new = (src if op == 1 else old | src if op == 2 else old & ~src) & MASK32
            if csr == CSR_MSTATUS:
                uc.reg_write(_rv.UC_RISCV_REG_MSTATUS, new)
            elif csr == CSR_MIE:
                self._mie = new
            else:
                self._pending = new & ~self._levels
        if rd:
            uc.reg_write(_rv.UC_RISCV_REG_X0 + rd, old)
        self._skip(uc, address, retired)
        if self.mip & self._mie and uc.reg_read(_rv.UC_RISCV_REG_MSTATUS) & MSTATUS_MIE:
            uc.emu_stop()

    def _skip(self, uc, address: int, retired: int) -> None:
        """Retire the (emulated) 4-byte instruction at ``address`` and continue after it."""
        if not self._native:   # the native counter already counted it
            self._base = retired + 1
            self._cur = None
        uc.reg_write(_rv.UC_RISCV_REG_PC, address + 4)

    def _on_exception(self, uc, intno: int, _ud) -> None:
        # unicorn 2.1 reports the PC 4 bytes past the instruction that raised the exception
        # (measured for 16- and 32-bit illegal instructions, ecall and unknown CSRs)
        self._exc = (intno, (uc.reg_read(_rv.UC_RISCV_REG_PC) - 4) & MASK32)
        self._stop_reason = _R_FAULT
        uc.emu_stop()

    def _on_invalid(self, uc, access: int, address: int, size: int, value: int, _ud) -> bool:
        self._invalid = (access, address, uc.reg_read(_rv.UC_RISCV_REG_PC))
        return False

    def _mmio_read(self, uc, offset: int, size: int, base: int) -> int:
        acc = self._access(uc, base + offset, size, False, 0)
        return acc.value if acc is not None else 0

    def _mmio_write(self, uc, offset: int, size: int, value: int, base: int) -> None:
        self._access(uc, base + offset, size, True, value)

    def _access(self, uc, address: int, size: int, write: bool, value: int) -> _Access | None:
        rep = self._replay
        if rep is not None:
            if rep.address == address and rep.size == size and rep.write == write:
                self._replay = None
                return rep
            # should not happen: the re-executed instruction makes the same access
            self._hook_error = SimulationError(
                f"internal: replay mismatch at 0x{address:08x}", self.path, self.sim.now)
            uc.emu_stop()
            return None
        if self._stop_reason != _R_COUNT:
            return None  # already stopping (e.g. a second access in the same instruction)
        pc = uc.reg_read(_rv.UC_RISCV_REG_PC)
        region = self._mmio_pages.get(address // PAGE)
        if region is not None and not region.contains(address, size):
            region = self.memory_map.find(address, size)
        sync = self.params.sync_on_io and (region is None or region.kind == "peripheral")
        acc = _Access(address, size, write, value, pc, region, sync)
        self.n_mmio += 1
        if sync:
            self._acc = acc
            self._stop_reason = _R_IO
            self.n_sync_stops += 1
            uc.emu_stop()
            return None
        # inline: run the transaction now at the exact local time
        p = self._payload.reset(WRITE if write else READ, address, size)
        if write:
            p.data[:size] = value.to_bytes(size, "little")
        delay = self._local_time(self._count(pc, aborted=True))
        coro = self.socket.b_transport(p, delay)
        try:
            first = coro.send(None)
        except StopIteration as stop:
            self._stall += stop.value - delay
            self._complete(acc, p)
        except BaseException as e:  # noqa: BLE001 - surfaced after the run
            self._hook_error = e
            uc.emu_stop()
            return None
        else:
            # the target waits (e.g. a link): finish it from the process, then re-execute
            acc.coro, acc.first = coro, first
            self._acc = acc
            self._stop_reason = _R_IO
            self.n_async += 1
            uc.emu_stop()
            return None
        if acc.status != Status.OK or self._exit_req is not None or self._remap:
            # stop after this instruction: fault, exit, or a DMI change to apply
            self._acc = acc
            self._stop_reason = _R_IO
            uc.emu_stop()
            return None
        return acc

    def _complete(self, acc: _Access, p: GenericPayload) -> None:
        acc.status = Status(p.status) if p.status != Status.INCOMPLETE else Status.GENERIC_ERROR
        if acc.status == Status.OK and p.dmi_allowed and acc.region is not None \
                and acc.region.kind in ("memory", "rom") and self.params.dmi:
            self._retry_dmi = True
        if not acc.write:
            acc.value = int.from_bytes(bytes(p.data[:acc.size]), "little")
        acc.done = True

    def _invalidate(self, start: int, end: int) -> None:
        """DMI invalidation from a target: unmap overlapping windows (now, or after the
        current instruction when the emulator is running)."""
        hit = [(lo, hi) for lo, hi, _v in self._dmi_maps if lo <= end and start < hi]
        if not hit:
            return
        self._remap.extend(hit)
        if self._emulating:
            self._uc.emu_stop()
        else:
            self._apply_remap()

    def _apply_remap(self) -> None:
        for lo, hi in self._remap:
            self._dmi_maps = [m for m in self._dmi_maps if (m[0], m[1]) != (lo, hi)]
            self._uc.mem_unmap(lo, hi - lo)
            pages = list(range(lo // PAGE, hi // PAGE))
            for pg in pages:
                self._mmio_pages[pg] = self.memory_map.find(pg * PAGE)
            self._map_mmio_runs(pages)
        self._remap.clear()
        self._uc.ctl_flush_tb()
        self._blocks.clear()

    def _try_dmi_again(self) -> None:
        """A memory served over MMIO allows DMI again (e.g. after power-on): map it."""
        self._retry_dmi = False
        rep = self._replay
        for reg in self.memory_map.regions:
            if reg.kind not in ("memory", "rom") or reg.name in self.local:
                continue
            if rep is not None and reg.contains(rep.address):
                self._retry_dmi = True   # not under a pending re-execution; next time
                continue
            pages = [pg for pg in range(reg.base // PAGE, reg.end // PAGE)
                     if self._mmio_pages.get(pg) is reg]
            if not pages:
                continue
            lo, hi = pages[0] * PAGE, (pages[-1] + 1) * PAGE
            p = GenericPayload(READ, lo, bytearray(4), 4, initiator=self.path)
            region = self.socket.get_direct_mem_ptr(p)
            if region is None or region.start > lo or region.end + 1 < hi:
                continue
            self._uc.mem_unmap(lo, hi - lo)
            for pg in pages:
                del self._mmio_pages[pg]
            if self._map_dmi(lo, hi) is None:  # pragma: no cover - defensive
                for pg in pages:
                    self._mmio_pages[pg] = reg
                self._map_mmio_runs(pages)
            self._uc.ctl_flush_tb()
            self._blocks.clear()

    # ----- the process ------------------------------------------------------------------------
    async def _run(self) -> None:
        if self.image is None:
            self.state = "halted"
            return
        self._setup()
        sim = self.sim
        quantum = sim.global_quantum or self.params.quantum
        self._qk = qk = QuantumKeeper(sim, quantum, f"{self.path}.quantum_keeper")
        self.state = "running"
        limit = self.params.max_instructions
        while True:
            if self._exit_req is not None:
                await self._finish_exit(retire_current=False)
                return
            if self._retry_dmi:
                self._try_dmi_again()
            if self._replay is None:   # never between an access and its re-execution
                self._take_interrupt()
            n = self._run_length(qk)
            if limit:
                if self.instret >= limit:
                    self._fault("instruction_limit", self._pc, None,
                                detail=f"max_instructions={limit} reached")
                    await self._stop_faulted()
                    return
                n = min(n, limit - self.instret)
            reason = self._emulate(n)
            if reason == _R_IO:
                if not await self._serve_access():
                    return
            elif reason == _R_WFI:
                await self._idle()
            elif reason == _R_FAULT:
                await self._stop_faulted()
                return
            if self._exit_req is not None:
                await self._finish_exit(retire_current=False)
                return
            if qk.need_sync() and self._replay is None:
                await qk.sync()

    def _run_length(self, qk: QuantumKeeper) -> int:
        """Instructions until local time reaches the next quantum boundary (>= 1)."""
        c = self._cpi
        room = qk.next_sync - qk.current_time - self._stall
        cycles = -(-max(room, 1) // self.clock.period)
        n = -(-(cycles * c.denominator - self._cyc_rem) // c.numerator)
        return max(1, min(n, self.params.max_run_instructions))

    def _emulate(self, count: int) -> int:
        """One emulator run of at most ``count`` instructions; returns the stop reason,
        with the retired instructions and their time accounted."""
        uc = self._uc
        self._base = 0
        self._cur = None
        self._cnt0 = self._counter.value
        self._run_count = count
        self._stall = 0
        self._stop_reason = _R_COUNT
        self._exc = self._invalid = None
        self._hook_error = None
        self._emulating = True
        err = None
        try:
            uc.emu_start(self._pc, 1, 0, count)  # 'until' = 1: an odd PC is never reached
        except _uc.UcError as e:
            err = e
        except BaseException as e:  # noqa: BLE001 - a hook raised through the binding
            self._hook_error = self._hook_error or e
        finally:
            self._emulating = False
        self.n_runs += 1
        pc = uc.reg_read(_rv.UC_RISCV_REG_PC)
        reason = self._stop_reason
        if self._hook_error is not None:
            e = self._hook_error
            raise e if isinstance(e, SimulationError) else SimulationError(
                f"{type(e).__name__} while serving an access: {e}", self.path, self.sim.now)
        if err is not None and reason == _R_COUNT:
            reason = _R_FAULT
        retired = self._count(pc, aborted=False)
        acc = self._acc
        if reason == _R_IO and acc is not None:
            pc = acc.pc
            retired = self._count(pc, aborted=True)
        elif reason == _R_FAULT:
            inv = self._invalid
            if inv is not None and inv[0] not in (_uc.UC_MEM_FETCH_UNMAPPED,
                                                  _uc.UC_MEM_FETCH_PROT):
                pc = inv[2]
                retired = self._count(pc, aborted=True)
            elif self._exc is not None:
                pc = self._exc[1]
                retired = self._count(pc, aborted=True)
            elif inv is None:   # an exception unicorn reports as an error (ebreak)
                retired = self._count(pc, aborted=True)
        self._account(retired)
        self._pc = pc
        if reason == _R_FAULT:
            self._classify_fault(err, pc)
        elif reason == _R_COUNT:
            if self._remap:
                self._apply_remap()
            elif retired < count and self._stopped_on_wfi(pc):
                reason = _R_WFI
        return reason

    def _account(self, retired: int) -> None:
        c = self._cpi
        total = self._cyc_rem + retired * c.numerator
        cyc = total // c.denominator
        self._cyc_rem = total - cyc * c.denominator
        self.instret += retired
        self.cycles += cyc + self._stall // self.clock.period
        self.stall_ps += self._stall
        self._qk.inc(cyc * self.clock.period + self._stall)
        self._stall = 0

    async def _serve_access(self) -> bool:
        """Complete the access the emulator stopped on; False when the core stopped."""
        acc = self._acc
        self._acc = None
        qk = self._qk
        if not acc.done:
            if acc.coro is not None:
                # LT convention: the target consumed the offset we passed as time; what it
                # returns is the new offset ahead of the (later) sim.now
                start = qk.current_time
                delay = await _finish(acc.coro, acc.first)
                qk.set(delay)
                stall = max(0, qk.current_time - start)
                self.stall_ps += stall
                self.cycles += stall // self.clock.period
                self._complete(acc, self._payload)
            else:
                await qk.sync()
                p = self._payload.reset(WRITE if acc.write else READ, acc.address, acc.size)
                if acc.write:
                    p.data[:acc.size] = acc.value.to_bytes(acc.size, "little")
                d = await self.socket.b_transport(p, 0)
                self.stall_ps += d
                self.cycles += d // self.clock.period
                qk.inc(d)
                self._complete(acc, p)
        if acc.status != Status.OK:
            self._fault("access_fault", acc.pc, self._insn_at(acc.pc), address=acc.address,
                        access="write" if acc.write else "read", status=acc.status.name,
                        detail=self._last_error_reason(acc.address))
            await self._stop_faulted()
            return False
        if self._exit_req is not None:
            await self._finish_exit(retire_current=True)
            return False
        if self._remap:
            self._apply_remap()   # the access is replayed against the new mapping
            if not (acc.region is not None and acc.region.kind == "peripheral"):
                return True       # memory access: simply redo it (no side effects)
        self._replay = acc
        return True

    def _last_error_reason(self, address: int) -> str:
        for rec in reversed(self.sim.errors[-8:]):
            if rec.initiator == self.path:
                return f"{rec.where}: {rec.reason}"
        return ""

    def _take_interrupt(self) -> None:
        mip = self._pending | self._levels
        if not mip:
            return
        uc = self._uc
        mstatus = uc.reg_read(_rv.UC_RISCV_REG_MSTATUS)
        if not mstatus & MSTATUS_MIE:
            return
        ready = mip & self._mie
        if not ready:
            return
        n = next(i for i in _PRIORITY if ready >> i & 1)
        self._pending &= ~(1 << n)
        mstatus = (mstatus & ~(MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP)) | MSTATUS_MPIE | MSTATUS_MPP
        uc.reg_write(_rv.UC_RISCV_REG_MEPC, self._pc)
        uc.reg_write(_rv.UC_RISCV_REG_MCAUSE, 0x80000000 | n)
        uc.reg_write(_rv.UC_RISCV_REG_MTVAL, 0)
        uc.reg_write(_rv.UC_RISCV_REG_MSTATUS, mstatus)
        mtvec = uc.reg_read(_rv.UC_RISCV_REG_MTVEC)
        self._pc = (mtvec & ~3) + (4 * n if mtvec & 3 == 1 else 0)
        self.n_irq += 1
        tr = self.sim.tracer
        if tr is not None:
            tr.instant(self.path, f"irq {n}", line=n, time=self._qk.current_time)

    async def _idle(self) -> None:
        """wfi: sleep until an enabled line is pending or an exit is requested."""
        self.n_wfi += 1
        qk = self._qk
        await qk.sync()
        uc = self._uc
        start = self.sim.now
        self.state = "wfi"
        while self._exit_req is None and not (self.mip & self._mie):
            await self._wake
        if not uc.reg_read(_rv.UC_RISCV_REG_MSTATUS) & MSTATUS_MIE:
            # interrupts masked: the wfi acts as PULP's wait-for-event and consumes the
            # enabled edge events that woke it (level lines stay until their source clears)
            self._pending &= ~self._mie
        self.state = "running"
        qk.reset()
        idle = self.sim.now - start
        self.idle_ps += idle
        self.cycles += idle // self.clock.period
        if idle:
            self.trace_span("wfi", start, self.sim.now)

    # ----- stopping -------------------------------------------------------------------------------
    def _insn_at(self, pc: int) -> int | None:
        try:
            lo = int.from_bytes(bytes(self._uc.mem_read(pc, 2)), "little")
            if lo & 3 != 3:
                return lo
            return int.from_bytes(bytes(self._uc.mem_read(pc, 4)), "little")
        except _uc.UcError:
            return None

    def _classify_fault(self, err, pc: int) -> None:
        inv = self._invalid
        if self._exc is not None:
            cause, epc = self._exc
            kind = _EXC_NAMES.get(cause, "exception")
            self._fault(kind, epc, self._insn_at(epc), detail=f"exception cause {cause}")
            return
        if inv is not None:
            access, address, ipc = inv
            U = _uc.unicorn_const
            if access in (U.UC_MEM_FETCH_UNMAPPED, U.UC_MEM_FETCH_PROT):
                what = ("no memory at this address" if access == U.UC_MEM_FETCH_UNMAPPED
                        else "not executable (peripheral space)")
                self._fault("fetch_fault", address, self._insn_at(address), address=address,
                            access="fetch", detail=what)
            else:
                write = access in (U.UC_MEM_WRITE_UNMAPPED, U.UC_MEM_WRITE_PROT)
                what = ("no region of the memory map" if access in (
                    U.UC_MEM_READ_UNMAPPED, U.UC_MEM_WRITE_UNMAPPED) else "write-protected")
                self._fault("access_fault", ipc, self._insn_at(ipc), address=address,
                            access="write" if write else "read", detail=what)
            return
        insn = self._insn_at(pc)
        errno = getattr(err, "errno", None)
        if insn in (EBREAK, C_EBREAK):
            self._fault("breakpoint", pc, insn, detail="ebreak")
        elif errno == _uc.UC_ERR_INSN_INVALID or errno == _uc.UC_ERR_EXCEPTION:
            self._fault("illegal_instruction", pc, insn, detail=str(err))
        else:
            self._fault("exception", pc, insn, detail=str(err))

    def _fault(self, kind: str, pc: int, insn: int | None, **kw: Any) -> None:
        t = self._qk.current_time if self._qk is not None else self.sim.now
        sym = self.image.describe(pc) if self.image is not None else None
        self.fault = FirmwareFault(kind, pc, insn, t, self.instret, symbol=sym, **kw)
        self._pc = pc

    async def _stop_faulted(self) -> None:
        await self._qk.sync()
        self.state = "faulted"
        self.done.notify()
        tr = self.sim.tracer
        if tr is not None:
            tr.instant(self.path, "fault", **{k: v for k, v in self.fault.to_dict().items()
                                              if isinstance(v, (int, str))})
        if self.params.on_fault == "raise":
            raise FirmwareFaultError(self.fault, self.path)
        self.sim.stop()

    async def _finish_exit(self, retire_current: bool) -> None:
        if retire_current:
            insn = self._insn_at(self._pc)
            self._account(1)
            self._pc += 2 if insn is not None and insn & 3 != 3 else 4
        code = self._exit_req
        self.exit_code = code - (1 << 32) if code & 0x80000000 else code
        await self._qk.sync()   # simulated time catches up with the exit
        self.state = "exited"
        self.exit_time = self.sim.now
        self.done.notify()
        if self.params.stop_on_exit:
            self.sim.stop()

    def summary(self) -> dict[str, Any]:
        """What a report shows about the core's run."""
        return {"state": self.state, "exit_code": self.exit_code,
                "fault": self.fault.to_dict() if self.fault else None,
                "instructions": self.instret, "cycles": self.cycles,
                "firmware": self.image.path if self.image else None}

