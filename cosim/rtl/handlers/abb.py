"""The ABB controller (``abb_ctrl``) in lock-step with the reference clock: the cocotb side.

The clock runs in C++ (cocotb ``Clock``); Python wakes only for an inbound ``sync`` event
and for a change of ``code_o`` (an ``Edge`` trigger): never once per cycle. Edge ``j`` of
this process is the ``j``-th rising edge after the one at ``edge0_ps`` (reported in the
hello ``info``); the TLM side maps its reference-clock edges onto these.

Inbound channel ``sync`` ``{"edge": j, "en", "active", "manual", "pre_error", "load"}``,
delivered half a period before edge ``j``: drive the inputs for edge ``j`` (``pre_error``
and ``load`` only for that edge), let edge ``j`` happen, and emit ``state`` ``{"edge",
"pre": registers after edge j - 1, "regs": registers after edge j, "changes": [[edge,
code], ...] (every change of code_o since the previous sync), "horizon": the earliest
edge at which code_o may change if the inputs stay as they are (None: never),
"violation": None or what changed before the horizon declared at the previous sync}``.

The horizon is this handler's knowledge of the block's interface (as the RBE handler knows
``busy_o``): from ``state_o``, ``timer_o``, ``quiet_o``, ``code_o``, the inputs it drives
and the block's parameters (RAISE_CYCLES, RELAX_CYCLES, QUIET_CYCLES, RELAX_WHEN_IDLE).

Test-only fault injection (``inject`` in the configuration): ``{"late_horizon": {"from":
n}}`` declares every horizon from the ``n``-th sync on one edge too late (the code change
then comes before the declared horizon: a violation the watcher reports);
``{"flip": {"sync": n, "bit": b}}`` flips bit ``b`` of ``code_o`` as read at the ``n``-th
sync; ``{"crash": {"sync": n}}`` kills this process (SIGKILL) in the ``n``-th sync;
``{"hang": {"sync": n}}`` blocks it there.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import Edge, Timer

from ..adapters import Pin, now_ps, reset

#: the registers read after each synchronised edge (and compared in shadow mode)
REGISTERS = ("state", "code", "target", "timer", "quiet", "sat", "pre_errors", "raises",
             "relaxes", "saturations")
MONITOR = 0


def horizon(regs: dict, en: int, active: int, manual: int, p: dict) -> int | None:
    """Edges after the present one until ``code_o`` may change with these inputs held and
    no pre-error (None: never): the block's timers as its interface exposes them."""
    if regs["state"] != MONITOR:
        return regs["timer"]
    if not en:
        m = min(manual, p["max_code"])
        if m == regs["code"]:
            return None
        return 1 + (p["raise_cycles"] if m > regs["code"] else p["relax_cycles"])
    if regs["code"] > 0 and (active or p["relax_when_idle"]):
        return p["quiet_cycles"] - regs["quiet"] + p["relax_cycles"]
    return None


class AbbHandler:
    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        self.params = cfg["params"]
        self.inject = cfg.get("inject") or {}
        self.clk = dut.clk_i
        Clock(self.clk, self.period, unit="ps",
              period_high=self.period // 2).start(start_high=False)
        self.inp = {n: Pin(getattr(dut, n + "_i"))
                    for n in ("en", "pre_error", "active", "manual_code", "load", "load_code")}
        self.out = {n: Pin(getattr(dut, n + "_o")) for n in REGISTERS}
        self.driver = None
        self.edge0 = 0
        self.syncs = 0
        self.declared: int | None = None   # horizon declared at the previous sync
        self.changes: list[list[int]] = []
        self.violations = 0
        self.seen = 0

    async def start(self) -> None:
        for p in self.inp.values():
            p.set(0)
        await reset(self.clk, self.dut.rst_ni, 3)
        # reset() returns at a rising edge the block saw out of reset with en = 0 and
        # manual = 0: its registers are the reset values, edge 0 of this process
        self.edge0 = now_ps()
        cocotb.start_soon(self._watch())

    def info(self) -> dict:
        return {"period_ps": self.period, "top": "abb_ctrl", "edge0_ps": self.edge0,
                "regs": self._regs()}

    def busy(self) -> int:
        return 0          # the TLM side decides every sync (its horizons)

    def handlers(self) -> dict:
        return {"sync": self._sync}

    def stats(self) -> dict:
        return {"syncs": self.syncs, "code_changes_seen": self.seen,
                "violations": self.violations}

    # ------------------------------------------------------------------ watching code_o
    def _edge(self, t: int) -> int:
        return round((t - self.edge0) / self.period)

    async def _watch(self) -> None:
        """Record every change of code_o with its edge (Python wakes only when it moves)."""
        sig = self.dut.code_o
        pin = self.out["code"]
        while True:
            await Edge(sig)
            self.changes.append([self._edge(now_ps()), pin.get()])
            self.seen += 1

    def _regs(self) -> dict:
        return {n: p.get() for n, p in self.out.items()}

    # ------------------------------------------------------------------ sync
    async def _sync(self, p: dict) -> None:
        n = self.syncs
        self.syncs += 1
        try:
            await self._run(n, p)
        except Exception as e:  # noqa: BLE001 - reported to the TLM side, never swallowed
            self.driver.emit(now_ps(), "error", {"edge": p.get("edge"), "kind": type(e).__name__,
                                                 "message": str(e)})

    async def _run(self, n: int, p: dict) -> None:
        j = int(p["edge"])
        if now_ps() != self.edge0 + j * self.period - self.period // 2:
            raise RuntimeError(f"sync for edge {j} delivered at {now_ps()} ps, not half a "
                               f"period before the edge")
        crash = self.inject.get("crash")
        if crash and int(crash.get("sync", 0)) == n:
            os.kill(os.getpid(), signal.SIGKILL)
        hang = self.inject.get("hang")
        if hang and int(hang.get("sync", 0)) == n:
            while True:
                time.sleep(3600)
        pre = self._regs()                 # after edge j - 1
        load = p.get("load")
        inp = self.inp
        inp["en"].set(int(p["en"]))
        inp["active"].set(int(p["active"]))
        inp["manual_code"].set(int(p["manual"]))
        inp["pre_error"].set(int(bool(p.get("pre_error"))))
        inp["load"].set(int(load is not None))
        inp["load_code"].set(int(load or 0))
        await Timer(self.period - 1, unit="ps")   # edge j happened half a period ago
        inp["pre_error"].set(0)                   # pulses: for edge j only
        inp["load"].set(0)
        regs = self._regs()
        flip = self.inject.get("flip")
        if flip and int(flip.get("sync", 0)) == n:
            regs["code"] ^= 1 << int(flip.get("bit", 0))
        changes, self.changes = self.changes, []
        violation = None
        for e, code in changes:
            ok = e == j and (load is not None or self.declared == j)
            if not ok:
                self.violations += 1
                violation = {"edge": e, "code": code, "declared": self.declared, "sync": j,
                             "signal": "code_o"}
                break
        h = horizon(regs, p["en"], p["active"], p["manual"], self.params)
        h = None if h is None else j + h
        late = self.inject.get("late_horizon")
        if late and n >= int(late.get("from", 0)) and h is not None:
            h += 1
        self.declared = h
        self.driver.emit(now_ps(), "state", {"edge": j, "pre": pre, "regs": regs,
                                             "changes": changes, "horizon": h,
                                             "violation": violation})
