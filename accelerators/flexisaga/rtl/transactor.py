"""A FlexiSAGA array (the ``flexisaga`` block of a composed platform, MARSELLUS'
``cluster.flexisaga``) swapped for its RTL:
the Amaranth design ``rtl/flexisaga`` (dOS, dWS, dIS and sOS, integer PEs), generated to Verilog
and Verilated (docs/flexisaga.md, "RTL").

Generation: :func:`generated_verilog` runs ``rtl/flexisaga/gen.py`` in a subprocess (so a
run never imports amaranth) into ``<RTL cache>/flexisaga-gen-<hash>/``, the hash covering
the generator's sources, the Amaranth version and the parameters; the Verilator build
cache then keys on the generated file. Both happen once per parameter set.

The block's register bank, job queue, end-of-job event and report stay the TLM model's;
only its executor is replaced. At each job start the transactor validates and decodes
the job as the model does (a refused job is refused the same way), reads the job's words
by debug access (tile table, W image, I) and sends them as one image, with the job
registers rebased into it, to the child (:mod:`accelerators.flexisaga.rtl.handler`).

* ``rtl``: the RTL computes. The TLM side waits ``setup`` + the RTL's cycles on the
  block's clock, writes the RTL's output rows into memory (debug writes) and ends the job
  like the model (statistics, energy, event). Time is the RTL's, without TCDM contention.
* ``shadow``: the model computes and times the job as before; the RTL runs the same job
  from the same snapshot; at the model's job end its output words, cycles, MACs and DecU
  words are compared with the RTL's, and the first divergence (job, time, output element
  and address or counter, expected, actual) is reported.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cosim.rtl.options import RtlOptions
from cosim.rtl.transactor import AcceleratorTransactor, rel_diff
from tlm.files import read_bytes, read_tail
from tlm.units import fmt_time

ROOT = Path(__file__).resolve().parents[3]
GEN_DIR = ROOT / "rtl" / "flexisaga"
#: the dataflows the RTL runs (DATAFLOW register values)
RTL_DATAFLOWS = {0: "dOS", 1: "dWS", 2: "dIS", 3: "sOS"}
#: generator defaults: the block's private memory (words) and the longest sOS reduction
MEM_WORDS = 16384
MAX_K = 128


def _generator_key(params: dict) -> str:
    from importlib.metadata import PackageNotFoundError, version
    from cosim.rtl.build import RtlBuildError
    try:
        amaranth = version("amaranth")
    except PackageNotFoundError:
        raise RtlBuildError("the FlexiSAGA RTL is generated with Amaranth, which is not installed: "
                            "pip install -e '.[rtl]' (or '.[test]')", "") from None
    h = hashlib.sha256()
    for p in sorted(GEN_DIR.glob("*.py")):
        h.update(p.name.encode() + b"\0" + read_bytes(p, "package_data") + b"\0")
    h.update(f"amaranth={amaranth};{sorted(params.items())}".encode())
    return h.hexdigest()[:20]


def generated_verilog(rows: int, cols: int, ports: int, word_bits: int, latency: int,
                      mem_words: int = MEM_WORDS, max_k: int = MAX_K) -> Path:
    """The Verilog of the array with these parameters (generated once, then cached)."""
    from cosim.rtl.build import RtlBuildError, RtlBuildTimeout, _locked, cache_root, private_file
    from cosim.rtl.progress import BuildTimeout, BuildWatch
    params = {"rows": rows, "cols": cols, "ports": ports, "word-bits": word_bits,
              "latency": latency, "mem-words": mem_words, "max-k": max_k}
    root = cache_root()
    out_dir = root / f"flexisaga-gen-{_generator_key(params)}"
    out = out_dir / "flexisaga_array.v"
    with _locked(root / f".{out_dir.name}.lock", "the FlexiSAGA array's Verilog"):
        if out.exists():
            return out
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        cmd = [sys.executable, str(GEN_DIR / "gen.py"), "-o", str(tmp)]
        for k, v in params.items():
            cmd += [f"--{k}", str(v)]
        # a cold generation takes ~10-40 s (then the Verilator build, which says so itself)
        try:
            watch = BuildWatch("generating the FlexiSAGA array's Verilog with Amaranth")
        except ValueError as e:     # a bad $TLM_COSIM_RTL_BUILD_LIMIT or _HEARTBEAT, named
            raise RtlBuildError(str(e), "") from None
        watch.start(f"{rows}x{cols} PEs, {ports} memory ports, {mem_words} words; first time for these "
                    "parameters, cached afterwards")
        log = private_file(out_dir / "gen.log")
        try:
            with open(log, "wb") as f:
                code = watch.run(cmd, stdout=f)
        except BuildTimeout as e:
            raise RtlBuildTimeout(str(e), "") from None
        if code != 0 or not tmp.exists():
            text = read_tail(log, 4000).decode("utf-8", "replace")
            raise RtlBuildError(f"generating the FlexiSAGA RTL with Amaranth failed:\n{text}", text)
        watch.done()
        os.replace(tmp, out)
    return out


def array_block(rows: int, cols: int, ports: int, word_bits: int, latency: int,
                mem_words: int = MEM_WORDS, max_k: int = MAX_K) -> Any:
    """The build spec of the generated array (``flexisaga_array``)."""
    from cosim.rtl.build import RtlBlock
    v = generated_verilog(rows, cols, ports, word_bits, latency, mem_words, max_k)
    return RtlBlock.make("flexisaga_array", [v], "flexisaga_array")


class FlexiSagaTransactor(AcceleratorTransactor):
    """A :class:`accelerators.flexisaga.model.peripheral.FlexiSaga` swapped for its RTL (``rtl``)
    or shadowed by it (``shadow``)."""

    top = "flexisaga_array"
    handler = "accelerators.flexisaga.rtl.handler:FlexiSagaHandler"
    unit = "jobs"
    absent_hint = "MARSELLUS: set cluster.flexisaga.enabled: true"   # MARSELLUS builds it only when enabled
    estimate = {"rtl": "the cycle model's cycles of the same job (setup excluded)",
                "shadow": "the model's cycles of the same job (setup excluded)"}

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        super().__init__(run, path, mode, waves=waves, options=options, waves_dir=waves_dir)
        cfg = self.accel.cfg
        if cfg.pe_dtype != "int":
            raise self.config_error(f"the RTL array has integer PEs only; set "
                              f"{path}.pe_dtype: int (the block has {cfg.pe_dtype})")
        self.cfg = cfg
        from cosim.rtl.build import RtlError
        try:
            spec = array_block(cfg.rows, cfg.cols, cfg.mem_ports, cfg.word_bits, cfg.mem_latency)
        except (RtlError, OSError, subprocess.SubprocessError) as e:
            raise self._error(f"model {mode!r}: {e}") from None
        self.setup(spec, {"period_ps": self.period})

    # ----- one job's image -------------------------------------------------------------------
    def _image(self, job_id: int, job: Any, w_words: int) -> tuple[bytes, dict, list]:
        """(image, job ports rebased into it, output runs) of ``job``."""
        from accelerators.flexisaga.model.tiles import strips
        a = self.accel
        sparse = job.dataflow == 3
        if sparse and job.k > MAX_K:
            raise self._error(f"job {job_id}: K = {job.k} exceeds the RTL's sOS limit of "
                              f"{MAX_K} columns per strip")
        table = (a._words(job.w_tile_table, len(strips("sOS", (job.m, job.k), self.cfg)), "W tile table")
                 if sparse else np.zeros(0, dtype=np.uint32))
        w = a._words(job.w_base, w_words, "W")
        i = a._words(job.i_base, (job.k - 1) * job.ldi + job.n, "I")
        t, wb = 0, table.size
        ib = wb + w.size
        ob = ib + i.size
        end = ob + (job.m - 1) * job.ldo + job.n
        if end > MEM_WORDS:
            raise self._error(f"job {job_id}: its operands and output span {end} words, the RTL "
                              f"array's memory holds {MEM_WORDS}")
        image = np.concatenate([table, w, i]).astype("<u4").tobytes()
        regs = {"dataflow": job.dataflow, "m": job.m, "k": job.k, "n": job.n, "w_base": wb,
                "w_table": t, "i_base": ib, "ldi": job.ldi, "o_base": ob, "ldo": job.ldo}
        out = [[ob + r * job.ldo, job.n] for r in range(job.m)]
        return image, regs, out

    def _prepare(self, job_id: int, job: Any) -> tuple[Any, Any] | str:
        """(decoded W, image triple), or the error code when the model refuses the job's
        operands (an address outside the memory, a malformed tile)."""
        from components.accel import JobRefused
        a = self.accel
        if job.dataflow not in RTL_DATAFLOWS:
            raise self._error(f"job {job_id}: dataflow {job.dataflow_name} is not in the RTL "
                              f"(it runs {', '.join(RTL_DATAFLOWS.values())})")
        try:
            w, w_words = a._weights(job)
            a._matrix(job.i_base, job.k, job.n, job.ldi, "I")
        except JobRefused as e:
            a.reason = str(e)
            return e.code
        return w, self._image(job_id, job, w_words)

    def _run_rtl(self, job_id: int, job: Any, w: Any, img: tuple) -> tuple[dict, Any]:
        from accelerators.flexisaga.model.cycles import estimate
        rep = estimate(job.dataflow_name, w, job.n, self.cfg)
        image, regs, out = img
        budget = rep.cycles + len(image) // 4 + job.m * job.n + 64
        done = self.run_job(f"job {job_id}", budget, self.period,
                            ["job", {"id": job_id, "image": image, "regs": regs, "out": out}])
        if int(done["error"]):
            raise self._error(f"job {job_id}: the RTL array refused {job.dataflow_name} "
                              f"M={job.m} K={job.k} N={job.n}")
        return done, rep

    def _rows(self, job: Any, data: bytes) -> np.ndarray:
        return np.frombuffer(data, dtype="<u4").reshape(job.m, job.n)

    # ----- the executors (installed as accel.executor) ---------------------------------------
    async def execute_rtl(self, job_id: int, job: Any, start: int):
        from components.accel import JobRecord
        a = self.accel
        prep = self._prepare(job_id, job)
        if isinstance(prep, str):
            return await a.reject(job_id, a.map.constant(prep), start)
        w, img = prep
        done, rep = self._run_rtl(job_id, job, w, img)
        a.last = rep
        cycles = a.params.setup + int(done["cycles"])
        a.book("op", int(done["macs"]), cycles * a.clock.period)
        await a.clock.wait_cycles(cycles)
        rows = self._rows(job, bytes(done["out"]))
        for r in range(job.m):
            self.dbg_write(a.mem, job.o_base + 4 * r * job.ldo, rows[r].astype("<u4").tobytes())
        a.account(start, cycles, rep.dense_macs // (self.cfg.rows * self.cfg.cols), 2 * int(done["macs"]),
                  {"mem": 4 * (int(done["reads"]) + int(done["writes"]))})
        self._record(job_id, job, start, done, rep.cycles)
        return JobRecord(job_id, start, self.sim.now, 0, rep)

    async def execute_shadow(self, job_id: int, job: Any, start: int):
        a = self.accel
        prep = self._prepare(job_id, job)
        if isinstance(prep, str):      # the model refuses it the same way
            return await self.model(job_id, job, start)
        w, img = prep
        done, _ = self._run_rtl(job_id, job, w, img)
        record = await self.model(job_id, job, start)
        rep = a.last
        expected = np.frombuffer(b"".join(self.dbg_read(a.mem, job.o_base + 4 * r * job.ldo, 4 * job.n)
                                          for r in range(job.m)), dtype="<u4").reshape(job.m, job.n)
        actual = self._rows(job, bytes(done["out"]))
        self.compared += expected.size + 4
        bad = np.argwhere(expected != actual)
        counters = [(name, int(getattr(rep, name)), int(done[name]))
                    for name in ("cycles", "macs", "reads", "writes")]
        wrong = [c for c in counters if c[1] != c[2]]
        if bad.size or wrong:
            self.divergent += 1
            if self.divergence is None:
                base = {"at": f"job {job_id}", "job": job_id, "time_ps": self.sim.now,
                        "time": fmt_time(self.sim.now), "mismatched_words": int(len(bad)),
                        "mismatched_counters": [c[0] for c in wrong]}
                if bad.size:
                    r, c = (int(x) for x in bad[0])
                    base.update(address=f"O[{r},{c}]",
                                word_address=f"0x{job.o_base + 4 * (r * job.ldo + c):08x}",
                                expected=f"0x{int(expected[r, c]):08x}", actual=f"0x{int(actual[r, c]):08x}")
                else:
                    name, e, act = wrong[0]
                    base.update(address=name, expected=str(e), actual=str(act))
                self.divergence = base
        self._record(job_id, job, start, done, rep.cycles)
        return record

    def _record(self, job_id: int, job: Any, start: int, done: dict, model: int) -> None:
        rtl = int(done["cycles"])
        self.items.append({"job": job_id, "start_ps": start, "dataflow": job.dataflow_name,
                           "m": job.m, "k": job.k, "n": job.n, "rtl_cycles": rtl,
                           "model_cycles": model, "rel_diff": rel_diff(rtl, model),
                           "macs": int(done["macs"]), "reads": int(done["reads"]),
                           "writes": int(done["writes"])})
