"""Every memory-mapped block's register bank is its register map: in the built MARSELLUS
platform each bank holds exactly the registers of the block's YAML (plain registers, and
whole instances of its arrays), at the map's offsets, with the map's access, reset and doc.
A model declares its registers from the map (``RegisterBank.add_map`` / ``add_from_map``)
and gives only the hooks, so a retyped name, access, reset or doc cannot drift again."""
from __future__ import annotations

from pathlib import Path

import pytest

from components.cluster import ctrl, event_unit
from components.cluster_dma import registers as cluster_dma
from components.marsellus.platform import Marsellus
from components.pmu import fll, pmu
from components import soc_timer, stdout, udma
from tlm import RegisterBank, Simulator
from tlm.regmap import RegisterMap, load_regmap

ROOT = Path(__file__).resolve().parents[1]

#: bank path in the MARSELLUS platform -> the block's register map
MAPS: dict[str, RegisterMap] = {
    "pmu.regs": pmu.MAP,
    "pmu.fll": fll.MAP,
    "cluster.ctrl.regs": ctrl.MAP,
    "cluster.event_unit.regs": event_unit.MAP,
    "cluster.dma.regs": cluster_dma.MAP,
    "soc.stdout.regs": stdout.MAP,
    "soc.timer.regs": soc_timer.MAP,
    "soc.udma.regs": udma.MAP,
}
#: the RBE's bank maps its whole window read/write and leaves access checks to its register
#: file (a write to a read-only or reserved offset sets STATUS.ERR_BAD_ACCESS)
RBE = "cluster.rbe.regs"
RBE_MAP = load_regmap(ROOT / "components" / "rbe" / "registers.yaml")
#: the optional SOC accelerators: bank path when enabled -> the block's register map (read
#: from the YAML here, not from the model's module)
OPTIONAL = {"soc.tensil.regs": ("soc.tensil.enabled",
                                load_regmap(ROOT / "accelerators" / "tensil" / "model" / "registers.yaml")),
            "soc.voyager.regs": ("soc.voyager.enabled",
                                 load_regmap(ROOT / "accelerators" / "voyager" / "model" / "registers.yaml"))}

#: registers whose reset value is the model's configuration, not the map's (their YAML doc
#: says so)
PARAMETER_RESETS = {("cluster.ctrl.regs", "INFO"), ("pmu.regs", "INFO"),
                    ("soc.udma.regs", "HYPER_MAX_BURST"),
                    ("soc.udma.regs", "HYPER_BURST_BOUNDARY")}


@pytest.fixture(scope="module")
def banks() -> dict[str, RegisterBank]:
    sim = Simulator()
    Marsellus(sim, {})
    return {m.path: m for m in sim.modules.values() if isinstance(m, RegisterBank)}


def test_every_bank_of_the_platform_has_a_register_map(banks):
    assert set(banks) == set(MAPS) | {RBE}


def _expected(path: str, m: RegisterMap, bank: RegisterBank):
    """offset -> (map register, the names the bank may give it): the plain registers, and
    every array instance the bank holds any register of (it must hold all of them)."""
    out = {r.offset: (r, {r.name}) for r in m.registers}
    for a in m.arrays:
        held = {i for i in range(a.count)
                if any(a.base + i * a.stride + r.offset in bank.registers for r in a.registers)}
        assert held, f"{path}: no instance of array {a.name}"
        for i in held:
            for r in a.registers:
                out[a.base + i * a.stride + r.offset] = (r, {r.name, a.name})
    return out


@pytest.mark.parametrize("path", sorted(MAPS))
def test_bank_holds_exactly_the_maps_registers(banks, path):
    _check_bank(path, banks[path], MAPS[path])


def _check_bank(path: str, bank: RegisterBank, m: RegisterMap) -> None:
    """``bank`` holds exactly ``m``'s registers with its names, access, reset and docs."""
    want = _expected(path, m, bank)
    assert sorted(bank.registers) == sorted(want), f"{path}: registers differ from {m.source}"
    for off, (r, names) in want.items():
        got = bank.registers[off]
        where = f"{path} 0x{off:x} {got.name} ({m.source}: {r.name})"
        assert any(n in got.name for n in names), where
        assert got.access == r.bank_access, where
        assert got.doc == r.doc, where
        if (path, r.name) in PARAMETER_RESETS:
            assert "reset" in r.doc, f"{where}: the YAML doc should say where the reset comes from"
        else:
            assert got.reset == r.reset, where
    plain = {r.name for r in m.registers}
    assert {bank.registers[r.offset].name for r in m.registers} == plain


def test_parameter_resets_are_registers_of_the_maps():
    for path, name in PARAMETER_RESETS:
        MAPS[path].register(name)


def test_the_rbe_bank_is_its_window_named_from_the_map(banks):
    bank = banks[RBE]
    names = {r.offset: r.name for r in RBE_MAP.registers}
    assert not RBE_MAP.arrays
    assert sorted(bank.registers) == list(range(0, max(names) + 4, 4))
    for off, reg in bank.registers.items():
        assert reg.name == names.get(off, f"RESERVED_{off:02X}")
        assert reg.access == "rw" and reg.reset == 0   # the register file checks the access


@pytest.mark.parametrize("path", sorted(OPTIONAL))
def test_an_optional_accelerators_bank_is_its_map(path):
    enable, m = OPTIONAL[path]
    sim = Simulator()
    Marsellus(sim, {enable: True})
    found = {b.path: b for b in sim.modules.values() if isinstance(b, RegisterBank)}
    assert path in found, f"{enable}: no bank {path}"
    _check_bank(path, found[path], m)


def test_tensil_status_bits_and_error_pc_reset_are_the_maps():
    """The TCU's STATUS bits and ERROR_PC's "no error" value, read through the bus of an idle
    TCU, are the map's (bits 0..3 busy/error/timeout/tracepoint, docs/tensil.md)."""
    m = OPTIONAL["soc.tensil.regs"][1]
    assert [(f.name, f.lsb, f.width) for f in m.register("STATUS").fields] == [
        ("BUSY", 0, 1), ("ERROR", 1, 1), ("TIMEOUT", 2, 1), ("TRACEPOINT", 3, 1)]
    sim = Simulator()
    plat = Marsellus(sim, {"soc.tensil.enabled": True})
    bank = plat.tensil.regs
    assert bank.read_reg(bank["ERROR_PC"]) == m.register("ERROR_PC").reset == 0xFFFFFFFF
    assert bank.read_reg(bank["STATUS"]) == 0
