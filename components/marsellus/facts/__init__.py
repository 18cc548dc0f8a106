"""The MARSELLUS facts: memory map, interrupt lines and operating points (YAML files next to
this module).

Only the composition (``components/marsellus/platform.py`` and ``memory_system.py``), cosim
and the firmware generator read these; the block models receive their regions and lines
from whoever composes them (tests/test_layering.py checks this).

* ``MEMORY_MAP`` — :class:`tlm.MemoryMap` of memory_map.yaml;
* ``IRQ_LINES`` — fabric-controller interrupt lines, ``name -> (mip/mie bit, description)``;
* ``SOC_IRQS`` — the cluster -> SOC interrupt lines crossing the ``cdc`` link;
* :func:`operating_points` — power domains, FLLs, supply, delay model and named operating
  points (operating_points.yaml) as the :class:`components.pmu.PowerSpec` the PMU and the
  power model are given.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from tlm.address_map import MemoryMap, Region, load_memory_map
from tlm.yamlfast import load_file

HERE = Path(__file__).resolve().parent
MAP_FILE = HERE / "memory_map.yaml"
IRQ_FILE = HERE / "irqs.yaml"
OPERATING_POINTS_FILE = HERE / "operating_points.yaml"

if TYPE_CHECKING:
    from components.pmu.data import PowerSpec

__all__ = ["MEMORY_MAP", "IRQ_LINES", "SOC_IRQS", "MAP_FILE", "IRQ_FILE",
           "OPERATING_POINTS_FILE", "MemoryMap", "Region", "operating_points"]

MEMORY_MAP: MemoryMap = load_memory_map(MAP_FILE)

_irqs = load_file(IRQ_FILE)
IRQ_LINES: dict[str, tuple[int, str]] = {
    name: (int(d["line"]), str(d["description"])) for name, d in _irqs["fc"].items()}
SOC_IRQS: tuple[str, ...] = tuple(_irqs["soc"])
del _irqs


@cache
def operating_points() -> "PowerSpec":
    """The MARSELLUS operating points (operating_points.yaml), parsed on first use."""
    from components.pmu.data import power_spec   # the PMU's data types; loaded on demand
    return power_spec(OPERATING_POINTS_FILE)
