"""The SOC core (fabric controller) module: construction, public API, instruction counting
and the process that runs the emulator (see the package docstring)."""
from __future__ import annotations

import bisect
import ctypes
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from tlm import (READ, Clock, Event, GenericPayload, InitiatorSocket, Memory, Module,
                 QuantumKeeper, SimulationError)
from tlm.address_map import MemoryMap, Region
from tlm.params import check_params, resolve

from .bridge import Bridge, _Access
from .elf import ElfImage, load_elf
from .emu import _R_COUNT, _R_FAULT, _R_IO, _R_WFI, MASK32, PAGE, rv as _rv, uc as _uc
from .faults import FirmwareFault, Faults
from .params import SocCoreParams
from .traps import MSTATUS_MIE, WFI, Traps


class SocCore(Traps, Bridge, Faults, Module):
    """The fabric controller. ``socket`` is its initiator socket onto the SOC interconnect.

    ``SocCore(parent, name, clock=soc_clock, elf='firmware/build/hello.elf',
    memory_map=mm, irq_lines=lines)``: ``memory_map`` is the address map the core sees (its
    regions decide local RAM, DMI and MMIO pages), ``irq_lines`` names its interrupt lines
    (``name -> (mip/mie bit, description)``), both from the platform's facts. Interrupt
    lines with :meth:`connect_irq` / :meth:`raise_irq` / :meth:`set_irq`; the exit hook is
    :meth:`request_exit`. After the run: ``exit_code``, ``fault``, ``instret``, ``state``.
    """


    def __init__(self, parent, name: str = "fc", *, clock: Clock,
                 elf: str | Path | bytes | ElfImage | None = None,
                 params: SocCoreParams | dict | None = None,
                 memory_map: MemoryMap, irq_lines: Mapping[str, tuple[int, str]],
                 private_memory: Any = None):
        super().__init__(parent, name)
        if _uc is None:
            raise SimulationError("the SOC core needs the 'unicorn' package (pip install "
                                  "'tlm-cosim[iss]' or pip install 'unicorn>=2.1,<2.2')",
                                  self.path)
        if isinstance(params, SocCoreParams):
            check_params(params, self.path)
            self.params = params
        else:
            self.params = resolve(SocCoreParams, params, self.path)
        self.clock = clock
        self.memory_map = memory_map
        self.irq_lines = dict(irq_lines)
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

    def _stat_values(self) -> dict:
        return {"instructions": self.instret, "cycles": self.cycles, "mmio_accesses": self.n_mmio,
                "sync_stops": self.n_sync_stops, "async_accesses": self.n_async,
                "emulator_runs": self.n_runs, "wfi": self.n_wfi, "interrupts": self.n_irq,
                "idle_ps": self.idle_ps, "stall_ps": self.stall_ps,
                "dmi_regions": len(self._dmi_maps)}

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
