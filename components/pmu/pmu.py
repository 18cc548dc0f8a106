"""The PMU: power domains, supplies, FLLs, the ABB generator and its OCMs, timing checks
and energy accounting, behind two register banks (at the ``region`` and ``fll_region`` its
composer gives it).

The PMU register map is ``registers.yaml`` beside this file (tables in docs/registers.md):
INFO, the ABB control and status registers, TIMING_ERRORS, CLEAR, then one DOMAIN block per
power domain (0 always_on, 1 soc, 2 cluster): STATE, VDD_MV (a write ramps), VDD_NOW_MV,
STATUS (VDD_BUSY, SWITCH_BUSY, sticky TIMING_ERROR and BAD_REQUEST), CLEAR.

The chip's domains, FLLs, supply, delay model and operating points are not the PMU's: the
composer passes them as ``chip`` (a :class:`PowerSpec`; MARSELLUS: its facts).

A write the hardware cannot do (supply out of range, switching the always-on domain off,
an unknown state) is ignored and sets BAD_REQUEST. Powering a domain up takes
``power_on_time``; switching it off, or between ON and CLOCK_GATED, is immediate.
"""
from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tlm import Clock, Module, Region, RegisterBank, SimulationError
from tlm.regmap import load_regmap
from tlm.params import ParameterError, freq_field, param, resolve, time_field
from tlm.units import US

from .abb import AbbConfig, AbbGenerator
from .data import PowerSpec, abb_tables
from .domains import PowerDomain, PowerState
from .energy import EnergyLedger, PowerSample
from .fll import Fll, FllBank
from .ocm import OnChipMonitor
from .power_model import PowerModel
from .supply import Regulator
from .timing import TimingErrorRecord, TimingGuard

if TYPE_CHECKING:
    from tlm import Simulator

_ABB = abb_tables()
_CTRL = _ABB["controller"]

#: The register map (components/pmu/registers.yaml); the names below derive from it.
MAP = load_regmap(Path(__file__).with_name("registers.yaml"))
_DOM = MAP.array("DOMAIN")
DOMAIN_BASE = _DOM.base
DOMAIN_STRIDE = _DOM.stride
VDD_BUSY, SWITCH_BUSY, TIMING_ERROR, BAD_REQUEST = (
    _DOM.register("STATUS").field(n).mask
    for n in ("VDD_BUSY", "SWITCH_BUSY", "TIMING_ERROR", "BAD_REQUEST"))
ABB_BUSY, ABB_SAT = MAP.mask("ABB_STATUS", "BUSY"), MAP.mask("ABB_STATUS", "SAT")
VERSION = MAP.constant("VERSION")
_F = MAP.field


