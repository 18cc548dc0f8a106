"""One TCDM bank (``tcdm_bank``) driven word by word: the cocotb side.

Inbound channels (events of a window grant):

* ``batch`` ``{"id", "add": u32 LE bytes, "wen": u8 bytes (1 = read), "be": u8 bytes,
  "data": u32 LE bytes}``: drive the words in order on the bank's slave port, pipelined
  (a new request every cycle the bank grants; ``r_valid``/``r_data`` are checked exactly
  one cycle after each grant, as the protocol says), and emit ``done`` ``{"id", "rdata":
  u32 LE bytes (one per read, in order), "cycles", "stalls", "t0", "t1"}``: ``cycles``
  from the first request to the rise of the last ``r_valid`` (a batch of N words that the
  bank grants back to back takes N), ``stalls`` the cycles a request waited for ``gnt``;
* ``status`` (any payload): emit ``status`` with what the handler waits for and the port's
  signals (the TLM side names the stuck signal with it).

Errors (``gnt_o`` never rises: ``busy_i`` held; ``r_valid_o`` missing after a grant) are
emitted as ``error`` ``{"id", "kind", "message"}`` naming the signal, the address and the
time; the adapter timeout is ``adapter_timeout_cycles``.

Test-only fault injection (``inject`` in the configuration, never set by scenarios):
``{"flip": {"write": k, "bit": b}}`` flips bit ``b`` of ``data_i`` of the ``k``-th word
write (counted from 0 over the run; the RTL stores the wrong word), ``{"flip": {"read":
k, "bit": b}}`` flips bit ``b`` of the ``k``-th ``r_data_o`` sampled; ``{"crash": {"batch":
n, "after_cycles": c}}`` SIGKILLs this process ``c`` cycles into batch ``n``; ``{"hang":
{"batch": n}}`` blocks this process in batch ``n``; ``{"busy": {"batch": n}}`` holds
``busy_i`` high from batch ``n`` on (the bank never grants).
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from ..adapters import AdapterError, AdapterTimeout, Pin, now_ps, reset


class TcdmBankHandler:
    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        self.timeout = int(cfg.get("adapter_timeout_cycles", 1000))
        self.inject = cfg.get("inject") or {}
        self.clk = dut.clk_i
        Clock(self.clk, self.period, unit="ps", period_high=self.period // 2).start(
            start_high=False)
        self.p = {n: Pin(getattr(dut, n)) for n in (
            "req_i", "gnt_o", "add_i", "wen_i", "be_i", "data_i", "r_data_o", "r_valid_o",
            "busy_i")}
        self.p["req_i"].set(0)
        self.p["busy_i"].set(0)
        self.driver = None
        self.batches = self.reads = self.writes = self.stalls = self.cycles = 0
        self.waiting = "nothing (idle)"
        self.t_wait = 0
        self.cur: tuple[int, int] = (0, 0)      # (words granted, words) of the batch

    async def start(self) -> None:
        await reset(self.clk, self.dut.rst_ni, 3)

    def info(self) -> dict:
        return {"period_ps": self.period, "top": "tcdm_bank", "words": len(self.dut.mem_q)
                if hasattr(self.dut, "mem_q") else None}

    def busy(self) -> int:
        return 0      # nothing happens between batches

    def handlers(self) -> dict:
        return {"batch": self._batch, "status": self._status}

    def stats(self) -> dict:
        return {"batches": self.batches, "reads": self.reads, "writes": self.writes,
                "stall_cycles": self.stalls, "cycles": self.cycles}

    # ------------------------------------------------------------------ channels
    async def _status(self, _payload: Any) -> None:
        p = self.p
        self.driver.emit(now_ps(), "status", {
            "waiting": self.waiting, "for_cycles": int((now_ps() - self.t_wait) // self.period),
            "req_i": p["req_i"].get(), "gnt_o": p["gnt_o"].get(), "busy_i": p["busy_i"].get(),
            "r_valid_o": p["r_valid_o"].get(), "granted": self.cur[0], "words": self.cur[1]})

    async def _batch(self, msg: dict) -> None:
        bid = msg.get("id")
        k = self.batches
        self.batches += 1
        try:
            await self._run(bid, k, msg)
        except Exception as e:  # noqa: BLE001 - reported to the TLM side, never swallowed
            self.p["req_i"].set(0)
            self.driver.emit(now_ps(), "error", {"id": bid, "kind": type(e).__name__,
                                                 "message": str(e)})
        finally:
            self.waiting = "nothing (idle)"

    def _injected(self, what: str, k: int) -> dict | None:
        spec = self.inject.get(what)
        return spec if spec and int(spec.get("batch", 0)) == k else None

    async def _run(self, bid: Any, k: int, msg: dict) -> None:
        p = self.p
        req, gnt, add_p, wen_p = p["req_i"], p["gnt_o"], p["add_i"], p["wen_i"]
        be_p, data_p, rdata_p, rvalid = p["be_i"], p["data_i"], p["r_data_o"], p["r_valid_o"]
        add = np.frombuffer(msg["add"], dtype="<u4").tolist()
        wen = list(msg["wen"])
        be = list(msg["be"])
        data = np.frombuffer(msg["data"], dtype="<u4").tolist()
        n = len(add)
        flip = self.inject.get("flip") or {}
        fw = -1          # the op index of the write to flip, if it is in this batch
        if "write" in flip:
            wi = np.flatnonzero(np.frombuffer(msg["wen"], dtype=np.uint8) == 0)
            j = int(flip["write"]) - self.writes
            fw = int(wi[j]) if 0 <= j < wi.size else -1
        fr = int(flip["read"]) if "read" in flip else -1
        fbit = 1 << int(flip.get("bit", 0))
        busy = self.inject.get("busy")
        if busy and k >= int(busy.get("batch", 0)):
            p["busy_i"].set(1)
        crash = self._injected("crash", k)
        crash_at = int(crash.get("after_cycles", 0)) if crash else -1
        if self._injected("hang", k):
            while True:
                time.sleep(3600)
        edge = RisingEdge(self.clk)
        # drive right after an edge: the event may arrive at any time step
        await edge
        t0 = now_ps()
        self.cur = (0, n)
        self.waiting = "gnt_o (a request is presented)"
        self.t_wait = t0
        rdata: list[int] = []
        i = 0            # the word presented during the coming cycle
        pend = -1        # the word granted at the previous edge (its response is due)
        wait = stalls = 0
        cyc = 0
        t_last = t0
        nreads = self.reads

        def present(j: int) -> None:
            add_p.set(add[j])
            wen_p.set(wen[j])
            be_p.set(be[j])
            d = data[j]
            if j == fw:
                d ^= fbit
            data_p.set(d)

        if n:
            present(0)
            req.set(1)
        while i < n or pend >= 0:
            await edge
            cyc += 1
            if 0 <= crash_at < cyc:
                os.kill(os.getpid(), signal.SIGKILL)
            if pend >= 0:
                if not rvalid.get():
                    raise AdapterError(
                        f"{self.name}: RTL signal r_valid_o was 0 in the cycle after the grant "
                        f"of the {'read' if wen[pend] else 'write'} at 0x{add[pend]:08x} "
                        f"(t = {now_ps()} ps): the bank does not answer one cycle after gnt")
                t_last = now_ps() - self.period    # r_valid rose one cycle ago
                if wen[pend]:
                    v = rdata_p.get()
                    if nreads + len(rdata) == fr:
                        v ^= fbit
                    rdata.append(v)
                pend = -1
            if i < n:
                if gnt.get():
                    pend = i
                    i += 1
                    wait = 0
                    self.cur = (i, n)
                    self.t_wait = now_ps()
                    if i < n:
                        present(i)
                    else:
                        req.set(0)
                        self.waiting = "r_valid_o (the last response)"
                else:
                    wait += 1
                    stalls += 1
                    if wait >= self.timeout:
                        req.set(0)
                        raise AdapterTimeout(
                            f"{self.name}: RTL signal gnt_o stayed 0 for {wait} cycles "
                            f"({'read' if wen[i] else 'write'} 0x{add[i]:08x}, word {i} of "
                            f"{n} of batch {bid}, busy_i = {p['busy_i'].get()}, t = "
                            f"{now_ps()} ps): the bank never grants")
        if crash_at >= 0:       # a batch shorter than after_cycles
            os.kill(os.getpid(), signal.SIGKILL)
        writes = n - len(rdata)
        self.reads += len(rdata)
        self.writes += writes
        cycles = (t_last - t0) // self.period if n else 0
        self.cycles += cycles
        self.stalls += stalls
        self.driver.emit(now_ps(), "done", {
            "id": bid, "rdata": np.asarray(rdata, dtype="<u4").tobytes(), "cycles": int(cycles),
            "stalls": stalls, "t0": t0, "t1": now_ps()})
