"""Energy accounting over time: per component, per domain, and a power time series.

Components report activity (``ledger.activity(path, kind, count, over=0)`` or, one line
from any model, :func:`components.pmu.report_activity`); the ledger books its energy at the
domain's present supply. Background power (clock trees, leakage, ABB overhead) is piecewise
constant between *changes* (supply step, frequency, body bias, domain state, ABB on/off):
the ledger appends a segment at each change and integrates analytically. Nothing runs per
cycle and nothing is sampled by a process: the time series is computed on demand from the
segments, the activity spans and a sampling period.

Bounded however long a run is: past :data:`MAX_SPANS` activity spans in a domain, the spans
that have ended are folded into bins of a multiple of the sampling period (energy kept,
spread evenly over each bin); and a series that would exceed ``max_samples`` is *decimated*
(:meth:`EnergyLedger.coarse_period`): intervals of a multiple of the period, each sample the
exact average power over its interval. Neither happens below those sizes, so a short run's
series is the same either way.

Activity reported with ``over=duration`` is spread evenly over ``[now, now+duration)`` in
the time series, and its compute rate feeds the On-Chip Monitors' activity level (rate per
cycle of the domain's main clock divided by the class's ``ocm_peak``). Energy is booked
when reported (totals may include the part of a span that lies in the future).

Units: energy in pJ, power in mW, time in ps (1 mW · 1 ps = 1e-3 pJ).
"""
from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Callable

from tlm import Clock, Module
from tlm.errors import SimulationError

from .domains import PowerDomain, PowerState
from .power_model import PowerError, PowerModel

if TYPE_CHECKING:
    from tlm import Simulator

_MW_PS_TO_PJ = 1e-3
#: activity spans a domain keeps before folding the past ones into bins (about 150 B each;
#: the library's largest run books ~5 000)
MAX_SPANS = 200_000


@dataclass
class PowerSample:
    """Average power over ``[time, time + duration)`` and the electrical state at ``time``.

    ``power_mw``/``dynamic_mw``/``leakage_mw`` per domain (``dynamic`` includes clock trees
    and ABB overhead), ``vdd``/``vbb`` per domain (V), ``state`` per domain (name),
    ``freq_hz`` per FLL."""

    time: int
    duration: int
    power_mw: dict[str, float]
    dynamic_mw: dict[str, float]
    leakage_mw: dict[str, float]
    vdd: dict[str, float]
    vbb: dict[str, float]
    state: dict[str, str]
    freq_hz: dict[str, float]

    @property
    def total_mw(self) -> float:
        return sum(self.power_mw.values())

    def as_dict(self) -> dict:
        """Plain data for JSON reports (stable keys)."""
        return {"time_ps": self.time, "duration_ps": self.duration, "total_mw": self.total_mw,
                "power_mw": dict(self.power_mw), "dynamic_mw": dict(self.dynamic_mw),
                "leakage_mw": dict(self.leakage_mw), "vdd": dict(self.vdd), "vbb": dict(self.vbb),
                "state": dict(self.state), "freq_hz": dict(self.freq_hz)}


@dataclass
class _Seg:
    """Background power of one domain from ``t`` until the next segment."""

    t: int
    clock_mw: float
    leak_mw: float
    abb_mw: float
    vdd: float
    vbb: float
    state: PowerState


@dataclass
class _Acct:
    """Accounting of one domain."""

    domain: PowerDomain
    main_clock: Clock | None
    scale: float = 1.0                       # (V/Vref)^2 at present
    dyn_pj: float = 0.0                      # activity energy booked
    spans: list[tuple[int, int, float]] = field(default_factory=list)
    segs: list[_Seg] = field(default_factory=list)
    cum: list[tuple[float, float, float]] = field(default_factory=list)  # energies at seg start
    windows: dict[int, float] = field(default_factory=dict)
    explicit: dict[str, float] = field(default_factory=dict)
    level: float = 0.0
    busy: bool = False
    off_activity: int = 0
    fold_width: int = 0                      # bin width of the folded spans (0: none folded)
    fold_at: int = 0                         # spans that trigger the next fold (0: MAX_SPANS)

    def bg_pj(self, t: int, k: int = -1) -> tuple[float, float, float]:
        """(clock, leakage, abb) energy from 0 to ``t``, ``t`` in segment ``k`` (default
        the last one)."""
        s = self.segs[k]
        c = self.cum[k]
        dt = (t - s.t) * _MW_PS_TO_PJ
        return c[0] + s.clock_mw * dt, c[1] + s.leak_mw * dt, c[2] + s.abb_mw * dt


