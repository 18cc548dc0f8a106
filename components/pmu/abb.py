"""Adaptive Body Biasing: the controller FSM (cycle-level specification) and the ABB
generator that runs it in simulated time.

The FSM (:class:`AbbFsm`) is the reference the RTL controller is verified against. It is
clocked by the always-on reference clock ``clk_ref`` and, on every rising edge, samples:

=========== ======= ==================================================================
input       width   meaning
=========== ======= ==================================================================
en          1       1: automatic (pre-error driven) mode; 0: manual mode
pre_error   1       at least one OCM pre-error since the previous edge (OR of all OCMs)
active      1       the monitored logic ran since the previous edge (quiet-window enable)
manual_code 5       the bias code to go to in manual mode (clamped to MAX_CODE)
load        1       operating-point preset: :meth:`AbbFsm.load` ``load_code`` before the
                    edge's step (RTL ports ``load_i``, ``load_code_i``)
load_code   5       the code a preset loads (clamped to MAX_CODE)
=========== ======= ==================================================================

and drives ``code`` (5 bits: forward body bias = code · VBB_STEP, the generator's DAC),
``state`` (2 bits: 0 MONITOR, 1 RAISE, 2 RELAX), ``busy`` (state != MONITOR) and the sticky
``sat`` (a pre-error at MAX_CODE). Registers: ``code``, ``target``, ``timer``, ``quiet``.
Parameters: MAX_CODE, RAISE_CODES, RELAX_CODES, RAISE_CYCLES, RELAX_CYCLES, QUIET_CYCLES,
RELAX_WHEN_IDLE. On each edge, in this order (after a preset's load, when ``load`` is set:
``code = target = load_code``, MONITOR, ``timer = quiet = 0``, counters and ``sat`` kept):

* RAISE: ``timer -= 1``; at 0: ``code = target``, go to MONITOR, ``quiet = 0``.
  (Pre-errors are ignored: the bias is already on its way up.)
* RELAX: if ``en`` and ``pre_error``: abort and raise from ``code`` (as in MONITOR below).
  Else ``timer -= 1``; at 0: ``code = target``, MONITOR, ``quiet = 0``.
* MONITOR, ``en = 0``: ``quiet = 0``; if ``manual_code != code``: ``target = manual_code``,
  go to RAISE (if higher) or RELAX, ``timer = RAISE_CYCLES`` / ``RELAX_CYCLES``.
* MONITOR, ``en = 1``, ``pre_error``: ``quiet = 0``; if ``code < MAX_CODE``:
  ``target = min(code + RAISE_CODES, MAX_CODE)``, RAISE, ``timer = RAISE_CYCLES``; else
  ``sat = 1``.
* MONITOR, ``en = 1``, no pre-error, ``code > 0`` and (``active`` or RELAX_WHEN_IDLE):
  ``quiet += 1``; at QUIET_CYCLES: ``target = max(code − RELAX_CODES, 0)``, RELAX,
  ``timer = RELAX_CYCLES``, ``quiet = 0``.

So a pre-error captured at edge e changes the bias at edge e + RAISE_CYCLES (0.66 µs), and
with no pre-error the bias drops one step QUIET_CYCLES + RELAX_CYCLES edges after the last
change. The quiet window counts only while the monitored logic is active (unless
RELAX_WHEN_IDLE): absence of pre-errors while nothing runs says nothing about slack, and
holding the bias keeps work that resumes safe.

:class:`AbbGenerator` runs the FSM event-driven: between input changes it advances the FSM
in closed form (:meth:`AbbFsm.advance`, equal to that many :meth:`AbbFsm.step` calls) and it
wakes only at the edges where ``code`` changes. An input that changes at time t is seen by
the first edge strictly after t; a preset (:meth:`AbbGenerator.force_code`) takes effect at
once, at t (the RTL loads it at that first edge, before the edge's step: the same registers
after the edge).

``AbbGenerator.backend`` (None by default) lets another implementation of the FSM (the RTL
controller, :mod:`cosim.rtl.transactors.abb`) take over or shadow the edges; the model
here does not know what it is (no cosim import).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Callable

from tlm import Module

if TYPE_CHECKING:
    from tlm import Simulator


class AbbState(IntEnum):
    MONITOR = 0
    RAISE = 1
    RELAX = 2


@dataclass(frozen=True)
class AbbConfig:
    """The FSM's parameters (abb.yaml ``controller``; times in cycles of ``clk_ref``)."""

    max_code: int = 24
    raise_codes: int = 1
    relax_codes: int = 1
    raise_cycles: int = 66
    relax_cycles: int = 66
    quiet_cycles: int = 2000
    relax_when_idle: bool = False

    def __post_init__(self) -> None:
        if not (0 < self.max_code < 32 and self.raise_codes >= 1 and self.relax_codes >= 1
                and self.raise_cycles >= 1 and self.relax_cycles >= 1 and self.quiet_cycles >= 1):
            raise ValueError(f"bad ABB controller configuration: {self}")


