"""The TLM side of one block swapped for its RTL: the transactor base (child process,
window protocol, debug access, report entry)."""
from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tlm.units import fmt_time

from .child import ChildProcess
from .options import RtlModelError, RtlOptions
from .waves import WaveSelection

if TYPE_CHECKING:
    from ..scenario.errors import ScenarioError


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
        selection = WaveSelection.from_outputs(self.run.sc.outputs, spec.toplevel) if self.waves else None
        self.child = ChildProcess(self.path, self.built, self.handler, cfg, options=self.options,
                                  wave_file=self.wave_file, wave_args=selection.args() if selection else ())

    def config_error(self, message: str) -> ScenarioError:
        """A user mistake found before anything is built (the block's parameters do not
        suit its RTL): a located error at the scenario's ``platform.models`` entry, exit
        code 2, not a simulation error."""
        return self.run.sc.error(f"model {self.mode!r} for {self.path}: {message}",
                                 ("platform", "models", self.path))

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
        from ..proc.channel import ChannelError, ChannelTimeout, ChildDied
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
               "period_ps": getattr(self, "period", None),
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
        if waves is not None:
            out["waves_bytes"] = self.wave_file.stat().st_size
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


def accelerator_at(sim: Any, path: str) -> Any:
    """The :class:`components.accel.Accelerator` at component path ``path``."""
    from components.accel import Accelerator
    module = sim.modules.get(path)
    if not isinstance(module, Accelerator):
        what = "nothing" if module is None else type(module).__name__
        raise RtlModelError(f"an accelerator transactor needs an accelerator at {path}, "
                            f"found {what}", path)
    return module


class AcceleratorTransactor(Transactor, ABC):
    """Job-level transactor of any accelerator (:class:`components.accel.Accelerator`).

    The accelerator's control port, job queue, done event and report stay the TLM
    model's; only its :attr:`~components.accel.Accelerator.executor` is replaced: in
    ``rtl`` mode by :meth:`execute_rtl` (the RTL computes data and time), in ``shadow``
    mode by :meth:`execute_shadow` (the model runs as before and the RTL runs the same job
    alongside for comparison). A subclass implements both and :meth:`model_job` (run one
    job through the original executor, kept in :attr:`model`)."""

    #: for an optional unit a platform builds only when asked: what to set (the located
    #: error when the path is not built names it)
    absent_hint: str | None = None

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        if self.absent_hint and path not in run.sim.modules:
            raise run.sc.error(f"model {mode!r} for {path}: the platform has no such unit there "
                               f"({self.absent_hint})", ("platform", "models", path))
        super().__init__(run, path, mode, waves=waves, options=options, waves_dir=waves_dir)
        self.accel = accelerator_at(run.sim, path)
        self.period = int(self.accel.clock.period)
        #: the executor the swap replaced (the TLM model's)
        self.model = self.accel.executor
        self.accel.executor = self.execute_rtl if mode == "rtl" else self.execute_shadow

    @abstractmethod
    async def execute_rtl(self, job_id: int, job: Any, start: int) -> Any:
        """Run job ``job_id`` on the RTL; return its :class:`components.accel.JobRecord`."""

    @abstractmethod
    async def execute_shadow(self, job_id: int, job: Any, start: int) -> Any:
        """Run job ``job_id`` on the model and the RTL; compare; return the model's record."""