class ActivityPort:
    """A component's reporting handle (class and domain resolved once): ``add(kind, n)``."""

    __slots__ = ("_ledger", "path", "cls", "_acct", "_energy", "_peak", "energy_pj", "counts")

    def __init__(self, ledger: "EnergyLedger", path: str, cls: str):
        c = ledger.model.activity_class(cls)
        self._ledger = ledger
        self.path = path
        self.cls = cls
        self._acct = ledger._accts[c.domain]
        self._energy = c.energy_pj
        self._peak = c.ocm_peak
        self.energy_pj = 0.0
        self.counts: dict[str, float] = {}

    def add(self, kind: str, count: float, over: int = 0, start: int | None = None) -> None:
        """Report ``count`` activities of ``kind`` spread over ``[start, start + over)``
        (``start`` defaults to now; it may lie in the past: the activity already happened,
        e.g. a chunk reported when its end is known, or a report that crossed a link)."""
        e = self._energy.get(kind)
        if e is None:
            raise PowerError(f"{self.path}: class {self.cls!r} has no activity kind {kind!r}; "
                             f"known: {', '.join(sorted(self._energy))}")
        now = self._ledger.sim.now
        t0 = now if start is None else int(start)
        if count < 0 or over < 0 or t0 < 0:
            raise SimulationError(f"activity {kind!r}: negative count, duration or start "
                                  f"({count}, {over} ps, at {t0} ps)", self.path, now)
        over = int(over)
        self.counts[kind] = self.counts.get(kind, 0) + count
        acct = self._acct
        if acct.domain.state != PowerState.ON:
            acct.off_activity += 1   # work in a domain that is not running: counted, no energy
            return
        pj = count * e * acct.scale
        self.energy_pj += pj
        acct.dyn_pj += pj
        acct.spans.append((t0, t0 + over, pj))
        if len(acct.spans) > (acct.fold_at or MAX_SPANS):
            self._ledger._fold(acct)
        if over > 0 and count > 0 and t0 + over > now:
            # the monitors see the part of the span that is still to come: compute kinds
            # as a level, everything else as work running (the ABB's quiet window)
            peak = self._peak.get(kind)
            level = 0.0
            if peak is not None and acct.main_clock is not None:
                level = count / (over / acct.main_clock.period) / peak
            elif self._peak:
                return               # a compute class's other kinds: its level says it
            self._ledger._add_window(acct, level, t0 - now, t0 + over - now)


class ForwardPort:
    """The reporting handle of a component behind a link (another clock/power domain that
    may live in another process): ``add`` checks the report and sends it over the link;
    the ledger books it on arrival, at the supply of that moment."""

    __slots__ = ("path", "cls", "_kinds", "_send", "_sim")

    def __init__(self, ledger: "EnergyLedger", path: str, cls: str, send: Callable[..., None]):
        self.path = path
        self.cls = cls
        self._kinds = ledger.model.activity_class(cls).energy_pj
        self._send = send
        self._sim = ledger.sim

    def add(self, kind: str, count: float, over: int = 0, start: int | None = None) -> None:
        if kind not in self._kinds:
            raise PowerError(f"{self.path}: class {self.cls!r} has no activity kind {kind!r}; "
                             f"known: {', '.join(sorted(self._kinds))}")
        t0 = self._sim.now if start is None else int(start)
        if count < 0 or over < 0 or t0 < 0:
            raise SimulationError(f"activity {kind!r}: negative count, duration or start "
                                  f"({count}, {over} ps, at {t0} ps)", self.path, self._sim.now)
        # the start travels with the report: booked on arrival, placed where it happened
        self._send(self.path, self.cls, kind, count, int(over), t0)


