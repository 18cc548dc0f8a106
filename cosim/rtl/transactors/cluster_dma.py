"""``cluster.dma`` swapped for the Verilated cluster DMA (``rtl/cluster_dma``,
``cluster_dma``): a transfer-level transactor (docs/rtl.md, "Cluster DMA in scenarios").

* ``rtl`` (hook :attr:`ClusterDma.executor`): every transfer that passed the model's push
  checks runs on the RTL, one at a time in push order (the RTL has one transfer in
  flight). At its start the transactor reads by debug transport the source rows and the
  current destination rows (L2 through what ``dma.axi`` reaches, TCDM through
  ``dma.tcdm``; beat/word aligned, only the touched ranges) and sends them with the
  register values firmware would write; the child (:mod:`cosim.rtl.handlers.cluster_dma`)
  programs the RTL through its peripheral port, serves its AXI master (cocotbext-axi) and
  TCDM master from those images, and answers with the RTL cycles (CMD write to the fall
  of ``busy_o``), the AXI bursts it issued and the runs of bytes it wrote. The TLM side
  waits that many cluster cycles, writes back exactly those bytes (debug writes) and ends
  the transfer like the model (``_finish``: events, irq, DONE/FREE, statistics). Data are
  the RTL's; time is the RTL's, measured without contention (the child's memories always
  answer at once).
* ``shadow`` (hook :attr:`ClusterDma.watch`): the model moves data and time; when the
  model starts a transfer (its first burst) the RTL runs the same transfer from a debug
  snapshot taken at that instant; when the model ends it, the destination bytes (and any
  byte the RTL wrote) are compared and the first divergence (transfer, simulated time,
  address, expected, actual) is reported.

The model's figure per transfer: in ``rtl`` mode its analytical duration (docs/memory.md,
"Transfer duration", in the current TCDM mode; :func:`model_duration_ps`), in ``shadow``
mode its real duration (push to end). The RTL is slower by design (one burst in flight,
store and forward: about 2 cycles per 8 bytes, against the model's 8 bytes per cycle), so
the relative difference is large and positive; that is the honest figure.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from tlm.units import fmt_time

from ..options import RtlOptions
from ..transactor import Transactor, rel_diff

#: the RTL's parameter defaults (rtl/cluster_dma/cluster_dma.sv)
RTL_DEFAULTS = {"QUEUE_DEPTH": 16, "L2_BASE": 0x1C00_0000, "L2_END": 0x1C10_0000,
                "TCDM_BASE": 0x1000_0000, "TCDM_SIZE": 0x2_0000, "MAX_BURST_BEATS": 256,
                "PAGE_BYTES": 4096}


def model_duration_ps(ms: Any, cmd: Any) -> int:
    """The model's analytical duration of ``cmd`` alone (push to end, ps) on the memory
    system ``ms`` with its present clocks (docs/memory.md, "Transfer duration"):
    ``cmd*Tc + L_path + L_tcdm*Tc + sum_k occ(B_k)``, plus in TCDM word mode the TCDM
    beats of the last burst of an L2 -> TCDM transfer."""
    from components.cluster_dma import split_bursts
    from components.l2 import bank_occupancy
    p = ms.params
    tc, ts = ms.cluster_clock.period, ms.soc_clock.period
    cdc, dma, tp = p["cdc"], p["cluster.dma"], p["cluster.tcdm"]
    l_cdc = cdc.soc_cycles * ts + cdc.cluster_cycles * tc
    l2 = ms.memory_at(cmd.l2)
    l_path = (p["cluster.xbar"].latency * tc + 2 * l_cdc
              + (p["soc.xbar"].latency + l2.params.latency) * ts)
    total = dma.cmd_latency * tc + l_path + tp.latency * tc
    port_words = max(1, tp.dma_port_bytes // 4)
    tbase = ms.tcdm.region.base
    beats = 0
    for a, t, b in split_bursts(cmd, dma.beat_bytes, dma.max_burst_beats, dma.page_bytes):
        lt = t - tbase
        beats = math.ceil(((lt + b - 1) // 4 - lt // 4 + 1) / port_words)
        m = ms.memory_at(a, b)
        banks = bank_occupancy(m.local(a), b, m.params.banks, m.params.bank_word_bytes,
                               m.params.interleaving, m.size)
        total += max(math.ceil(b / dma.beat_bytes) * tc,
                     math.ceil(b / p["cluster.xbar"].width) * tc,
                     math.ceil(b / p["soc.xbar"].width) * ts,
                     max(banks) * ts, beats * tc)
    if tp.mode == "word" and cmd.to_tcdm:
        total += beats * tc
    return int(total)


def _rows(cmd: Any, to_l2: bool) -> list[tuple[int, int]]:
    """``(address, bytes)`` of every row of ``cmd`` on one side."""
    base, step = (cmd.l2, cmd.l2_step) if to_l2 else (cmd.tcdm, cmd.tcdm_step)
    return [(base + r * step, cmd.row_bytes) for r in range(cmd.rows)]


def _ranges(rows: list[tuple[int, int]], align: int) -> list[tuple[int, int]]:
    """The rows widened to ``align`` bytes (what the RTL reads: whole AXI beats, whole
    TCDM words), merged where they touch: ``[(start, end), ...]``."""
    out: list[list[int]] = []
    for a, n in sorted(rows):
        lo, hi = a - a % align, -(-(a + n) // align) * align
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


class MemoryRefused(Exception):
    """A TLM memory refused a debug access of the transfer (e.g. a domain powered off)."""


class DmaTransactor(Transactor):
    """``cluster.dma`` swapped for ``cluster_dma`` (``rtl``) or shadowed by it (``shadow``)."""

    top = "cluster_dma"
    handler = "cosim.rtl.handlers.cluster_dma:DmaTransferHandler"
    unit = "transfers"
    estimate = {"rtl": "the model's analytical duration (docs/memory.md) in the current "
                       "TCDM mode, without contention",
                "shadow": "the model's duration (push to end), contention included"}

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        from .. import blocks
        super().__init__(run, path, mode, waves=waves, options=options, waves_dir=waves_dir)
        self.ms = ms = run.platform.ms
        self.dma = dma = ms.dma
        prm = dma.params
        if prm.beat_bytes != 8:
            raise self.config_error(f"the RTL has a 64-bit AXI port; "
                              f"cluster.dma.beat_bytes = {prm.beat_bytes} is not 8")
        self.period = int(dma.clock.period)
        want = {"QUEUE_DEPTH": prm.queue_depth, "L2_BASE": dma.l2_window[0],
                "L2_END": dma.l2_window[1], "TCDM_BASE": dma.tcdm_window[0],
                "TCDM_SIZE": dma.tcdm_window[1] - dma.tcdm_window[0],
                "MAX_BURST_BEATS": prm.max_burst_beats, "PAGE_BYTES": prm.page_bytes}
        params = {k: v for k, v in want.items() if RTL_DEFAULTS[k] != v}
        self.setup(blocks.cluster_dma(**params), {"period_ps": self.period})
        self._pending: dict[int, tuple] = {}
        if mode == "rtl":
            dma.executor = self._execute_rtl
        else:
            dma.watch = self._watch

    # ----- debug access to the TLM memories ---------------------------------------------
    def _side(self, l2: bool) -> Any:
        return self.dma.axi if l2 else self.dma.tcdm

    def _read_range(self, l2: bool, lo: int, hi: int) -> bytes:
        """Bytes ``[lo, hi)`` of one side, in pieces that never cross a page (the L2
        targets meet at page boundaries); :class:`MemoryRefused` if a piece fails."""
        from tlm import GenericPayload
        from tlm.payload import READ
        page = self.dma.params.page_bytes
        out = bytearray()
        a = lo
        while a < hi:
            n = min(hi - a, page - a % page)
            p = GenericPayload(READ, a, bytearray(n), initiator=self.path + ".rtl")
            self._dbg(self._side(l2), p)
            if not p.is_ok:
                raise MemoryRefused(f"debug read of {n} B at 0x{a:08x} through "
                                    f"{self._side(l2).path} failed ({p.status})")
            out += p.data
            a += n
        return bytes(out)

    def _dbg(self, socket: Any, p: Any) -> None:
        from tlm.errors import SimulationError
        try:
            socket.transport_dbg(p)
        except SimulationError as e:
            # e.g. a link cut between processes: the data must be reached without time
            raise self._error(
                f"model {self.mode!r} moves the transfer's data by debug transport through "
                f"{socket.path}, which failed at 0x{p.address:08x}: {e}. In a split run keep "
                "cluster.dma with the memories it reaches (e.g. --partition "
                "'soc,cluster,pmu|hyperram')") from None

    def _write_range(self, l2: bool, addr: int, data: bytes) -> None:
        from tlm import GenericPayload
        from tlm.payload import WRITE
        page = self.dma.params.page_bytes
        a, k = addr, 0
        while k < len(data):
            n = min(len(data) - k, page - a % page)
            p = GenericPayload(WRITE, a, bytearray(data[k:k + n]), initiator=self.path + ".rtl")
            self._dbg(self._side(l2), p)
            if not p.is_ok:
                raise self._error(f"debug write of {n} B at 0x{a:08x} through "
                                  f"{self._side(l2).path} failed ({p.status})")
            a += n
            k += n

    def _images(self, cmd: Any) -> dict:
        """Both sides' touched ranges (beats on L2, words on the TCDM), read now."""
        return {side: [[lo, self._read_range(side == "l2", lo, hi)]
                       for lo, hi in _ranges(_rows(cmd, side == "l2"), 8 if side == "l2" else 4)]
                for side in ("l2", "tcdm")}

    # ----- one transfer in the child ------------------------------------------------------
    @staticmethod
    def _registers(cmd: Any) -> tuple[dict, int]:
        """The register values firmware writes for ``cmd`` and the CMD word."""
        from components.cluster_dma import CMD_L2_2D
        word = cmd.word()
        l2_stride = cmd.l2_stride
        if cmd.is_2d and cmd.l2_stride is None and cmd.tcdm_stride is None:
            # 2D with both sides contiguous (Python API only): one 2D side keeps the
            # model's per-row burst split
            word |= CMD_L2_2D
            l2_stride = cmd.row_len
        regs = {"TCDM_ADDR": cmd.tcdm, "L2_ADDR": cmd.l2,
                "ROW_LEN": cmd.row_len or 0, "L2_STRIDE": l2_stride or 0,
                "TCDM_STRIDE": cmd.tcdm_stride or 0}
        return regs, word

    def _run_rtl(self, k: int, x: Any, images: dict, estimate: int) -> dict:
        regs, word = self._registers(x.command)
        done = self.run_job(
            f"transfer {k} (ID {x.id})", estimate, self.period,
            ["transfer", {"id": k, "regs": regs, "cmd": word, **images}],
            describe=lambda s: (
                f"busy_o = {s.get('busy_o', '?')}, m_axi_arvalid = "
                f"{s.get('m_axi_arvalid', '?')}, m_axi_awvalid = {s.get('m_axi_awvalid', '?')}, "
                f"m_axi_rready = {s.get('m_axi_rready', '?')}, m_axi_wvalid = "
                f"{s.get('m_axi_wvalid', '?')}, tcdm_req_o = 0x{s.get('tcdm_req_o', 0):x}, "
                f"{s.get('bursts', '?')} AXI bursts so far"))
        if done.get("error"):
            raise self._error(f"{self.where} ended transfer {k} (ID {x.id}) with ERROR = "
                              f"0x{int(done['error']):x}, which the model's decoder accepted")
        if done.get("errors"):
            kind, addr, n = done["errors"][0]
            raise self._error(f"{self.where}: transfer {k} (ID {x.id}) made a {kind} of {n} B "
                              f"at 0x{int(addr):08x}, outside the rows of the transfer")
        return done

    def _estimate(self, cmd: Any) -> int:
        return -(-model_duration_ps(self.ms, cmd) // int(self.dma.clock.period))

    # ----- rtl: the executor (installed as dma.executor) ---------------------------------
    async def _execute_rtl(self, x: Any) -> int:
        from components.cluster_dma import DmaError
        k = len(self.items)
        cmd = x.command
        est = self._estimate(cmd)
        try:
            images = self._images(cmd)
        except MemoryRefused as e:    # what the model's bursts would see: a bus error
            x.error |= DmaError.BUS
            self._record(k, x, 0, est, 0, None, note=f"BUS, nothing moved: {e}")
            return 0
        done = self._run_rtl(k, x, images, est)
        cycles = int(done["cycles"])
        await self.dma.clock.wait_cycles(cycles)
        written = 0
        for side in ("l2", "tcdm"):
            for addr, data, _cyc in done["writes"][side]:
                self._write_range(side == "l2", int(addr), bytes(data))
                written += len(data)
        self._record(k, x, cycles, est, written, done)
        return int(done["bursts"])

    # ----- shadow: the watcher (installed as dma.watch) ----------------------------------
    def _watch(self, what: str, x: Any) -> None:
        if what == "start":
            k = len(self.items) + len(self._pending)
            try:
                images = self._images(x.command)      # what the model reads from now on
            except MemoryRefused as e:  # the model's bursts will fail too: not run
                self._record(k, x, 0, 0, 0, None, note=f"not run on the RTL: {e}")
                return
            done = self._run_rtl(k, x, images, self._estimate(x.command))
            self._pending[id(x)] = (k, images, done)
            return
        entry = self._pending.pop(id(x), None)
        if entry is None:
            return
        k, images, done = entry
        model = -(-(x.end_time - x.push_time) // int(self.dma.clock.period))
        note = None
        if x.error:
            note = f"the model ended with {x.error!r}: not compared"
        else:
            self._compare(k, x, images, done)
        written = sum(len(d) for s in ("l2", "tcdm") for _a, d, _c in done["writes"][s])
        self._record(k, x, int(done["cycles"]), model, written, done, note=note,
                     formula=self._estimate(x.command))

    def _compare(self, k: int, x: Any, images: dict, done: dict) -> None:
        """The RTL's destination bytes vs the model's, at the model's transfer end."""
        cmd = x.command
        side = "tcdm" if cmd.to_tcdm else "l2"
        rows = _rows(cmd, side == "l2")
        found = None
        for lo, data in images[side]:
            n = len(data)
            rtl = np.frombuffer(bytes(data), dtype=np.uint8).copy()
            rcyc = np.full(n, -1, dtype=np.int64)
            for addr, wd, cyc in done["writes"][side]:
                a = int(addr)
                if lo <= a < lo + n:
                    o = a - lo
                    m = len(wd)
                    rtl[o:o + m] = np.frombuffer(bytes(wd), dtype=np.uint8)
                    rcyc[o:o + m] = np.frombuffer(bytes(cyc), dtype="<u4")
            mask = rcyc >= 0
            for a, m in rows:
                if lo <= a < lo + n:
                    mask[a - lo:a - lo + m] = True
            model = np.frombuffer(self._read_range(side == "l2", lo, lo + n), dtype=np.uint8)
            self.compared += int(mask.sum())
            bad = np.flatnonzero(mask & (model != rtl))
            if bad.size and found is None:
                found = (lo, bad, model, rtl, rcyc)
        if found is None:
            return
        self.divergent += 1
        if self.divergence is not None:
            return
        lo, bad, model, rtl, rcyc = found
        start, end = x.start_time, self.sim.now
        t = np.where(rcyc[bad] >= 0, start + rcyc[bad] * self.period, end)
        i = int(np.lexsort((bad, t))[0])        # earliest, then lowest address
        off = int(bad[i])
        self.divergence = {
            "at": f"transfer {k}", "transfer": k, "id": x.id, "time_ps": int(t[i]),
            "time": fmt_time(int(t[i])), "address": f"0x{lo + off:08x}",
            "expected": f"0x{int(model[off]):02x}", "actual": f"0x{int(rtl[off]):02x}",
            "side": side, "rtl_cycle": int(rcyc[off]) if rcyc[off] >= 0 else None,
            "written_by_rtl": bool(rcyc[off] >= 0), "mismatched_bytes": int(bad.size)}

    # ----- report --------------------------------------------------------------------------
    def _record(self, k: int, x: Any, rtl: int, model: int, written: int, done: dict | None,
                note: str | None = None, formula: int | None = None) -> None:
        cmd = x.command
        item = {"transfer": k, "id": x.id, "push_ps": x.push_time, "start_ps": x.start_time,
                "direction": "l2_to_tcdm" if cmd.to_tcdm else "tcdm_to_l2",
                "l2": f"0x{cmd.l2:08x}", "tcdm": f"0x{cmd.tcdm:08x}", "bytes": cmd.length,
                "rows": cmd.rows, "rtl_cycles": rtl, "model_cycles": model,
                "rel_diff": rel_diff(rtl, model), "bytes_written": written,
                "bursts_model": len(x.bursts),
                "bursts_rtl": None if done is None else int(done["bursts"])}
        if rtl and cmd.length:
            item["rtl_cycles_per_8_bytes"] = round(8 * rtl / cmd.length, 3)
        if formula is not None:
            item["formula_cycles"] = formula
        if note:
            item["note"] = note
        self.items.append(item)

    def report_extra(self) -> dict:
        done = [j for j in self.items if j["bursts_rtl"] is not None]
        nbytes = sum(j["bytes"] for j in done)
        rtl = sum(j["rtl_cycles"] for j in done)
        return {"bytes": nbytes, "period_ps": self.period,
                "bursts_model": sum(j["bursts_model"] for j in done),
                "bursts_rtl": sum(j["bursts_rtl"] for j in done),
                "bursts_equal": all(j["bursts_model"] == j["bursts_rtl"] for j in done),
                "rtl_cycles_per_8_bytes": round(8 * rtl / nbytes, 3) if nbytes else None,
                "timing_note": "the RTL runs one transfer and one burst at a time, store and "
                               "forward (about 2 cycles per 8 bytes); the model streams 8 "
                               "bytes per cycle with 8 bursts in flight: the RTL is slower "
                               "by design"}
