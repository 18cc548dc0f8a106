"""``cluster.tcdm.bank{n}`` swapped for the Verilated SRAM bank (``rtl/tcdm_bank``): an
access-level transactor of the TCDM's word mode (docs/rtl.md, "tcdm_bank in scenarios").

The TCDM model keeps arbitrating (timing is the model's); the bank's *storage* is the RTL.
The transactor is the TCDM's ``bank_port`` (components/tcdm/): every data movement that
touches bank ``n`` -- timed transactions at issue time, debug transport, loads, a power-off
scramble -- is turned into word accesses of the bank's slave port in the transaction's word
order, byte enables honoured:

* writes are *posted*: queued and sent with the next batch that needs a reply;
* ``rtl``: a read (timed or debug) sends the queue and its own words as one batch (one
  round trip) and returns the RTL's ``r_data``, which also lands in the TCDM array (the
  array is a mirror of the bank: what the RTL stored or returned);
* ``shadow``: the array stays authoritative; reads are queued too, with the model's word
  as the expected value, and compared when the batch is sent (every 8192 words and at the
  end of the run); debug reads are not sent (they are not bank traffic).

At the end of the run (``close``, before the runner takes the final memories) the queue is
sent and the whole bank is read back: in ``rtl`` mode into the array (so memory checks and
the report's hashes see the RTL's storage), in ``shadow`` mode compared with the array.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tlm.memory import as_bytes_view
from tlm.payload import READ, WRITE
from tlm.units import fmt_time

from ..options import RtlOptions
from ..transactor import Transactor, rel_diff

#: shadow mode: queued words that make a batch
FLUSH_WORDS = 8192


class TcdmBankTransactor(Transactor):
    """``cluster.tcdm.bank{n}`` swapped for ``tcdm_bank`` (``rtl``) or shadowed by it."""

    top = "tcdm_bank"
    handler = "cosim.rtl.handlers.tcdm_bank:TcdmBankHandler"
    unit = "accesses"
    estimate = {"rtl": "one word per cycle + latency per batch (the model's bank service)",
                "shadow": "one word per cycle + latency per batch (the model's bank service)"}

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        from .. import blocks
        super().__init__(run, path, mode, waves=waves, options=options, waves_dir=waves_dir)
        sc = run.sc
        key = ("platform", "models", path)
        tcdm = run.platform.ms.tcdm
        prm = tcdm.params
        n = int(path.rsplit("bank", 1)[1])
        if prm.mode != "word":
            raise sc.error(f"model {mode!r} for {path} needs the TCDM's word mode "
                           f"(cluster.tcdm.mode: word); this scenario has cluster.tcdm.mode = "
                           f"{prm.mode!r}", key)
        if n >= prm.banks:
            raise sc.error(f"model {mode!r} for {path}: the TCDM has {prm.banks} banks "
                           f"(bank0..bank{prm.banks - 1})", key)
        other = tcdm.bank_port
        if other is not None:
            raise sc.error(f"model {mode!r} for {path}: only one TCDM bank can be swapped at a "
                           f"time ({getattr(other, 'path', other)} is)", key)
        self.tcdm = tcdm
        self.bank = n
        self.banks = nb = prm.banks
        self.nwords = tcdm.size // (4 * nb)
        self.ob = (nb - 1).bit_length()                   # OFFSET_BITS: bank-select bits
        aw = max(1, (self.nwords - 1).bit_length())
        self.latency = prm.latency
        self.period = int(tcdm.clock.period)
        self.setup(blocks.tcdm_bank(NUM_WORDS=self.nwords, OFFSET_BITS=self.ob, AW=aw),
                   {"period_ps": self.period})
        self.array = tcdm.array
        # the bank's words in the array: row k = local word k * banks + n
        self.view = tcdm.array.reshape(-1, 4 * nb)[:, 4 * n:4 * n + 4]
        # the queue (one entry per word access)
        self._add: list[int] = []
        self._wen: list[int] = []
        self._be: list[int] = []
        self._data: list[int] = []
        self._expect: list[tuple] = []     # shadow: (word, expected, time_ps, initiator)
        self.used = False                  # a timed or debug access reached the bank
        self.nbatch = 0
        self.words = {}                    # kind -> [transactions, reads, writes]
        self.initiators = {}               # TCDM port -> [reads, writes] (timed accesses)
        self.batch_stats = {}              # cause -> [batches, words, reads, rtl, model, stalls]
        self.word_reads = self.word_writes = 0
        self.closed = False
        self.replaced("init")              # the SRAM has no reset: write the initial image
        domain = getattr(getattr(run.platform, "cl", None), "power", None)
        if hasattr(domain, "on_power_off"):   # after the TCDM's own scramble (registered first)
            domain.on_power_off(lambda: self.replaced("power-off"))
        tcdm.bank_port = self

    # ----- the TCDM's bank port ----------------------------------------------------------
    def replaced(self, kind: str = "clear") -> None:
        """The whole array was (re)written: queue the bank's image as word writes."""
        k = np.arange(self.nwords, dtype=np.int64)
        self._add.extend(((k << (2 + self.ob)) | (self.bank << 2)).tolist())
        self._wen.extend([0] * self.nwords)
        self._be.extend([0xF] * self.nwords)
        self._data.extend(np.ascontiguousarray(self.view).view("<u4").reshape(-1).tolist())
        self._count(kind, 0, self.nwords)

    def _count(self, kind: str, reads: int, writes: int, initiator: str | None = None) -> None:
        if initiator is not None:
            c = self.initiators.get(initiator)
            if c is None:
                c = self.initiators[initiator] = [0, 0]
            c[0] += reads
            c[1] += writes
        c = self.words.get(kind)
        if c is None:
            c = self.words[kind] = [0, 0, 0]
        c[0] += 1
        c[1] += reads
        c[2] += writes
        self.word_reads += reads
        self.word_writes += writes

    def access(self, command: Any, rows: Any, row_len: int, data: Any, byte_enable: Any,
               initiator: str) -> None:
        """One data movement of the TCDM (see ``Tcdm.bank_port``)."""
        nb, n = self.banks, self.bank
        if len(rows) == 1:      # the common case: one burst; most miss the bank
            a = int(rows[0])
            w0 = a >> 2
            if w0 + (n - w0) % nb > (a + row_len - 1) >> 2:
                return
        words: list[tuple[int, int, int]] = []      # (word, data offset of lane 0, row start)
        pos = 0
        for r in (rows.tolist() if isinstance(rows, np.ndarray) else rows):
            r = int(r)
            w = (r >> 2)
            w += (n - w) % nb
            end = (r + row_len - 1) >> 2
            while w <= end:
                words.append((w, pos + 4 * w - r, pos))
                w += nb
            pos += row_len
        if not words:
            return
        mv = as_bytes_view(data, pos)
        be_b = bytes(byte_enable) if byte_enable is not None else None
        debug = initiator == "debug"
        if initiator != "load":
            self.used = True
        if command == WRITE:
            for w, o, rs in words:
                l0 = max(0, rs - o)
                l1 = min(4, rs + row_len - o)
                v = int.from_bytes(mv[o + l0:o + l1], "little") << (8 * l0)
                be = ((1 << (l1 - l0)) - 1) << l0
                if be_b is not None:
                    for lane in range(l0, l1):
                        if not be_b[(o + lane) % len(be_b)]:
                            be &= ~(1 << lane)
                self._post(w, 0, be, v)
            if debug or initiator == "load":
                self._count(initiator, 0, len(words))
            else:
                self._count("timed", 0, len(words), initiator)
            if self.mode == "shadow" and len(self._add) >= FLUSH_WORDS:
                self._flush("queue full")
            return
        if command != READ:
            return
        if self.mode == "shadow":
            if debug:
                return          # the model's data; not bank traffic
            now = self.sim.now
            arr = self.array
            for w, _o, _rs in words:
                self._post(w, 1, 0xF, 0)
                self._expect.append((w, int.from_bytes(arr[4 * w:4 * w + 4].tobytes(), "little"),
                                     now, initiator))
            self._count("timed", len(words), 0, initiator)
            if len(self._add) >= FLUSH_WORDS:
                self._flush("queue full")
            return
        for w, _o, _rs in words:
            self._post(w, 1, 0xF, 0)
        if debug:
            self._count("debug", len(words), 0)
        else:
            self._count("timed", len(words), 0, initiator)
        rdata = self._flush("debug read" if debug else f"read by {initiator}")
        arr = self.array
        for (w, o, rs), v in zip(words, rdata):
            b = v.to_bytes(4, "little")
            arr[4 * w:4 * w + 4] = np.frombuffer(b, dtype=np.uint8)   # the mirror
            l0 = max(0, rs - o)
            l1 = min(4, rs + row_len - o)
            if be_b is None:
                mv[o + l0:o + l1] = b[l0:l1]
            else:
                for lane in range(l0, l1):
                    if be_b[(o + lane) % len(be_b)]:
                        mv[o + lane] = b[lane]

    def _post(self, word: int, wen: int, be: int, data: int) -> None:
        self._add.append(((word // self.banks) << (2 + self.ob)) | (self.bank << 2))
        self._wen.append(wen)
        self._be.append(be)
        self._data.append(data)

    # ----- batches -----------------------------------------------------------------------
    def _flush(self, cause: str) -> list[int]:
        """Send the queue as one batch; returns the read data (one int per read)."""
        n = len(self._add)
        if not n:
            return []
        payload = {"id": self.nbatch, "add": np.asarray(self._add, dtype="<u4").tobytes(),
                   "wen": bytes(self._wen), "be": bytes(self._be),
                   "data": np.asarray(self._data, dtype="<u4").tobytes()}
        reads = sum(self._wen)
        expect, self._expect = self._expect, []
        self._add, self._wen, self._be, self._data = [], [], [], []
        bid = self.nbatch
        self.nbatch += 1
        est = n + self.latency
        done = self.run_job(f"batch {bid} ({n} words; {cause} at {fmt_time(self.sim.now)})",
                            est, self.period, ["batch", payload], describe=self._describe)
        rdata = np.frombuffer(done["rdata"], dtype="<u4").tolist()
        if len(rdata) != reads:
            raise self._error(f"{self.where}: batch {bid} returned {len(rdata)} read words for "
                              f"{reads} reads")
        kind = cause.split(" by ")[0]
        st = self.batch_stats.setdefault(kind, [0, 0, 0, 0, 0, 0])
        for i, v in enumerate((1, n, reads, int(done["cycles"]), est, int(done["stalls"]))):
            st[i] += v
        if expect:
            self._compare(expect, rdata[len(rdata) - len(expect):])
        return rdata

    def _describe(self, s: dict) -> str:
        return (f"req_i = {s.get('req_i', '?')}, gnt_o = {s.get('gnt_o', '?')}, busy_i = "
                f"{s.get('busy_i', '?')}, {s.get('granted', '?')} of {s.get('words', '?')} "
                "words granted")

    def _compare(self, expect: list[tuple], rdata: list[int]) -> None:
        bad = 0
        for (w, exp, t, who), act in zip(expect, rdata):
            if act == exp:
                continue
            bad += 1
            if self.divergence is None:
                self.divergence = {
                    "at": f"read of bank {self.bank} by {who}", "time_ps": int(t),
                    "time": fmt_time(int(t)), "initiator": who,
                    "address": f"0x{self.tcdm.base + 4 * w:08x}",
                    "bank_word": w // self.banks, "expected": f"0x{exp:08x}",
                    "actual": f"0x{act:08x}"}
        self.compared += len(expect)
        self.divergent += bad

    # ----- end of run --------------------------------------------------------------------
    def final_sync(self) -> None:
        """Send the queue and read the whole bank back (into the array, or compared)."""
        if not self.used or self.child is None or self.child.failed or self.child.closed:
            return
        arr = self.array
        now = self.sim.now
        for k in range(self.nwords):
            w = k * self.banks + self.bank
            self._post(w, 1, 0xF, 0)
            if self.mode == "shadow":
                self._expect.append((w, int.from_bytes(arr[4 * w:4 * w + 4].tobytes(),
                                                       "little"), now, "the end-of-run check"))
        self._count("final", self.nwords, 0)
        rdata = self._flush("end of run")
        if self.mode == "rtl":
            self.view[:] = np.asarray(rdata[-self.nwords:], dtype="<u4").view(
                np.uint8).reshape(-1, 4)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.final_sync()
        except Exception as e:  # noqa: BLE001 - the run's error; the child is closed below
            msg = str(e)
            self.error = self.error or msg
            if getattr(self.run, "error", None) is None:
                self.run.error = msg
        finally:
            if self.tcdm.bank_port is self:
                self.tcdm.bank_port = None
            super().close()

    # ----- report ------------------------------------------------------------------------
    def report(self) -> dict:
        self.items = [{"batch": cause, "batches": b, "words": w, "reads": r, "rtl_cycles": rc,
                       "model_cycles": mc, "rel_diff": rel_diff(rc, mc), "stall_cycles": s}
                      for cause, (b, w, r, rc, mc, s) in sorted(self.batch_stats.items())]
        return super().report()

    def report_extra(self) -> dict:
        return {"count": self.word_reads + self.word_writes, "bank": self.bank,
                "word_reads": self.word_reads, "word_writes": self.word_writes,
                "batches": self.nbatch,
                "by_kind": {k: {"transactions": t, "reads": r, "writes": w}
                            for k, (t, r, w) in sorted(self.words.items())},
                "by_initiator": {k: {"reads": r, "writes": w}
                                 for k, (r, w) in sorted(self.initiators.items())},
                "queued": len(self._add)}
