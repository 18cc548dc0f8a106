"""RTL blocks inside a scenario: ``platform.models: {cluster.rbe: rtl | shadow}``.

:func:`attach_models` (called by ``cosim.runner.build`` right after the platform is built)
builds each swapped block (cached), starts its Verilated simulation under cocotb in a
child process (:mod:`cosim.rtl.serve`, own process group, killed with us) and hooks a
transactor into the TLM block. The two sides talk over ZeroMQ (``ipc://`` in a private
temporary directory, msgpack messages) with the window protocol of
:class:`cosim.rtl.adapters.driver.WindowDriver`; every receive has a wall-time deadline and
every job a cycle limit, so a dead or stuck child is an error naming the block, the
simulated time and (when the adapters know it) the stuck signal, never a hang.

* ``rtl``: the RTL does the work. For the RBE, at each job start (the TLM register file
  has validated a TRIGGERed context) the transactor takes a debug snapshot of the whole
  TCDM and sends the job's registers and the image; the child programs them through the
  HWPE port and runs the job against a memory loaded with the image, recording the bytes
  the RTL wrote; the TLM side then waits the RTL's cycle count on the cluster clock,
  writes back exactly those bytes (debug writes) and ends the job like the model (event,
  statistics, energy). Data are therefore the RTL's; time is the RTL's, measured without
  TCDM contention (the child's TCDM always grants).
* ``shadow``: the model stays in charge of data and time; the RTL receives the same jobs
  from the same snapshot; at each job end the bytes the RTL wrote are compared with the
  model's outputs and the first divergence (simulated time, address, expected, actual)
  is reported.

The report (``report["extra"]["rtl"]``) has one entry per block (RTL cycles vs the model's
estimate per job and in total, relative difference, divergence, wave file) and a summary
table. Options (timeouts, cycle limits, wave directory; test-only fault injection) come
from :class:`RtlOptions`, by default from the JSON in ``$TLM_COSIM_RTL_OPTIONS``.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import shutil
import signal
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlm.errors import SimulationError
from tlm.units import fmt_time

#: swappable paths: (pattern, what swapping it means, transactor "module:Class"); a
#: pattern is a scenario path, ``{n}`` stands for a decimal index (``check_models``
#: accepts only these paths)
BLOCKS: list[tuple[str, str, str]] = [
    ("cluster.rbe", "RBE (rtl/rbe, rbe_top) as a job-level transactor",
     "cosim.rtl.transactors.rbe:RbeTransactor"),
    ("cluster.dma", "cluster DMA (rtl/cluster_dma) as a transfer-level transactor",
     "cosim.rtl.transactors.cluster_dma:DmaTransactor"),
    ("cluster.tcdm.bank{n}", "one TCDM bank (rtl/tcdm_bank) in word mode, access by access",
     "cosim.rtl.transactors.tcdm_bank:TcdmBankTransactor"),
    ("pmu.abb", "ABB controller FSM (rtl/abb, abb_ctrl) in lock-step with the reference clock",
     "cosim.rtl.transactors.abb:AbbTransactor"),
]


def _match(pattern: str, path: str) -> bool:
    import re
    rx = "^" + re.escape(pattern).replace(re.escape("{n}"), "(0|[1-9][0-9]*)") + "$"
    return re.match(rx, path) is not None


def supported(path: str) -> tuple[str, str] | None:
    """``(pattern, description)`` of the swappable block at ``path``, or None."""
    for pat, desc, _cls in BLOCKS:
        if _match(pat, path):
            return pat, desc
    return None


def transactor_class(path: str) -> type | None:
    import importlib
    for pat, _desc, cls in BLOCKS:
        if _match(pat, path):
            mod, _, name = cls.partition(":")
            return getattr(importlib.import_module(mod), name)
    return None


#: pattern -> description (for messages)
SUPPORTED: dict[str, str] = {pat: desc for pat, desc, _cls in BLOCKS}
#: models other than ``tlm``
MODES = ("rtl", "shadow")
OPTIONS_ENV = "TLM_COSIM_RTL_OPTIONS"
WAVES_DIR_ENV = "TLM_COSIM_RTL_WAVES_DIR"
REPO = Path(__file__).resolve().parents[2]


class RtlModelError(SimulationError):
    """An RTL block swapped into a scenario failed (build, child process, protocol)."""


@dataclass
class RtlOptions:
    """How the RTL children are run (none of it changes results)."""

    #: wall seconds to wait for any reply of a running child
    timeout_s: float = 120.0
    #: wall seconds for a child to start (simulator load, Python imports, reset)
    startup_timeout_s: float = 120.0
    #: a job may take at most factor * model estimate + extra RTL cycles
    max_cycles_factor: float = 4.0
    max_cycles_extra: int = 10_000
    #: cycles the HWPE port waits for gnt / r_valid before AdapterTimeout
    adapter_timeout_cycles: int = 1000
    #: where wave files go (default: $TLM_COSIM_RTL_WAVES_DIR, the run's output folder,
    #: the scenario's outputs.dir, else out/<scenario>-rtl-<time stamp>)
    waves_dir: str | None = None
    #: test-only fault injection, per block path (see cosim/rtl/handlers/rbe.py)
    inject: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> "RtlOptions":
        text = os.environ.get(OPTIONS_ENV)
        if not text:
            return cls()
        try:
            data = json.loads(text)
            return cls(**data)
        except (ValueError, TypeError) as e:
            raise RtlModelError(f"${OPTIONS_ENV} is not valid: {e}") from None


# ---------------------------------------------------------------------------- child process
def _kill_group(proc) -> None:
    """SIGKILL the child's process group (it has its own session) and reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=10)
    except Exception:  # noqa: BLE001
        pass


