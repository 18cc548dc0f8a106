"""Our integer description of an imported network: quantised tensors and the integer ops
between them, each naming the ONNX nodes it stands for."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class QTensor:
    """An int8 feature map ``(H, W, C)`` (or a vector ``(1, 1, N)``) with its quantisation.

    Values are stored as int8; a uint8 ONNX tensor is stored as ``v - 128`` (``offset``
    128) with its zero point moved by the same amount, which keeps ``v - zp`` unchanged."""

    name: str
    onnx: str
    shape: tuple[int, int, int]
    scale: float
    zp: int                       # zero point of the int8 storage
    offset: int = 0               # 128 for a uint8 ONNX tensor
    flat_from: tuple[int, int, int] | None = None   # (C, H, W) before a Flatten/Reshape

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass
class QOp:
    """One integer operation: ``conv`` (also Gemm/MatMul/AveragePool as a convolution),
    ``add``, ``concat`` or ``maxpool``."""

    name: str
    kind: str
    nodes: list[str]
    ops: list[str]
    inputs: list[str]
    output: str
    weights: np.ndarray | None = None      # conv: (Cout, KH, KW, Cin) int8, groups expanded
    stride: int = 1
    pad: int = 0
    pad_value: int = 0                     # the input's zero point: ONNX pads with real 0
    kernel: int = 1                        # maxpool window
    groups: int = 1
    relu: bool = False
    requant: dict[str, Any] = field(default_factory=dict)
    exact: bool = True
    note: str = ""
    #: conv: what the requantisation was derived from (``requant.conv_requant``'s arguments),
    #: so a target with other multiplier limits (the RBE) can derive its own
    terms: dict[str, Any] = field(default_factory=dict)
    #: where it runs (set by ``place.place_ops``): ``cores`` | ``rbe`` | ``dma``, the reason,
    #: and for the RBE its job (``rbe.RbeConv``)
    target: str = ""
    why: str = ""
    rbe: Any = None
    modelled: dict[str, int] = field(default_factory=dict)   # conv: cycles per candidate
    rbe_refused: str = ""                  # conv: why not on the RBE (no RBE cycles modelled)
    #: conv on a GEMM unit of the platform (``units.place_units``): the unit, what its cost
    #: model found, and every candidate's figures / refusal
    unit: Any = None
    plan: dict[str, Any] = field(default_factory=dict)
    candidates: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


@dataclass
class QNet:
    """Tensors by name, ops in execution order, the input and output tensor names, and
    what became of every ONNX node (``placement``: node -> (op type, our op or '', how))."""

    name: str
    file: str
    tensors: dict[str, QTensor]
    ops: list[QOp]
    input: str
    output: str
    placement: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)   # flattened view -> tensor with the data

    def tensor(self, name: str) -> QTensor:
        return self.tensors[name]