@dataclass
class PmuParams:
    """PMU parameters (defaults from the chip's operating points and abb.yaml; override by
    path, e.g. ``pmu.operating_point=abb_400`` or ``pmu.abb_quiet_window='50 us'``).
    ``None`` in lock_time, vdd_slew_v_per_us, vdd_step_v, power_on_time: the chip's value
    (:meth:`for_chip`)."""

    operating_point: str = param("nominal", "the chip's named operating point at start (supplies, clocks, ABB)")
    abb: bool | None = param(None, "Adaptive Body Biasing on/off (None: the operating point's setting)")
    timing_error: Literal["stop", "record"] = param(
        "stop", "a clock above the domain's fmax: stop the run, or record it and go on")
    #: at least 1 ns: a finer series says nothing the activity ledger does not, and costs
    #: a sample per period of simulated time (limits.max_memory bounds the total)
    sample_period: int = time_field(US, "time-series sampling period", lo=1_000)
    lock_time: int | None = time_field(None, "FLL relock time (None: the chip's)")
    vdd_slew_v_per_us: float | None = param(None, "supply slew (V/us; None: the chip's)", lo=1e-4, hi=10.0)
    vdd_step_v: float | None = param(None, "supply regulator step (V; None: the chip's)", lo=1e-4, hi=0.5)
    power_on_time: int | None = time_field(None, "domain power-up time (None: the chip's)")
    #: PMU <-> CLUSTER control latency: the PMU's outputs (FLL frequency, power state) reach
    #: the cluster, and the cluster's activity reaches the ledger/OCMs, this much later
    link_latency: int = time_field(10_000, "PMU <-> cluster control latency (level shifters, synchronisers)",
                                   lo=1)
    ocm_window: float = param(_ABB["ocm"]["window"], "OCM pre-error window (fraction of the period)",
                              lo=0.0, hi=1.0)
    ocm_p_max: float = param(_ABB["ocm"]["p_max"], "OCM pre-error probability at zero slack", lo=0.0, hi=1.0)
    ocm_idle_level: float = param(_ABB["ocm"]["idle_level"], "OCM activity level of an idle domain",
                                  lo=0.0, hi=1.0)
    ocm_light_margin: float = param(_ABB["ocm"]["light_margin"],
                                    "extra slack of the paths light load exercises (fraction)",
                                    lo=0.0, hi=0.5)
    abb_relax_load_ratio: float = param(_CTRL["relax_load_ratio"],
                                        "relax only below this fraction of the last pre-error's load",
                                        lo=0.0, hi=1.0)
    abb_clock: float = freq_field(_CTRL["clock_hz"], "ABB controller reference clock")
    abb_vbb_step_v: float = param(_CTRL["vbb_step_v"], "body-bias step per code (V)", lo=1e-3, hi=0.5)
    abb_max_code: int = param(_CTRL["max_code"], "highest body-bias code", lo=0, hi=255)
    abb_raise_codes: int = param(_CTRL["raise_codes"], "codes added per captured pre-error", lo=1, hi=255)
    abb_relax_codes: int = param(_CTRL["relax_codes"], "codes removed per quiet window", lo=1, hi=255)
    abb_raise_time: int = time_field(round(_CTRL["raise_cycles"] * 1e12 / _CTRL["clock_hz"]),
                                     "pre-error -> new body bias settled")
    abb_relax_time: int = time_field(round(_CTRL["relax_cycles"] * 1e12 / _CTRL["clock_hz"]),
                                     "relaxation step -> new body bias settled")
    abb_quiet_window: int = time_field(round(_CTRL["quiet_cycles"] * 1e12 / _CTRL["clock_hz"]),
                                       "no pre-error for this long (while active): relax a step")
    abb_relax_when_idle: bool = param(_CTRL["relax_when_idle"],
                                      "count the quiet window also while the monitored logic is idle")

    def for_chip(self, chip: PowerSpec, path: str = "pmu") -> "PmuParams":
        """These parameters with every ``None`` default taken from ``chip``; the operating
        point must be one of the chip's (ParameterError at ``<path>.operating_point``)."""
        if self.operating_point not in chip.operating_points:
            raise ParameterError(f"unknown operating point {self.operating_point!r}; known: "
                                 f"{', '.join(chip.operating_points)}",
                                 f"{path}.operating_point")
        return dataclasses.replace(
            self,
            lock_time=chip.lock_time if self.lock_time is None else self.lock_time,
            vdd_slew_v_per_us=(chip.slew_v_per_us if self.vdd_slew_v_per_us is None
                               else self.vdd_slew_v_per_us),
            vdd_step_v=chip.step_v if self.vdd_step_v is None else self.vdd_step_v,
            power_on_time=chip.power_on_time if self.power_on_time is None else self.power_on_time)

    def abb_config(self) -> AbbConfig:
        period = 1e12 / self.abb_clock

        def cyc(t: int) -> int:
            return max(1, round(t / period))

        return AbbConfig(self.abb_max_code, self.abb_raise_codes, self.abb_relax_codes,
                         cyc(self.abb_raise_time), cyc(self.abb_relax_time),
                         cyc(self.abb_quiet_window), self.abb_relax_when_idle)


# sim -> EnergyLedger, so that components can report activity without a reference to the PMU
_LEDGERS: "weakref.WeakKeyDictionary[Any, EnergyLedger]" = weakref.WeakKeyDictionary()


def power_of(sim: "Simulator") -> EnergyLedger | None:
    """The energy ledger of ``sim``'s PMU, or None if the platform has no PMU."""
    return _LEDGERS.get(sim)


def report_activity(who: Module, kind: str, count: float, over: int = 0,
                    cls: str | None = None) -> None:
    """Report activity of component ``who`` (one line from any model)::

        report_activity(self, "op", n_ops, over=duration_ps)

    The class comes from power.yaml ``bindings`` (or ``cls``); without a PMU in the
    simulation this does nothing."""
    ledger = _LEDGERS.get(who.sim)
    if ledger is not None:
        ledger.activity(who.path, kind, count, over, cls)


