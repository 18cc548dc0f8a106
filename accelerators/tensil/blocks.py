"""The ``tensil`` block type of composed platforms (docs/platforms.md): control registers on
the bus, the program fetcher and the DRAM0/DRAM1 AXI masters on the same bus."""
from __future__ import annotations

from typing import Any

from cosim.platforms.blocks import BlockSpec, BlockType
from tlm import Module


def _params() -> type:
    from accelerators.tensil.model.accelerator import TensilParams
    return TensilParams


def _build(p: Any, path: str, b: BlockSpec) -> Module:
    from accelerators.tensil.model.accelerator import TensilTcu
    tcu = TensilTcu(p.top, b.name, clock=p.clock_of(b), params=p.params[path])
    bus: Any = p.blocks[b.bus or ""]
    for port in tcu.ports.values():      # fetcher, DRAM0, DRAM1: AXI masters on the bus
        port.bind(bus.target_socket)
    p.attach(b, tcu.regs.socket, translate=True)
    return tcu


TENSIL = BlockType("Tensil TCU: control registers, program fetcher, ISA machine, AXI DRAM0/DRAM1 "
                   "masters on its bus (docs/tensil.md)",
                   ("clock", "region", "bus"), _build, _params,
                   done=lambda m: m.done, rtl="tensil")  # type: ignore[attr-defined]
