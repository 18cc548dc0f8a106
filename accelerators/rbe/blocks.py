"""The ``rbe`` block type of composed platforms (docs/platforms.md): its job registers on
the bus, its streamer on the accelerator branch of the TCDM its ``memory`` key names."""
from __future__ import annotations

from typing import Any

from cosim.platforms.blocks import BlockSpec, BlockType
from tlm import Module


def _params() -> type:
    from components.rbe.peripheral import RbeParams
    return RbeParams


def _build(p: Any, path: str, b: BlockSpec) -> Module:
    from components.rbe.peripheral import Rbe
    tcdm: Any = p.blocks[b.memory or ""]
    rbe = Rbe(p.top, b.name, clock=p.clock_of(b), params=p.params[path],
              region=p.region_of(b), tcdm_region=tcdm.region,
              tcdm_word_mode=lambda: tcdm.params.mode == "word")
    rbe.tcdm.bind(tcdm.rbe_port)
    p.attach(b, rbe.regs.socket, translate=True)
    return rbe


RBE = BlockType("RBE binary-convolution accelerator (HWPE registers, TCDM streamer)",
                ("clock", "region", "bus", "memory"), _build, _params,
                memory_type="tcdm", done=lambda m: m.done,  # type: ignore[attr-defined]
                rtl="rbe")
