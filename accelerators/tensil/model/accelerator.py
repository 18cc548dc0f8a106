"""The Tensil TCU as a TLM accelerator on the common interface (components/accel.py).

* **Control** (``regs``, our wrapper; Tensil's own control is its instruction stream):
  the host writes where the ``.tprog`` is, how many instructions to run and where DRAM0
  and DRAM1 start, then writes START. One job = one program run.
* **Command port** (``fetch``): a small fetcher reads the program from memory in blocks of
  ``fetch_block`` instructions (the spec's assumption for a TCU inside a SoC).
* **DRAM0/DRAM1** (``dram0``, ``dram1``): AXI-like initiator ports. Each DRAM DataMove of
  the machine becomes AXI bursts (at most ``axi_max_burst`` beats of ``axi_width`` bytes,
  never across a 4 KiB boundary) replayed through the port; a burst takes the longer of
  the link time (``axi_latency`` + beats cycles) and the delay the interconnect and memory
  return. AxCACHE (configuration registers 0x01/0x05) rides on each payload as the
  ``axcache`` extension.
* **Compute**: the ISA machine (:mod:`.machine`) executes each instruction bit-exactly;
  its latency model gives the cycles of everything that is not a DRAM transfer.

Bad input (an undefined opcode, an operand outside a memory, a program running off its
end, ...) stops the run with a :class:`~accelerators.tensil.model.machine.TensilError` naming the
program counter, the instruction and the field, at the simulated time it happened.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.accel import Accelerator, JobRecord, MacArrayEnergy
from tlm import Clock, Module, Simulator
from tlm.params import check_params
from tlm.payload import READ, WRITE, GenericPayload
from tlm.regmap import load_regmap
from tlm.regs import RegisterBank

from .isa import ConfigReg, IsaError, decode, describe_word
from .machine import TensilError, TensilMachine
from .params import ARCH_FIELDS, SocTensilParams, TensilParams

__all__ = ["ARCH_FIELDS", "MAP", "SocTensilParams", "TensilJob", "TensilParams", "TensilTcu"]

@dataclass(frozen=True)
class TensilJob:
    """One program run: ``count`` instructions of the ``.tprog`` at byte ``program``; DRAM
    banks at system byte addresses ``dram0``/``dram1``."""

    program: int
    count: int
    dram0: int
    dram1: int


#: the control wrapper's registers (names, offsets, access, reset, docs): registers.yaml
MAP = load_regmap(Path(__file__).with_name("registers.yaml"))
STATUS_BUSY, STATUS_ERROR, STATUS_TIMEOUT, STATUS_TRACEPOINT = (
    MAP.mask("STATUS", f) for f in ("BUSY", "ERROR", "TIMEOUT", "TRACEPOINT"))
NO_ERROR = MAP.register("ERROR_PC").reset
FOUR_KIB = 4096


class _Bank:
    """Untimed byte access to one DRAM bank through a port (the machine's data path; the
    timed bursts are replayed afterwards)."""

    def __init__(self, port: Any, base: int):
        self.port, self.base = port, base

    def read(self, address: int, nbytes: int) -> bytes:
        p = GenericPayload(READ, self.base + address, bytearray(nbytes))
        if self.port.transport_dbg(p) != nbytes:
            raise TensilError(f"DRAM read of {nbytes} bytes at 0x{self.base + address:x} "
                              "reached no memory", -1, "", "address")
        return bytes(p.data)

    def write(self, address: int, data: bytes) -> None:
        p = GenericPayload(WRITE, self.base + address, bytearray(data))
        if self.port.transport_dbg(p) != len(data):
            raise TensilError(f"DRAM write of {len(data)} bytes at 0x{self.base + address:x} "
                              "reached no memory", -1, "", "address")


class TensilTcu(Accelerator[TensilJob]):
    """Tensil's tensor compute unit: control registers, fetcher, ISA machine, two AXI DRAM
    ports (``regs.socket`` is mapped by the composition; ``fetch``, ``dram0``, ``dram1``
    are bound to the interconnect)."""

    kind = "tensil"
    rtl_block = "tensil"
    #: W: the data type's width; PEs: the N x N array
    energy_profile = MacArrayEnergy("tensil", "mac", lambda t: (t.arch.width, t.arch.array_size ** 2))

    def __init__(self, parent: Module | Simulator, name: str, *, clock: Clock,
                 params: TensilParams | None = None):
        super().__init__(parent, name, clock=clock)
        self.params = params or TensilParams()
        check_params(self.params, self.path)
        self.arch = self.params.arch()
        self.fetch = self.add_port("fetch")
        self.dram_ports = [self.add_port("dram0"), self.add_port("dram1")]
        self.machine = TensilMachine(self.arch, self.params.timing(), data=self.params.data,
                                     path=self.path)
        self.regs = RegisterBank(self, "regs", 0x100, clock=clock, optional=True)
        self.regs.add_map(MAP, {   # names, access, reset and docs: registers.yaml
            "START": dict(write=self._start),
            "STATUS": dict(read=self._status),
            "CYCLES_LO": dict(read=lambda: self.cycles & 0xFFFFFFFF),
            "CYCLES_HI": dict(read=lambda: self.cycles >> 32 & 0xFFFFFFFF),
            "INSTRUCTIONS": dict(read=lambda: self.machine.stats.instructions & 0xFFFFFFFF),
            "ERROR_PC": dict(read=lambda: self.error_pc & 0xFFFFFFFF),
        })
        self.queue: list[TensilJob] = []
        self.busy = False
        self.error_pc = NO_ERROR
        self.next_id = 0
        self.dram_time_ps = 0
        self.sim.stats.add_provider(self.path, self._stat_values)
        self.start()

    def _stat_values(self) -> dict[str, Any]:
        """jobs, busy time, instructions by opcode, MACs, array utilisation, DRAM bytes,
        hazards (stable keys; the accelerator report entry has the rest)."""
        st = self.machine.stats
        out: dict[str, Any] = {"jobs": len(self.jobs), "busy_ps": self.busy_ps, "ops": self.ops,
                               "cycles": self.cycles, "instructions": st.instructions,
                               "macs": st.macs, "hazards": len(self.machine.hazards),
                               "array_utilisation": st.matmul_vectors / self.cycles if self.cycles else 0.0,
                               "dram_ps": self.dram_time_ps, "samples": len(self.machine.samples),
                               "timeouts": sum(1 for k, _, _ in self.machine.events if k == "timeout"),
                               "tracepoints": sum(1 for k, _, _ in self.machine.events if k == "tracepoint")}
        if self.params.board:   # the board's clock: the latency Tensil's table quotes
            from tlm.units import parse_frequency

            from .boards import board
            hz = parse_frequency(board(self.params.board)["arch"]["clock_hz"])
            out["board_clock_hz"] = hz
            out["latency_ms"] = self.cycles / hz * 1e3
            out["frames_per_s"] = hz / self.cycles if self.cycles else 0.0
        for k, v in sorted(st.by_opcode.items()):
            out[f"instructions.{k}"] = v
        for k, v in sorted(st.dram_bytes.items()):
            out[f"bytes.{k}"] = v
        return out

    # ----- control port --------------------------------------------------------------------
    def _start(self, value: int) -> None:
        if value & MAP.mask("START", "RUN"):
            r = {name: self.regs[name].value for name in ("PROG_ADDR", "PROG_COUNT",
                                                          "DRAM0_BASE", "DRAM1_BASE")}
            self.queue.append(TensilJob(r["PROG_ADDR"], r["PROG_COUNT"], r["DRAM0_BASE"],
                                        r["DRAM1_BASE"]))
            self.kick()

    def _status(self) -> int:
        """bit 0 busy, bit 1 error, bit 2 a decoder timeout, bit 3 the tracepoint was hit
        (the timeout and tracepoint of configuration registers 0x08/0x09)."""
        busy = self.busy or bool(self.queue)
        kinds = {k for k, _, _ in self.machine.events}
        return ((STATUS_BUSY if busy else 0) | (STATUS_ERROR if self.error_pc != NO_ERROR else 0)
                | (STATUS_TIMEOUT if "timeout" in kinds else 0)
                | (STATUS_TRACEPOINT if "tracepoint" in kinds else 0))

    def submit(self, job: TensilJob) -> None:
        """Queue a program run directly (tests and hosts without registers)."""
        self.queue.append(job)
        self.kick()

    def next_job(self) -> tuple[int, TensilJob | int] | None:
        if not self.queue:
            return None
        self.next_id += 1
        self.busy = True
        return self.next_id, self.queue.pop(0)

    def retire(self, job_id: int, record: JobRecord) -> bool:
        self.busy = bool(self.queue)
        return True

    # ----- execution -----------------------------------------------------------------------
    async def execute(self, job_id: int, job: TensilJob, start: int) -> JobRecord:
        m = self.machine
        m.dram = [_Bank(self.dram_ports[0], job.dram0), _Bank(self.dram_ports[1], job.dram1)]
        macs0, vecs0, ins0 = m.stats.macs, m.stats.matmul_vectors, m.stats.instructions
        moved = {"fetch": 0, "dram0": 0, "dram1": 0}
        ib = self.arch.instruction_bytes
        pending = 0           # compute cycles not yet waited for
        m.restart()
        pc = 0
        while pc < job.count:
            n = min(self.params.fetch_block, job.count - pc)
            addr = job.program + pc * ib
            p = GenericPayload(READ, addr, bytearray(n * ib))
            await self.clock.wait_cycles(pending)
            pending = 0
            delay = await self.fetch.b_transport(p, 0)
            if not p.is_ok:
                raise TensilError(f"fetching {n} instructions at 0x{addr:x} failed "
                                  f"({p.status.name})", pc, "<fetch>", "program", self.path,
                                  self.sim.now)
            await self.sim.wait(delay)
            moved["fetch"] += n * ib
            for k in range(n):
                word = int.from_bytes(p.data[k * ib:(k + 1) * ib], "little")
                try:
                    ins = decode(word, self.arch)
                except IsaError as e:
                    self.error_pc = pc
                    raise TensilError(e.detail, pc, describe_word(word, self.arch), e.field,
                                      self.path, self.sim.now) from None
                first = len(m.bursts)
                try:
                    c = m.step(ins)
                except TensilError as e:
                    self.error_pc = pc
                    where = e.instruction or describe_word(word, self.arch)
                    raise TensilError(e.detail, pc, where, e.field, self.path, self.sim.now) from None
                if len(m.bursts) == first:
                    pending += c
                else:
                    await self.clock.wait_cycles(pending)
                    pending = 0
                    for b in m.bursts[first:]:
                        moved[f"dram{b.bank}"] += b.nbytes
                        await self._replay(b.bank, b.address + (job.dram1 if b.bank else job.dram0),
                                           b.nbytes, b.write)
                    del m.bursts[:]
                pc += 1
        await self.clock.wait_cycles(pending)
        cycles = round(self.clock.to_cycles(self.sim.now - start))
        macs = m.stats.macs - macs0
        ideal = m.stats.matmul_vectors - vecs0
        self.account(start, cycles, ideal, 2 * macs, moved)
        self.book("mac", macs, self.sim.now - start)
        return JobRecord(job_id, start, self.sim.now, 0, m.stats.instructions - ins0)

    async def _replay(self, bank: int, address: int, nbytes: int, write: bool) -> None:
        """The AXI bursts of one DRAM transfer through port ``bank``, timed."""
        prm, port = self.params, self.dram_ports[bank]
        cache = self.machine.config[ConfigReg.DRAM1_CACHE if bank else ConfigReg.DRAM0_CACHE]
        t0 = self.sim.now
        while nbytes:
            k = min(nbytes, prm.axi_width * prm.axi_max_burst, FOUR_KIB - address % FOUR_KIB)
            p = GenericPayload(WRITE if write else READ, address, bytearray(k))
            if write:
                dbg = GenericPayload(READ, address, bytearray(k))
                port.transport_dbg(dbg)      # the data the machine wrote: write it again
                p.data = dbg.data
            p.set_extension("axcache", cache)
            start = self.sim.now
            delay = await port.b_transport(p, 0)
            if not p.is_ok:
                raise TensilError(f"DRAM{bank} burst of {k} bytes at 0x{address:x} failed "
                                  f"({p.status.name})", self.machine.index, "<axi>", "address",
                                  self.path, self.sim.now)
            link = self.clock.cycles(prm.axi_latency + -(-k // prm.axi_width))
            await self.sim.wait(max(delay, link - (self.sim.now - start)))
            address, nbytes = address + k, nbytes - k
        self.dram_time_ps += self.sim.now - t0
