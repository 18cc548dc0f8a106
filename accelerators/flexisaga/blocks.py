"""The ``flexisaga`` block type of composed platforms (docs/platforms.md): job registers on
the bus, the DecU on the accelerator branch of the TCDM its ``memory`` key names. A platform
holding one deploys ONNX models through the unit pipeline (cosim/deploy/pipeline.py)."""
from __future__ import annotations

from typing import Any

from cosim.platforms.blocks import BlockSpec, BlockType
from tlm import Module


def _params() -> type:
    from accelerators.flexisaga.model.peripheral import FlexiSagaParams
    return FlexiSagaParams


def _build(p: Any, path: str, b: BlockSpec) -> Module:
    from accelerators.flexisaga.model.peripheral import FlexiSaga
    tcdm: Any = p.blocks[b.memory or ""]
    fs = FlexiSaga(p.top, b.name, clock=p.clock_of(b), params=p.params[path],
                   region=p.region_of(b), mem_region=tcdm.region)
    fs.mem.bind(tcdm.rbe_port)  # the accelerator branch: P x 32-bit words per access
    p.attach(b, fs.regs.socket, translate=True)
    return fs


FLEXISAGA = BlockType("FlexiSAGA dense/sparse systolic GEMM array (job registers, TCDM branch)",
                      ("clock", "region", "bus", "memory"), _build, _params,
                      memory_type="tcdm", done=lambda m: m.done,  # type: ignore[attr-defined]
                      rtl="flexisaga", deployer="units")
