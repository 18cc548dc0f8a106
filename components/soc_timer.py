"""SOC timer: a 64-bit counter with a prescaler and a compare interrupt.

The counter is never ticked by a process: it is a function of the counted clock's cycle
count (``Clock.cycles_at``) since the last reprogramming, and the compare match is one
event scheduled at the clock edge where the counter reaches CMP. Writes to the registers
re-base the counter and re-time the match; a clock frequency change (DVFS) re-times it too,
since the match is anchored to a cycle number, not to a time.

Semantics (docs/soc_peripherals.md has the register map):

* the counter increments on every ``PRESCALER + 1``-th rising edge after it was enabled or
  reprogrammed (writing CFG, CNT or CMP restarts the prescaler phase);
* a *match* happens on the edge where the counter becomes equal to CMP: STATUS.MATCH is
  set, and with CFG.IRQ_EN the ``irq`` event fires;
* CFG.MODE = 1 (auto-reload): after the match the next tick clears the counter, so matches
  repeat every ``(CMP + 1) * (PRESCALER + 1)`` cycles; CFG.ONE_SHOT disables the counter at
  the match; otherwise the counter keeps counting and wraps at 2**64 (a match after a wrap
  is not scheduled: it lies centuries ahead).

An enabled auto-reload timer keeps scheduling matches, so ``sim.run()`` without ``until``
does not return while it runs (as a real timer would keep ticking).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from tlm.address_map import Region
from tlm.clock import Clock
from tlm.kernel import Event
from tlm.module import Module
from tlm.params import param, resolve
from tlm.regmap import load_regmap
from tlm.regs import RegisterBank
from tlm.sockets import TargetSocket

if TYPE_CHECKING:
    from tlm.kernel import Simulator

__all__ = ["SocTimer", "SocTimerParams", "REGISTER_MAP"]

#: The register map (components/soc_timer.registers.yaml); the names below derive from it.
MAP = load_regmap(Path(__file__).with_name("soc_timer.registers.yaml"))
REGISTER_MAP = MAP.offsets()
CFG, CNT_LO, CNT_HI, CMP_LO, CMP_HI, START, RESET, STATUS = (
    REGISTER_MAP[n] for n in ("CFG", "CNT_LO", "CNT_HI", "CMP_LO", "CMP_HI", "START", "RESET",
                              "STATUS"))

CFG_EN = MAP.mask("CFG", "EN")
CFG_RESET = MAP.mask("CFG", "RESET")
CFG_IRQ_EN = MAP.mask("CFG", "IRQ_EN")
CFG_MODE = MAP.mask("CFG", "MODE")
CFG_ONE_SHOT = MAP.mask("CFG", "ONE_SHOT")
CFG_PRESCALER_SHIFT = MAP.shift("CFG", "PRESCALER")
STATUS_MATCH = MAP.mask("STATUS", "MATCH")

M64 = (1 << 64) - 1
M32 = 0xFFFFFFFF




@dataclass
class SocTimerParams:
    """SOC timer parameters (the counted clock is given to the constructor)."""

    prescaler_bits: int = param(8, "width of CFG.PRESCALER (ticks every PRESCALER+1 cycles)", lo=1, hi=32)
    apb_latency: int = param(2, "register access time in bus-clock cycles (APB: 2)", lo=0, hi=1000)

    def validate(self) -> None:
        if not 0 <= self.prescaler_bits <= 16:
            raise ValueError(f"prescaler_bits must be in [0, 16], got {self.prescaler_bits}")
        if self.apb_latency < 0:
            raise ValueError(f"apb_latency must be >= 0, got {self.apb_latency}")


class SocTimer(Module):
    """The SOC timer; ``region`` is where the composer maps it. ``clock`` is the counted clock;
    ``bus_clock`` (default: ``clock``) times register accesses. Map ``target_socket`` on the
    SOC crossbar. Events: ``irq`` (a match with CFG.IRQ_EN). Statistics: matches, irqs."""

    def __init__(self, parent: "Module | Simulator", name: str, *, clock: Clock, region: Region,
                 params: SocTimerParams | Mapping[str, Any] | None = None,
                 bus_clock: Clock | None = None):
        super().__init__(parent, name)
        if not isinstance(params, SocTimerParams):
            params = resolve(SocTimerParams, params, self.path)
        self.params = params
        self.clock = clock
        self.region = region
        self.irq = self.event("irq")
        self._cfg = 0
        self._cmp = 0
        self._count0 = 0            # counter value at the reference cycle
        self._cyc0 = 0              # clock cycle count at the reference point
        self._status = 0
        self._hi_latch: int | None = None
        self._match_cycle: int | None = None   # absolute cycle of the scheduled match
        self._match = self.event("match")
        self._match.add_callback(self._on_match)
        clock.changed.add_callback(lambda _ev: self._schedule())
        self.matches = self.irqs = 0
        self.sim.stats.add_provider(self.path, lambda: {"matches": self.matches, "irqs": self.irqs})

        self.regs = RegisterBank(self, "regs", self.region.size, clock=bus_clock or clock,
                                 latency=params.apb_latency)
        self.target_socket: TargetSocket = self.regs.socket
        self.regs.add_map(MAP, {   # names, access, reset and docs: soc_timer.registers.yaml
            "CFG": dict(read=lambda: self._cfg, write=self._write_cfg),
            "CNT_LO": dict(read=self._read_lo, write=lambda v: self._write_cnt(v, False)),
            "CNT_HI": dict(read=self._read_hi, write=lambda v: self._write_cnt(v, True)),
            "CMP_LO": dict(read=lambda: self._cmp & M32, write=lambda v: self._write_cmp(v, False)),
            "CMP_HI": dict(read=lambda: self._cmp >> 32, write=lambda v: self._write_cmp(v, True)),
            "START": dict(write=lambda v: v & 1 and self._write_cfg(self._cfg | CFG_EN)),
            "RESET": dict(write=lambda v: v & 1 and self._write_cfg(self._cfg | CFG_RESET)),
            "STATUS": dict(read=lambda: self._status, write=self._w1c_status),
        })

    # ----- the analytic counter ---------------------------------------------------------------
    @property
    def prescale(self) -> int:
        return ((self._cfg >> CFG_PRESCALER_SHIFT) & ((1 << self.params.prescaler_bits) - 1)) + 1

    def _reloading(self) -> bool:
        return bool(self._cfg & CFG_MODE) and self._count0 <= self._cmp

    def count(self) -> int:
        """The counter value now."""
        if not self._cfg & CFG_EN:
            return self._count0
        ticks = (self.clock.cycles_at() - self._cyc0) // self.prescale
        if self._reloading():
            return (self._count0 + ticks) % (self._cmp + 1)
        return (self._count0 + ticks) & M64

    def _rebase(self, value: int | None = None) -> None:
        """Fold elapsed ticks into the reference (or set ``value``) at the current cycle."""
        self._count0 = self.count() if value is None else value & M64
        self._cyc0 = self.clock.cycles_at()

    def _schedule(self) -> None:
        """(Re)time the match event from the reference point and the current clock."""
        self._match.cancel()
        self._match_cycle = None
        if not self._cfg & CFG_EN:
            return
        c0, cmp = self._count0, self._cmp
        if c0 < cmp:
            ticks = cmp - c0
        elif c0 == cmp and self._cfg & CFG_MODE:
            ticks = cmp + 1     # sitting on a match: clear on the next tick, count up again
        else:
            return              # only after a 2**64 wrap
        target = self._cyc0 + ticks * self.prescale
        self._match_cycle = target
        clk = self.clock
        now = self.sim.now
        if target <= clk.cycles_at(now):
            self._match.notify(0)
            return
        edge = clk.next_edge(now)
        t = edge + (target - clk.cycles_at(edge)) * clk.period
        self._match.notify(t - now)

    def _on_match(self, _ev: Event) -> None:
        self.matches += 1
        self._status |= STATUS_MATCH
        # the counter equals CMP on this edge: make that the new reference point
        cyc = self._match_cycle if self._match_cycle is not None else self.clock.cycles_at()
        self._count0, self._cyc0 = self._cmp, cyc
        if self._cfg & CFG_ONE_SHOT:
            self._cfg &= ~CFG_EN
        if self._cfg & CFG_IRQ_EN:
            self.irqs += 1
            self.irq.notify()
        self._schedule()

    # ----- register hooks -------------------------------------------------------------------
    def _write_cfg(self, v: int) -> None:
        self._rebase(0 if v & CFG_RESET else None)
        self._cfg = v & ~CFG_RESET
        self._schedule()

    def _write_cnt(self, v: int, high: bool) -> None:
        cur = self.count()
        new = (cur & M32) | (v << 32) if high else (cur & ~M32 & M64) | v
        self._rebase(new)
        self._schedule()

    def _write_cmp(self, v: int, high: bool) -> None:
        self._rebase()
        self._cmp = (self._cmp & M32) | (v << 32) if high else (self._cmp & ~M32 & M64) | v
        self._schedule()

    def _read_lo(self) -> int:
        v = self.count()
        self._hi_latch = v >> 32
        return v & M32

    def _read_hi(self) -> int:
        if self._hi_latch is not None:
            hi, self._hi_latch = self._hi_latch, None
            return hi
        return self.count() >> 32

    def _w1c_status(self, v: int) -> None:
        self._status &= ~v
