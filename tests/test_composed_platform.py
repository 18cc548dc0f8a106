"""Platforms composed in YAML (cosim/platforms/composed.py): the shipped example runs and
checks its data, and every composition mistake is refused before the run with file, line
and key."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cosim.platforms.composed import BLOCK_TYPES, ComposedPlatform
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text
from tlm import Simulator

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "scenarios" / "mini_rbe.yaml"
PLATFORM = (ROOT / "scenarios" / "platforms" / "mini_rbe.yaml").read_text()


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_example_data_files_are_what_the_golden_model_makes():
    r = subprocess.run([sys.executable, "scenarios/data/make_mini_rbe.py", "--check"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    sys.path.insert(0, str(ROOT / "scenarios" / "data"))
    try:
        import make_mini_rbe
    finally:
        sys.path.pop(0)
    task = next(t for t in load_scenario(EXAMPLE).tasks if t["op"] == "rbe")
    layer = make_mini_rbe.make_layer()
    assert task["shift"] == layer.shift
    assert (task["h_out"], task["k_in"], task["w_bits"]) == (8, 32, 4)


def test_example_runs_and_checks_the_rbe_output(tmp_path):
    r = _run("run", str(EXAMPLE), "-q", "--no-plots", "--out", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["status"] == "passed"
    assert {c["name"]: c["passed"] for c in rep["checks"]} == {
        "tasks": True, "output matches the golden model": True, "no TLM errors": True,
        "deadline 100 us": True}
    assert rep["components"]["soc.rbe"]["jobs"] == 1
    assert rep["components"]["soc.rbe"]["ops"] == 2 * 8 * 8 * 32 * 32 * 9
    # the RBE streamed its operands from the composed TCDM, and the host's register
    # accesses crossed the composed bus
    assert rep["traffic"]["soc.tcdm"] > 2048
    assert rep["traffic"]["soc.bus"] > 0


def test_a_wrong_expected_output_fails_the_check(tmp_path):
    bad = tmp_path / "expected.bin"
    data = bytearray((ROOT / "scenarios/data/mini_rbe/expected.bin").read_bytes())
    data[100] ^= 1
    bad.write_bytes(bytes(data))
    text = EXAMPLE.read_text().replace("file: platforms/mini_rbe.yaml",
                                       f"file: {ROOT}/scenarios/platforms/mini_rbe.yaml")
    text = text.replace("data/mini_rbe/", f"{ROOT}/scenarios/data/mini_rbe/")
    text = text.replace(f"{ROOT}/scenarios/data/mini_rbe/expected.bin", str(bad))
    sc = tmp_path / "s.yaml"
    sc.write_text(text)
    r = _run("run", str(sc), "-q", "--no-plots", "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stdout + r.stderr


def test_overrides_reach_composed_blocks():
    sc = load_scenario(EXAMPLE, sets=["soc.tcdm.mode=word"])
    sim = Simulator()
    plat = ComposedPlatform(sim, sc.composed, sc.overrides)
    assert plat.params["soc.tcdm"].mode == "word"
    assert plat.params["soc.tcdm"].banks == 16          # from the platform file
    assert plat.memory_map["rbe"].base == 0x10200000
    sim.discard()       # built, never run


def _scenario_with(platform: str) -> str:
    return ("name: t\nplatform:\n  compose:\n" + textwrap.indent(platform, "    ")
            + "workload:\n  tasks:\n    - {op: wait, time: 1 ns}\n")


def _error(platform: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(_scenario_with(platform), Path("s.yaml"))
    return e.value


def _line_of(text: str, needle: str) -> int:
    full = _scenario_with(text)
    return next(i for i, ln in enumerate(full.splitlines(), 1) if needle in ln)


def test_overlapping_regions_are_refused_with_line_and_key():
    text = PLATFORM.replace("base: 0x10200000", "base: 0x1000F000")
    e = _error(text)
    assert "overlaps region 'tcdm'" in e.message
    assert e.key == "platform.compose.regions[2].base"
    assert e.line == _line_of(text, "{name: rbe,")


def test_a_block_without_its_region_is_refused():
    text = PLATFORM.replace("region: sram, ", "")
    e = _error(text)
    assert e.message == "a sram block needs 'region'"
    assert e.key == "platform.compose.blocks.sram"
    assert e.line == _line_of(text, "  sram: {type: sram")


def test_an_irq_bound_twice_is_refused():
    text = PLATFORM.replace("irq: rbe_eoj}", "irq: rbe_eoj}\n  rbe2: {type: rbe, clock: main, "
                            "region: extra, bus: bus, memory: tcdm, irq: rbe_eoj}")
    text = text.replace("regions:\n", "regions:\n  - {name: extra, base: 0x10300000, size: 0x400}\n")
    e = _error(text)
    assert "interrupt 'rbe_eoj' is bound twice" in e.message
    assert e.key == "platform.compose.blocks.rbe2.irq"


@pytest.mark.parametrize("edit, message, key", [
    (("type: crossbar", "type: crosbar"), "unknown block type 'crosbar' (did you mean 'crossbar'?)",
     "platform.compose.blocks.bus.type"),
    (("clock: main, region: sram", "clock: fast, region: sram"), "unknown clock 'fast'",
     "platform.compose.blocks.sram.clock"),
    (("bus: bus, memory", "bus: sram, memory"), "bus: 'sram' is a sram, expected an interconnect",
     "platform.compose.blocks.rbe.bus"),
    (("memory: tcdm", "memory: sram"), "memory: 'sram' is a sram, expected a tcdm",
     "platform.compose.blocks.rbe.memory"),
    (("region: tcdm, bus", "region: sram, bus"), "region 'sram' is already taken by block 'sram'",
     "platform.compose.blocks.tcdm.region"),
    (("host: {bus: bus}", "host: {bus: tcdm}"), "host.bus must name a crossbar block",
     "platform.compose.host.bus"),
    (("size: 0x400, ", "size: 0, "), "region 'rbe' has size 0", "platform.compose.regions[2].size"),
])
def test_composition_mistakes_are_located(edit, message, key):
    text = PLATFORM.replace(*edit)
    assert text != PLATFORM
    e = _error(text)
    assert message in e.message
    assert e.key == key
    assert e.file == "s.yaml" and e.line is not None


def test_platform_named_once():
    text = "name: t\nplatform: {preset: marsellus, file: x.yaml}\nworkload: {tasks: [{op: wait, time: 1 ns}]}\n"
    with pytest.raises(ScenarioError, match="name the platform once"):
        load_scenario_text(text, Path("s.yaml"))


def test_platform_by_name_short_form():
    text = "name: t\nplatform: marsellus\nworkload: {tasks: [{op: wait, time: 1 ns}]}\n"
    assert load_scenario_text(text, Path("s.yaml")).preset == "marsellus"


def test_validate_and_list_show_composed_platforms():
    r = _run("validate", str(EXAMPLE))
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run("list", "platforms")
    assert r.returncode == 0, r.stderr
    assert "marsellus" in r.stdout
    for t in BLOCK_TYPES:
        assert t in r.stdout
