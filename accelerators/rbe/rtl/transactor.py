"""``cluster.rbe`` swapped for the Verilated RBE (``rtl/rbe``, ``rbe_top``): a job-level
transactor (docs/rtl.md, "The RBE transactor").

* ``rtl``: at each job start (the TLM register file has validated a TRIGGERed context)
  the transactor takes a debug snapshot of the whole TCDM and sends the job's registers
  and the image; the child (:mod:`accelerators.rbe.rtl.handler`) programs them through the HWPE
  port and runs the job against a memory loaded with the image, recording the bytes the
  RTL wrote; the TLM side then waits the RTL's cycle count on the cluster clock, writes
  back exactly those bytes (debug writes) and ends the job like the model (event,
  statistics, energy). Data are the RTL's; time is the RTL's, measured without TCDM
  contention (the child's TCDM always grants). The model's ``timing`` has no effect on time
  here. The report's model cycles are ``job_cycles`` under the run's own timing
  (``<path>.timing``, default ``open_rtl``) without stalls, so the RTL-vs-model diff says
  how far the RTL's time is from what the model run would have taken; each job's
  ``spec_cycles`` are the paper calibration's (``CycleParams.paper()``), the schedule our SV
  RBE implements, which checks the RTL against its own specification.
* ``shadow``: the model stays in charge of data and time; the RTL receives the same jobs
  from the same snapshot; at each job end the bytes the RTL wrote are compared with the
  model's outputs and the first divergence (time, address, expected, actual) is reported.
  The model keeps the time, so its timing must be the schedule our SV RBE implements:
  ``cluster.rbe.timing: paper`` with the paper knobs at their defaults; any other timing is
  a located error before anything is built (the two would disagree on every job's cycles).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tlm.units import fmt_time

from cosim.rtl.options import RtlOptions
from cosim.rtl.transactor import AcceleratorTransactor, rel_diff


class RbeTransactor(AcceleratorTransactor):
    """An RBE (``cluster.rbe`` on MARSELLUS, any ``rbe`` block of a composed platform)
    swapped for ``rbe_top`` (``rtl``) or shadowed by it (``shadow``)."""

    top = "rbe_top"
    handler = "accelerators.rbe.rtl.handler:RbeJobHandler"
    unit = "jobs"
    estimate = {"rtl": "job_cycles with the run's timing without TCDM stalls",
                "shadow": "the model's cycles (timing: paper), TCDM stalls included"}

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        from cosim.rtl import blocks
        super().__init__(run, path, mode, waves=waves, options=options, waves_dir=waves_dir)
        self.rbe = rbe = self.accel
        from components.rbe import CycleParams
        if mode == "shadow" and rbe.params.cycle_params != CycleParams.paper():
            raise self.config_error(
                f"it compares the TLM model with our SV RBE, which implements the "
                f"paper-calibrated schedule, but {path}.timing is {rbe.params.timing!r}"
                + ("" if rbe.params.timing != "paper" else " with changed paper knobs")
                + f": set {path}.timing: paper (and leave setup, compute_fill, "
                f"accumulate_cycles, nq_cycles_per_group at their defaults)")
        self.timing = rbe.params.timing
        self.estimate = {**self.estimate, "rtl": (
            f"job_cycles with the run's timing ({path}.timing: {self.timing}) without TCDM "
            f"stalls; spec_cycles: the paper timing our SV RBE implements")}
        self.base = int(rbe.regfile.tcdm_base)
        self.size = int(rbe.regfile.tcdm_size)
        params = {}
        if (self.base, self.size) != (0x1000_0000, 0x2_0000):  # the RTL's defaults
            params = {"TCDM_BASE": self.base, "TCDM_SIZE": self.size}
        self.setup(blocks.rbe(**params), {"period_ps": self.period, "tcdm_base": self.base,
                                          "tcdm_size": self.size})

    # ----- TCDM debug access -----------------------------------------------------------
    def _snapshot(self) -> bytes:
        return self.dbg_read(self.rbe.tcdm, self.base, self.size)

    def _write_back(self, writes: list) -> int:
        for addr, data, _cyc in writes:
            self.dbg_write(self.rbe.tcdm, int(addr), data)
        return sum(len(d) for _a, d, _c in writes)

    # ----- running one job in the child ---------------------------------------------------
    def _run_rtl(self, job_id: int, job: Any, image: bytes, estimate: int) -> dict:
        from components.rbe import encode_job
        regs = [[int(o), int(v)] for o, v in encode_job(job)]
        return self.run_job(f"job {job_id}", estimate, self.period,
                            ["job", {"id": job_id, "image": image, "regs": regs}],
                            describe=lambda s: (
                                f"busy_o = {s.get('busy_o', '?')}, tcdm_req_o = "
                                f"0x{s.get('tcdm_req_o', 0):x}, "
                                f"{s.get('tcdm_accesses', '?')} TCDM accesses so far"))

    def _check_status(self, job_id: int, done: dict) -> None:
        code = (int(done["status"]) >> 8) & 0xFF
        if code:
            raise self._error(f"RTL block {self.path} rejected job {job_id} with error code "
                              f"{code}, which the model's register file accepted")

    def _estimate(self, job: Any, spec: bool = True):
        """``job``'s cycles without stalls: under the paper timing our SV RBE implements
        (``spec``), else under the run's own timing (in shadow mode the two are one)."""
        from components.rbe import CycleParams, PhaseStalls, job_cycles
        params = CycleParams.paper() if spec else self.rbe.params.cycle_params
        return job_cycles(job, PhaseStalls(), params)

    # ----- the executors (installed as rbe.executor) -------------------------------------
    async def execute_rtl(self, job_id: int, job: Any, start: int):
        from components.rbe.peripheral import JobRecord
        rbe, sim = self.rbe, self.sim
        est = self._estimate(job)
        done = self._run_rtl(job_id, job, self._snapshot(), est.total)
        self._check_status(job_id, done)
        cycles = int(done["cycles"])
        rbe.book("op", est.ops, cycles * self.period)  # spread over the job, as the model does
        await rbe.clock.wait_cycles(cycles)
        written = self._write_back(done["writes"])
        rbe.account_job(start, job, est, cycles)
        self._record(job_id, start, cycles, self._estimate(job, spec=False).total, written, done,
                     spec=est.total)
        return JobRecord(job_id, start, sim.now, 0, est)

    async def execute_shadow(self, job_id: int, job: Any, start: int):
        est = self._estimate(job)
        image = self._snapshot()       # what the model reads at this same instant
        done = self._run_rtl(job_id, job, image, est.total)
        self._check_status(job_id, done)
        record = await self.model(job_id, job, start)
        model_cycles = record.cycles.total if record.cycles is not None else est.total
        self._compare(job_id, job, image, done, start)
        written = sum(len(d) for _a, d, _c in done["writes"])
        self._record(job_id, start, int(done["cycles"]), model_cycles, written, done)
        return record

    def _record(self, job_id, start, rtl, model, written, done, spec: int | None = None) -> None:
        item = {"job": job_id, "start_ps": start, "rtl_cycles": rtl, "model_cycles": model,
                "rel_diff": rel_diff(rtl, model), "bytes_written": written,
                "tcdm_accesses": int(done["tcdm_accesses"])}
        if spec is not None:
            item.update(spec_cycles=spec, spec_rel_diff=rel_diff(rtl, spec))
        self.items.append(item)

    def report_extra(self) -> dict:
        """``timing``: the run's model timing the model cycles use; in rtl mode also the
        totals against the paper timing our SV RBE implements (``spec_cycles``)."""
        out: dict[str, Any] = {"timing": self.timing}
        if self.mode == "rtl":
            spec = sum(j["spec_cycles"] for j in self.items)
            out.update(spec_cycles=spec,
                       spec_rel_diff=rel_diff(sum(j["rtl_cycles"] for j in self.items), spec))
        return out

    def _compare(self, job_id: int, job: Any, image: bytes, done: dict, start: int) -> None:
        """RTL outputs vs the model's, byte by byte, at the model's job end."""
        from components.rbe import streamer_trace
        from components.rbe.streamer import Phase
        base, size = self.base, self.size
        img = np.frombuffer(image, dtype=np.uint8)
        rtl = img.copy()
        rcyc = np.full(size, -1, dtype=np.int64)
        for addr, data, cyc in done["writes"]:
            off = int(addr) - base
            rtl[off:off + len(data)] = np.frombuffer(data, dtype=np.uint8)
            rcyc[off:off + len(data)] = np.frombuffer(cyc, dtype="<u4")
        # the model stores each output word exactly once, by its STREAMOUT accesses
        words = streamer_trace(job).select(Phase.STREAMOUT).addr.astype(np.int64) - base
        mmask = np.zeros(size, dtype=bool)
        for k in range(4):
            mmask[words + k] = True
        after = np.frombuffer(self._snapshot(), dtype=np.uint8)
        model = img.copy()
        model[mmask] = after[mmask]
        self.compared += int((mmask | (rcyc >= 0)).sum())
        bad = np.flatnonzero(model != rtl)
        if bad.size == 0:
            return
        self.divergent += 1
        if self.divergence is not None:
            return
        end = self.sim.now
        t = np.where(rcyc[bad] >= 0, start + rcyc[bad] * self.period, end)
        i = int(np.lexsort((bad, t))[0])      # earliest, then lowest address
        off = int(bad[i])
        w = off & ~3
        self.divergence = {
            "at": f"job {job_id}", "job": job_id, "time_ps": int(t[i]), "time": fmt_time(int(t[i])),
            "address": f"0x{base + off:08x}", "word_address": f"0x{base + w:08x}",
            "expected": f"0x{int.from_bytes(model[w:w + 4].tobytes(), 'little'):08x}",
            "actual": f"0x{int.from_bytes(rtl[w:w + 4].tobytes(), 'little'):08x}",
            "expected_byte": f"0x{int(model[off]):02x}", "actual_byte": f"0x{int(rtl[off]):02x}",
            "rtl_cycle": int(rcyc[off]) if rcyc[off] >= 0 else None,
            "written_by_rtl": bool(rcyc[off] >= 0), "expected_from_model": bool(mmask[off]),
            "mismatched_bytes": int(bad.size)}

