"""HWPE register file of the RBE (control registers + dual-context job registers), untimed.

The register map comes from ``registers.yaml``. ``RbeRegisterFile`` implements the HWPE
controller semantics a timed wrapper drives:

* ``read(offset)`` / ``write(offset, value, byte_enable)`` from the peripheral bus;
* ``pop_job()`` when the engine is idle: the next committed job, decoded and validated;
* ``job_done(job_id)`` when it finished: frees the context, counts it, and tells the
  wrapper to raise the end-of-job event.

Contexts are acquired, committed and run in round-robin order (like ``hwpe_ctrl_slave``'s
pointer/running context). Nothing here raises on bus traffic: bad accesses set sticky
STATUS bits and are ignored.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from tlm.files import read_text
from tlm.regmap import Field, Register, load_regmap, parse_regmap

from .job import RbeError, RbeJob, validate

_YAML = Path(__file__).with_name("registers.yaml")
_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class RegisterMap:
    """The RBE's view of its register map: control registers by name, the job registers
    (one set per context) in offset order, STATUS's bits and the HWPE constants."""

    control: dict[str, Register]
    job: tuple[Register, ...]
    status_bits: dict[str, Field]
    n_contexts: int
    job_id_bits: int
    acquire_busy: int

    @property
    def job_base(self) -> int:
        return self.job[0].offset

    def job_index(self, offset: int) -> int | None:
        i = (offset - self.job_base) // 4
        return i if 0 <= i < len(self.job) and offset % 4 == 0 else None

    def status(self, name: str) -> Field:
        return self.status_bits[name]


@lru_cache(maxsize=None)
def load_register_map(path: str | None = None) -> RegisterMap:
    """Parse ``registers.yaml`` (or ``path``, common schema of :mod:`tlm.regmap`)."""
    m = load_regmap(_YAML) if path is None else parse_regmap(read_text(path, "package_data"), str(path))
    job = m.group("job")
    offsets = [r.offset for r in job]
    if not job or offsets != list(range(offsets[0], offsets[0] + 4 * len(job), 4)):
        raise ValueError(f"{m.source}: job registers must be contiguous words")
    return RegisterMap({r.name: r for r in m.group("control")}, job,
                       {f.name: f for f in m.register("STATUS").fields},
                       m.constant("N_CONTEXTS"), m.constant("JOB_ID_BITS"),
                       m.constant("ACQUIRE_BUSY"))


REGMAP = load_register_map()
ACQUIRE_BUSY = REGMAP.acquire_busy


def encode_job(job: RbeJob, regmap: RegisterMap = REGMAP) -> list[tuple[int, int]]:
    """``(offset, value)`` writes that program ``job`` into an acquired context."""
    out = []
    for reg in regmap.job:
        word = 0
        for f in reg.fields:
            word = f.put(word, int(getattr(job, f.name)))
        out.append((reg.offset, word & _MASK32))
    return out


def decode_job(values: Sequence[int], regmap: RegisterMap = REGMAP) -> RbeJob:
    """Build an :class:`RbeJob` from one context's job register values (map order)."""
    kw: dict[str, int | bool] = {}
    for reg, word in zip(regmap.job, values):
        for f in reg.fields:
            kw[f.name] = f.get(word)
    kw["relu"] = bool(kw["relu"])
    return RbeJob(**kw)  # type: ignore[arg-type]


class CtxState(enum.IntEnum):
    FREE = 0
    ACQUIRED = 1
    QUEUED = 2
    RUNNING = 3


@dataclass
class _Context:
    regs: list[int]
    state: CtxState = CtxState.FREE
    job_id: int = 0
    error: RbeError = RbeError.OK


