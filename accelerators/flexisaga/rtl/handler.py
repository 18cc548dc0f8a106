"""The FlexiSAGA array (``rtl/flexisaga``, Amaranth-generated ``flexisaga_array``) as a
job-level transactor: the cocotb side.

Inbound channel ``job`` ``{"id", "image": bytes, "regs": {port: value}, "out": [[word
address, words], ...]}``: write the image (little-endian 32-bit words from address 0) into
the block's memory through its load port, one word a cycle; drive the job ports, pulse
``start``, wait for ``done``; read the output runs back through the read-back port and
emit ``done`` ``{"id", "cycles", "macs", "reads", "writes", "error", "out": bytes}``
(``cycles``: the block's own counter, every cycle from the one after ``start`` to the one
that raises ``done``).

Test-only fault injection (``inject`` in the configuration, never set by scenarios):
``{"flip": {"word": w, "bit": b}}`` flips bit ``b`` of output word ``w`` (in the order of
``out``) as read back; ``{"extra_cycles": n}`` adds ``n`` to the reported cycles.
"""
from __future__ import annotations

from typing import Any

from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from cosim.rtl.adapters import now_ps, reset

#: job ports of flexisaga_array driven from ``regs``
JOB_PORTS = ("dataflow", "m", "k", "n", "w_base", "w_table", "i_base", "ldi", "o_base", "ldo")


class FlexiSagaHandler:
    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        self.max_cycles = int(cfg.get("max_cycles", 10_000_000))
        self.clk = dut.clk
        Clock(self.clk, self.period, unit="ps", period_high=self.period // 2).start(start_high=False)
        self.inject = cfg.get("inject") or {}
        self.driver: Any = None
        self.jobs = 0
        self.words_loaded = 0
        self.words_read = 0

    async def start(self) -> None:
        self.dut.ld_en.value = 0
        self.dut.start.value = 0
        await reset(self.clk, self.dut.rst, 4, active_low=False)

    def info(self) -> dict:
        return {"period_ps": self.period, "top": "flexisaga_array"}

    def busy(self) -> int:
        return int(self.dut.busy.value)

    def handlers(self) -> dict:
        return {"job": self._job}

    def stats(self) -> dict:
        return {"jobs": self.jobs, "words_loaded": self.words_loaded, "words_read": self.words_read}

    async def _job(self, p: dict) -> None:
        jid = p.get("id")
        self.jobs += 1
        try:
            await self._run(jid, p)
        except Exception as e:  # noqa: BLE001 - reported to the TLM side, never swallowed
            self.driver.emit(now_ps(), "error", {"id": jid, "kind": type(e).__name__,
                                                 "message": str(e)})

    async def _run(self, jid: Any, p: dict) -> None:
        dut, clk = self.dut, self.clk
        image = bytes(p["image"])
        await RisingEdge(clk)
        for a in range(len(image) // 4):
            dut.ld_en.value = 1
            dut.ld_addr.value = a
            dut.ld_data.value = int.from_bytes(image[4 * a:4 * a + 4], "little")
            await RisingEdge(clk)
        dut.ld_en.value = 0
        self.words_loaded += len(image) // 4
        for name in JOB_PORTS:
            getattr(dut, name).value = int(p["regs"][name])
        dut.start.value = 1
        await RisingEdge(clk)
        dut.start.value = 0
        waited = 0
        while True:
            await RisingEdge(clk)
            if int(dut.done.value):
                break
            waited += 1
            if waited > self.max_cycles:
                raise RuntimeError(f"no done within {self.max_cycles} cycles (cycles counter "
                                   f"{int(dut.cycles.value)}, busy {int(dut.busy.value)})")
        res = {k: int(getattr(dut, k).value) for k in ("cycles", "macs", "reads", "writes", "error")}
        out = bytearray()
        for addr, count in p["out"]:
            for a in range(int(addr), int(addr) + int(count)):
                dut.rb_addr.value = a
                await RisingEdge(clk)
                out += int(dut.rb_data.value).to_bytes(4, "little")
        self.words_read += len(out) // 4
        flip = self.inject.get("flip")
        if flip:
            w = int(flip["word"])
            out[4 * w:4 * w + 4] = (int.from_bytes(out[4 * w:4 * w + 4], "little")
                                    ^ (1 << int(flip.get("bit", 0)))).to_bytes(4, "little")
        res["cycles"] += int(self.inject.get("extra_cycles", 0))
        self.driver.emit(now_ps(), "done", {"id": jid, **res, "out": bytes(out)})
