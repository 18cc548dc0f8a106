"""The cluster DMA RTL (rtl/cluster_dma) swapped into scenarios (``cluster.dma: rtl |
shadow``; cosim/rtl/transactors/cluster_dma.py, docs/rtl.md).

* ``rtl``: dma_copy (1D/2D, both directions, unaligned, page and burst splits, private
  and shared L2, two transfers queued at once) passes the same checks with the same final
  memories as the TLM run; per transfer the report has the RTL cycles against the model's
  analytical duration (the RTL is slower by design: ~2 cycles per 8 bytes), and the same
  AXI burst count as the model; the tasks end later than in the TLM run;
* ``shadow``: the model's data and timing (every task as in the TLM run), no divergence;
  the model's real durations equal its analytical formula for lone transfers; a flipped
  bit in one RTL write is found with transfer, time, address, expected and actual;
* abb_phases (12 DMA transfers of 32 KiB among RBE jobs and core kernels) passes its
  checks with the DMA in rtl mode, with the same final memories;
* errors: a child that dies mid-transfer (clear error, exit status, no orphan), a child
  that hangs (wall-time deadline);
* split runs: a partition that keeps the DMA with its memories gives the same memories;
  the automatic split (the crossing cut between the DMA and the L2) is a clear error.

The DMA RTL is built once (the cache in cosim/rtl/build.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rtl_scenario_support import _isolated, children, gone, options  # noqa: F401

from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import load_scenario  # noqa: E402

PATH = "cluster.dma"


def rtl_children() -> set[int]:
    return children("cluster_dma")


def block(rep) -> dict:
    return rep.extra["rtl"]["blocks"][PATH]


def run(name: str, tmp_path: Path, *sets: str):
    return run_scenario(load_scenario(name, list(sets)), out_dir=tmp_path, plots=False)


def task_ends(rep) -> dict:
    return {name: t["end_ps"] for name, t in rep.tasks.items() if t["op"] == "dma"}


@pytest.fixture(scope="module")
def copy_tlm(tmp_path_factory):
    return run("dma_copy", tmp_path_factory.mktemp("tlm"))


# ------------------------------------------------------------------------ the component hook
def test_executor_hook_runs_transfers_one_at_a_time_in_push_order():
    """``ClusterDma.executor`` (no RTL): push checks still apply, transfers reach the
    executor in push order one at a time, and ``_finish`` ends them (events, DONE/FREE,
    statistics, the bursts the executor reports)."""
    from components.cluster_dma import DmaCommand, DmaError
    from components.marsellus.facts import MEMORY_MAP
    from components.marsellus.memory_system import build_memory_system
    from tlm import Simulator
    sim = Simulator(seed=0)
    ms = build_memory_system(sim, {})
    dma, L2, TC = ms.dma, MEMORY_MAP["l2"].base, MEMORY_MAP["tcdm"].base
    seen, running = [], []

    async def executor(x):
        running.append(x)
        assert len(running) == 1 and x.start_time == sim.now
        seen.append((x.id, sim.now))
        await dma.clock.wait_cycles(100)
        running.remove(x)
        return 7

    dma.executor = executor
    irqs = []
    dma.irq.add_callback(lambda e: irqs.append(sim.now))
    xs = [dma.submit(DmaCommand(L2 + 0x1000 * i, TC, 4096, True, irq=True, auto_free=i != 1))
          for i in range(3)]
    bad = dma.submit(DmaCommand(L2, TC, 0))          # ZERO_LEN: never reaches the executor
    sim.run()
    assert [i for i, _t in seen] == [0, 1, 2] and bad.error == DmaError.ZERO_LEN
    assert [t for _i, t in seen] == [0, 100 * dma.clock.period, 200 * dma.clock.period]
    assert all(x.ok and x.end_time == x.start_time + 100 * dma.clock.period for x in xs)
    st = sim.stats.as_dict()["cluster.dma"]
    assert st["transfers"] == 3 and st["bytes"] == 3 * 4096 and st["bursts"] == 21
    assert st["failed"] == 1 and st["busy_ps"] == 300 * dma.clock.period
    assert len(irqs) == 3 and dma.regs["DONE"].read() == 1 << 1 and dma.idle


# ------------------------------------------------------------------------ rtl
def test_dma_copy_rtl_same_results_as_tlm(copy_tlm, tmp_path):
    tlm = copy_tlm
    assert tlm.status == "passed", (tlm.error, tlm.checks)
    rep = run("dma_copy", tmp_path, "cluster.dma.model=rtl")
    assert rep.status == "passed", (rep.error, rep.checks)
    assert [(c.name, c.passed) for c in rep.checks] == [(c.name, c.passed) for c in tlm.checks]
    # the same data everywhere: every memory's final contents
    assert rep.hash["memories"] == tlm.hash["memories"]
    b = block(rep)
    assert b["model"] == "rtl" and b["error"] is None and b["exit_code"] == 0
    xs = b["transfers"]
    assert len(xs) == b["count"] == 8
    assert {x["direction"] for x in xs} == {"l2_to_tcdm", "tcdm_to_l2"}
    assert sum(x["rows"] > 1 for x in xs) == 3
    assert sum(x["bytes"] for x in xs) == b["bytes"] == 28944
    for x in xs:
        assert x["bursts_rtl"] == x["bursts_model"] >= 1      # the same split_bursts
        assert x["bytes_written"] == x["bytes"]               # exactly the destination
        assert x["rtl_cycles"] > 0 and x["model_cycles"] > 0
        assert x["rel_diff"] == round((x["rtl_cycles"] - x["model_cycles"])
                                      / x["model_cycles"], 6)
    assert b["bursts_equal"] and b["bursts_rtl"] == b["bursts_model"] == 39
    # slower by design: one burst in flight, store and forward, ~2 cycles per 8 bytes on
    # large shared-L2 transfers, where the model streams 8 bytes per cycle
    big = [x for x in xs if x["bytes"] >= 4096]
    assert big and all(1.9 < x["rtl_cycles_per_8_bytes"] < 2.2 for x in big)
    assert all(0.9 < x["rel_diff"] < 1.1 for x in big)
    assert b["rtl_cycles"] == sum(x["rtl_cycles"] for x in xs) > b["model_cycles"]
    # ... so every DMA task ends later than in the TLM run, none earlier
    t_end, r_end = task_ends(tlm), task_ends(rep)
    assert len(t_end) == 8 and set(r_end) == set(t_end)
    assert all(r_end[i] > t_end[i] for i in t_end)
    assert rep.sim_time_ps > tlm.sim_time_ps
    row = rep.extra["rtl"]["table"]["rows"][0]
    assert row[:5] == [PATH, "rtl", "8 transfers", b["rtl_cycles"], b["model_cycles"]]
    assert gone(b["pid"]) and not rtl_children()


# ------------------------------------------------------------------------ shadow
@pytest.mark.slow(reason="shadow after the rtl variant: test_dma_copy_rtl_same_results_as_tlm and "
                         "test_shadow_names_first_divergence here, a passing shadow run in "
                         "test_rtl_scenarios_abb.py::test_abb_phases_shadow_no_divergence")
def test_dma_copy_shadow_no_divergence(copy_tlm, tmp_path):
    rep = run("dma_copy", tmp_path, "cluster.dma.model=shadow")
    assert rep.status == "passed", (rep.error, rep.checks)
    # the model is in charge: everything as in the TLM run
    assert rep.hash["memories"] == copy_tlm.hash["memories"]
    assert rep.tasks == copy_tlm.tasks and rep.sim_time_ps == copy_tlm.sim_time_ps
    b = block(rep)
    assert b["model"] == "shadow" and b["divergence"] is None and b["divergent"] == 0
    xs = b["transfers"]
    assert len(xs) == 8 and b["compared"] == sum(x["bytes"] for x in xs) == 28944
    for x in xs:
        assert x["bursts_rtl"] == x["bursts_model"] and x["bytes_written"] == x["bytes"]
        if x["start_ps"] == x["push_ps"]:    # alone in the DMA: the documented formula
            assert x["model_cycles"] == x["formula_cycles"]
    assert sum(x["start_ps"] == x["push_ps"] for x in xs) >= 6
    assert rep.extra["rtl"]["table"]["rows"][0][6] == "none"
    assert gone(b["pid"]) and not rtl_children()


def test_shadow_names_first_divergence(monkeypatch, tmp_path):
    # flip bit 5 of the RTL's 7th memory write of the third transfer, as it lands in memory
    options(monkeypatch, inject={PATH: {"flip": {"transfer": 2, "write": 6, "bit": 5}}})
    rep = run("dma_copy", tmp_path, "cluster.dma.model=shadow")
    assert rep.status == "passed", rep.error       # the model's data: checks unaffected
    b = block(rep)
    d = b["divergence"]
    assert d is not None and b["divergent"] == 1
    assert d["transfer"] == 2 and d["at"] == "transfer 2" and d["mismatched_bytes"] == 1
    assert int(d["expected"], 16) ^ int(d["actual"], 16) == 1 << 5
    x = next(x for x in b["transfers"] if x["transfer"] == 2)
    assert d["id"] == x["id"] and d["written_by_rtl"] and d["rtl_cycle"] is not None
    # on the destination side, inside the transfer's destination rows
    dst = x["tcdm"] if x["direction"] == "l2_to_tcdm" else x["l2"]
    assert d["side"] == ("tcdm" if x["direction"] == "l2_to_tcdm" else "l2")
    assert int(dst, 16) <= int(d["address"], 16) < int(dst, 16) + x["bytes"]
    # the time of the RTL's faulty write, counted from the model's transfer start
    period = b["period_ps"]
    assert d["time_ps"] == x["start_ps"] + d["rtl_cycle"] * period
    assert 0 < d["rtl_cycle"] <= x["rtl_cycles"]
    row = rep.extra["rtl"]["table"]["rows"][0][6]
    assert row.startswith("transfer 2 at ") and f"expected {d['expected']} actual {d['actual']}" in row
    assert gone(b["pid"]) and not rtl_children()


# ------------------------------------------------------------------------ a bigger workload
@pytest.mark.slow
def test_abb_phases_with_rtl_dma(tmp_path):
    tlm = run("abb_phases", tmp_path / "tlm")
    rep = run("abb_phases", tmp_path / "rtl", "cluster.dma.model=rtl")
    assert tlm.status == "passed", (tlm.error, tlm.checks)
    assert rep.status == "passed", (rep.error, rep.checks)
    assert [(c.name, c.passed) for c in rep.checks] == [(c.name, c.passed) for c in tlm.checks]
    assert rep.hash["memories"] == tlm.hash["memories"]
    b = block(rep)
    assert b["count"] == 12 and b["bytes"] == 12 * 32768
    assert all(x["bursts_rtl"] == x["bursts_model"] == 16 for x in b["transfers"])
    assert all(x["rtl_cycles"] > x["model_cycles"] for x in b["transfers"])
    assert gone(b["pid"]) and not rtl_children()


# ------------------------------------------------------------------------ errors
@pytest.mark.slow(reason="a child that dies mid-run, shared RTL child machinery: "
                         "test_rtl_scenarios_tcdm.py::test_child_dies_mid_run")
def test_child_dies_mid_transfer(monkeypatch, tmp_path):
    options(monkeypatch, inject={PATH: {"crash": {"transfer": 1, "after_cycles": 100}}})
    rep = run("dma_copy", tmp_path, "cluster.dma.model=rtl")
    assert rep.status == "error"
    err = rep.error
    assert PATH in err and "died (exit code -9)" in err and "during transfer 1" in err
    assert " us:" in err or " ns:" in err       # the simulated time of the failure
    b = block(rep)
    assert b["exit_code"] == -9 and len(b["transfers"]) == 1
    assert gone(b["pid"]) and not rtl_children()


@pytest.mark.slow(reason="the child-hangs wall deadline of the shared RTL child machinery: "
                         "test_rtl_scenarios_tcdm.py::test_child_hangs_wall_deadline")
def test_child_hangs_wall_deadline(monkeypatch, tmp_path):
    options(monkeypatch, timeout_s=2, inject={PATH: {"hang": {"transfer": 0}}})
    rep = run("dma_copy", tmp_path, "cluster.dma.model=rtl")
    assert rep.status == "error"
    assert PATH in rep.error and "is stuck: no window reply (transfer 0" in rep.error
    assert "killed" in rep.error
    assert gone(block(rep)["pid"]) and not rtl_children()


@pytest.mark.slow(reason="a cycle limit naming the stuck signal, shared RTL child machinery: "
                         "test_rtl_scenarios_tcdm.py::test_cycle_limit_status_names_gnt")
def test_cycle_limit_names_stuck_signal(monkeypatch, tmp_path):
    options(monkeypatch, max_cycles_factor=0.1, max_cycles_extra=20)
    rep = run("dma_copy", tmp_path, "cluster.dma.model=rtl")
    assert rep.status == "error"
    err = rep.error
    assert "did not finish transfer 0 (ID 0)" in err and "the model estimates 80" in err
    assert "waiting for busy_o to fall" in err and "busy_o = 1" in err
    assert gone(block(rep)["pid"]) and not rtl_children()


# ------------------------------------------------------------------------ split runs
def test_split_run_with_rtl_dma(copy_tlm, tmp_path):
    """The DMA moves its data by debug transport: a partition that keeps it with the
    memories it reaches runs it in rtl mode with the same results as one process."""
    from cosim.scenario.loader import parse_partition
    sc = load_scenario("dma_copy", ["cluster.dma.model=rtl"])
    sc.partition = parse_partition("soc,cluster,pmu|hyperram", "--partition")
    rep = run_scenario(sc, out_dir=tmp_path, plots=False)
    assert rep.status == "passed", (rep.error, rep.checks)
    assert rep.hash["memories"] == copy_tlm.hash["memories"]
    assert rep.manifest["partition"] == [["soc", "cluster", "pmu"], ["hyperram"]]
    assert not rtl_children()


def test_split_run_cutting_the_dma_from_l2_is_a_clear_error(tmp_path):
    """The automatic 2-process split cuts the crossing between the DMA and the L2, which
    debug transport cannot cross: a clear error naming the block and the fix."""
    rep = run_scenario(load_scenario("dma_copy", ["cluster.dma.model=rtl"]), out_dir=tmp_path,
                       plots=False, processes=2)
    assert rep.status == "error"
    assert "cluster.dma" in rep.error and "cannot cross a link cut" in rep.error
    assert "--partition 'soc,cluster,pmu|hyperram'" in rep.error
    assert not rtl_children()