class AbbFsm:
    """The ABB controller, one ``step`` per rising edge of ``clk_ref`` (module docstring)."""

    __slots__ = ("cfg", "state", "code", "target", "timer", "quiet", "sat",
                 "pre_errors", "raises", "relaxes", "saturations")

    def __init__(self, cfg: AbbConfig, code: int = 0):
        self.cfg = cfg
        self.state = AbbState.MONITOR
        self.code = min(max(code, 0), cfg.max_code)
        self.target = self.code
        self.timer = 0
        self.quiet = 0
        self.sat = False
        self.pre_errors = 0      # pre-errors sampled (any state)
        self.raises = 0          # RAISE transitions started
        self.relaxes = 0         # RELAX transitions started
        self.saturations = 0     # pre-errors at MAX_CODE

    @property
    def busy(self) -> bool:
        return self.state != AbbState.MONITOR

    def snapshot(self) -> tuple:
        """The registers and counters, for comparisons (RTL vs model, step vs advance)."""
        return (int(self.state), self.code, self.target, self.timer, self.quiet, self.sat,
                self.pre_errors, self.raises, self.relaxes, self.saturations)

    def copy(self) -> "AbbFsm":
        c = AbbFsm.__new__(AbbFsm)
        for k in AbbFsm.__slots__:
            setattr(c, k, getattr(self, k))
        return c

    def load(self, code: int) -> int:
        """Preset: ``code = target = code`` (clamped), MONITOR, ``timer = quiet = 0``;
        counters and ``sat`` unchanged. Returns the loaded code."""
        self.state, self.timer, self.quiet = AbbState.MONITOR, 0, 0
        self.code = self.target = min(max(int(code), 0), self.cfg.max_code)
        return self.code

    def _start(self, target: int, raising: bool) -> None:
        self.target = target
        self.state = AbbState.RAISE if raising else AbbState.RELAX
        self.timer = self.cfg.raise_cycles if raising else self.cfg.relax_cycles
        if raising:
            self.raises += 1
        else:
            self.relaxes += 1

    def _raise(self) -> None:
        self.quiet = 0
        if self.code < self.cfg.max_code:
            self._start(min(self.code + self.cfg.raise_codes, self.cfg.max_code), True)
        else:
            self.state = AbbState.MONITOR
            self.sat = True
            self.saturations += 1

    def _finish(self) -> None:
        self.code = self.target
        self.state = AbbState.MONITOR
        self.quiet = 0

    def step(self, en: bool, pre_error: bool, active: bool, manual_code: int = 0,
             load: int | None = None) -> None:
        """One rising edge of ``clk_ref`` (``load``: a preset's code, loaded first)."""
        cfg = self.cfg
        if load is not None:
            self.load(load)
        if pre_error:
            self.pre_errors += 1
        st = self.state
        if st == AbbState.RAISE:
            self.timer -= 1
            if self.timer == 0:
                self._finish()
            return
        if st == AbbState.RELAX:
            if en and pre_error:
                self._raise()
                return
            self.timer -= 1
            if self.timer == 0:
                self._finish()
            return
        if not en:
            self.quiet = 0
            manual = min(max(manual_code, 0), cfg.max_code)
            if manual != self.code:
                self._start(manual, manual > self.code)
            return
        if pre_error:
            self._raise()
            return
        if self.code > 0 and (active or cfg.relax_when_idle):
            self.quiet += 1
            if self.quiet >= cfg.quiet_cycles:
                self.quiet = 0
                self._start(max(self.code - cfg.relax_codes, 0), False)

    def advance(self, n: int, en: bool, active: bool, manual_code: int = 0) -> None:
        """``n`` edges without pre-errors, in closed form (== ``n`` calls of ``step``)."""
        cfg = self.cfg
        while n > 0:
            if self.state != AbbState.MONITOR:
                d = min(n, self.timer)
                self.timer -= d
                n -= d
                if self.timer == 0:
                    self._finish()
                continue
            if not en:
                self.quiet = 0
                manual = min(max(manual_code, 0), cfg.max_code)
                if manual == self.code:
                    return
                self._start(manual, manual > self.code)
                n -= 1
                continue
            if self.code > 0 and (active or cfg.relax_when_idle):
                d = min(n, cfg.quiet_cycles - self.quiet)
                self.quiet += d
                n -= d
                if self.quiet >= cfg.quiet_cycles:
                    self.quiet = 0
                    self._start(max(self.code - cfg.relax_codes, 0), False)
                continue
            return

    def edges_to_change(self, en: bool, active: bool, manual_code: int = 0) -> int | None:
        """Edges until ``code`` changes if no pre-error comes (None: never)."""
        cfg = self.cfg
        if self.state != AbbState.MONITOR:
            return self.timer
        if not en:
            manual = min(max(manual_code, 0), cfg.max_code)
            if manual == self.code:
                return None
            return 1 + (cfg.raise_cycles if manual > self.code else cfg.relax_cycles)
        if self.code > 0 and (active or cfg.relax_when_idle):
            return cfg.quiet_cycles - self.quiet + cfg.relax_cycles
        return None


