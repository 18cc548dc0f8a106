"""Firmware faults: the record, the error, and how the core classifies and stops on one."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tlm import SimulationError, fmt_time

from .emu import _R_FAULT, MASK32, rv as _rv, uc as _uc
from .traps import C_EBREAK, EBREAK

_EXC_NAMES = {0: "instruction_misaligned", 1: "fetch_fault", 2: "illegal_instruction",
              3: "breakpoint", 4: "load_misaligned", 5: "access_fault", 6: "store_misaligned",
              7: "access_fault", 8: "ecall", 9: "ecall", 11: "ecall", 12: "fetch_fault",
              13: "access_fault", 15: "access_fault"}


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


class Faults:
    """SocCore mixin: exceptions from the emulator, fault records, stopping on a fault."""

    def _on_exception(self, uc, intno: int, _ud) -> None:
        # unicorn 2.1 reports the PC 4 bytes past the instruction that raised the exception
        # (measured for 16- and 32-bit illegal instructions, ecall and unknown CSRs)
        self._exc = (intno, (uc.reg_read(_rv.UC_RISCV_REG_PC) - 4) & MASK32)
        self._stop_reason = _R_FAULT
        uc.emu_stop()

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
