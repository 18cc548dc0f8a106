"""FlexiSAGA array parameters and the arithmetic of its PEs (docs/flexisaga.md)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: the seven dataflows, in DATAFLOW register order
DATAFLOWS = ("dOS", "dWS", "dIS", "sOS", "sWS", "sIS", "csOS")
#: the dataflow family (what stays in the PEs) of each dataflow
FAMILY = {"dOS": "OS", "sOS": "OS", "csOS": "csOS", "dWS": "WS", "sWS": "WS", "dIS": "IS", "sIS": "IS"}
SPARSE = frozenset({"sOS", "sWS", "sIS", "csOS"})
PE_DTYPES = ("fp32", "int")


@dataclass(frozen=True)
class ArrayConfig:
    """Shape and memory parameters of one FlexiSAGA array (bounds checked on creation)."""

    rows: int = 8
    cols: int = 8
    reg_count: int = 9
    word_bits: int = 32
    pe_dtype: str = "fp32"
    mem_ports: int = 8
    mem_latency: int = 1
    csb_index_bits: int = 8

    def __post_init__(self) -> None:
        for name, lo, hi in (("rows", 1, 256), ("cols", 1, 256), ("reg_count", 4, 64),
                             ("word_bits", 8, 64), ("mem_ports", 1, 64), ("mem_latency", 0, 1000),
                             ("csb_index_bits", 2, 32)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ValueError(f"flexisaga array: {name} = {v!r} is outside [{lo}, {hi}]")
        if self.pe_dtype not in PE_DTYPES:
            raise ValueError(f"flexisaga array: pe_dtype {self.pe_dtype!r} is not one of {PE_DTYPES}")
        if self.pe_dtype == "fp32" and self.word_bits != 32:
            raise ValueError("flexisaga array: fp32 PEs need word_bits = 32")

    def cost(self, reads: int, writes: int = 0) -> int:
        """Cycles of one step moving ``reads``/``writes`` words through the DecU's ports."""
        return max(1, math.ceil(reads / self.mem_ports), math.ceil(writes / self.mem_ports))

    @property
    def dtype(self) -> type:
        return np.float32 if self.pe_dtype == "fp32" else np.int64

    def wrap(self, x: int) -> int:
        """Two's complement wrap to ``word_bits`` (integer mode)."""
        half = 1 << (self.word_bits - 1)
        return ((int(x) + half) % (1 << self.word_bits)) - half

    def mac(self, acc: object, w: object, i: object) -> object:
        """``acc + w * i`` with one rounding (fp32) or wrap (int) after each operation."""
        if self.pe_dtype == "fp32":
            return np.float32(np.float32(acc) + np.float32(np.float32(w) * np.float32(i)))
        return self.wrap(int(acc) + self.wrap(int(w) * int(i)))


def check_gemm(cfg: ArrayConfig, dataflow: str, w: np.ndarray, i: np.ndarray) -> None:
    """Refuse a GEMM the array cannot run, naming what is wrong."""
    if dataflow not in DATAFLOWS:
        raise ValueError(f"flexisaga: dataflow {dataflow!r} is not one of {', '.join(DATAFLOWS)}")
    if w.ndim != 2 or i.ndim != 2:
        raise ValueError(f"flexisaga: W and I must be matrices, got shapes {w.shape} and {i.shape}")
    if w.shape[1] != i.shape[0]:
        raise ValueError(f"flexisaga: W is {w.shape[0]}x{w.shape[1]} but I is {i.shape[0]}x{i.shape[1]} "
                         "(K must match)")
    if 0 in w.shape or i.shape[1] == 0:
        raise ValueError(f"flexisaga: empty GEMM (W {w.shape}, I {i.shape})")
