"""The MARSELLUS facts: memory map and interrupt lines (YAML files next to this module).

Only the composition (``components/marsellus/platform.py`` and ``memory_system.py``), cosim
and the firmware generator read these; the block models receive their regions and lines
from whoever composes them (tests/test_layering.py checks this).

* ``MEMORY_MAP`` — :class:`tlm.MemoryMap` of memory_map.yaml;
* ``IRQ_LINES`` — fabric-controller interrupt lines, ``name -> (mip/mie bit, description)``;
* ``SOC_IRQS`` — the cluster -> SOC interrupt lines crossing the ``cdc`` link.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from tlm.address_map import MemoryMap, Region, load_memory_map

HERE = Path(__file__).resolve().parent
MAP_FILE = HERE / "memory_map.yaml"
IRQ_FILE = HERE / "irqs.yaml"

__all__ = ["MEMORY_MAP", "IRQ_LINES", "SOC_IRQS", "MAP_FILE", "IRQ_FILE", "MemoryMap", "Region"]

MEMORY_MAP: MemoryMap = load_memory_map(MAP_FILE)

_irqs = yaml.safe_load(IRQ_FILE.read_text())
IRQ_LINES: dict[str, tuple[int, str]] = {
    name: (int(d["line"]), str(d["description"])) for name, d in _irqs["fc"].items()}
SOC_IRQS: tuple[str, ...] = tuple(_irqs["soc"])
del _irqs