class EnergyLedger(Module):
    """Energy per component and per domain over time (see the module docstring).

    ``domains``: the PowerDomains by name; ``clocks``: FLL name -> (Clock, domain name);
    ``main_clocks``: domain name -> FLL name (the clock activity rates are counted in)."""

    def __init__(self, parent: "Module | Simulator", name: str, model: PowerModel,
                 domains: dict[str, PowerDomain], clocks: dict[str, tuple[Clock, str]],
                 main_clocks: dict[str, str | None], sample_period: int):
        super().__init__(parent, name)
        self.model = model
        self.domains = domains
        self.clocks = clocks
        self.sample_period = int(sample_period)
        self.abb_enabled = False
        self.abb_domains: tuple[str, ...] = ()
        self._accts = {n: _Acct(d, clocks[main_clocks[n]][0] if main_clocks.get(n) else None)
                       for n, d in domains.items()}
        self._ports: dict[str, ActivityPort] = {}
        self._forwarded: dict[str, ForwardPort] = {}
        self._forwards: list[tuple[str, Callable[..., None]]] = []
        # (path, cls) -> the port :meth:`activity` resolved for it (a forward() clears it)
        self._activity_ports: dict[tuple[str, str | None], ActivityPort | ForwardPort] = {}
        self._bindings = model.tables.bindings
        self._level_listeners: list[Callable[[str, float], None]] = []
        self._next_window = 0
        self._meters: list[Callable[[], None]] = []
        self._polling = False
        for n in domains:
            self.refresh(n)
        for n, d in domains.items():
            d.on_electrical_change(lambda dom, n=n: self.refresh(n))
        for clk, dom in clocks.values():
            clk.changed.add_callback(lambda _e, dom=dom: self._clock_changed(dom))
        self.sim.stats.add_provider(self.path, self._stat_totals)
        self.sim.stats.add_provider(self.path + ".components", self._stat_components)
        self.sim.stats.add_provider(self.path + ".classes", self.class_energy)
        for n, d in domains.items():
            self.sim.stats.add_provider(d.path, lambda n=n: self._stat_domain(n))

    # ----- reporting ---------------------------------------------------------------------------
    def classify(self, path: str) -> str:
        """The class a path binds to (power.yaml ``bindings``), or a PowerError."""
        for pattern, cls in self._bindings:
            if fnmatchcase(path, pattern):
                return cls
        raise PowerError(f"{path}: no activity class binds to this path; call "
                         f"register({path!r}, cls) with one of "
                         f"{', '.join(sorted(self.model.tables.classes))}")

    def forward(self, prefix: str, send: Callable[..., None]) -> None:
        """Components under ``prefix`` report through ``send(path, cls, kind, count, over)``
        (a link towards this ledger, whose far end calls :meth:`book`; a sixth argument,
        the start time, follows ``over``), in one process or
        several alike."""
        self._forwards.append((prefix.rstrip(".") + ".", send))
        self._activity_ports.clear()

    def register(self, path: str, cls: str | None = None) -> "ActivityPort | ForwardPort":
        """The reporting port of ``path`` (class from ``bindings`` unless given)."""
        for prefix, send in self._forwards:
            if path.startswith(prefix):
                fwd = self._forwarded.get(path)
                if fwd is None:
                    fwd = self._forwarded[path] = ForwardPort(self, path, cls or self.classify(path), send)
                return fwd
        return self._port(path, cls)

    def _port(self, path: str, cls: str | None) -> ActivityPort:
        port = self._ports.get(path)
        if port is None:
            port = ActivityPort(self, path, cls or self.classify(path))
            self._ports[path] = port
        elif cls is not None and cls != port.cls:
            raise PowerError(f"{path} is already registered as {port.cls!r}, not {cls!r}")
        return port

    def book(self, path: str, cls: str, kind: str, count: float, over: int,
             start: int | None = None) -> None:
        """Book a report forwarded by a :class:`ForwardPort` (the far end of its link)."""
        self._port(path, cls).add(kind, count, over, start)
        self.poll_meters()

    def add_meter(self, poll: Callable[[], None]) -> None:
        """``poll()`` (a :class:`components.pmu.meter.CounterMeter`'s) runs whenever a
        report reaches the ledger and before its results are read."""
        self._meters.append(poll)

    def poll_meters(self) -> None:
        if self._polling or not self._meters:
            return
        self._polling = True     # a meter books through activity(): no re-entry
        try:
            for poll in self._meters:
                poll()
        finally:
            self._polling = False

    def activity(self, path: str, kind: str, count: float, over: int = 0,
                 cls: str | None = None, start: int | None = None) -> None:
        """Book ``count`` activities of ``kind`` by component ``path`` (see ActivityPort.add)."""
        # a forwarded path's own port exists here too (made by ``book``): never use it
        port = self._activity_ports.get((path, cls))
        if port is None:
            port = self._forwarded.get(path) or self.register(path, cls)
            self._activity_ports[(path, cls)] = port
        port.add(kind, count, over, start)
        if isinstance(port, ActivityPort):
            # a report that reached this ledger (a forwarded one polls on arrival, in
            # :meth:`book`: at the same simulated time in one process or several)
            self.poll_meters()

    # ----- activity level (for the OCMs) ----------------------------------------------------
    def level(self, domain: str) -> float:
        """Present activity level (0..1) of ``domain``."""
        return self._accts[domain].level

    def set_level(self, domain: str, source: str, level: float) -> None:
        """Drive the activity level of ``domain`` explicitly from ``source`` (0 removes it);
        levels of all sources and of reported activity add up, clipped to 1."""
        acct = self._accts[domain]
        if level <= 0:
            acct.explicit.pop(source, None)
        else:
            acct.explicit[source] = float(level)
        self._update_level(domain)

    def on_level_change(self, fn: Callable[[str, float], None]) -> None:
        self._level_listeners.append(fn)

    def _add_window(self, acct: _Acct, level: float, begin: int, end: int) -> None:
        """Activity level ``level`` from ``now + begin`` to ``now + end`` (the past part of
        a span is dropped: the monitors cannot see back in time)."""
        if end <= 0:
            return
        wid = self._next_window
        self._next_window += 1
        name = acct.domain.name
        if begin > 0:
            self.sim.schedule(begin, self._begin_window, name, wid, level)
        else:
            acct.windows[wid] = level
            self._update_level(name)
        self.sim.schedule(end, self._end_window, name, wid)

    def _begin_window(self, domain: str, wid: int, level: float) -> None:
        self._accts[domain].windows[wid] = level
        self._update_level(domain)

    def _end_window(self, domain: str, wid: int) -> None:
        self._accts[domain].windows.pop(wid, None)
        self._update_level(domain)

    def busy(self, domain: str) -> bool:
        """Some reported work of ``domain`` is running (a span covers now)."""
        acct = self._accts[domain]
        return bool(acct.windows) or bool(acct.explicit)

    def _update_level(self, domain: str) -> None:
        acct = self._accts[domain]
        level = min(1.0, sum(acct.windows.values()) + sum(acct.explicit.values()))
        busy = bool(acct.windows) or bool(acct.explicit)
        if level != acct.level or busy != acct.busy:
            acct.level = level
            acct.busy = busy
            for fn in self._level_listeners:
                fn(domain, level)

    def _fold(self, acct: _Acct) -> None:
        """Fold the spans of ``acct`` that lie in whole bins before now into bins of
        ``fold_width`` (a multiple of the sampling period, doubled until at most a quarter
        of :data:`MAX_SPANS` bins remain): each bin's energy is spread evenly over it.
        Later spans stay (a bin only ever holds everything booked in it)."""
        width = acct.fold_width or max(self.sample_period, 1)
        while True:
            cutoff = self.sim.now // width * width
            past = [sp for sp in acct.spans if max(sp[1], sp[0] + 1) <= cutoff]
            keep = [sp for sp in acct.spans if max(sp[1], sp[0] + 1) > cutoff]
            bins: dict[int, float] = {}
            for t0, t1, pj in past:
                k0 = t0 // width
                k1 = max(k0, (t1 - 1) // width)
                if k0 == k1:
                    bins[k0] = bins.get(k0, 0.0) + pj
                    continue
                rate = pj / (t1 - t0)
                for k in range(k0, k1 + 1):
                    part = rate * (min(t1, (k + 1) * width) - max(t0, k * width))
                    bins[k] = bins.get(k, 0.0) + part
            if len(bins) <= MAX_SPANS // 4:
                break
            width *= 2
        acct.fold_width = width
        acct.spans = [(k * width, (k + 1) * width, pj) for k, pj in sorted(bins.items())] + keep
        # what could not be folded (all in the present bin) waits for the next quarter
        acct.fold_at = max(MAX_SPANS, len(acct.spans) + MAX_SPANS // 4)

    def folded(self) -> int:
        """The widest bin (ps) the activity spans were folded into; 0 when none were."""
        return max(a.fold_width for a in self._accts.values())

    # ----- background power --------------------------------------------------------------------
    def set_abb(self, enabled: bool, domains: tuple[str, ...]) -> None:
        self.abb_enabled = enabled
        self.abb_domains = domains
        for n in self.domains:
            self.refresh(n)

    def _clock_changed(self, domain: str) -> None:
        self.refresh(domain)
        if "always_on" in self.domains:   # the FLL's own (DCO) power
            self.refresh("always_on")

    def background_mw(self, name: str) -> tuple[float, float, float]:
        """(clock, leakage, abb overhead) power of domain ``name`` right now (mW)."""
        m = self.model
        d = self.domains[name]
        if d.state == PowerState.OFF:
            return 0.0, m.leakage_mw(name, d.vdd, d.vbb) * m.tables.off_fraction, 0.0
        leak = m.leakage_mw(name, d.vdd, d.vbb)
        clock = abb = 0.0
        if d.state == PowerState.ON:
            for fll, (clk, dom) in self.clocks.items():
                if dom == name:
                    clock += m.clock_tree_mw(fll, d.vdd, clk.freq_hz)
                if name == "always_on":       # the FLLs themselves live here
                    clock += m.dco_mw(fll, d.vdd, clk.freq_hz)
            acct = self._accts[name]
            if self.abb_enabled and name in self.abb_domains and acct.main_clock is not None:
                abb = m.abb_overhead_mw(name, d.vdd, acct.main_clock.freq_hz)
        return clock, leak, abb

    def refresh(self, name: str) -> None:
        """Close the present background segment of ``name`` and open one for its new state."""
        acct = self._accts[name]
        d = acct.domain
        acct.scale = self.model.dyn_scale(d.vdd)
        clock, leak, abb = self.background_mw(name)
        now = self.sim.now
        seg = _Seg(now, clock, leak, abb, d.vdd, d.vbb, d.state)
        if acct.segs:
            last = acct.segs[-1]
            if (last.clock_mw, last.leak_mw, last.abb_mw, last.vdd, last.vbb, last.state) == \
                    (clock, leak, abb, d.vdd, d.vbb, d.state):
                return
            if last.t == now:
                acct.segs[-1] = seg
                return
            acct.cum.append(acct.bg_pj(now))
        else:
            acct.cum.append((0.0, 0.0, 0.0))
        acct.segs.append(seg)

    # ----- results ---------------------------------------------------------------------------
    def domain_energy(self, name: str, t: int | None = None) -> dict[str, float]:
        """Energy of domain ``name`` from 0 to ``t`` (default now), in pJ, by part."""
        self.poll_meters()
        acct = self._accts[name]
        clock, leak, abb = acct.bg_pj(self.sim.now if t is None else t)
        return {"dynamic_pj": acct.dyn_pj, "clock_pj": clock, "leakage_pj": leak,
                "abb_pj": abb, "energy_pj": acct.dyn_pj + clock + leak + abb}

    def totals(self) -> dict[str, dict[str, float]]:
        """Energy so far per domain (pJ by part), per reporting component (pJ) and per
        activity class (pJ: what each kind of block consumed)."""
        domains = {n: self.domain_energy(n) for n in self.domains}
        return {"domains": domains,
                "components": {p: port.energy_pj for p, port in sorted(self._ports.items())},
                "classes": self.class_energy()}

    def class_energy(self) -> dict[str, float]:
        """Activity energy (pJ) per power class: every class of the model listed, but an
        ``optional`` one (a block the platform may leave out) only once something booked
        under it (so adding such a class changes no report of a platform without it)."""
        self.poll_meters()
        classes = self.model.tables.classes
        out = {c: 0.0 for c in sorted(classes) if not classes[c].optional}
        for port in self._ports.values():
            out[port.cls] = out.get(port.cls, 0.0) + port.energy_pj
        return dict(sorted(out.items()))

    def total_pj(self) -> float:
        return sum(self.domain_energy(n)["energy_pj"] for n in self.domains)

    def _stat_domain(self, name: str) -> dict:
        e = self.domain_energy(name)
        acct = self._accts[name]
        now = self.sim.now
        out = dict(e)
        out["avg_power_mw"] = e["energy_pj"] / (now * _MW_PS_TO_PJ) if now else 0.0
        if acct.off_activity:
            out["activity_while_not_on"] = acct.off_activity
        return out

    def _stat_components(self) -> dict:
        self.poll_meters()
        return {p: port.energy_pj for p, port in sorted(self._ports.items())}

    def _stat_totals(self) -> dict:
        total = self.total_pj()
        now = self.sim.now
        return {"energy_pj": total,
                "avg_power_mw": total / (now * _MW_PS_TO_PJ) if now else 0.0}

    def coarse_period(self, until: int, max_samples: int | None, period: int | None = None) -> int:
        """The interval of a decimated series up to ``until`` (a multiple of ``period``,
        default ``sample_period``), or 0 when the full series (intervals at the period and
        at every change) holds at most ``max_samples``."""
        period = self.sample_period if period is None else int(period)
        if max_samples is None or until <= 0:
            return 0
        # the full series' intervals: the period's multiples and the changes between 0 and until
        changes = {s.t for a in self._accts.values() for s in a.segs if 0 < s.t < until}
        changes.update(t for clk, _ in self.clocks.values() for t, _f in clk.history if 0 < t < until)
        grid = (until - 1) // period if period > 0 else 0
        if 1 + grid + sum(1 for t in changes if period <= 0 or t % period) <= max_samples:
            return 0
        step = max(period, 1)
        return step * -(-until // (step * max(max_samples, 1)))

    def timeseries(self, period: int | None = None, until: int | None = None,
                   max_samples: int | None = None) -> list[PowerSample]:
        """Average power per interval from 0 to ``until`` (default now). Intervals end at
        multiples of ``period`` (default ``sample_period``; 0 = none) and at every change of
        supply, bias, frequency or domain state, so each sample is electrically uniform.
        More than ``max_samples`` intervals: the series is decimated to intervals of
        :meth:`coarse_period` (the average over each, the electrical state at its start)."""
        self.poll_meters()
        t_end = self.sim.now if until is None else int(until)
        period = self.sample_period if period is None else int(period)
        if t_end <= 0:
            return []
        coarse = self.coarse_period(t_end, max_samples, period)
        if coarse:
            return self._coarse_series(coarse, t_end)
        bounds = {0, t_end}
        if period > 0:
            bounds.update(range(period, t_end, period))
        for acct in self._accts.values():
            bounds.update(s.t for s in acct.segs if 0 < s.t < t_end)
        for clk, _ in self.clocks.values():
            bounds.update(t for t, _f in clk.history if 0 < t < t_end)
        b = sorted(bounds)
        n = len(b) - 1
        names = list(self.domains)
        dyn = self._spread(b, t_end)
        seg_times = {name: [s.t for s in self._accts[name].segs] for name in names}
        hist = self._freq_history()
        out = []
        for i in range(n):
            t0, dt = b[i], b[i + 1] - b[i]
            power, dynamic, leak, vdd, vbb, state = {}, {}, {}, {}, {}, {}
            for name in names:
                acct = self._accts[name]
                s = acct.segs[bisect_right(seg_times[name], t0) - 1]
                d = dyn[name][i] / (dt * _MW_PS_TO_PJ) + s.clock_mw + s.abb_mw
                dynamic[name] = d
                leak[name] = s.leak_mw
                power[name] = d + s.leak_mw
                vdd[name], vbb[name], state[name] = s.vdd, s.vbb, s.state.name
            freq = {fll: fs[bisect_right(ts, t0) - 1] for fll, (ts, fs) in hist.items()}
            out.append(PowerSample(t0, dt, power, dynamic, leak, vdd, vbb, state, freq))
        return out

    def _spread(self, b: list[int], t_end: int) -> dict[str, list[float]]:
        """Activity energy (pJ) per domain in each interval ``[b[i], b[i + 1])``."""
        n = len(b) - 1
        dyn = {name: [0.0] * n for name in self.domains}
        for name in self.domains:
            acc = dyn[name]
            for t0, t1, pj in self._accts[name].spans:
                if t0 >= t_end:
                    continue
                i = min(bisect_right(b, t0) - 1, n - 1)
                if t1 <= t0:
                    acc[i] += pj
                    continue
                rate = pj / (t1 - t0)
                while i < n and b[i] < t1:
                    acc[i] += rate * (min(t1, b[i + 1]) - max(t0, b[i]))
                    i += 1
        return dyn

    def _freq_history(self) -> dict[str, tuple[list[int], list[float]]]:
        return {fll: ([t for t, _ in clk.history], [f for _, f in clk.history])
                for fll, (clk, _) in self.clocks.items()}

    def _coarse_series(self, step: int, t_end: int) -> list[PowerSample]:
        """The decimated series: intervals of ``step`` (the last one shorter), each the exact
        average power over it (background energy from the segments' running totals), the
        supply, bias, state and clocks at its start."""
        b = list(range(0, t_end, step)) + [t_end]
        n = len(b) - 1
        dyn = self._spread(b, t_end)
        hist = self._freq_history()
        bg: dict[str, list[tuple[float, float, float]]] = {}
        at: dict[str, list[_Seg]] = {}
        for name, acct in self._accts.items():
            times = [sg.t for sg in acct.segs]
            ks = [max(bisect_right(times, t) - 1, 0) for t in b]
            bg[name] = [acct.bg_pj(t, k) for t, k in zip(b, ks)]
            at[name] = [acct.segs[k] for k in ks]
        out = []
        for i in range(n):
            t0, dt = b[i], b[i + 1] - b[i]
            scale = 1.0 / (dt * _MW_PS_TO_PJ)
            power, dynamic, leak, vdd, vbb, state = {}, {}, {}, {}, {}, {}
            for name in self.domains:
                e0, e1, sg = bg[name][i], bg[name][i + 1], at[name][i]
                d = (dyn[name][i] + (e1[0] - e0[0]) + (e1[2] - e0[2])) * scale
                lk = (e1[1] - e0[1]) * scale
                dynamic[name], leak[name], power[name] = d, lk, d + lk
                vdd[name], vbb[name], state[name] = sg.vdd, sg.vbb, sg.state.name
            freq = {fll: fs[bisect_right(ts, t0) - 1] for fll, (ts, fs) in hist.items()}
            out.append(PowerSample(t0, dt, power, dynamic, leak, vdd, vbb, state, freq))
        return out


def integrate(samples: list[PowerSample]) -> float:
    """Energy (pJ) under a time series."""
    return math.fsum(s.total_mw * s.duration * _MW_PS_TO_PJ for s in samples)