class RbeRegisterFile:
    """Dual-context HWPE register file; the TCDM window ``[tcdm_base, +tcdm_size)`` bounds jobs."""

    def __init__(self, tcdm_base: int, tcdm_size: int, regmap: RegisterMap = REGMAP):
        self.tcdm_base = tcdm_base
        self.tcdm_size = tcdm_size
        self.map = regmap
        c = regmap.control
        self._ctl = {r.offset: name for name, r in c.items()}
        self._contexts = [_Context([0] * len(regmap.job)) for _ in range(regmap.n_contexts)]
        #: incremented by every soft clear; a wrapper can drop results of an aborted job
        self.epoch = 0
        self._reset_state()

    # ---- state ----------------------------------------------------------------------------
    def _reset_state(self) -> None:
        for ctx in self._contexts:
            ctx.state, ctx.job_id, ctx.error = CtxState.FREE, 0, RbeError.OK
        self._ptr = 0          # context the next ACQUIRE takes (and job registers address)
        self._run_ptr = 0      # context the engine runs next
        self._next_id = 0
        self._finished = 0
        self._running_id = 0
        self._last_error = 0
        self._sticky = 0

    def _flag(self, name: str) -> None:
        self._sticky |= self.map.status(name).mask

    @property
    def acquired(self) -> bool:
        return self._contexts[self._ptr].state == CtxState.ACQUIRED

    @property
    def running_job(self) -> int | None:
        ctx = self._contexts[self._run_ptr]
        return ctx.job_id if ctx.state == CtxState.RUNNING else None

    @property
    def has_queued(self) -> bool:
        return any(c.state == CtxState.QUEUED for c in self._contexts)

    @property
    def finished(self) -> int:
        return self._finished

    @property
    def status(self) -> int:
        st = self.map.status
        v = self._sticky
        v = st("RUNNING").put(v, self.running_job is not None)
        v = st("QUEUED").put(v, self.has_queued)
        v = st("ACQUIRED").put(v, self.acquired)
        v = st("FULL").put(v, self.acquired or self._contexts[self._ptr].state != CtxState.FREE)
        return st("LAST_ERROR").put(v, self._last_error)

    # ---- bus side -------------------------------------------------------------------------
    def read(self, offset: int) -> int:
        """Peripheral-bus read; ACQUIRE has the side effect of acquiring a context."""
        name = self._ctl.get(offset)
        if name == "ACQUIRE":
            return self._acquire()
        if name == "FINISHED":
            return self._finished & _MASK32
        if name == "STATUS":
            return self.status
        if name == "RUNNING_JOB":
            return self._running_id
        if name in ("TRIGGER", "SOFT_CLEAR"):
            return 0
        idx = self.map.job_index(offset)
        if idx is None:
            self._flag("ERR_BAD_ACCESS")
            return 0
        return self._contexts[self._ptr].regs[idx]

    def write(self, offset: int, value: int, byte_enable: int = 0xF) -> None:
        """Peripheral-bus write of a 32-bit ``value`` with per-byte enables."""
        value &= _MASK32
        name = self._ctl.get(offset)
        if name == "TRIGGER":
            self._commit()
        elif name == "SOFT_CLEAR":
            self.soft_clear(keep_job_registers=value != 0)
        elif name == "STATUS":
            be = _byte_mask(byte_enable)
            w1c = sum(f.mask for f in self.map.status_bits.values() if f.access == "rw1c")
            self._sticky &= ~(value & be & w1c)
        elif name is not None:  # ACQUIRE, FINISHED, RUNNING_JOB are read-only
            self._flag("ERR_BAD_ACCESS")
        else:
            idx = self.map.job_index(offset)
            if idx is None:
                self._flag("ERR_BAD_ACCESS")
            elif not self.acquired:
                self._flag("ERR_WRITE_IGNORED")
            else:
                regs = self._contexts[self._ptr].regs
                be = _byte_mask(byte_enable)
                regs[idx] = (regs[idx] & ~be) | (value & be)

    def _acquire(self) -> int:
        ctx = self._contexts[self._ptr]
        if ctx.state != CtxState.FREE:  # already acquired, or the context is still in use
            return self.map.acquire_busy
        ctx.state, ctx.job_id, ctx.error = CtxState.ACQUIRED, self._next_id, RbeError.OK
        self._next_id = (self._next_id + 1) % (1 << self.map.job_id_bits)
        return ctx.job_id

    def _commit(self) -> None:
        if not self.acquired:
            self._flag("ERR_TRIGGER_NO_JOB")
            return
        self._contexts[self._ptr].state = CtxState.QUEUED
        self._ptr = (self._ptr + 1) % len(self._contexts)

    def soft_clear(self, keep_job_registers: bool = True) -> None:
        """Abort everything (SOFT_CLEAR); optionally zero the job registers."""
        self._reset_state()
        if not keep_job_registers:
            for ctx in self._contexts:
                ctx.regs = [0] * len(self.map.job)
        self.epoch += 1

    # ---- engine side ----------------------------------------------------------------------
    def pop_job(self) -> tuple[int, RbeJob | RbeError] | None:
        """Start the next queued job: ``(job_id, RbeJob)`` or ``(job_id, RbeError)``.

        Returns None when a job is running or nothing is queued. An invalid job must still
        be finished with :meth:`job_done` (it raises its event without touching memory).
        """
        ctx = self._contexts[self._run_ptr]
        if ctx.state != CtxState.QUEUED:
            return None
        ctx.state = CtxState.RUNNING
        self._running_id = ctx.job_id
        job = decode_job(ctx.regs, self.map)  # total: every register value decodes
        ctx.error = validate(job, self.tcdm_base, self.tcdm_size)
        return ctx.job_id, (job if ctx.error == RbeError.OK else ctx.error)

    def job_done(self, job_id: int, epoch: int | None = None) -> bool:
        """Finish the running job ``job_id``; True means: raise the end-of-job event.

        A stale ID is ignored and returns False. Job IDs restart at 0 after SOFT_CLEAR, so a
        wrapper should pass the ``epoch`` it saw at :meth:`pop_job` to drop aborted jobs.
        """
        ctx = self._contexts[self._run_ptr]
        if epoch is not None and epoch != self.epoch:
            return False
        if ctx.state != CtxState.RUNNING or ctx.job_id != job_id:
            return False
        ctx.state = CtxState.FREE
        self._run_ptr = (self._run_ptr + 1) % len(self._contexts)
        self._finished = (self._finished + 1) & _MASK32
        self._last_error = int(ctx.error)
        if ctx.error != RbeError.OK:
            self._flag("ERR_JOB_INVALID")
        return True


def _byte_mask(byte_enable: int) -> int:
    return sum(0xFF << (8 * i) for i in range(4) if byte_enable >> i & 1)