class Pmu(Module):
    """The PMU of the chip ``chip`` describes (see the module docstring for the register
    map); MARSELLUS's composition passes its operating points.

    ``pmu.domains[name]``, ``pmu.clocks[fll]`` (tlm.Clock driven by the FLLs),
    ``pmu.regs`` (bank sized by ``region``), ``pmu.fll`` (bank sized by ``fll_region``),
    ``pmu.energy`` (the ledger), ``pmu.abb`` (generator), ``pmu.ocms``, ``pmu.timing_errors``.
    ``clocks`` may pass existing Clock objects for the FLLs to drive."""

    def __init__(self, parent: "Module | Simulator", name: str = "pmu",
                 params: PmuParams | dict | None = None,
                 clocks: dict[str, Clock] | None = None, *, chip: PowerSpec, region: Region,
                 fll_region: Region):
        super().__init__(parent, name)
        self.region, self.fll_region = region, fll_region
        if not isinstance(params, PmuParams):
            params = resolve(PmuParams, params, self.path)
        params = params.for_chip(chip, self.path)
        self.params = params
        self.plat = chip
        self.model = PowerModel(chip)
        op = chip.operating_points[params.operating_point]
        self.operating_point = op.name
        #: departures from the operating point at elaboration (e.g. a clock set by the
        #: composition), cleared when an operating point is applied
        self.modified: list[str] = []
        #: :meth:`conditions` when the platform was elaborated (:meth:`mark_start`)
        self.start_conditions: dict[str, dict[str, float]] | None = None

        # domains and their supplies
        lo, hi = (round(v * 1000) for v in chip.supply_range)
        step_mv = round(params.vdd_step_v * 1000)
        if step_mv < 1:
            raise ParameterError("vdd_step_v must be at least 1 mV", f"{self.path}.vdd_step_v")
        self.domains: dict[str, PowerDomain] = {}
        self.regulators: dict[str, Regulator] = {}
        for spec in chip.domains:
            d = PowerDomain(self, spec.name, switchable=spec.switchable,
                            body_biased=spec.body_biased, vdd=op.vdd[spec.name])
            self.domains[spec.name] = d
            self.regulators[spec.name] = Regulator(d, "vreg", d, step_mv=step_mv,
                                                   slew_v_per_us=params.vdd_slew_v_per_us,
                                                   range_mv=(lo, hi))
        self._powering: dict[str, int] = {}     # domain -> pending power-up token
        self._power_gen = 0
        self._presetting = False
        self._bad: dict[str, bool] = {n: False for n in self.domains}
        self._terr_flag: dict[str, bool] = {n: False for n in self.domains}

        # FLLs: the clocks first (the FLL bank's registers are timed by the periph clock)
        self.clocks: dict[str, Clock] = {
            s.name: (clocks or {}).get(s.name) or Clock(self.sim, f"{self.path}.fll.{s.name}",
                                                        op.freq[s.name])
            for s in chip.flls}
        self.fll = FllBank(self, "fll", fll_region.size, clock=self.clocks["periph"])
        for spec in chip.flls:
            self.fll.add_fll(Fll(self.fll, spec.name, freq_hz=op.freq[spec.name],
                                 lock_time=params.lock_time, f_min=chip.f_min,
                                 f_max=chip.f_max, clock=self.clocks[spec.name]))
        self.fll_domain = {s.name: s.domain for s in chip.flls}
        self.main_clock = {s.name: s.main_clock for s in chip.domains}
        self.delay_models = {n: chip.delay_model(n) for n in self.domains}

        # energy accounting
        self.energy = EnergyLedger(self, "energy", self.model, self.domains,
                                   {f: (c, self.fll_domain[f]) for f, c in self.clocks.items()},
                                   self.main_clock, params.sample_period)
        _LEDGERS[self.sim] = self.energy

        # timing checks, OCMs, ABB generator
        self.guard = TimingGuard(self.sim, params.timing_error)
        self.monitored = tuple(_ABB["monitored_domains"])
        self.abb = AbbGenerator(self, "abb", params.abb_config(), clock_hz=params.abb_clock,
                                vbb_step_v=params.abb_vbb_step_v, apply=self._apply_vbb)
        self.ocms: dict[str, OnChipMonitor] = {}
        for n in self.monitored:
            clk = self.clocks[self.main_clock[n]]
            m = OnChipMonitor(self.domains[n], "ocm", self.domains[n], clk, self.delay_models[n],
                              lambda n=n: self.energy.level(n), window=params.ocm_window,
                              p_max=params.ocm_p_max, idle_level=params.ocm_idle_level,
                              light_margin=params.ocm_light_margin)
            m.on_pre_error(self._pre_error)
            self.ocms[n] = m
        #: the monitored load (OCM level) at the last pre-error; presets settle for full load
        self.raise_level = 1.0
        self._seen_level: dict[str, float] = {}
        for n, d in self.domains.items():
            d.on_electrical_change(lambda dom, n=n: self._changed(n))
        for f, clk in self.clocks.items():
            clk.changed.add_callback(lambda _e, n=self.fll_domain[f]: self._changed(n))
        self.energy.on_level_change(self._level_changed)

        # registers
        self.regs = RegisterBank(self, "regs", region.size, clock=self.clocks["periph"])
        self._build_registers()
        # a PMU may be driven programmatically (tests, scenario tasks) with no bus bound
        # (tlm.RegisterBank has no `optional` argument, hence the attribute)
        self.regs.socket.optional = True
        self.fll.socket.optional = True
        self.sim.stats.add_provider(self.path, self._stat_values)

        self.set_abb(op.abb if params.abb is None else params.abb)
        if self.abb.enabled:
            self.abb.force_code(self.settled_code())
        for n in self.domains:
            self._changed(n)

    # ----- programmatic control (the registers call these too) ------------------------------
    def domain(self, name: str) -> PowerDomain:
        return self.domains[name]

    def apply_operating_point(self, name: str) -> None:
        """Preset supplies, frequencies and ABB at once (no ramps; for elaboration and
        tests; firmware goes through the registers)."""
        op = self.plat.operating_points.get(name)
        if op is None:
            raise SimulationError(f"unknown operating point {name!r}; known: "
                                  f"{', '.join(self.plat.operating_points)}", self.path, self.sim.now)
        self.operating_point = name
        self.modified = []
        self._presetting = True          # check timing once everything is set, not midway
        try:
            for n, reg in self.regulators.items():
                reg.set_now(round(op.vdd[n] * 1000))
            for f, fll in self.fll.flls.items():
                fll.set_now(op.freq[f])
            self.set_abb(op.abb)
            self.abb.force_code(self.settled_code() if op.abb else 0)
            self.raise_level = 1.0       # the settled code is full load's
        finally:
            self._presetting = False
        for n in self.domains:
            self._changed(n)

    def override_clock(self, fll: str, hz: float) -> None:
        """Start FLL ``fll`` at ``hz`` instead of the operating point's frequency
        (elaboration); the departure is recorded in :attr:`modified`."""
        if hz != self.fll.flls[fll].target_hz:
            self.fll.flls[fll].set_now(hz)
            self.modified.append(f"{fll} clock {hz / 1e6:g} MHz")

    @property
    def operating_point_label(self) -> str:
        """The operating point's name, with what departs from it (``nominal, cluster clock
        200 MHz``)."""
        return ", ".join([self.operating_point, *self.modified])

    def conditions(self) -> dict[str, dict[str, float]]:
        """The conditions now: frequency of every FLL clock (Hz), supply and body bias of
        every domain (V)."""
        return {"clocks_hz": {f: c.freq_hz for f, c in self.clocks.items()},
                "vdd_v": {n: d.vdd for n, d in self.domains.items()},
                "vbb_v": {n: d.vbb for n, d in self.domains.items()}}

    def mark_start(self) -> None:
        """Record the conditions the run starts in (the composition calls it once built)."""
        self.start_conditions = self.conditions()

    def settled_code(self, level: float = 1.0) -> int:
        """The bias code the ABB settles at in the present conditions under load ``level``
        (OCM activity, default full load): the lowest code that leaves every monitored clock
        outside the OCM window (MAX_CODE if none does). Presets start at full load's, so an
        operating point that needs ABB starts safely whatever runs."""
        cfg = self.abb.fsm.cfg
        extra = (1.0 - max(level, self.params.ocm_idle_level)) * self.params.ocm_light_margin
        for code in range(cfg.max_code + 1):
            vbb = code * self.abb.vbb_step_v
            if all(self.delay_models[n].slack(self.clocks[self.main_clock[n]].freq_hz,
                                              self.domains[n].vdd, vbb) + extra
                   >= self.params.ocm_window for n in self.monitored):
                return code
        return cfg.max_code

    def set_vdd(self, domain: str, volts: float) -> bool:
        """Ramp ``domain``'s supply to ``volts`` (False if out of range)."""
        ok = self.regulators[domain].set_target(round(volts * 1000))
        if not ok:
            self._bad[domain] = True
        return ok

    def set_frequency(self, fll: str, hz: float) -> bool:
        """Relock FLL ``fll`` to ``hz`` (False if out of range)."""
        return self.fll.flls[fll].set_target(hz)

    def set_state(self, domain: str, state: PowerState | int) -> bool:
        """Request a domain state; powering up from OFF takes ``power_on_time``."""
        d = self.domains[domain]
        try:
            state = PowerState(state)
        except ValueError:
            self._bad[domain] = True
            return False
        if not d.switchable and state != PowerState.ON:
            self._bad[domain] = True
            return False
        self._powering.pop(domain, None)          # a new request cancels a power-up
        if d.state == PowerState.OFF and state != PowerState.OFF and self.params.power_on_time > 0:
            self._power_gen += 1
            token = self._power_gen
            self._powering[domain] = token
            self.sim.schedule(self.params.power_on_time, self._powered, domain, state, token)
            return True
        d.set_state(state)
        return True

    def _powered(self, domain: str, state: PowerState, token: int) -> None:
        if self._powering.get(domain) != token:
            return
        del self._powering[domain]
        self.domains[domain].set_state(state)

    def set_abb(self, enabled: bool) -> None:
        """Enable (automatic, pre-error driven) or disable the ABB; disabled, the bias goes to
        the manual code (0 by default) and the OCMs stop."""
        self.abb.set_enabled(bool(enabled))
        self.energy.set_abb(bool(enabled), self.monitored)
        for m in self.ocms.values():
            m.set_enabled(bool(enabled))

    @property
    def abb_enabled(self) -> bool:
        return self.abb.enabled

    @property
    def timing_errors(self) -> list[TimingErrorRecord]:
        return self.guard.records

    def timeseries(self, period: int | None = None, until: int | None = None,
                   max_samples: int | None = None) -> list[PowerSample]:
        """Power per domain over time with V, f and body bias (see EnergyLedger.timeseries)."""
        return self.energy.timeseries(period, until, max_samples)

    def activity(self, path: str, kind: str, count: float, over: int = 0,
                 cls: str | None = None, start: int | None = None) -> None:
        """Same as ``pmu.energy.activity``."""
        self.energy.activity(path, kind, count, over, cls, start)

    def fmax(self, domain: str) -> float:
        """fmax (Hz) of ``domain`` at its present supply and body bias."""
        d = self.domains[domain]
        return self.delay_models[domain].fmax_hz(d.vdd, d.vbb)

    # ----- reactions ---------------------------------------------------------------------------
    def _apply_vbb(self, vbb: float) -> None:
        for d in self.domains.values():
            d.set_vbb(vbb)

    def _changed(self, name: str) -> None:
        if self._presetting:
            return
        d = self.domains[name]
        clocks = [(f, c) for f, c in self.clocks.items() if self.fll_domain[f] == name]
        before = len(self.guard.records)
        ocm = self.ocms.get(name)
        margin = (1.0 - ocm.level()) * ocm.light_margin if ocm is not None else 0.0
        self.guard.check(d, clocks, self.delay_models[name], margin)
        if len(self.guard.records) > before:
            self._terr_flag[name] = True
        if ocm is not None:
            ocm.refresh()

    def _pre_error(self, ocm: OnChipMonitor) -> None:
        self.raise_level = ocm.level()
        self.abb.pre_error()
        self._update_active()

    def _level_changed(self, domain: str, level: float) -> None:
        ocm = self.ocms.get(domain)
        if ocm is not None:
            seen = ocm.level()
            if seen > self._seen_level.get(domain, 0.0):
                self._changed(domain)    # heavier load exercises slower paths: check too
            else:
                ocm.refresh()            # lighter load cannot create a violation
            self._seen_level[domain] = seen
        self._update_active()

    def _update_active(self) -> None:
        """The FSM's ``active`` input: the quiet window counts while work runs and the
        monitored load is light compared with the load of the last pre-error (the load
        that needed the present bias has gone). A steady phase never relaxes: no raise /
        relax cycling; an idle chip holds its bias (and the simulation can end)."""
        # any() / max() over the monitored domains as loops (this runs at every level change)
        busy = False
        for n in self.monitored:
            if self.energy.busy(n):
                busy = True
                break
        levels = [self.ocms[n].level() for n in self.monitored]
        load = max(levels)
        self.abb.set_active(busy and load < self.params.abb_relax_load_ratio * self.raise_level)

    def _stat_values(self) -> dict:
        out: dict = {"timing_errors": len(self.guard.records), "abb_enabled": int(self.abb.enabled)}
        for n, c in sorted(self.guard.counts.items()):
            out[f"timing_errors.{n}"] = c
        return out

    # ----- registers ---------------------------------------------------------------------------
    def _build_registers(self) -> None:
        r = self.regs   # names, access, reset and docs: registers.yaml
        r.add_map(MAP, {
            # INFO's reset is the configuration's (the number of domains), not the map's 0
            "INFO": dict(reset=_F("INFO", "VERSION").put(
                _F("INFO", "DOMAINS").put(0, len(self.domains)), VERSION)),
            "ABB_CTRL": dict(read=lambda: _F("ABB_CTRL", "MANUAL_CODE").put(
                int(self.abb.enabled), self.abb.manual_code), write=self._write_abb_ctrl),
            "ABB_STATUS": dict(read=self._read_abb_status),
            "ABB_VBB_MV": dict(read=lambda: round(self.abb.vbb * 1000)),
            "ABB_PRE_ERRORS": dict(read=self._read_pre_errors),
            "TIMING_ERRORS": dict(read=lambda: len(self.guard.records)),
            "CLEAR": dict(write=self._write_clear),
        })
        for i, (n, d) in enumerate(self.domains.items()):   # bank names: <DOMAIN>_<register>
            r.add_map(_DOM, {
                "STATE": dict(read=lambda d=d: int(d.state),
                              write=lambda v, n=n: self.set_state(n, v) if v in (0, 1, 2)
                              else self._set_bad(n)),
                "VDD_MV": dict(read=lambda n=n: self.regulators[n].target_mv,
                               write=lambda v, n=n: self.set_vdd(n, v / 1000)),
                "VDD_NOW_MV": dict(read=lambda n=n: self.regulators[n].mv),
                "STATUS": dict(read=lambda n=n: self._read_status(n)),
                "CLEAR": dict(write=lambda v, n=n: self._clear(n, v)),
            }, index=i, prefix=f"{n.upper()}_")

    def _set_bad(self, n: str) -> None:
        self._bad[n] = True

    def _write_abb_ctrl(self, v: int) -> None:
        self.abb.set_manual(_F("ABB_CTRL", "MANUAL_CODE").get(v))
        self.set_abb(bool(_F("ABB_CTRL", "EN").get(v)))

    def _read_pre_errors(self) -> int:
        self.abb._sync(self.sim.now)
        return self.abb.fsm.pre_errors

    def _read_abb_status(self) -> int:
        self.abb._sync(self.sim.now)
        f = self.abb.fsm
        v = _F("ABB_STATUS", "STATE").put(_F("ABB_STATUS", "CODE").put(0, f.code), int(f.state))
        return v | (ABB_BUSY if f.busy else 0) | (ABB_SAT if f.sat else 0)

    def _write_clear(self, v: int) -> None:
        if v & MAP.mask("CLEAR", "SAT"):
            self.abb.fsm.sat = False

    def _read_status(self, n: str) -> int:
        return ((VDD_BUSY if self.regulators[n].busy else 0)
                | (SWITCH_BUSY if n in self._powering else 0)
                | (TIMING_ERROR if self._terr_flag[n] else 0)
                | (BAD_REQUEST if self._bad[n] else 0))

    def _clear(self, n: str, v: int) -> None:
        if v & TIMING_ERROR:
            self._terr_flag[n] = False
        if v & BAD_REQUEST:
            self._bad[n] = False
