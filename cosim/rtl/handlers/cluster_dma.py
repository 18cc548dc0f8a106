"""The cluster DMA (``cluster_dma``) as a transfer-level transactor: the cocotb side.

Inbound channels (events of a window grant):

* ``transfer`` ``{"id", "regs": {name: value}, "cmd": word, "l2": [[addr, bytes], ...],
  "tcdm": [[addr, bytes], ...]}``: load the memory images (only the ranges the transfer
  touches, beat/word aligned) into the memories the RTL's AXI master (served by
  cocotbext-axi through :class:`AxiResponder`) and TCDM master (:class:`TcdmResponder`)
  are served from; program the transfer through the peripheral port exactly like firmware
  (TCDM_ADDR, L2_ADDR, ROW_LEN, L2_STRIDE, TCDM_STRIDE, a CMD read to reserve an ID, the
  CMD write to push); wait for ``busy_o`` to fall, let the event pulses out, read DONE,
  ERROR and ERR_ID, free the ID (without AUTO_FREE) and clear ERROR; emit ``done``
  ``{"id", "rid", "cycles", "error", "done_reg", "bursts", "pulses", "writes": {"l2":
  runs, "tcdm": runs}, "errors"}``: ``cycles`` from the start of the CMD write to the fall
  of ``busy_o``, ``bursts`` the AXI bursts issued (rises of ARVALID/AWVALID: one burst in
  flight), ``runs`` = ``[addr, bytes, cycles_u32]`` per run of bytes the RTL wrote, with
  the transfer cycle of each byte's last write;
* ``status`` (any payload): emit ``status`` with what the handler waits for and the RTL
  signals that tell (the TLM side names the stuck signal with it).

Errors (an :class:`AdapterTimeout` of the peripheral port, no free ID, ...) are emitted
as ``error`` ``{"id", "message", "kind"}`` instead of failing the cocotb test.

Test-only fault injection (``inject`` in the configuration, never set by scenarios):
``{"flip": {"transfer": n, "write": k, "bit": b}}`` flips bit ``b`` of the first enabled
byte of the RTL's ``k``-th memory write (either side, counted from 0) of the ``n``-th
transfer as it lands in memory; ``{"crash": {"transfer": n, "after_cycles": c}}`` kills
this process (SIGKILL) ``c`` cycles after the push of transfer ``n``; ``{"hang":
{"transfer": n}}`` blocks this process in transfer ``n``.
"""
from __future__ import annotations

import bisect
import os
import signal
import time
from typing import Any

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge

from components.cluster_dma import ID_FULL, REG

from ..adapters import HwpePeriphMaster, IrqMonitor, TcdmResponder, now_ps, reset
from ..adapters.hwpe import periph_signals
from ..adapters.tcdm import master_signals as tcdm_signals
from ..adapters.axi import AxiResponder

ADDR_REGS = ("TCDM_ADDR", "L2_ADDR", "ROW_LEN", "L2_STRIDE", "TCDM_STRIDE")


class Segment:
    """One address range of a memory image, with which bytes were written and when."""

    __slots__ = ("base", "end", "data", "written", "wtime")

    def __init__(self, base: int, data: bytes):
        self.base = base
        self.data = np.frombuffer(data, dtype=np.uint8).copy()
        self.end = base + self.data.size
        self.written = np.zeros(self.data.size, dtype=bool)
        self.wtime = np.zeros(self.data.size, dtype=np.int64)


