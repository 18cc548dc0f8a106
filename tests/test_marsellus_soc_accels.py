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
    for name in ("tensil", "voyager", "flexisaga"):
        assert 16 <= lines[name] <= 31                      # a CV32E40P fast local line
        assert _define(f"IRQ_{name.upper()}") == lines[name]


@pytest.mark.parametrize("unit, domain", [("tensil", "soc"), ("voyager", "soc"), ("flexisaga", "cluster")])
def test_end_of_job_latches_the_fc_line_only_when_enabled(unit: str, domain: str) -> None:
    bit = 1 << IRQ_LINES[unit][0]
    sim = Simulator()
    plat = Marsellus(sim, {f"{domain}.{unit}.enabled": True}, firmware=HELLO)
    assert plat.fc.mip & bit == 0
    if domain == "cluster":       # the end-of-job event crosses the clock-domain crossing
        getattr(plat, unit).done.notify()
        sim.run(until=100_000)
    else:
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
    from accelerators.tensil.model.fixed import FixedFormat
    from accelerators.tensil.deploy.reference import dense
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


# ----- DRAM in HyperRAM (soc.tensil.dram / soc.voyager.dram: hyperram) --------------------------
def _run_dense(m: int, k: int, o: int, dram: str, freq: float = 166e6):
    """A compiled dense + ReLU (the library example's compiler, seed 3) on MARSELLUS's TCU
    with DRAM0/DRAM1 in ``dram``; returns (platform, files, output bytes, stats)."""
    from components.marsellus.facts import MEMORY_MAP
    from accelerators.tensil.model.accelerator import TensilJob
    from accelerators.tensil.model.params import SocTensilParams
    from accelerators.tensil.deploy import example
    arch = SocTensilParams().arch()
    files = example.dense_relu_files(arch, m, k, o, seed=3)
    sim = Simulator()
    plat = Marsellus(sim, {"soc.tensil.enabled": True, "soc.tensil.dram": dram,
                           "hyperram.freq_hz": freq})
    l2, vb = MEMORY_MAP["l2"].base, arch.vector_bytes
    plat.load("soc", l2, files["program.tprog"])
    if dram == "hyperram":
        d0, d1, space = 0, 0x100000, "hyperram"
    else:
        d0, d1, space = l2 + 0x40000, l2 + 0x80000, "soc"
    plat.load(space, d0 + example.INPUT_AT * vb, files["input.bin"])
    plat.load(space, d1, files["consts.bin"])
    plat.tensil.submit(TensilJob(l2, len(files["program.tprog"]) // arch.instruction_bytes, d0, d1))
    sim.run()
    out = plat.dump(space, d0 + example.OUTPUT_AT * vb, len(files["expected.bin"]))
    stats = sim.stats.as_dict()
    sim.discard()
    return plat, files, out, stats


def _numpy_dense(m: int, k: int, o: int, seed: int):
    """y = relu(x W^T + b) in FP16BP8 by the compiler's numpy reference, operands drawn as
    the example draws them (x, then W, then b)."""
    import numpy as np

    from accelerators.tensil.model.fixed import FixedFormat
    from accelerators.tensil.deploy.reference import dense
    fmt = FixedFormat(16, 8)
    rng = np.random.default_rng(seed)
    x = fmt.from_float(rng.normal(0, 1, (m, k)))
    w = fmt.from_float(rng.normal(0, 1 / np.sqrt(k), (o, k)))
    b = fmt.from_float(rng.normal(0, 0.1, o))
    return np.maximum(dense(x, w, b, 8, 16, 8), 0)


@pytest.mark.slow
def test_a_net_larger_than_l2_runs_from_hyperram_bit_exact() -> None:
    """dense 512 -> 1024 (8 rows): 1.125 MiB of constants, more than the 960 KiB of L2."""
    import numpy as np

    from components.marsellus.facts import MEMORY_MAP
    m, k, o = 8, 512, 1024
    plat, files, out, st = _run_dense(m, k, o, "hyperram")
    assert len(files["consts.bin"]) > MEMORY_MAP["l2"].size
    got = np.frombuffer(out, "<i2").reshape(m, o)
    assert np.array_equal(got, _numpy_dense(m, k, o, seed=3))
    # DRAM traffic went to the HyperRAM (through the HyperBus port), only the program to L2
    acc = plat.tensil.report_entry().bytes
    assert acc["dram1"] == len(files["consts.bin"])
    hr = st["hyperram"]
    assert hr["bytes_read"] == acc["dram0"] - len(out) + acc["dram1"]
    assert hr["bytes_written"] == len(out) and hr["errors"] == 0
    assert st["soc.l2"]["bytes_read"] == acc["fetch"] == len(files["program.tprog"])
    # no HyperBus transaction exceeds what the device allows (tCSM)
    port = st["soc.tensil_hyperbus"]
    assert port["transactions"] == hr["bursts"] >= port["bursts"]
    assert (hr["bytes_read"] + hr["bytes_written"]) <= hr["bursts"] * plat.hyperram.params.max_burst_bytes()


def test_dram_latency_follows_the_hyperram_bandwidth() -> None:
    """Each HyperBus transaction costs CA + 2 x initial latency (fixed mode) + bytes / 2
    clocks of CK (docs/hyperram_udma.md) plus the HyperBus link's latency both ways: the
    TCU's DRAM time is that sum (plus at most the CS# high time between back-to-back
    transactions), so its HyperBus part scales with CK's period; it is well above the L2's."""
    m = k = o = 16
    times = {}
    for freq in (166e6, 100e6):
        plat, files, out, st = _run_dense(m, k, o, "hyperram", freq)
        assert out == files["expected.bin"]
        hp = plat.hyperram.params
        hr = st["hyperram"]
        clocks = hr["bursts"] * (hp.ca_clocks + 2 * hp.initial_latency) \
            + (hr["bytes_read"] + hr["bytes_written"]) // 2
        assert hr["busy_ps"] == clocks * hp.period
        phy = hr["bursts"] * 2 * plat.udma.params.link_latency
        dram_ps = st["soc.tensil"]["dram_ps"] - phy
        assert hr["busy_ps"] <= dram_ps <= hr["busy_ps"] + hr["bursts"] * hp.cs_high_clocks * hp.period
        times[freq] = (dram_ps, hp.period)
    (fast, p_fast), (slow, p_slow) = times[166e6], times[100e6]
    assert slow / fast == pytest.approx(p_slow / p_fast, rel=0.03)
    _, files, out, st = _run_dense(m, k, o, "l2")
    assert out == files["expected.bin"] and st["soc.tensil"]["dram_ps"] < fast / 3
    assert st["hyperram"]["bursts"] == 0


def test_voyager_tensors_in_hyperram_bit_exact(tmp_path: Path) -> None:
    """marsellus_voyager with soc.voyager.dram = hyperram: the same descriptors with
    HyperRAM device addresses, the same outputs (make_voyager.py's numpy reference)."""
    import re

    from components.marsellus.facts import MEMORY_MAP
    from cosim.runner import run_here
    from cosim.scenario import load_scenario_text
    l2 = MEMORY_MAP["l2"].base
    text = (ROOT / "scenarios" / "marsellus_voyager.yaml").read_text()
    text = text.replace("soc.voyager.enabled: true", "soc.voyager.enabled: true\n    soc.voyager.dram: hyperram")
    text = text.replace("to: l2+", "to: hyperram+").replace("at: l2+", "at: hyperram+")
    text = re.sub(r"value: 0x(1c01[0-9a-f]{4})", lambda mt: f"value: 0x{int(mt.group(1), 16) - l2:08x}", text)
    assert "0x1c01" not in text
    rep, run, _ = run_here(load_scenario_text(text, ROOT / "scenarios" / "x.yaml"), tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed" and all(c["passed"] for c in d["checks"]), d["checks"]
    hr = rep.stats["hyperram"]
    assert hr["bytes_written"] == 2 * 2048 and rep.stats["soc.l2"]["bytes_read"] == 0
    assert rep.energy["per_class_j"]["hyperram"] > 0 and rep.energy["per_class_j"]["voyager"] > 0


def test_dram_must_be_l2_or_hyperram() -> None:
    from tlm.params import ParameterError
    with pytest.raises(ParameterError) as e:
        Marsellus(Simulator(), {"soc.tensil.enabled": True, "soc.tensil.dram": "ddr"})
    assert "soc.tensil" in str(e.value) and "dram" in str(e.value)


# ----- FC firmware driving the Voyager unit (firmware/voyager_job.c) ------------------------------
def test_voyager_job_header_is_fresh() -> None:
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_voyager_data", FW / "gen_voyager_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0, "stale: run python firmware/gen_voyager_data.py"


def test_fc_firmware_drives_the_voyager_unit(tmp_path: Path) -> None:
    import importlib.util

    from components.marsellus.facts import MEMORY_MAP
    from components.soc_core.elf import load_elf
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    spec = importlib.util.spec_from_file_location("make_voyager", ROOT / "scenarios" / "data" / "make_voyager.py")
    mv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mv)
    rep, run, _ = run_here(load_scenario("marsellus_voyager_fc"), tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed" and all(c["passed"] for c in d["checks"])
    plat = run.platform
    assert plat.fc.exit_code == 0 and "PASS (0 + 0 mismatches)" in plat.stdout.lines[-1].text
    vbuf = load_elf(FW / "build" / "voyager_job.elf").symbol("vbuf")
    assert vbuf == MEMORY_MAP["l2"].base
    t = mv.tensors()                     # the script's numpy reference, not the model
    for y in ("y1", "y2"):
        assert plat.dump("soc", vbuf + mv.AT[y], 2048) == t[y].tobytes()
    acc = d["extra"]["accelerators"]["soc.voyager"]
    assert acc["jobs"] == 2 and acc["errors"] == 0
    fc = rep.stats["soc.fc"]
    assert fc["wfi"] >= 2 and fc["idle_ps"] >= 0.9 * plat.voyager.busy_ps


# ----- split over processes -------------------------------------------------------------------
def test_fc_driven_tcu_gives_the_same_report_split_over_processes(tmp_path: Path) -> None:
    import json

    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    volatile = {"wall_time_s", "sim_per_wall", "outputs", "manifest"}

    def comparable(rep) -> dict:
        d = {k: v for k, v in rep.as_dict().items() if k not in volatile}
        d["scenario"] = {k: v for k, v in d["scenario"].items() if k != "partition"}
        return json.loads(json.dumps(d, default=str))

    one = run_scenario(load_scenario("marsellus_tensil_fc"), out_dir=tmp_path / "one", plots=False)
    two = run_scenario(load_scenario("marsellus_tensil_fc", ["partition=soc,pmu,hyperram|cluster"]),
                       out_dir=tmp_path / "two", plots=False)
    assert one.status == two.status == "passed" and two.manifest["processes"] == 2
    assert comparable(one) == comparable(two)


def test_hyperram_dram_across_a_process_cut_is_a_located_error(tmp_path: Path) -> None:
    """The TCU's data path reads its DRAM by debug access, which cannot cross processes:
    the run stops with an error naming the TCU, the link and the time (no hang)."""
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    sc = load_scenario("marsellus_tensil_hyperram", ["partition=soc,pmu,cluster|hyperram"])
    rep = run_scenario(sc, out_dir=tmp_path / "cut", plots=False)
    assert rep.status == "error"
    assert "soc.tensil" in rep.error and "hyperbus_link" in rep.error and " ns" in rep.error
    assert "cannot cross a link cut" in rep.error


@pytest.mark.parametrize("unit", ["tensil", "voyager"])
def test_unit_books_nothing_without_its_class_and_at_an_injected_class_energy(monkeypatch, unit: str) -> None:
    """Without a ``unit`` class in the power model the unit books nothing; with one (injected
    here with a round coefficient) its MACs are booked in the SOC domain at that energy."""
    from components.pmu.data import ActivityClass
    sim = Simulator()
    plat = Marsellus(sim, {f"soc.{unit}.enabled": True})
    acc, ledger = getattr(plat, unit), plat.pmu.energy
    monkeypatch.delitem(ledger.model.tables.classes, unit)   # power.yaml has one now
    acc.book("mac", 1000, 10_000)
    assert f"soc.{unit}" not in ledger.totals()["components"]
    monkeypatch.setitem(ledger.model.tables.classes, unit,
                        ActivityClass(unit, "soc", {"mac": 0.5, "bitop": 0.0, "pe_cycle": 0.0}))
    before = ledger.domain_energy("soc")["dynamic_pj"]
    acc.book("mac", 1000, 10_000)
    booked = ledger.totals()["components"][f"soc.{unit}"]
    vdd, vref = plat.pmu.domains["soc"].vdd, ledger.model.vref
    assert booked == pytest.approx(1000 * 0.5 * (vdd / vref) ** 2)
    assert ledger.domain_energy("soc")["dynamic_pj"] - before == pytest.approx(booked)
    sim.discard()
