"""The ``minigemm`` block type of composed platforms: its job registers on the bus, its
memory port on the ``sram`` its ``memory`` key names; networks deploy through tlm-cosim's
unit pipeline (``deployer="units"``), which asks :mod:`minigemm.unit` what it costs."""
from __future__ import annotations

from typing import Any

from cosim.platforms.blocks import BlockSpec, BlockType


def _params() -> type:
    from .model import MiniGemmParams
    return MiniGemmParams


def _build(p: Any, path: str, b: BlockSpec) -> Any:
    from .model import MiniGemm
    mem: Any = p.blocks[b.memory or ""]
    acc = MiniGemm(p.top, b.name, clock=p.clock_of(b), region=p.region_of(b), mem_region=mem.region,
                   params=p.params[path])
    acc.mem.bind(mem.socket)
    p.attach(b, acc.regs.socket, translate=True)
    return acc


MINIGEMM = BlockType("MiniGEMM integer GEMM array (example plug-in: job registers, a port on its 'memory' sram)",
                     ("clock", "region", "bus", "memory"), _build, _params, memory_type="sram",
                     done=lambda m: m.done, deployer="units")
