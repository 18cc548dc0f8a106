"""``pmu.abb`` swapped for the Verilated ABB controller (``rtl/abb``, ``abb_ctrl``): the FSM
in signal-level lock-step with the reference clock, at a handful of round trips.

The RTL is advanced in windows, never cycle by cycle from Python, and synchronised with the
TLM only at the edges that matter (docs/rtl.md, "pmu.abb in scenarios"):

* an input (``pre_error``, ``set_active``, ``set_enabled``, ``set_manual``, a preset's
  ``force_code``) that changes at time t is seen by the first edge strictly after t: the
  TLM side syncs the RTL at that edge (every change before it batched into one grant; the
  pre-error and the preset's load held for exactly that edge);
* after each sync the child declares its *horizon*: the earliest edge at which ``code_o``
  may change if the inputs stay as they are; the TLM side syncs the RTL there too. A
  change of ``code_o`` before the declared horizon (the TLM would apply it late) is an
  error naming the edge and the signal.

Between syncs nothing crosses the process boundary and no Python runs per cycle (one
``Timer`` per window in the child, the clock in C++). The sync points where the model would
not wake (inputs delivered, a preset loaded, the new horizon learnt: the TLM state does not
change there) are passive kernel callbacks, not simulation activity, so the run's end time
and everything integrated up to it (energy) stay the model's; the others (a pre-error
sampled, a code change due) wake the generator exactly where the model does. Register
reads between syncs (ABB_STATUS, ABB_PRE_ERRORS, the end-of-run statistics) bring the RTL
to the generator's last processed edge first (a *read sync*).

``rtl``: the bias code (hence VBB, energy, OCM pre-errors, timing errors) and the FSM's
registers and counters (``AbbGenerator.fsm``: statistics, ABB_STATUS, ABB_PRE_ERRORS)
come from the RTL; each code change is applied at the simulated time of the edge where
the RTL made it. The model (:class:`~components.pmu.abb.AbbFsm`) runs alongside on the
same inputs as the estimate (the edge of each change). ``shadow``: the model stays in
charge; the RTL gets the same inputs and its registers are compared with the model's at
every sync; the first divergence names the edge, its time, the register, expected and
actual.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tlm.units import fmt_time

from ..options import RtlOptions
from ..transactor import Transactor, rel_diff

#: the RTL's register outputs, in the order compared (cosim/rtl/handlers/abb.py REGISTERS)
REGISTERS = ("state", "code", "target", "timer", "quiet", "sat", "pre_errors", "raises",
             "relaxes", "saturations")
#: abb_ctrl's parameter defaults and counter widths (rtl/abb/abb_ctrl.sv)
RTL_DEFAULTS = {"MAX_CODE": 24, "RAISE_CODES": 1, "RELAX_CODES": 1, "RAISE_CYCLES": 66,
                "RELAX_CYCLES": 66, "QUIET_CYCLES": 2000, "RELAX_WHEN_IDLE": 0}
TW, QW = 16, 24


def _snapshot(fsm: Any) -> dict:
    return dict(zip(REGISTERS, (int(v) for v in fsm.snapshot())))


class RtlFsmView:
    """``AbbGenerator.fsm`` in ``rtl`` mode: the RTL's registers and counters as the model's
    FSM would show them at the generator's last processed edge (``gen._k``). ``code`` is
    the code the TLM applies; the rest is read from the RTL (one extra round trip when the
    RTL is behind that edge, e.g. a register read between syncs)."""

    def __init__(self, tr: "AbbTransactor", cfg: Any):
        self._tr = tr
        self.cfg = cfg

    def _r(self, name: str) -> int:
        return self._tr.registers()[name]

    code = property(lambda self: self._tr.code)
    state = property(lambda self: self._r("state"))
    target = property(lambda self: self._r("target"))
    timer = property(lambda self: self._r("timer"))
    quiet = property(lambda self: self._r("quiet"))
    pre_errors = property(lambda self: self._r("pre_errors"))
    raises = property(lambda self: self._r("raises"))
    relaxes = property(lambda self: self._r("relaxes"))
    saturations = property(lambda self: self._r("saturations"))

    @property
    def busy(self) -> bool:
        return self.state != 0

    @property
    def sat(self) -> bool:
        """Sticky in the RTL (``sat_o``); the PMU's CLEAR register clears the view: a
        saturation after the clear sets it again (counted by ``saturations_o``)."""
        return self._r("saturations") > self._tr.sat_base

    @sat.setter
    def sat(self, value: bool) -> None:
        if value:
            raise AttributeError("sat can only be cleared")
        self._tr.sat_base = self._r("saturations")

    def snapshot(self) -> tuple:
        r = self._tr.registers()
        return (r["state"], self.code, r["target"], r["timer"], r["quiet"], self.sat,
                r["pre_errors"], r["raises"], r["relaxes"], r["saturations"])

    def load(self, code: int) -> int:
        """A preset: the TLM applies it at once; the RTL loads it at the next edge (the
        generator's ``inputs_changed`` hook sends it)."""
        self._tr.code = min(max(int(code), 0), self.cfg.max_code)
        return self._tr.code


class AbbTransactor(Transactor):
    """``pmu.abb`` swapped for ``abb_ctrl`` (``rtl``) or shadowed by it (``shadow``); the
    ``backend`` of :class:`components.pmu.abb.AbbGenerator`."""

    top = "abb_ctrl"
    handler = "cosim.rtl.handlers.abb:AbbHandler"
    unit = "code changes"
    estimate = {"rtl": "AbbFsm on the same inputs (edges since the previous change)",
                "shadow": "AbbFsm on the same inputs (edges since the previous change)"}

    def __init__(self, run: Any, path: str, mode: str, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        from components.pmu.abb import AbbGenerator, AbbState

        from .. import blocks
        super().__init__(run, path, mode, waves=waves, options=options, waves_dir=waves_dir)
        gen: Any = run.platform
        for part in path.split("."):
            gen = getattr(gen, part, None)
        if not isinstance(gen, AbbGenerator):
            raise self._error(f"{path} is not an ABB generator in this platform")
        self.gen = gen
        cfg = gen.fsm.cfg
        self.cfg = cfg
        self.period = P = int(gen.period)
        if P < 4 or P % 2:
            raise self.config_error(f"reference clock period {P} ps: the RTL needs an even period")
        params = {"MAX_CODE": cfg.max_code, "RAISE_CODES": cfg.raise_codes,
                  "RELAX_CODES": cfg.relax_codes, "RAISE_CYCLES": cfg.raise_cycles,
                  "RELAX_CYCLES": cfg.relax_cycles, "QUIET_CYCLES": cfg.quiet_cycles,
                  "RELAX_WHEN_IDLE": int(cfg.relax_when_idle)}
        for name, width in (("RAISE_CYCLES", TW), ("RELAX_CYCLES", TW), ("QUIET_CYCLES", QW)):
            if params[name] >= 1 << width:
                raise self.config_error(f"{name} = {params[name]} cycles does not fit abb_ctrl's "
                                  f"{width}-bit counter (pmu.abb_* times at "
                                  f"{1e12 / P / 1e6:g} MHz)")
        self.setup(blocks.abb_ctrl(**{k: v for k, v in params.items()
                                      if RTL_DEFAULTS[k] != v}),
                   {"period_ps": P, "params": {
                       "max_code": cfg.max_code, "raise_cycles": cfg.raise_cycles,
                       "relax_cycles": cfg.relax_cycles, "quiet_cycles": cfg.quiet_cycles,
                       "relax_when_idle": int(cfg.relax_when_idle)}})
        f = gen.fsm
        if (f.state != AbbState.MONITOR or f.timer or f.quiet or f.target != f.code or f.sat
                or f.pre_errors or f.raises or f.relaxes or f.saturations or gen._pending):
            raise self._error(f"the ABB FSM has already run at {fmt_time(self.sim.now)} "
                              f"({f.snapshot()}): the RTL starts from reset and a preset")
        self.drives = mode == "rtl"
        self.started = False
        # lock-step state: TLM edge k is the child's edge k - k0
        self.k0 = self.rtl_k = int(gen._k)
        self.edge0: int | None = None
        self.regs = _snapshot(type(f)(cfg))           # reset values
        self.pre: dict | None = None                  # registers after edge rtl_k - 1
        self.horizon: int | None = None
        self.pins = {"en": 0, "active": 0, "manual": 0}
        self.batch_edge: int | None = None
        self.batch: dict = {}
        self.code = f.code              # the code the TLM has applied
        self.rtl_code = 0               # code_o (reset)
        self.sat_base = 0
        self.syncs = self.read_syncs = self.loads = 0
        self.horizon_syncs = self.input_syncs = 0
        self.closed = False
        # the model alongside, on the same inputs
        self.ref = f.copy()
        self.ref_k = self.k0
        self.ref_changes: list[tuple[int, int]] = []
        self.last_rtl_change = self.last_ref_change = self.k0
        self.unmatched_rtl = 0
        self._timer: Any = None
        if self.drives:
            gen.fsm = RtlFsmView(self, cfg)
        gen.backend = self
        # the RTL starts from reset: the model's state after elaboration is a preset's
        # (code 0 or the operating point's settled code), loaded at the first edge
        self.inputs_changed(gen, f.code)
        # nothing is scheduled at construction (a split run builds the whole platform in
        # every process): the first sync is planned by a process of the generator's own,
        # which only the process that simulates pmu.abb runs (no child elsewhere)
        self.started = False
        gen.spawn(self._start(), "rtl_start")

    async def _start(self) -> None:
        self.started = True
        self.gen._plan() if self.drives else self._plan_shadow()

    # ----- the AbbGenerator backend hooks --------------------------------------------------
    def inputs_changed(self, gen: Any, load: int | None) -> None:
        """An input changed now: it is seen by the first edge after now (batched)."""
        last = self.sim.now // self.period
        self._flush(last)
        e = last + 1
        if self.batch_edge not in (None, e):
            raise self._error(f"internal: inputs for edge {e} while edge {self.batch_edge}'s "
                              "are pending")
        b = self.batch if self.batch_edge == e else {}
        b.update(en=int(gen.enabled), active=int(gen.active),
                 manual=min(max(int(gen.manual_code), 0), 31), pre_error=bool(gen._pending))
        if load is not None:
            b["load"] = int(load)
        self.batch_edge, self.batch = e, b
        if not self.drives:
            self._plan_shadow()

    def sync(self, gen: Any, t: int) -> None:
        """The generator processes the edges up to ``t`` (an input method, a register read)."""
        last = t // self.period
        self._flush(last)
        if self.drives:
            gen._k = max(gen._k, last)
        else:
            self._plan_shadow()

    def wake(self, gen: Any) -> None:
        """``rtl``: the generator's wake-up at a sync point."""
        last = self.sim.now // self.period
        if self._flush(last):     # where the model would have woken too (its _k moves)
            gen._k = max(gen._k, last)

    def plan(self, gen: Any) -> None:
        """``rtl``: the generator's next wake-up. A sync point where the model wakes too (a
        pre-error sampled, a code change due) wakes the generator; any other (inputs
        delivered to the RTL, its new horizon learnt) is a passive callback: the TLM state
        does not change there, so it must not count as simulation activity (the run's end
        time, hence energy, would move)."""
        gen._wake.cancel()
        self._unschedule()
        s = self._next()
        if s is None or not self.started:
            return
        d = s * self.period - self.sim.now
        if d < 0:
            raise self._error(f"internal: sync point edge {s} is in the past")
        b = self.batch if self.batch_edge == s else None
        preset = b is not None and "load" in b      # a preset voids the old horizon
        if (b is not None and b["pre_error"]) or (s == self.horizon and not preset):
            gen._wake.notify(d)
        else:
            self._schedule(d, self._passive_wake)

    def _passive_wake(self) -> None:
        self._flush(self.sim.now // self.period)
        self.gen._plan()

    def _plan_shadow(self) -> None:
        """``shadow``: every sync point is a passive callback (the model's run unchanged)."""
        self._unschedule()
        s = self._next()
        if s is not None and self.started:
            d = s * self.period - self.sim.now
            if d <= 0:
                raise self._error(f"internal: sync point edge {s} is not in the future")
            self._schedule(d, self._shadow_wake)

    def _shadow_wake(self) -> None:
        self._flush(self.sim.now // self.period)
        self._plan_shadow()

    def _schedule(self, delay: int, fn: Any) -> None:
        self._timer = self.sim.schedule_passive(delay, fn)

    def _unschedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # ----- the lock-step -----------------------------------------------------------------------
    def _next(self) -> int | None:
        pts = [s for s in (self.batch_edge, self.horizon) if s is not None]
        return min(pts) if pts else None

    def _flush(self, last: int) -> bool:
        """Sync every point up to edge ``last``; True if one of them is an edge where the
        model wakes (a pre-error sampled, a code change)."""
        woke = False
        while True:
            s = self._next()
            if s is None or s > last:
                return woke
            woke |= self._sync_rtl(s)

    def _ctime(self, k: int) -> int:
        return self.edge0 + (k - self.k0) * self.period

    def _sync_rtl(self, s: int, read: bool = False) -> bool:
        """One window: the RTL runs to just after edge ``s`` (the batch for ``s`` driven
        for that edge); returns whether the model would wake at ``s``."""
        P = self.period
        during = f"the sync at reference edge {s} ({fmt_time(s * P)})"
        if self.edge0 is None:
            self.exchange(None, "hello from the simulator", during)
            self.edge0 = int(self.child.info["edge0_ps"])
        b = self.batch if self.batch_edge == s else None
        old = self.pins
        pins = old if b is None else {k: b[k] for k in ("en", "active", "manual")}
        load = None if b is None else b.get("load")
        payload = {"edge": s - self.k0, **pins, "pre_error": bool(b and b["pre_error"]),
                   "load": load}
        grant = {"until": self._ctime(s) + P // 2,
                 "events": [[self._ctime(s) - P // 2, "sync", payload]]}
        reply = self.exchange(grant, f"window reply ({during})", during)
        st = None
        for _t, ch, pl in reply["events"]:
            if ch == "error":
                self.child.failed = pl.get("message")
                raise self._error(f"{self.where} failed in {during}: {pl.get('kind')}: "
                                  f"{pl.get('message')}")
            if ch == "state":
                st = pl
        if st is None:
            raise self._error(f"{self.where} sent no state in {during}")
        # the lock-step state first: applying a code below may re-enter (OCM pre-errors)
        due = s == self.horizon and load is None     # a change may come at this edge
        old_h = self.horizon
        prev_k, self.rtl_k = self.rtl_k, s
        if b is not None:
            pre = dict(st["pre"])
            if load is not None:
                lc = min(load, self.cfg.max_code)
                pre.update(state=0, code=lc, target=lc, timer=0, quiet=0)
            self.pre = pre
        else:
            self.pre = self.regs if prev_k == s - 1 else None
        self.regs = {k: int(v) for k, v in st["regs"].items()}
        self.horizon = None if st["horizon"] is None else int(st["horizon"]) + self.k0
        self.pins = pins
        if b is not None:
            self.batch_edge, self.batch = None, {}
            self.input_syncs += 1
            self.loads += load is not None
        elif read:
            self.read_syncs += 1
        else:
            self.horizon_syncs += 1
        self.syncs += 1
        v = st.get("violation")
        if v is not None:
            e, d = int(v["edge"]) + self.k0, v.get("declared")
            d = None if d is None else int(d) + self.k0
            raise self._error(
                f"{self.where}: horizon violation: {v['signal']} changed to {v['code']} at "
                f"reference edge {e} ({fmt_time(e * P)}), before the horizon the RTL side "
                f"declared (edge {d}); synced at edge {s}: the TLM would have applied the "
                f"change {(d if d is not None else s) - e} edge(s) late")
        self._ref_to(s, b, old)
        changes = [] if load is not None else [(int(e) + self.k0, int(c))
                                               for e, c in st["changes"]]
        for e, c in changes:
            self._record(e, c)
        if self.drives:
            woke = bool(b and b["pre_error"])
            if b is not None:
                self.gen._pending = False
            new, prev = self.regs["code"], self.rtl_code
            self.rtl_code = new
            if load is not None and new != min(load, self.cfg.max_code):
                raise self._error(f"{self.where}: code_o = {new} after reference edge {s} "
                                  f"({fmt_time(s * P)}), where the preset loads "
                                  f"{min(load, self.cfg.max_code)}")
            if load is None and new != prev:
                if not due:
                    raise self._error(f"{self.where}: code_o changed from {prev} to {new} at "
                                      f"reference edge {s} ({fmt_time(s * P)}), where no "
                                      f"change was due (horizon: edge {old_h})")
                if self.sim.now != s * P:
                    raise self._error(f"internal: code change at edge {s} applied at "
                                      f"{fmt_time(self.sim.now)}")
                self.code = new
                woke = True
                self.gen._after_change()
            return woke
        self._compare(s)
        return False

    def _ref_to(self, s: int, b: dict | None, old: dict) -> None:
        """The model alongside: edges up to ``s`` with the inputs the RTL got."""
        f = self.ref
        en, act, man = bool(old["en"]), bool(old["active"]), old["manual"]
        while self.ref_k < s - 1:
            n = s - 1 - self.ref_k
            m = f.edges_to_change(en, act, man)
            if m is not None and m < n:
                n = m
            before = f.code
            f.advance(n, en, act, man)
            self.ref_k += n
            if f.code != before:
                self.ref_changes.append((self.ref_k, f.code))
        before = f.code
        if b is None:
            f.step(en, False, act, man)
        else:
            f.step(bool(b["en"]), b["pre_error"], bool(b["active"]), b["manual"],
                   load=b.get("load"))
        self.ref_k = s
        if f.code != before and (b is None or b.get("load") is None):
            self.ref_changes.append((s, f.code))

    def _record(self, edge: int, code: int) -> None:
        me, mc = self.ref_changes.pop(0) if self.ref_changes else (None, None)
        if me is None:
            self.unmatched_rtl += 1
        rtl = edge - self.last_rtl_change
        model = 0 if me is None else me - self.last_ref_change
        self.last_rtl_change = edge
        if me is not None:
            self.last_ref_change = me
        self.items.append({"edge": edge, "time_ps": edge * self.period,
                           "time": fmt_time(edge * self.period), "code": code,
                           "model_edge": me, "model_code": mc, "rtl_cycles": rtl,
                           "model_cycles": model, "rel_diff": rel_diff(rtl, model)})

    def _compare(self, s: int) -> None:
        """``shadow``: the RTL's registers after edge ``s`` vs the model's."""
        gen = self.gen
        if gen._k > s:
            raise self._error(f"internal: the model is past edge {s}")
        want = _snapshot(gen.peek(s * self.period))
        want["sat"] = int(want["saturations"] > 0)    # sat_o is sticky; the model's is clearable
        self.compared += len(REGISTERS)
        bad = [n for n in REGISTERS if want[n] != self.regs[n]]
        if not bad:
            return
        self.divergent += 1
        if self.divergence is None:
            n = bad[0]
            t = s * self.period
            self.divergence = {"at": f"reference edge {s}", "edge": s, "time_ps": t,
                               "time": fmt_time(t), "address": n, "register": n + "_o",
                               "expected": want[n], "actual": self.regs[n],
                               "registers": sorted(bad)}

    # ----- what the model's FSM shows (rtl mode) -------------------------------------------
    def registers(self) -> dict:
        """The RTL's registers after the generator's last processed edge ``gen._k`` (as the
        model's FSM would show them: a preset not yet loaded by the RTL included)."""
        k = self.gen._k
        if self.error is not None or (self.closed and k not in (self.rtl_k, self.rtl_k - 1)):
            return self.regs      # after a failure: as far as the RTL got (statistics)
        if k > self.rtl_k:
            s = self._next()
            if self.closed or (s is not None and s <= k):
                raise self._error(f"internal: registers at edge {k} asked after the RTL "
                                  f"stopped at edge {self.rtl_k}")
            self._sync_rtl(k, read=True)
        if k == self.rtl_k:
            r = self.regs
        elif k == self.rtl_k - 1 and self.pre is not None:
            r = self.pre
        else:
            raise self._error(f"internal: registers at edge {k}, the RTL is at edge "
                              f"{self.rtl_k}")
        if self.batch_edge == k + 1 and "load" in self.batch:   # a preset made since
            lc = min(self.batch["load"], self.cfg.max_code)
            r = {**r, "state": 0, "code": lc, "target": lc, "timer": 0, "quiet": 0}
        return r

    # ----- end and report ----------------------------------------------------------------------
    def close(self) -> None:
        """Bring the RTL to the generator's last edge (the statistics are read after the
        run), then stop the child."""
        c = self.child
        try:
            if (self.drives and not self.closed and self.error is None and c is not None
                    and c.ready and c.failed is None and not c.closed
                    and self.gen._k > self.rtl_k):
                self.registers()
        finally:
            self.closed = True
            super().close()

    def report_extra(self) -> dict:
        P = self.period
        edges = self.rtl_k - self.k0
        c = self.child
        trips = c.link.round_trips if c is not None and c.link is not None else 0
        return {"reference_clock_hz": round(1e12 / P), "edges_simulated": edges,
                "simulated_time_ps": edges * P, "syncs": self.syncs,
                "input_syncs": self.input_syncs, "horizon_syncs": self.horizon_syncs,
                "read_syncs": self.read_syncs, "loads": self.loads,
                "edges_per_round_trip": round(edges / trips, 1) if trips else None,
                "unmatched": {"rtl": self.unmatched_rtl, "model": len(self.ref_changes)},
                "final_registers": dict(self.regs)}