class AbbGenerator(Module):
    """The ABB generator in the always-on domain: runs :class:`AbbFsm` on a reference clock
    of ``clock_hz`` and calls ``apply(vbb_volts)`` whenever the bias code changes.

    Inputs: :meth:`pre_error` (from the OCMs), :meth:`set_active`, :meth:`set_enabled`,
    :meth:`set_manual`. ``history`` lists ``(time, vbb)`` of every bias change."""

    def __init__(self, parent: "Module | Simulator", name: str, cfg: AbbConfig, *,
                 clock_hz: float, vbb_step_v: float, apply: Callable[[float], None]):
        super().__init__(parent, name)
        self.fsm = AbbFsm(cfg)
        self.period = round(1e12 / clock_hz)
        self.vbb_step_v = vbb_step_v
        self._apply = apply
        self.enabled = False
        self.manual_code = 0
        self.active = False
        self._pending = False
        self._k = self.sim.now // self.period   # last edge processed
        self._wake = self.event("wake")
        self._wake.add_callback(lambda _e: self._sync_and_plan())
        self.history: list[tuple[int, float]] = [(self.sim.now, 0.0)]
        #: None: the model runs the FSM. Otherwise another implementation of it (the RTL,
        #: cosim.rtl.transactors.abb): ``drives`` (True: it replaces the edges, ``fsm``
        #: reads its registers; False: it shadows them), ``sync(gen, t)`` after the
        #: edges up to ``t``, ``inputs_changed(gen, load)`` after every input change,
        #: and, when it drives, ``plan(gen)`` and ``wake(gen)`` instead of the model's.
        self.backend: Any = None
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _stat_values(self) -> dict:
        f = self.fsm
        return {"code": f.code, "vbb_mv": round(self.vbb * 1000), "pre_errors": f.pre_errors,
                "raises": f.raises, "relaxes": f.relaxes, "saturations": f.saturations}

    @property
    def vbb(self) -> float:
        """Present forward body bias (V)."""
        return round(self.fsm.code * self.vbb_step_v, 9)

    @property
    def code(self) -> int:
        return self.fsm.code

    # ----- inputs ------------------------------------------------------------------------------
    def pre_error(self, *_args) -> None:
        """A pre-error now: the FSM sees it at the next edge."""
        self._sync(self.sim.now)
        self._pending = True
        self._inputs_changed()
        self._plan()

    def set_active(self, active: bool) -> None:
        if active != self.active:
            self._sync(self.sim.now)
            self.active = active
            self._inputs_changed()
            self._plan()

    def set_enabled(self, enabled: bool) -> None:
        if enabled != self.enabled:
            self._sync(self.sim.now)
            self.enabled = enabled
            self._inputs_changed()
            self._plan()

    def set_manual(self, code: int) -> None:
        self._sync(self.sim.now)
        self.manual_code = int(code)
        self._inputs_changed()
        self._plan()

    def force_code(self, code: int) -> None:
        """Set the bias at once, no transition (operating-point presets)."""
        self._sync(self.sim.now)
        self._pending = False
        code = self.fsm.load(code)
        self.manual_code = code if not self.enabled else self.manual_code
        self._after_change()
        self._inputs_changed(code)
        self._plan()

    def _inputs_changed(self, load: int | None = None) -> None:
        if self.backend is not None:
            self.backend.inputs_changed(self, load)

    # ----- time ---------------------------------------------------------------------------------
    def _sync(self, t: int) -> None:
        """Process every edge up to and including time ``t``."""
        b = self.backend
        if b is not None and b.drives:
            b.sync(self, t)
            return
        fsm = self.fsm
        last = t // self.period
        # self._k / self._pending are updated before _after_change: applying the bias may
        # re-enter (an OCM pre-error)
        while self._k < last:
            before = fsm.code
            if self._pending:
                self._pending = False
                fsm.step(self.enabled, True, self.active, self.manual_code)
                self._k += 1
            else:
                n = last - self._k
                m = fsm.edges_to_change(self.enabled, self.active, self.manual_code)
                if m is not None and m < n:
                    n = m
                fsm.advance(n, self.enabled, self.active, self.manual_code)
                self._k += n
            if fsm.code != before:
                self._after_change()
        if b is not None:
            b.sync(self, t)

    def peek(self, t: int) -> AbbFsm:
        """A copy of the FSM after the edges up to time ``t`` with the present inputs (no
        side effect: what :meth:`_sync` would make of it)."""
        f = self.fsm.copy()
        last = t // self.period
        if self._k < last:
            _run_edges(f, self._k, last, self._pending, self.enabled, self.active,
                       self.manual_code)
        return f

    def _after_change(self) -> None:
        vbb = self.vbb
        if self.history[-1][0] == self.sim.now:
            self.history[-1] = (self.sim.now, vbb)
        else:
            self.history.append((self.sim.now, vbb))
        self._apply(vbb)

    def _plan(self) -> None:
        """Schedule a wake-up at the next edge where the code changes (or a pending
        pre-error is sampled)."""
        b = self.backend
        if b is not None and b.drives:
            b.plan(self)
            return
        m = 1 if self._pending else self.fsm.edges_to_change(self.enabled, self.active,
                                                               self.manual_code)
        self._wake.cancel()
        if m is not None:
            self._wake.notify((self._k + m) * self.period - self.sim.now)

    def _sync_and_plan(self) -> None:
        b = self.backend
        if b is not None and b.drives:
            b.wake(self)
        else:
            self._sync(self.sim.now)
        self._plan()


def _run_edges(fsm: AbbFsm, k: int, last: int, pending: bool, en: bool, active: bool,
               manual: int) -> None:
    """Edges ``k + 1 .. last`` of ``fsm`` (a pending pre-error at the first), as
    :meth:`AbbGenerator._sync` runs them."""
    while k < last:
        if pending:
            pending = False
            fsm.step(en, True, active, manual)
            k += 1
        else:
            n = last - k
            m = fsm.edges_to_change(en, active, manual)
            if m is not None and m < n:
                n = m
            fsm.advance(n, en, active, manual)
            k += n
