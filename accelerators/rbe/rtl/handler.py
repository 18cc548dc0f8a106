"""The RBE (``rbe_top``) as a job-level transactor: the cocotb side.

Inbound channels (events of a window grant):

* ``job`` ``{"id", "regs": [[offset, value], ...], "image": bytes}``: load the TCDM image
  into the memory the RTL's TCDM master is served from (a :class:`TrackedMemory`), program
  the job through the HWPE peripheral port exactly like firmware (ACQUIRE, the job
  registers, TRIGGER), run until ``busy_o`` falls and the end-of-job pulse came, read
  STATUS, and emit ``done`` ``{"id", "cycles", "status", "writes": [[addr, bytes,
  cycles_u32], ...], "tcdm": {...}}``: ``cycles`` from the rise to the fall of ``busy_o``
  (the definition ``job_cycles`` is verified against), ``writes`` the runs of bytes the RTL
  wrote with the job cycle of each byte's last write;
* ``status`` (any payload): emit ``status`` with what the handler is waiting for and the
  RTL signals that tell (used by the TLM side to name a stuck signal).

Errors (an :class:`AdapterTimeout` of the peripheral port, a job the RTL rejects, ...)
are emitted as ``error`` ``{"id", "message", "kind"}`` instead of failing the cocotb test.

Test-only fault injection (``inject`` in the configuration, never set by scenarios):
``{"flip": {"job": n, "write": k, "bit": b}}`` flips bit ``b`` of the first enabled byte
of the RTL's ``k``-th TCDM write of the ``n``-th job (counted from 0) as it lands in
memory; ``{"crash": {"job": n, "after_cycles": c}}`` kills this process (SIGKILL) ``c``
cycles into job ``n``; ``{"hang": {"job": n}}`` blocks this process in job ``n``.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge

from components.rbe import REGMAP

from cosim.rtl.adapters import (ByteMemory, HwpePeriphMaster, IrqMonitor, TcdmResponder, now_ps,
                        reset)
from cosim.rtl.adapters.hwpe import periph_signals
from cosim.rtl.adapters.tcdm import master_signals as tcdm_signals

REG = {r.name: r.offset for r in REGMAP.control.values()}


class TrackedMemory(ByteMemory):
    """A :class:`ByteMemory` that remembers which bytes were written, and when."""

    def __init__(self, size: int, base: int):
        super().__init__(size, base)
        self.written = np.zeros(size, dtype=bool)
        self.wtime = np.zeros(size, dtype=np.int64)
        self.nwrites = 0
        self.flip: tuple[int, int] | None = None   # (write index, bit) of this job

    def load(self, image: bytes) -> None:
        self.data[:] = np.frombuffer(image, dtype=np.uint8)
        self.written[:] = False
        self.nwrites = 0

    def write(self, addr: int, data: bytes, be_mask: bytes | None = None) -> None:
        off = addr - self.base
        n = len(data)
        if self.flip is not None and self.flip[0] == self.nwrites:
            en = [i for i in range(n) if be_mask is None or be_mask[i]]
            if en:
                b = bytearray(data)
                b[en[0]] ^= 1 << self.flip[1]
                data = bytes(b)
        self.nwrites += 1
        super().write(addr, data, be_mask)
        if 0 <= off and off + n <= self.size:
            t = now_ps()
            if be_mask is None:
                self.written[off:off + n] = True
                self.wtime[off:off + n] = t
            else:
                m = np.frombuffer(bytes(be_mask), dtype=np.uint8).astype(bool)
                self.written[off:off + n] |= m
                self.wtime[off:off + n][m] = t

    def runs(self, t0: int, period: int) -> list[list]:
        """``[addr, bytes, cycles (uint32 LE bytes)]`` per run of written bytes."""
        idx = np.flatnonzero(self.written)
        if idx.size == 0:
            return []
        cut = np.flatnonzero(np.diff(idx) != 1) + 1
        out = []
        for run in np.split(idx, cut):
            a, b = int(run[0]), int(run[-1]) + 1
            cyc = ((self.wtime[a:b] - t0) // period).clip(0, 2**32 - 1).astype("<u4")
            out.append([self.base + a, self.data[a:b].tobytes(), cyc.tobytes()])
        return out




class RbeJobHandler:
    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        self.inject = cfg.get("inject") or {}
        self.mem = TrackedMemory(int(cfg["tcdm_size"]), int(cfg["tcdm_base"]))
        clk = dut.clk_i
        self.clk = clk
        Clock(clk, self.period, unit="ps", period_high=self.period // 2).start(start_high=False)
        self.cfg = HwpePeriphMaster(clk, periph_signals(dut), name=f"{self.name}.periph",
                                    timeout_cycles=int(cfg.get("adapter_timeout_cycles", 1000)))
        self.tcdm = TcdmResponder(clk, tcdm_signals(dut), self.mem, n_ports=9, contiguous=True,
                                  name=f"{self.name}.tcdm").start()
        self.evt = IrqMonitor(dut.evt_o, name="evt_o")
        self.driver = None
        self.jobs = 0
        self.waiting = "nothing (idle)"
        self.t_wait = 0
        self.acc0 = 0

    async def start(self) -> None:
        await reset(self.clk, self.dut.rst_ni, 4)

    def info(self) -> dict:
        return {"period_ps": self.period, "top": "rbe_top"}

    def busy(self) -> int:
        return int(self.dut.busy_o.value)

    def handlers(self) -> dict:
        return {"job": self._job, "status": self._status}

    def stats(self) -> dict:
        return {"jobs": self.jobs, **self.tcdm.stats()}

    # ------------------------------------------------------------------ channels
    async def _status(self, _payload: Any) -> None:
        cyc = (now_ps() - self.t_wait) // self.period
        self.driver.emit(now_ps(), "status", {
            "waiting": self.waiting, "for_cycles": int(cyc), "busy_o": self.busy(),
            "evt_pulses": self.evt.count, "tcdm_req_o": int(self.dut.tcdm_req_o.value),
            "tcdm_accesses": self.tcdm.accesses - self.acc0})

    def _wait(self, what: str) -> None:
        self.waiting = what
        self.t_wait = now_ps()

    async def _job(self, p: dict) -> None:
        jid = p.get("id")
        n = self.jobs
        self.jobs += 1
        try:
            await self._run(jid, n, p)
        except Exception as e:  # noqa: BLE001 - reported to the TLM side, never swallowed
            self.driver.emit(now_ps(), "error", {"id": jid, "kind": type(e).__name__,
                                                 "message": str(e)})
        finally:
            self.waiting = "nothing (idle)"
            self.mem.flip = None

    async def _run(self, jid: Any, n: int, p: dict) -> None:
        dut, mem = self.dut, self.mem
        mem.load(p["image"])
        flip = self.inject.get("flip")
        mem.flip = (int(flip["write"]), int(flip.get("bit", 0))) \
            if flip and int(flip.get("job", 0)) == n else None
        # the adapters drive right after a clock edge (sample at the edge, drive for the
        # next cycle); a grant may deliver this event exactly at an edge's time step
        await RisingEdge(self.clk)
        self._wait("the ACQUIRE read (periph_gnt_o / periph_r_valid_o)")
        rid = await self.cfg.read(REG["ACQUIRE"])
        if rid == REGMAP.acquire_busy:
            st = await self.cfg.read(REG["STATUS"])
            raise RuntimeError(f"ACQUIRE returned busy: the RTL has no free job context "
                               f"(STATUS = 0x{st:08x}, busy_o = {self.busy()})")
        self._wait("the job register writes (periph_gnt_o / periph_r_valid_o)")
        for off, val in p["regs"]:
            await self.cfg.write(int(off), int(val))
        evts = self.evt.count
        acc0 = self.acc0 = self.tcdm.accesses
        await self.cfg.write(REG["TRIGGER"], 0)
        crash = self.inject.get("crash")
        if crash and int(crash.get("job", 0)) == n:
            await ClockCycles(self.clk, int(crash.get("after_cycles", 0)) + 1)
            os.kill(os.getpid(), signal.SIGKILL)
        hang = self.inject.get("hang")
        if hang and int(hang.get("job", 0)) == n:
            while True:
                time.sleep(3600)
        self._wait("busy_o to rise after TRIGGER")
        if not int(dut.busy_o.value):
            await RisingEdge(dut.busy_o)
        t0 = now_ps()
        self._wait("busy_o to fall (the job to end)")
        await FallingEdge(dut.busy_o)
        t1 = now_ps()
        if self.evt.count == evts:
            self._wait("the end-of-job pulse on evt_o")
            await self.evt.wait(self.clk, 16)
        self._wait("the STATUS read (periph_gnt_o / periph_r_valid_o)")
        status = await self.cfg.read(REG["STATUS"])
        self.driver.emit(now_ps(), "done", {
            "id": jid, "rid": rid, "cycles": round((t1 - t0) / self.period), "t0": t0,
            "t1": t1, "status": status, "writes": mem.runs(t0, self.period),
            "tcdm_accesses": self.tcdm.accesses - acc0, "errors": [list(e) for e in mem.errors[:10]]})
        mem.errors.clear()
