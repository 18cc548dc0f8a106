"""A Voyager unit inside MARSELLUS (``soc.voyager.enabled``): the library scenario bit-exact
against make_voyager.py's numpy reference with its tensors in L2, the per-layer report rows,
its time on the SOC clock, its energy class, and nothing of it unless enabled."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from components.marsellus.facts import MEMORY_MAP
from components.marsellus.platform import Marsellus
from cosim.runner import run_here
from cosim.scenario import load_scenario, load_scenario_text
from tlm import Simulator

ROOT = Path(__file__).resolve().parents[1]
L2 = MEMORY_MAP["l2"].base


def _reference():
    """The numpy reference of scenarios/data/make_voyager.py (not the Voyager model)."""
    spec = importlib.util.spec_from_file_location("make_voyager", ROOT / "scenarios" / "data" / "make_voyager.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_marsellus_voyager_scenario_is_fresh_and_bit_exact(tmp_path: Path) -> None:
    mv = _reference()
    assert mv.main(["--check"]) == 0, "stale: run python scenarios/data/make_voyager.py"
    rep, run, _ = run_here(load_scenario("marsellus_voyager"), tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed" and all(c["passed"] for c in d["checks"])
    plat, t = run.platform, mv.tensors()
    assert plat.dump("soc", L2 + mv.AT["y1"], 2048) == t["y1"].tobytes()
    assert plat.dump("soc", L2 + mv.AT["y2"], 2048) == t["y2"].tobytes()
    acc = d["extra"]["accelerators"]["soc.voyager"]
    assert acc["kind"] == "voyager" and acc["jobs"] == 2 and acc["errors"] == 0
    assert [row["op"] for row in acc["layers"]] == ["conv 8x8x16->32 int8", "gemm 8x8x32->32 int8"]
    # the array's ideal cycles: MACs / (16 x 16)
    assert [row["ideal_cycles"] for row in acc["layers"]] == [8 * 8 * 16 * 9 * 32 // 256, 8 * 8 * 32 * 32 // 256]
    for row in acc["layers"]:
        assert row["cycles"] >= row["ideal_cycles"]
    # every byte the unit moved was served by L2 through the SOC crossbar
    l2s = rep.stats["soc.l2"]
    moved = sum(row["dram_bytes"] for row in acc["layers"])
    assert acc["bytes"]["dram"] == moved and l2s["bytes_read"] + l2s["bytes_written"] == moved
    assert l2s["bytes_written"] == 2 * 2048       # the two outputs
    # the unit runs on the SOC clock the PMU's operating point gives (not clock_hz)
    period = plat.pmu.clocks["soc"].period
    assert sum(row["cycles"] for row in acc["layers"]) == acc["cycles"]
    assert acc["cycles"] == pytest.approx(acc["busy_ps"] / period, abs=2)


def test_no_voyager_unless_enabled() -> None:
    sim = Simulator()
    plat = Marsellus(sim, {})
    assert plat.voyager is None and "voyager" not in plat.irq
    assert not any(p.startswith("soc.voyager") for p in sim.modules)
    assert plat.ms.soc_xbar.decode(MEMORY_MAP["voyager"].base) is None   # the region decodes to nothing
    sim.discard()
    sim = Simulator()
    plat = Marsellus(sim, {"soc.voyager.enabled": True})
    region = MEMORY_MAP["voyager"]
    assert plat.ms.soc_xbar.decode(region.base) is not None and plat.ms.soc_xbar.decode(region.end - 4) is not None
    assert plat.voyager.path == "soc.voyager" and plat.irq["voyager"] is plat.voyager.irq
    sim.discard()


def test_enabling_it_leaves_quickstart_unchanged(tmp_path: Path) -> None:
    plain, _, _ = run_here(load_scenario("quickstart"), tmp_path / "a")
    with_unit, _, _ = run_here(load_scenario("quickstart", ["soc.voyager.enabled=true"]), tmp_path / "b")
    assert with_unit.as_dict()["extra"]["accelerators"]["soc.voyager"]["jobs"] == 0
    assert plain.hash["run"] == with_unit.hash["run"]


def test_waiting_for_its_interrupt_when_disabled_fails_the_task(tmp_path: Path) -> None:
    text = """name: voyager_off
seed: 1
platform: marsellus
workload:
  tasks:
    - id: wait
      op: mmio
      accesses:
        - {wait_irq: voyager}
"""
    rep, _, _ = run_here(load_scenario_text(text, tmp_path / "off.yaml"), tmp_path / "out")
    assert rep.status == "failed"
    err = rep.tasks["wait"]["error"]
    assert "unknown interrupt 'voyager'" in err and "accesses[0]" in err

