"""The Voyager compiler front half (docs/voyager.md, "Compiler"): layers -> fused
operators. A matrix op (conv, GEMM) takes the element-wise layers that follow it as its
post-processing list (dequantise, bias, activation, residual add, quantise ride in the
vector pipeline); reshapes and transposes fold into the address generators of the next
operator; depthwise convolutions, pooling, softmax and layer norm are vector-unit
operators. A batch-1 GEMM (the final classifier) runs on the vector unit, as in the
paper's per-layer tables."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .errors import VoyagerError
from .zoo import ELEMENTWISE, MATRIX_OPS, RESHAPES, Layer


@dataclass(frozen=True)
class FusedOp:
    """One accelerator operator: its layer, the unit that runs it (``matrix``, ``vector``
    or ``dwc``), the fused element-wise post-ops and the reshapes folded into its reads."""

    layer: Layer
    unit: str
    post: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.layer.name


def unit_of(layer: Layer, dwc_unit: bool = False) -> str:
    if layer.kind in MATRIX_OPS:
        return "matrix" if layer.rows > 1 else "vector"
    if layer.kind == "dwconv" and dwc_unit:
        return "dwc"
    return "vector"


def fuse(layers: Sequence[Layer], dwc_unit: bool = False) -> list[FusedOp]:
    """Fused operators of ``layers`` (execution order)."""
    ops: list[FusedOp] = []
    pending: list[str] = []
    for ly in layers:
        if ly.kind in RESHAPES:
            pending.append(ly.name)
            continue
        if ly.kind in ELEMENTWISE:
            if not ops:
                raise VoyagerError(f"layer {ly.name}", f"element-wise {ly.kind!r} has no producer to fuse into")
            last = ops[-1]
            ops[-1] = FusedOp(last.layer, last.unit, last.post + (ly.kind,), last.folded)
            continue
        ops.append(FusedOp(ly, unit_of(ly, dwc_unit), (), tuple(pending)))
        pending = []
    if pending:
        raise VoyagerError(f"layer {pending[-1]}", "a reshape at the end of the network has no consumer")
    return ops