class ChildProcess:
    """One Verilated block under cocotb in a child process, reached over ZeroMQ.

    The process is started by the first :meth:`start` (the block's first job), not at
    construction: a process that builds the scenario but never runs the block (another
    partition, a coordinator) starts nothing."""

    def __init__(self, name: str, build_result: Any, handler: str, config: dict, *,
                 options: RtlOptions, wave_file: Path | None = None):
        self.name = name
        self.options = options
        self.build_result = build_result
        self.handler = handler
        self.config = config
        self.wave_file = wave_file
        self.tmp: Path | None = None
        self.link: Any = None
        self.proc: Any = None
        self.pid: int | None = None
        self.run_dir: Path | None = None
        self._finalizer: Any = None
        self.ready = False
        self.rtl_now = 0
        self.info: dict = {}
        self.bye: dict | None = None
        self.failed: str | None = None
        self.keep_dir = False
        self.wait_s = 0.0      # wall time spent waiting for the child
        self.closed = False
        #: answers the child's memory requests (see :meth:`request`); None: refused
        self.serve_mem: Any = None
        self.mem_round_trips = 0

    def launch(self) -> None:
        from .build import launch_tests
        from .channel import CONFIG_ENV, ParentLink
        if self.closed:
            raise RuntimeError("the simulator process was already stopped")
        self.tmp = Path(tempfile.mkdtemp(prefix="tlm-cosim-rtl-"))
        self.link = ParentLink(f"ipc://{self.tmp}/sock")
        self.run_dir = self.tmp / "run"
        cfg = {"name": self.name, "endpoint": self.link.endpoint, "parent_pid": os.getpid(),
               "handler": self.handler, **self.config}
        try:
            self.proc = launch_tests(self.build_result, "cosim.rtl.serve",
                                     test_dir=self.run_dir,
                                     extra_env={CONFIG_ENV: json.dumps(cfg)},
                                     python_paths=[REPO], waves=self.wave_file is not None,
                                     wave_file=self.wave_file)
        except Exception:
            self.link.close()
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.link = None
            raise
        self.pid = self.proc.pid
        # never leave an orphan, whatever happens to the caller (also runs at exit)
        self._finalizer = weakref.finalize(self, _kill_group, self.proc)

    def alive(self) -> int | None:
        return self.proc.poll()

    def log_tail(self, lines: int = 15) -> str:
        if self.run_dir is None:
            return ""
        log = self.run_dir / "sim.log"
        try:
            text = log.read_text(errors="replace")
        except OSError:
            return ""
        keep = [ln.rstrip() for ln in text.splitlines()
                if ln.strip() and " INFO " not in ln][-lines:]
        return "\n".join(keep) or "(nothing but start-up messages)"

    def recv(self, timeout: float, what: str) -> dict:
        t = time.perf_counter()
        try:
            return self.link.recv(timeout, self.alive, what)
        finally:
            self.wait_s += time.perf_counter() - t

    def start(self) -> None:
        """Start the child and wait for its hello (once)."""
        if self.ready:
            return
        if self.proc is None:
            self.launch()
        msg = self.recv(self.options.startup_timeout_s, "hello from the simulator")
        if "hello" not in msg:
            raise RuntimeError(f"unexpected first message {sorted(msg)}")
        self.ready = True
        self.rtl_now = int(msg["time"])
        self.info = msg.get("info") or {}

    def request(self, grant: dict, what: str = "window reply") -> dict:
        """Send a grant and return the window's reply. Memory requests the child makes
        meanwhile (``{"mem": "read"|"write", ...}``: an RTL initiator served from the TLM
        side) are answered by :attr:`serve_mem` (reads get a reply, writes are posted)."""
        self.link.send(grant)
        self.link.round_trips += 1
        reply = self.recv(self.options.timeout_s, what)
        while "mem" in reply:
            if self.serve_mem is None:
                raise RuntimeError("the block made a memory request, but nothing serves its "
                                   "initiator ports")
            answer = self.serve_mem(reply)
            if answer is not None:
                self.link.send(answer)
                self.mem_round_trips += 1
            reply = self.recv(self.options.timeout_s, what)
        if "time" not in reply:
            raise RuntimeError(f"unexpected reply {sorted(reply)}")
        self.rtl_now = int(reply["time"])
        return reply

    def close(self) -> None:
        """Stop the child (politely: it closes its wave file; else SIGKILL its group)."""
        if self.closed:
            return
        self.closed = True
        if self.proc is None:
            return
        try:
            if self.ready and self.failed is None and self.proc.poll() is None:
                try:
                    self.link.send({"stop": True})
                    msg = self.recv(10.0, "goodbye from the simulator")
                    if "bye" in msg:
                        self.bye = msg
                    self.proc.wait(timeout=20)
                except Exception:  # noqa: BLE001 - killed below
                    pass
        finally:
            self._finalizer()     # kills the group if still running, reaps
            self.link.close()
            if self.keep_dir:
                (self.tmp / "sock").unlink(missing_ok=True)
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------------------- transactors
class Transactor:
    """Base of one block swapped into a scenario: the TLM side of its child process.

    A subclass names its RTL (``top``), the cocotb-side handler of the child
    (``handler``, ``"module:Class"``) and what one entry of its report counts (``unit``:
    jobs, transfers, ...); its constructor calls :meth:`setup` with the build spec and the
    handler's configuration, then hooks itself into the TLM block. It appends one entry
    per transaction to ``items`` (at least ``rtl_cycles`` and ``model_cycles``) and, in
    shadow mode, sets ``divergence`` (a dict with ``at``, ``time_ps``, ``time``,
    ``address``, ``expected``, ``actual``) at the first mismatch."""

    top = ""
    handler = ""
    unit = "jobs"
    #: what the "model cycles" column means, per mode
    estimate = {"rtl": "the model's estimate", "shadow": "the model's cycles"}

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        self.run = run
        self.path = path
        self.mode = mode
        self.sim = run.sim
        self.options = options
        self.waves = waves
        self.waves_dir = waves_dir
        self.items: list[dict] = []
        self.divergence: dict | None = None
        self.divergent = 0        # transactions with a mismatch
        self.compared = 0         # bytes / values compared
        self.error: str | None = None
        self.wave_file: Path | None = None
        self.child: ChildProcess | None = None
        self.built: Any = None
        self.build_s = 0.0

    def setup(self, spec: Any, config: dict) -> None:
        """Build ``spec`` (cached; with tracing if waves were asked for) and prepare the
        child process (started lazily by :meth:`start`)."""
        from .build import RtlError, build
        t = time.perf_counter()
        if self.waves:
            spec = dataclasses.replace(spec, waves=True, wave_format=self.waves)
        try:
            self.built = build(spec)
        except RtlError as e:
            raise RtlModelError(f"model {self.mode!r}: {e}", self.path) from None
        if self.waves:
            self.waves_dir.mkdir(parents=True, exist_ok=True)
            self.wave_file = (self.waves_dir / f"{self.path}.{self.waves}").resolve()
        self.build_s = time.perf_counter() - t
        cfg = {"adapter_timeout_cycles": self.options.adapter_timeout_cycles,
               "inject": self.options.inject.get(self.path), **config}
        self.child = ChildProcess(self.path, self.built, self.handler, cfg,
                                  options=self.options, wave_file=self.wave_file)

    def _error(self, message: str) -> RtlModelError:
        self.error = message
        return RtlModelError(message, self.path, self.sim.now)

    def dbg_read(self, target: Any, addr: int, n: int) -> bytes:
        """``n`` bytes at ``addr`` through ``target.transport_dbg`` (no simulated time)."""
        from tlm import GenericPayload
        from tlm.payload import READ
        p = GenericPayload(READ, addr, bytearray(n), initiator=self.path + ".rtl")
        target.transport_dbg(p)
        if not p.is_ok:
            raise self._error(f"debug read of {n} B at 0x{addr:08x} failed")
        return bytes(p.data)

    def dbg_write(self, target: Any, addr: int, data: bytes) -> None:
        from tlm import GenericPayload
        from tlm.payload import WRITE
        p = GenericPayload(WRITE, int(addr), bytearray(data), initiator=self.path + ".rtl")
        target.transport_dbg(p)
        if not p.is_ok:
            raise self._error(f"debug write of {len(data)} B at 0x{int(addr):08x} failed")

    @property
    def where(self) -> str:
        c = self.child
        pid = f", pid {c.pid}" if c is not None and c.pid is not None else ""
        return f"RTL block {self.path} ({self.top}{pid})"

    # ----- talking to the child ------------------------------------------------------------
    def exchange(self, grant: dict | None, what: str, during: str) -> dict:
        """Start the child if needed, send ``grant`` (None: only start) and return its
        reply; a dead or stuck child becomes an :class:`RtlModelError` naming ``during``
        (e.g. ``"job 3"``), the RTL time and the child's log."""
        from .channel import ChannelError, ChannelTimeout, ChildDied
        child = self.child
        try:
            child.start()
            return child.request(grant, what) if grant is not None else {}
        except ChannelError as e:      # ChildDied and ChannelTimeout included
            child.failed = str(e)
            child.keep_dir = True     # keep the child's log for the message below
            where = self.where
            if isinstance(e, ChildDied):
                raise self._error(f"{where} died (exit code {e.returncode}) during {during}, "
                                  f"RTL time {fmt_time(child.rtl_now)}; last simulator output:\n"
                                  f"{child.log_tail()}\n(log: {child.run_dir}/sim.log)") from None
            if isinstance(e, ChannelTimeout):
                self.close()      # kill it now: it is stuck
                raise self._error(f"{where} is stuck: {e} (RTL time "
                                  f"{fmt_time(child.rtl_now)}); the process was killed "
                                  f"(log: {child.run_dir}/sim.log)") from None
            raise self._error(f"{where}: {e} during {during}") from None

    def run_job(self, during: str, estimate: int, period: int, event: list,
                describe: Any = None, at: int | None = None) -> dict:
        """Send ``event`` (``[channel, payload]``) at the child's present time (or at RTL
        time ``at`` if that is later) and grant
        windows of ``period`` ps cycles until the child emits ``done`` (returned) or
        ``error``. The first window covers the estimate + 1/8 + 256 cycles; a job over
        ``max_cycles_factor * estimate + max_cycles_extra`` cycles asks the child for its
        ``status`` and fails with ``describe(status)`` (what it waits for, which signals).
        The TLM simulator is frozen meanwhile (no simulated time passes on this side)."""
        self.exchange(None, "hello", during)
        child = self.child
        t0 = child.rtl_now if at is None else max(child.rtl_now, at)
        limit = int(self.options.max_cycles_factor * estimate) + self.options.max_cycles_extra
        first = min(estimate + estimate // 8 + 256, limit)
        chunk = max(1024, estimate // 4)
        grant = {"until": t0 + first * period, "events": [[t0, *event]]}
        while True:
            reply = self.exchange(grant, f"window reply ({during})", during)
            for t, ch, payload in reply["events"]:
                if ch == "done":
                    return payload
                if ch not in ("error", "status"):
                    self.on_event(int(t), ch, payload)
                if ch == "error":
                    child.failed = payload.get("message")
                    raise self._error(f"{self.where} failed in {during} at simulated time "
                                      f"{fmt_time(self.sim.now)}: {payload.get('kind')}: "
                                      f"{payload.get('message')}")
            cycles = (child.rtl_now - t0) // period
            if reply["next"] is None:
                child.failed = "idle without end of job"
                raise self._error(f"{self.where} went idle in {during} without reporting its "
                                  f"end ({cycles} cycles after it was sent)")
            if cycles >= limit:
                st = self.exchange({"until": child.rtl_now + period,
                                    "events": [[child.rtl_now, "status", None]]},
                                   "status reply", during)
                status = next((p for _t, c, p in st["events"] if c == "status"), {})
                child.failed = "cycle limit"
                detail = describe(status) if describe else ", ".join(
                    f"{k} = {v}" for k, v in status.items())
                raise self._error(
                    f"{self.where} did not finish {during} within {limit} cycles (the model "
                    f"estimates {estimate}; limit = {self.options.max_cycles_factor:g} x "
                    f"estimate + {self.options.max_cycles_extra}): waiting for "
                    f"{status.get('waiting', '?')} for {status.get('for_cycles', '?')} "
                    f"cycles; {detail}")
            step = min(chunk, limit - cycles)
            grant = {"until": child.rtl_now + step * period, "events": []}

    def on_event(self, t: int, channel: str, payload: Any) -> None:
        """An output event of the child other than ``done``/``error`` (e.g. an interrupt
        pulse) at RTL time ``t``, seen while :meth:`run_job` waits; ignored by default."""

    # ----- report ------------------------------------------------------------------------
    def close(self) -> None:
        if self.child is not None:
            self.child.close()

    def report_extra(self) -> dict:
        """Block-specific report fields (merged into :meth:`report`)."""
        return {}

    def report(self) -> dict:
        rtl = sum(j["rtl_cycles"] for j in self.items)
        model = sum(j["model_cycles"] for j in self.items)
        waves = None
        if self.wave_file is not None:
            ok = self.wave_file.exists() and self.wave_file.stat().st_size > 0
            waves = str(self.wave_file) if ok else None
        c = self.child
        out = {"model": self.mode, "block": self.top, "unit": self.unit,
               "rtl_build": str(self.built.build_dir) if self.built else None,
               "build_cached": getattr(self.built, "cached", None),
               "build_s": round(self.build_s, 3),
               "pid": c.pid if c else None,
               "exit_code": None if c is None or c.proc is None else c.proc.returncode,
               self.unit: self.items, "count": len(self.items),
               "rtl_cycles": rtl, "model_cycles": model, "rel_diff": rel_diff(rtl, model),
               "estimate": self.estimate.get(self.mode, ""),
               "waves": waves, "round_trips": c.link.round_trips if c and c.link else 0,
               "rtl_wall_s": round(c.wait_s, 3) if c else 0.0, "error": self.error}
        if self.wave_file is not None and waves is None:
            out["waves_missing"] = str(self.wave_file)
        if self.mode == "shadow":
            out.update(divergence=self.divergence, divergent=self.divergent,
                       compared=self.compared)
        if c is not None and c.bye:
            out["child_stats"] = c.bye.get("stats")
        if c is not None and c.keep_dir and c.run_dir is not None:
            out["log"] = str(c.run_dir / "sim.log")
        out.update(self.report_extra())
        return out


def rel_diff(rtl: int, model: int) -> float | None:
    """(RTL - model) / model, None without a model figure."""
    return None if not model else round((rtl - model) / model, 6)


# ---------------------------------------------------------------------------- entry points
class RtlModels:
    """The RTL blocks of one run (``run.rtl``): ``report()`` and ``close()``."""

    def __init__(self, blocks: dict[str, Any]):
        self.blocks = blocks

    def close(self) -> None:
        errors = []
        for b in self.blocks.values():
            try:
                b.close()
            except Exception as e:  # noqa: BLE001 - close every child regardless
                errors.append(e)
        if errors:
            raise errors[0]

    def report(self, owned: Any = None) -> dict:
        """``{"blocks": {path: entry}, "table": ...}`` of the blocks ``owned(path)`` accepts
        (all by default: in a split run each process reports the blocks it owns)."""
        blocks = {path: b.report() for path, b in self.blocks.items()
                  if owned is None or owned(path)}
        return {"blocks": blocks, "table": rtl_table(blocks)}


def rtl_table(blocks: dict[str, dict]) -> dict:
    """The summary table of the report's RTL block entries."""
    rows = []
    for path, r in sorted(blocks.items()):
        div = "-"
        if r["model"] == "shadow":
            d = r["divergence"]
            div = "none" if d is None else (
                f"{d['at']} at {d['time']}: {d.get('word_address', d['address'])} "
                f"expected {d['expected']} actual {d['actual']}")
        rows.append([path, r["model"], f"{r['count']} {r['unit']}", r["rtl_cycles"],
                     r["model_cycles"] or "-",
                     "-" if r["rel_diff"] is None else f"{100 * r['rel_diff']:+.2f} %",
                     div, r["waves"] or "-"])
    return {"columns": ["block", "model", "transactions", "RTL cycles", "model cycles", "diff",
                        "divergence", "waves"], "rows": rows}


def _waves_dir(run: Any, options: RtlOptions, out_dir: Path | None) -> Path:
    if options.waves_dir:
        return Path(options.waves_dir)
    if os.environ.get(WAVES_DIR_ENV):
        return Path(os.environ[WAVES_DIR_ENV])
    if out_dir is not None:          # the run's output folder, next to report.json
        return Path(out_dir)
    if run.sc.outputs.get("dir"):
        return Path(run.sc.outputs["dir"])
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("out") / f"{run.sc.name}-rtl-{stamp}"


def _have_lz4() -> bool:
    """Can the C++ compiler find ``lz4.h`` (Verilator's FST writer needs it)?"""
    import subprocess
    cxx = os.environ.get("CXX", "c++")
    try:
        r = subprocess.run([cxx, "-E", "-x", "c++", "-"], input="#include <lz4.h>\n",
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return True   # let the build say what is wrong
    return r.returncode == 0


def attach_models(run: Any, waves: str | None = None, options: RtlOptions | None = None,
                  out_dir: Path | None = None) -> RtlModels:
    """Swap in the RTL blocks ``run.sc.models`` names (``rtl``/``shadow``). Builds and
    starts their child processes; schedules no simulator activity."""
    sc = run.sc
    options = options or RtlOptions.from_env()
    from .toolchain import ToolchainError, setup
    wanted = [(p, m) for p, m in sorted(sc.models.items()) if m != "tlm"]
    added = sorted(sc.rtl_blocks)
    try:
        setup()
    except ToolchainError as e:
        if not wanted:
            raise sc.error(f"RTL block {added[0]} needs the RTL toolchain: {e}",
                           ("platform", "rtl_blocks", added[0])) from None
        path = wanted[0][0]
        raise sc.error(f"model {sc.models.get(path)!r} for {path} needs the RTL toolchain: {e}",
                       ("platform", "models", path)) from None
    if waves not in (None, "vcd", "fst"):
        raise RtlModelError(f"waves must be 'vcd' or 'fst', not {waves!r}")
    if waves == "fst" and not _have_lz4():
        path = wanted[0][0] if wanted else added[0] if added else ""
        raise RtlModelError("FST waves need the lz4 headers to build the RTL with tracing "
                            "(Debian: apt-get install liblz4-dev); use --waves vcd", path)
    wdir = _waves_dir(run, options, out_dir) if waves else None
    blocks: dict[str, Any] = {}
    try:
        for path, mode in wanted:
            cls = transactor_class(path)
            if cls is None or mode not in MODES:  # check_models refuses these first
                raise sc.error(f"model {mode!r} is not available for {path}",
                               ("platform", "models", path))
            blocks[path] = cls(run, path, mode, waves=waves, options=options, waves_dir=wdir)
        if sc.rtl_blocks:
            from .transactors.portmapped import PortMappedBlock
            for path, spec in sorted(sc.rtl_blocks.items()):
                blocks[path] = PortMappedBlock(run, path, spec, waves=waves, options=options,
                                               waves_dir=wdir)
    except BaseException:
        for b in blocks.values():
            b.close()
        raise
    return RtlModels(blocks)
