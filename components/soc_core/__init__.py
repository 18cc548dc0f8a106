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

Modules: ``core`` (the Module, its process and counting), ``bridge`` (memory set-up, DMI,
MMIO accesses), ``traps`` (interrupt lines, CSRs, trap entry), ``faults`` (fault records),
``params``, ``elf`` (the ELF loader), ``counter`` (the native instruction counter).
"""
from .core import SocCore
from .faults import FirmwareFault, FirmwareFaultError
from .params import SocCoreParams
from .traps import irq_number

__all__ = ["SocCore", "SocCoreParams", "FirmwareFault", "FirmwareFaultError", "irq_number"]