class SegmentMemory:
    """A memory back-end made of a few loaded ranges (the transfer's rows): reads and
    writes outside them are recorded in ``errors`` (reads return zeros), writes are
    tracked per byte. Answers the ``ByteMemory`` interface the responders use."""

    def __init__(self, name: str):
        self.name = name
        self.segs: list[Segment] = []
        self.starts: list[int] = []
        self.errors: list[tuple[str, int, int]] = []
        self.counter = None   # shared [writes so far, flip] of the transfer

    def load(self, parts: list) -> None:
        self.segs = sorted((Segment(int(a), bytes(d)) for a, d in parts), key=lambda s: s.base)
        self.starts = [s.base for s in self.segs]
        self.errors.clear()

    def _find(self, addr: int, n: int) -> Segment | None:
        i = bisect.bisect_right(self.starts, addr) - 1
        if i >= 0:
            s = self.segs[i]
            if addr + n <= s.end:
                return s
        return None

    def contains(self, addr: int, n: int) -> bool:
        return self._find(addr, n) is not None

    def read(self, addr: int, n: int) -> bytes:
        s = self._find(addr, n)
        if s is None:
            self.errors.append(("read", addr, n))
            return bytes(n)
        off = addr - s.base
        return s.data[off:off + n].tobytes()

    def write(self, addr: int, data: bytes, be_mask: bytes | None = None) -> None:
        n = len(data)
        c = self.counter
        if c is not None:
            if c[1] is not None and c[1][0] == c[0]:
                en = [i for i in range(n) if be_mask is None or be_mask[i]]
                if en:
                    b = bytearray(data)
                    b[en[0]] ^= 1 << c[1][1]
                    data = bytes(b)
            c[0] += 1
        s = self._find(addr, n)
        if s is None:
            if be_mask is None or any(be_mask):
                self.errors.append(("write", addr, n))
            return
        off = addr - s.base
        src = np.frombuffer(bytes(data), dtype=np.uint8)
        m = (np.ones(n, dtype=bool) if be_mask is None
             else np.frombuffer(bytes(be_mask), dtype=np.uint8).astype(bool))
        s.data[off:off + n][m] = src[m]
        s.written[off:off + n] |= m
        s.wtime[off:off + n][m] = now_ps()

    async def aread(self, addr: int, n: int) -> bytes:
        return self.read(addr, n)

    async def awrite(self, addr: int, data: bytes) -> None:
        self.write(addr, bytes(data))

    def runs(self, t0: int, period: int) -> list[list]:
        """``[addr, bytes, cycles (uint32 LE bytes)]`` per run of written bytes."""
        out = []
        for s in self.segs:
            idx = np.flatnonzero(s.written)
            if idx.size == 0:
                continue
            cut = np.flatnonzero(np.diff(idx) != 1) + 1
            for run in np.split(idx, cut):
                a, b = int(run[0]), int(run[-1]) + 1
                cyc = ((s.wtime[a:b] - t0) // period).clip(0, 2**32 - 1).astype("<u4")
                out.append([s.base + a, s.data[a:b].tobytes(), cyc.tobytes()])
        return out




class DmaTransferHandler:
    """Clock (the cluster period), reset and adapters around ``cluster_dma``."""

    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        self.inject = cfg.get("inject") or {}
        self.l2 = SegmentMemory("l2")
        self.tcdm_mem = SegmentMemory("tcdm")
        clk = dut.clk_i
        self.clk = clk
        Clock(clk, self.period, unit="ps", period_high=self.period // 2).start(start_high=False)
        self.cfg = HwpePeriphMaster(clk, periph_signals(dut), name=f"{self.name}.periph",
                                    timeout_cycles=int(cfg.get("adapter_timeout_cycles", 1000)))
        self.axi = AxiResponder(dut, "m_axi", clk, self.l2, dut.rst_ni, True)
        self.tcdm = TcdmResponder(clk, tcdm_signals(dut), self.tcdm_mem, n_ports=2,
                                  contiguous=True, name=f"{self.name}.tcdm").start()
        self.pulses = {k: IrqMonitor(getattr(dut, f"{k}_o"), name=f"{k}_o")
                       for k in ("evt", "irq", "err")}
        self.ar = IrqMonitor(dut.m_axi_arvalid, name="m_axi_arvalid")
        self.aw = IrqMonitor(dut.m_axi_awvalid, name="m_axi_awvalid")
        self.driver = None
        self.transfers = 0
        self.waiting = "nothing (idle)"
        self.t_wait = 0
        self.bursts0 = 0

    async def start(self) -> None:
        self.dut.periph_req_i.value = 0
        await reset(self.clk, self.dut.rst_ni, 4)

    def info(self) -> dict:
        return {"period_ps": self.period, "top": "cluster_dma"}

    def busy(self) -> int:
        return int(self.dut.busy_o.value)

    def handlers(self) -> dict:
        return {"transfer": self._transfer, "status": self._status}

    def stats(self) -> dict:
        return {"transfers": self.transfers, "bursts": self.ar.count + self.aw.count,
                "tcdm": self.tcdm.stats()}

    # ------------------------------------------------------------------ channels
    async def _status(self, _payload: Any) -> None:
        dut = self.dut
        cyc = (now_ps() - self.t_wait) // self.period
        self.driver.emit(now_ps(), "status", {
            "waiting": self.waiting, "for_cycles": int(cyc), "busy_o": self.busy(),
            "m_axi_arvalid": int(dut.m_axi_arvalid.value),
            "m_axi_awvalid": int(dut.m_axi_awvalid.value),
            "m_axi_rready": int(dut.m_axi_rready.value),
            "m_axi_wvalid": int(dut.m_axi_wvalid.value),
            "tcdm_req_o": int(dut.tcdm_req_o.value),
            "bursts": self.ar.count + self.aw.count - self.bursts0})

    def _wait(self, what: str) -> None:
        self.waiting = what
        self.t_wait = now_ps()

    async def _transfer(self, p: dict) -> None:
        xid = p.get("id")
        n = self.transfers
        self.transfers += 1
        try:
            await self._run(xid, n, p)
        except Exception as e:  # noqa: BLE001 - reported to the TLM side, never swallowed
            self.driver.emit(now_ps(), "error", {"id": xid, "kind": type(e).__name__,
                                                 "message": str(e)})
        finally:
            self.waiting = "nothing (idle)"
            self.l2.counter = self.tcdm_mem.counter = None

    def _injected(self, kind: str, n: int) -> dict | None:
        spec = self.inject.get(kind)
        return spec if spec and int(spec.get("transfer", 0)) == n else None

    async def _busy_fall(self) -> tuple[int, int]:
        dut = self.dut
        if not int(dut.busy_o.value):
            await RisingEdge(dut.busy_o)
        t_rise = now_ps()
        await FallingEdge(dut.busy_o)
        return t_rise, now_ps()

    async def _run(self, xid: Any, n: int, p: dict) -> None:
        cfg = self.cfg
        self.l2.load(p["l2"])
        self.tcdm_mem.load(p["tcdm"])
        flip = self._injected("flip", n)
        counter = [0, (int(flip["write"]), int(flip.get("bit", 0))) if flip else None]
        self.l2.counter = self.tcdm_mem.counter = counter
        # the adapters drive right after a clock edge; a grant may deliver this event
        # exactly at an edge's time step
        await RisingEdge(self.clk)
        if self.busy():
            raise RuntimeError("busy_o is 1 before the transfer was pushed")
        self._wait("the address register writes (periph_gnt_o / periph_r_valid_o)")
        regs = p["regs"]
        for name in ADDR_REGS:
            await cfg.write(REG[name], int(regs[name]) & 0xFFFFFFFF)
        self._wait("the CMD read reserving an ID (periph_gnt_o / periph_r_valid_o)")
        rid = await cfg.read(REG["CMD"])
        if rid == ID_FULL:
            st = await cfg.read(REG["STATUS"])
            raise RuntimeError(f"the CMD read returned ID_FULL: no free transfer ID in the "
                               f"RTL (STATUS = 0x{st:08x}, FREE = "
                               f"0x{await cfg.read(REG['FREE']):08x})")
        counts0 = {k: m.count for k, m in self.pulses.items()}
        self.bursts0 = b0 = self.ar.count + self.aw.count
        fall = cocotb.start_soon(self._busy_fall())
        t0 = now_ps()
        self._wait("the CMD write (periph_gnt_o stays 0 while the command is decoded)")
        await cfg.write(REG["CMD"], int(p["cmd"]) & 0xFFFFFFFF)
        crash = self._injected("crash", n)
        if crash:
            await ClockCycles(self.clk, int(crash.get("after_cycles", 0)) + 1)
            os.kill(os.getpid(), signal.SIGKILL)
        if self._injected("hang", n):
            while True:
                time.sleep(3600)
        self._wait("busy_o to fall (the transfer to end)")
        _t_rise, t1 = await fall
        self._wait("the event pulses after busy_o fell")
        await ClockCycles(self.clk, 4)      # evt/irq/err pulses come out after the end
        self._wait("the DONE / ERROR reads (periph_gnt_o / periph_r_valid_o)")
        done_reg = await cfg.read(REG["DONE"])
        err = await cfg.read(REG["ERROR"])
        err_id = await cfg.read(REG["ERR_ID"])
        if done_reg >> rid & 1:
            await cfg.write(REG["FREE"], 1 << rid)      # no AUTO_FREE: free it as firmware
        if err:
            await cfg.write(REG["ERROR"], err)
        self.driver.emit(now_ps(), "done", {
            "id": xid, "rid": rid, "cycles": round((t1 - t0) / self.period), "t0": t0,
            "t1": t1, "error": err, "err_id": err_id, "done_reg": done_reg,
            "bursts": self.ar.count + self.aw.count - b0,
            "pulses": {k: m.count - counts0[k] for k, m in self.pulses.items()},
            "writes": {"l2": self.l2.runs(t0, self.period),
                       "tcdm": self.tcdm_mem.runs(t0, self.period)},
            "errors": [list(e) for e in (self.l2.errors + self.tcdm_mem.errors)[:10]],
            "tcdm_accesses": self.tcdm.accesses})
