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
