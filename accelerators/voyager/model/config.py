"""Voyager instance parameters (docs/voyager.md, "Parameters") and the published array
configurations (``arrays.yaml``: array size and total SRAM of each)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any


from tlm.params import check_params, freq_field, param

from .errors import VoyagerError

HERE = Path(__file__).resolve().parent
OBJECTIVES = ("perf", "energy", "coarse")
VECTOR_DTYPES = ("bf16", "fp32")


@dataclass(frozen=True)
class VoyagerParams:
    """One Voyager instance: array, buffers, datatype, memory bandwidth, performance model."""

    ic_dim: int = param(16, "array rows (input channels unrolled, the reduction)", lo=1, hi=256)
    oc_dim: int = param(16, "array columns (output channels unrolled)", lo=1, hi=256)
    vector_width: int = param(0, "vector-unit lanes (0: = oc_dim)", lo=0, hi=256)
    input_buffer_rows: int = param(1024, "input buffer entries of ic_dim elements, per half", lo=1, hi=1 << 20)
    weight_buffer_rows: int = param(1024, "weight buffer entries of oc_dim elements, per half", lo=1, hi=1 << 20)
    accum_buffer_rows: int = param(1024, "accumulation buffer entries of oc_dim elements", lo=1, hi=1 << 20)
    double_buffered_accum: bool = param(False, "accumulation buffer double-buffered (vector unit decoupled)")
    dtype: str = param("int8", "operand datatype (int2..int16, bf16, fp32, e4m3, e5m2, posit8, mxint8)")
    accum_dtype: str = param("", "PE accumulator override (e.g. int24); empty: the design's default")
    vector_dtype: str = param("bf16", "vector-unit float format, bf16 or fp32 (the spec's fp32 vector unit: "
                                      "integer jobs' dequantisation scales are then stored as fp32)")
    mem_bytes_per_cycle: float = param(64.0, "main-memory bandwidth available to the accelerator (bytes/cycle)",
                                       lo=0.125, hi=4096)
    pe_latency: int = param(1, "PE pipeline latency (cycles)", lo=0, hi=16)
    vector_pipeline_depth: int = param(8, "vector pipeline depth (cycles)", lo=0, hi=64)
    dwc_unit: bool = param(False, "depthwise-convolution extension present (else the vector unit runs it)")
    dwc_trees: int = param(0, "DWC extension: MAC trees, each reducing one channel's filter (0: = lanes)",
                           lo=0, hi=1024)
    dwc_kernel: int = param(3, "DWC extension: native filter size (larger filters run as slices)", lo=1, hi=15)
    dwc_line_rows: int = param(0, "DWC extension: input line-buffer rows (0: native size + stride)", lo=0, hi=64)
    objective: str = param("perf", "schedule search objective: perf (fastest), energy (fewest weighted "
                               "accesses) or coarse (no search: largest fitting tiles)")
    clock_hz: float = freq_field(1e9, "accelerator clock")
    data: bool = param(True, "compute outputs bit-exactly (False: timing only; write bursts carry zeros)")
    data_limit: int = param(1 << 22, "largest operand matrix (input rows x reduction, elements) a job computes "
                                     "bit-exactly; a larger job in data mode ends with error 1", lo=1, hi=1 << 30)

    def validate(self) -> None:
        from .dtypes import design, parse_dtype
        parse_dtype(self.dtype, "dtype")
        design(self.dtype, self.accum_dtype or None, "accum_dtype")
        if self.vector_dtype not in VECTOR_DTYPES:
            raise VoyagerError("vector_dtype", f"unknown vector-unit format {self.vector_dtype!r} "
                                               f"(known: {', '.join(VECTOR_DTYPES)})")
        if self.objective not in OBJECTIVES:
            raise VoyagerError("objective", f"unknown performance model {self.objective!r} "
                                            f"(known: {', '.join(OBJECTIVES)})")

    @property
    def lanes(self) -> int:
        return self.vector_width or self.oc_dim

    @property
    def trees(self) -> int:
        """MAC trees of the DWC extension."""
        return self.dwc_trees or self.lanes

    def sram_bytes(self, operand_bits: int = 8, accum_buffer_bits: int = 16) -> int:
        """Total buffer SRAM: double-buffered input and weight buffers plus the
        accumulation buffer (docs/voyager.md buffer organisation)."""
        acc_halves = 2 if self.double_buffered_accum else 1
        return (2 * self.input_buffer_rows * self.ic_dim * operand_bits
                + 2 * self.weight_buffer_rows * self.oc_dim * operand_bits
                + acc_halves * self.accum_buffer_rows * self.oc_dim * accum_buffer_bits) // 8


def checked(p: VoyagerParams, path: str = "voyager") -> VoyagerParams:
    """``p`` after its bounds and cross-field rules (a located ParameterError otherwise)."""
    check_params(p, path)
    return p


@lru_cache(maxsize=None)
def array_table() -> tuple[dict[str, Any], ...]:
    """The published array configurations (arrays.yaml)."""
    from tlm.yamlfast import load_file
    return tuple(load_file(HERE / "arrays.yaml")["arrays"])


def array_config(name: str, **overrides: Any) -> VoyagerParams:
    """Parameters of the published configuration ``name`` (e.g. '32x32'), or of any
    ``<rows>x<cols>`` array with the default buffers; bounds are checked (an array
    dimension of 0 is a ParameterError at ``voyager.ic_dim``)."""
    for row in array_table():
        if row["name"] == name:
            return checked(replace(VoyagerParams(), ic_dim=row["ic_dim"], oc_dim=row["oc_dim"], **overrides))
    rows, sep, cols = str(name).partition("x")
    if sep and rows.isdigit() and cols.isdigit():
        return checked(replace(VoyagerParams(), ic_dim=int(rows), oc_dim=int(cols), **overrides))
    raise VoyagerError("array", f"unknown array configuration {name!r}: <rows>x<cols>, e.g. one of "
                                f"{', '.join(r['name'] for r in array_table())}")


@dataclass(frozen=True)
class SocVoyagerParams(VoyagerParams):
    """A Voyager unit inside a SoC (MARSELLUS's ``soc.voyager``): off unless ``enabled``; it
    runs on the SoC's clock (``clock_hz`` is the standalone platform's)."""

    enabled: bool = param(False, "build a Voyager unit on the SOC AXI (its DRAM port reads and writes L2)")
