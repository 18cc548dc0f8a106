"""The ``voyager`` block type of composed platforms (docs/platforms.md): its MMIO descriptor
registers on the bus, its DRAM port on the ``sram`` its ``memory`` key names."""
from __future__ import annotations

from typing import Any

from cosim.platforms.blocks import BlockSpec, BlockType
from tlm import Module


def _params() -> type:
    from accelerators.voyager.model.config import VoyagerParams
    return VoyagerParams


def _build(p: Any, path: str, b: BlockSpec) -> Module:
    from accelerators.voyager.model.accel import Voyager
    mem: Any = p.blocks[b.memory or ""]
    acc = Voyager(p.top, b.name, clock=p.clock_of(b), params=p.params[path], region_size=p.region_of(b).size)
    acc.dram.bind(mem.socket)
    p.attach(b, acc.regs.socket, translate=True)
    return acc


VOYAGER = BlockType("Voyager DNN accelerator (weight-stationary array, vector unit, MMIO descriptor, "
                    "DRAM port on its 'memory' sram)", ("clock", "region", "bus", "memory"),
                    _build, _params, memory_type="sram",
                    done=lambda m: m.irq)  # type: ignore[attr-defined]
