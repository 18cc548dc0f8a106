"""Interrupts and CSRs of the SOC core: interrupt lines, mie/mip, trap entry, counter CSRs."""
from __future__ import annotations

from typing import Any, Mapping

from tlm import Event, Signal, SimulationError

from .emu import MASK32, rv as _rv

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


def irq_number(line: int | str, lines: Mapping[str, tuple[int, str]]) -> int:
    """``'timer'`` -> its bit in ``lines`` (name -> (bit, description)); an int is checked
    and returned."""
    if isinstance(line, str):
        try:
            return lines[line][0]
        except KeyError:
            raise SimulationError(f"unknown interrupt line {line!r}; known: "
                                  f"{', '.join(lines)}") from None
    if not 0 <= line < 32:
        raise SimulationError(f"interrupt line {line} outside 0..31")
    return line


class Traps:
    """SocCore mixin: interrupt lines (``irq_lines`` names them), CSR accesses, trap entry."""

    def connect_irq(self, line: int | str, source: Any) -> None:
        """Drive interrupt ``line`` from ``source``: an :class:`Event` (or LinkEvent) is an
        edge (each notification latches the line until the trap is taken); a
        :class:`Signal` (or LinkSignal) is a level (pending while truthy)."""
        n = irq_number(line, self.irq_lines)
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
        n = irq_number(line, self.irq_lines)
        self._pending |= 1 << n
        self._wake.notify()

    def set_irq(self, line: int | str, level: bool) -> None:
        """Drive a level-sensitive ``line``."""
        n = irq_number(line, self.irq_lines)
        if level:
            self._levels |= 1 << n
            self._wake.notify()
        else:
            self._levels &= ~(1 << n)

    @property
    def mip(self) -> int:
        """Pending interrupt lines (edge-latched | level)."""
        return self._pending | self._levels

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
