"""cocotb testbench of rtl/abb/abb_ctrl against the PMU model's controller FSM
(components.pmu.abb.AbbFsm, the reference): every register and counter, every cycle, for
seeded traffic with pre-error bursts (compute-intensive phases), quiet phases, idle
phases (quiet window frozen), manual mode, pre-errors that abort a relaxation, and
operating-point presets (``load_i``: AbbFsm.load before the edge's step) at random edges,
also in the middle of transitions, together with a pre-error and above MAX_CODE."""
from __future__ import annotations

import json
import os

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge

from components.pmu.abb import AbbConfig, AbbFsm
from cosim.rtl.adapters import Pin, reset, start_clock

# the RTL's default parameters (= components/pmu/abb.yaml at the 100 MHz reference clock)
CFG = AbbConfig(max_code=24, raise_codes=1, relax_codes=1, raise_cycles=66, relax_cycles=66,
                quiet_cycles=2000, relax_when_idle=False)


@cocotb.test()
async def sequence(dut):
    start_clock(dut.clk_i, 10.0)
    for s, v in (("en_i", 1), ("pre_error_i", 0), ("active_i", 1), ("manual_code_i", 0),
                 ("load_i", 0), ("load_code_i", 0)):
        getattr(dut, s).value = v
    await reset(dut.clk_i, dut.rst_ni, 3)
    rng = np.random.default_rng(11)
    # phases: (cycles, en, active, pre-error probability, manual code, preset probability)
    phases = [(9000, 1, 1, 0.05, 0, 0),     # compute-heavy, over-clocked: bias up to MAX, sat
              (12000, 1, 1, 0.0, 0, 0),     # quiet while active: relax step by step
              (3000, 1, 0, 0.0, 0, 0),      # idle: the quiet window does not count
              (6000, 1, 1, 0.0004, 0, 0),   # rare pre-errors
              (9000, 1, 1, -1, 0, 0),       # pre-errors injected while RELAX runs: abort
              (400, 0, 1, 0.01, 3, 0),      # manual mode: go to code 3, pre-errors ignored
              (300, 0, 1, 0.0, 30, 0),      # manual above MAX: clamped
              (4000, 1, 1, 0.0, 0, 0),
              (20000, 1, 1, 0.01, 0, 0.004),  # presets among pre-errors and transitions
              (3000, 0, 1, 0.0, 7, 0.01),   # presets in manual mode
              (3000, 1, 0, 0.0, 0, 0.01)]   # presets while idle
    names = ["state_o", "code_o", "target_o", "timer_o", "quiet_o", "sat_o", "pre_errors_o",
             "raises_o", "relaxes_o", "saturations_o"]
    pins = [Pin(getattr(dut, n)) for n in names]
    en, pe, act, man, ld, ldc = (Pin(getattr(dut, n)) for n in (
        "en_i", "pre_error_i", "active_i", "manual_code_i", "load_i", "load_code_i"))
    fsm = AbbFsm(CFG)
    edge = RisingEdge(dut.clk_i)
    first = None
    n = 0
    codes = []
    aborts = 0
    loads = {"all": 0, "with_pre_error": 0, "mid_transition": 0, "above_max": 0}
    for cycles, e, a, p, m, lp in phases:
        pre = (rng.random(cycles) < p).tolist()
        load = (rng.random(cycles) < lp).tolist()
        lcode = rng.integers(0, 32, cycles).tolist()
        inject = p < 0
        en.set(e)
        act.set(a)
        man.set(m)
        for x in pre:
            if inject and fsm.state == 2 and fsm.timer == 30 and aborts < 3:
                x = True                     # a pre-error in the middle of a relaxation
                aborts += 1
            lc = lcode.pop() if load.pop() else None
            if lc is not None and loads["all"] % 4 == 3:
                x = True                     # a pre-error sampled at a preset's edge
            pe.set(int(x))
            ld.set(lc is not None)
            ldc.set(lc or 0)
            if lc is not None:
                loads["all"] += 1
                loads["with_pre_error"] += bool(x)
                loads["mid_transition"] += fsm.state != 0
                loads["above_max"] += lc > CFG.max_code
            await edge                       # the RTL samples this cycle's inputs here
            rtl = tuple(pin.get() for pin in pins)
            ref = fsm.snapshot()             # registers before this edge's step
            if first is None and rtl != tuple(int(v) for v in ref):
                first = (n, rtl, ref)
            fsm.step(bool(e), bool(x), bool(a), m, load=lc)
            codes.append(rtl[1])
            n += 1
    path = os.environ.get("TB_REPORT")
    if path:
        json.dump({"cycles": n, "max_code_seen": max(codes), "final_code": codes[-1],
                   "first_divergence": None if first is None else str(first),
                   "raises": fsm.raises, "relaxes": fsm.relaxes,
                   "saturations": fsm.saturations, "pre_errors": fsm.pre_errors,
                   "sat": fsm.sat, "relax_aborts": aborts, "loads": loads}, open(path, "w"))
    assert first is None, f"cycle {first[0]}: RTL {first[1]} != AbbFsm {first[2]}"
