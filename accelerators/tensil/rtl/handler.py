"""The Tensil TCU stand-in (``rtl/tensil/tensil_stub.sv``) as a job-level transactor: the
cocotb side.

Inbound channel ``job`` ``{"id", "program": bytes, "instruction_bytes"}``: feed the
program's instruction words one by one through the APB control port (INSTR0..3, ISSUE),
waiting for ``busy_o`` to fall after each, stop at the first one the stand-in rejects, and
emit ``done`` ``{"id", "cycles", "count", "status", "error_pc", "config": [16 values]}``
(``cycles``, ``count``: the stand-in's CYCLES and COUNT registers across the job, one cycle
per executed or rejected instruction; ``error_pc``: the index in this job of the rejected
instruction, or None). The stand-in keeps its configuration from job to job, as the TCU.
Errors of the port (PSLVERR, a timeout) are emitted as ``error``.

Test-only fault injection (``inject`` in the configuration, never set by scenarios):
``{"flip": {"register": r, "bit": b}}`` flips bit ``b`` of configuration register ``r`` as
read back at each job end (a divergence the shadow comparison must report).
"""
from __future__ import annotations

from typing import Any

from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from cosim.rtl.adapters import now_ps, reset
from cosim.rtl.adapters.apb import ApbMasterAdapter, bus_from_signals

INSTR, ISSUE, STATUS, COUNT, CYCLES, ERROR_PC, CONFIG = 0x00, 0x10, 0x14, 0x18, 0x1C, 0x20, 0x40
SIGNALS = {r: f"s_apb_{r}" for r in ("psel", "penable", "pwrite", "paddr", "pwdata", "pstrb",
                                     "prdata", "pready", "pslverr")}


class TensilStubHandler:
    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        self.clk = dut.clk_i
        Clock(self.clk, self.period, unit="ps", period_high=self.period // 2).start(start_high=False)
        self.apb = ApbMasterAdapter(bus_from_signals(dut, SIGNALS), self.clk,
                                    name=f"{self.name}.apb", period_ns=self.period / 1000,
                                    timeout_cycles=int(cfg.get("adapter_timeout_cycles", 1000)))
        self.inject = cfg.get("inject") or {}
        self.driver: Any = None
        self.jobs = 0
        self.instructions = 0

    async def start(self) -> None:
        await reset(self.clk, self.dut.rst_ni, 4)

    def info(self) -> dict:
        return {"period_ps": self.period, "top": "tensil_stub"}

    def busy(self) -> int:
        return int(self.dut.busy_o.value)

    def handlers(self) -> dict:
        return {"job": self._job}

    def stats(self) -> dict:
        return {"jobs": self.jobs, "instructions": self.instructions,
                "apb_reads": self.apb.reads, "apb_writes": self.apb.writes}

    async def _job(self, p: dict) -> None:
        jid = p.get("id")
        self.jobs += 1
        try:
            await self._run(jid, bytes(p["program"]), int(p["instruction_bytes"]))
        except Exception as e:  # noqa: BLE001 - reported to the TLM side, never swallowed
            self.driver.emit(now_ps(), "error", {"id": jid, "kind": type(e).__name__,
                                                 "message": str(e)})

    async def _run(self, jid: Any, program: bytes, ib: int) -> None:
        apb = self.apb
        await RisingEdge(self.clk)
        c0, n0 = await apb.read(CYCLES), await apb.read(COUNT)
        for k in range(0, len(program), ib):
            word = int.from_bytes(program[k:k + ib], "little")
            for w in range(4):
                await apb.write(INSTR + 4 * w, (word >> (32 * w)) & 0xFFFFFFFF)
            await apb.write(ISSUE, 1)
            if self.busy():
                await FallingEdge(self.dut.busy_o)
            self.instructions += 1
            if await apb.read(STATUS) & 2:
                break
        status = await apb.read(STATUS)
        config = [await apb.read(CONFIG + 4 * r) for r in range(16)]
        flip = self.inject.get("flip")
        if flip:
            config[int(flip["register"])] ^= 1 << int(flip.get("bit", 0))
        self.driver.emit(now_ps(), "done", {
            "id": jid, "cycles": (await apb.read(CYCLES)) - c0, "count": (await apb.read(COUNT)) - n0,
            "status": status, "error_pc": (await apb.read(ERROR_PC)) - n0 if status & 2 else None,
            "config": config})
