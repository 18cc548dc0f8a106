"""MARSELLUS's SOC accelerators seen from the fabric controller: their interrupt lines
(facts/irqs.yaml, rendered into the firmware header) reach the FC's mip only when the unit
is built."""
from __future__ import annotations

from pathlib import Path

import pytest

from components.marsellus.facts import IRQ_LINES
from components.marsellus.platform import Marsellus
from tlm import Simulator

ROOT = Path(__file__).resolve().parents[1]
FW = ROOT / "firmware"
HELLO = FW / "build" / "hello.elf"


def _define(name: str) -> int:
    for line in (FW / "include" / "marsellus_map.h").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[:2] == ["#define", name]:
            return int(parts[2].rstrip("u"), 0)
    raise KeyError(name)


def test_accelerator_lines_are_free_fast_lines_in_the_header() -> None:
    lines = {name: bit for name, (bit, _) in IRQ_LINES.items()}
    assert len(set(lines.values())) == len(lines)          # no line shared
    for name in ("tensil", "voyager"):
        assert 16 <= lines[name] <= 31                      # a CV32E40P fast local line
        assert _define(f"IRQ_{name.upper()}") == lines[name]


@pytest.mark.parametrize("unit", ["tensil", "voyager"])
def test_end_of_job_latches_the_fc_line_only_when_enabled(unit: str) -> None:
    bit = 1 << IRQ_LINES[unit][0]
    sim = Simulator()
    plat = Marsellus(sim, {f"soc.{unit}.enabled": True}, firmware=HELLO)
    assert plat.fc.mip & bit == 0
    plat.irq[unit].notify()
    sim.run(until=1000)
    assert plat.fc.mip & bit
    sim.discard()
    sim = Simulator()
    plat = Marsellus(sim, {}, firmware=HELLO)
    assert unit not in plat.irq
    sim.discard()


# ----- energy classes (components/pmu/power.yaml, docs/power.md) ------------------------------
def _rbe_derived(model, cls: str) -> dict[str, float]:
    """The class's coefficients as docs/power.md derives them from the RBE's (22 nm)."""
    e = model.energy_per
    assert {k: e(cls, k) for k in ("mac", "bitop", "pe_cycle")} == pytest.approx(
        {"mac": 2 * e("rbe", "op"), "bitop": e("rbe", "bitop"), "pe_cycle": e("rbe", "cycle") / 805},
        rel=2e-3)
    return {k: e(cls, k) for k in ("mac", "bitop", "pe_cycle")}


@pytest.mark.parametrize("name, unit, width, pes", [
    ("marsellus_tensil", "tensil", 16, 8 * 8),        # FP16BP8 on the default 8x8 array
    ("marsellus_voyager", "voyager", 8, 16 * 16),     # int8 on the 16x16 array
])
def test_unit_energy_is_the_formula_over_its_macs_and_cycles(tmp_path: Path, name: str,
                                                             unit: str, width: int, pes: int) -> None:
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    rep, run, _ = run_here(load_scenario(name), tmp_path)
    assert rep.status == "passed"
    plat = run.platform
    acc = getattr(plat, unit)
    c = _rbe_derived(plat.pmu.model, unit)
    period = plat.pmu.clocks["soc"].period
    # every job's MACs (the unit's own count) and busy cycles (ceil of its span on the SOC clock)
    if unit == "tensil":
        macs = rep.stats["soc.tensil"]["macs"]
        cycles = sum(-(-(j.end - j.start) // period) for j in acc.jobs)
    else:
        macs = sum(row["macs"] for row in acc.layers)
        cycles = sum(-(-(j.end - j.start) // period) for j in acc.jobs)
    assert macs > 0 and cycles > 0
    vdd, vref = plat.pmu.domains["soc"].vdd, plat.pmu.model.vref
    want_pj = (macs * c["mac"] + macs * width * width * c["bitop"] + cycles * pes * c["pe_cycle"]) \
        * (vdd / vref) ** 2
    energy = rep.energy
    assert energy["per_class_j"][unit] == pytest.approx(want_pj * 1e-12, rel=1e-9)
    assert energy["per_component_j"][f"soc.{unit}"] == pytest.approx(want_pj * 1e-12, rel=1e-9)
    # per MAC at 8 / 16 bit, as the power page states
    assert c["mac"] + 64 * c["bitop"] == pytest.approx(0.848, abs=1e-3)
    assert c["mac"] + 256 * c["bitop"] == pytest.approx(3.248, abs=1e-3)


def test_optional_classes_are_listed_only_when_booked() -> None:
    """A platform without the units reports the same classes as before they existed."""
    sim = Simulator()
    plat = Marsellus(sim, {})
    classes = plat.pmu.energy.class_energy()
    assert "tensil" not in classes and "voyager" not in classes and "rbe" in classes
    sim.discard()
    sim = Simulator()
    plat = Marsellus(sim, {"soc.tensil.enabled": True})
    assert "tensil" not in plat.pmu.energy.class_energy()
    plat.tensil.book("mac", 10, plat.pmu.clocks["soc"].period)
    assert plat.pmu.energy.class_energy()["tensil"] > 0
    sim.discard()


# ----- FC firmware driving the TCU (firmware/tensil_job.c) ---------------------------------------
def test_tensil_job_header_is_fresh() -> None:
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_tensil_data", FW / "gen_tensil_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0, "stale: run python firmware/gen_tensil_data.py"


def test_fc_firmware_drives_the_tcu_and_sleeps_until_its_interrupt(tmp_path: Path) -> None:
    import numpy as np

    from components.marsellus.facts import MEMORY_MAP
    from components.soc_core.elf import load_elf
    from components.tensil.fixed import FixedFormat
    from cosim.deploy.tensil.reference import dense
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    rep, run, _ = run_here(load_scenario("marsellus_tensil_fc"), tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed" and all(c["passed"] for c in d["checks"])
    plat = run.platform
    assert plat.fc.exit_code == 0
    assert "output bytes: PASS (0 mismatches)" in plat.stdout.lines[-1].text
    # DRAM0 is the ELF's buffer in shared L2; the program and DRAM1 its read-only data
    img = load_elf(FW / "build" / "tensil_job.elf")
    dram0 = img.symbol("dram0")
    assert dram0 == MEMORY_MAP["l2"].base
    # the output there equals numpy's dense + ReLU in FP16BP8 (operands drawn as the
    # example draws them: seed 1, x then w then b)
    fmt, n = FixedFormat(16, 8), 16
    rng = np.random.default_rng(1)
    x = fmt.from_float(rng.normal(0, 1, (16, n)))
    w = fmt.from_float(rng.normal(0, 1 / np.sqrt(n), (n, n)))
    b = fmt.from_float(rng.normal(0, 0.1, n))
    want = np.maximum(dense(x, w, b, plat.tensil.arch.array_size, 16, 8), 0)
    got = np.frombuffer(plat.dump("soc", dram0 + 0x20000, 512), "<i2").reshape(16, n)
    assert np.array_equal(got, want)
    # the FC slept (wfi) while the TCU ran, woken by line 22; the TCU read its program and
    # constants from the FC's private L2 (where the ELF put them)
    fc = rep.stats["soc.fc"]
    assert fc["wfi"] >= 1 and fc["idle_ps"] >= 0.9 * plat.tensil.busy_ps
    assert rep.stats["soc.tensil"]["jobs"] == 1
    assert rep.stats["soc.l2_private"]["bytes_read"] >= 51 * 9
