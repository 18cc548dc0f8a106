"""The SOC core's access bridge: local RAM, DMI maps and MMIO pages in the emulator, and
each MMIO access as a (possibly suspending) ``b_transport`` on the core's socket."""
from __future__ import annotations

import types

from tlm import READ, WRITE, GenericPayload, SimulationError, Status
from tlm.address_map import Region

from .counter import add_counter_hook
from .emu import _R_COUNT, _R_IO, PAGE, rv as _rv, uc as _uc



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



class Bridge:
    """SocCore mixin: the emulator's memory set-up and the access bridge."""

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
