"""Parameters of a TCU in a platform (light: no ISA machine), so a composition can declare
them without loading the TCU's model (:mod:`.accelerator` builds the TCU)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tlm.params import ParameterError, check_params, param

from .arch import TensilArch
from .boards import board

if TYPE_CHECKING:
    from .latency import TensilTiming

ARCH_FIELDS = [f.name for f in dataclasses.fields(TensilArch) if f.name != "clock_hz"]


@dataclass(frozen=True)
class TensilParams:
    """A TCU in a platform: its architecture (a published ``board``, then any field given
    here), its hazard model and its AXI link."""

    board: Literal["", "arty_a7_35", "pynq_z1", "ultra96_v2"] = param(
        "", "published board whose architecture is the base (accelerators/tensil/model/boards.yaml)")
    data_type: Literal["FP16BP8", "FP32B16"] | None = param(None, "scalar format")
    array_size: int | None = param(None, "N (array NxN)", lo=2, hi=256)
    dram0_depth: int | None = param(None, "vectors in DRAM0", lo=2, hi=1 << 32)
    dram1_depth: int | None = param(None, "vectors in DRAM1", lo=2, hi=1 << 32)
    local_depth: int | None = param(None, "vectors in local memory", lo=2, hi=1 << 16)
    accumulator_depth: int | None = param(None, "vectors in the accumulators", lo=2, hi=1 << 16)
    simd_registers_depth: int | None = param(None, "registers per SIMD ALU", lo=0, hi=16)
    stride0_depth: int | None = param(None, "encodable strides of operand #0", lo=1, hi=64)
    stride1_depth: int | None = param(None, "encodable strides of operand #1", lo=1, hi=64)
    num_luts: int | None = param(None, "lookup tables", lo=0, hi=15)
    lut_depth_vectors: int | None = param(None, "vectors per lookup table", lo=1, hi=256)
    simd_write_hazard: int = param(2, "instructions a SIMD result needs before a DataMove "
                                      "reads it", lo=0, hi=64)
    hazard: Literal["stale", "in_order", "error"] = param(
        "stale", "a too-early DataMove read: stale value (hardware), in-order value, or error")
    axi_width: int = param(16, "AXI data width, bytes per beat", lo=1, hi=128)
    axi_latency: int = param(16, "TCU cycles from an AXI burst's address to its first beat",
                             lo=0, hi=100_000)
    axi_max_burst: int = param(256, "beats per AXI burst", lo=1, hi=256)
    fetch_block: int = param(64, "instructions the fetcher reads per burst", lo=1, hi=4096)
    data: bool = param(True, "compute data (false: timing-only mode with the same cycles)")

    def arch(self) -> TensilArch:
        """The architecture: defaults, then the board's table entry, then given fields."""
        values: dict[str, Any] = {}
        if self.board:
            values.update({k: v for k, v in board(self.board)["arch"].items() if k != "clock_hz"})
        values.update({k: getattr(self, k) for k in ARCH_FIELDS if getattr(self, k) is not None})
        return TensilArch(**values)

    def timing(self) -> "TensilTiming":
        from .latency import TensilTiming
        return TensilTiming(simd_write_hazard=self.simd_write_hazard, hazard=self.hazard)

    def validate(self) -> None:
        """The resulting architecture must be valid (ValueError naming the rule)."""
        try:
            check_params(self.arch(), "architecture")
        except ParameterError as e:
            raise ValueError(f"{e.path}: {e.message}") from None


@dataclass(frozen=True)
class SocTensilParams(TensilParams):
    """A TCU inside a SoC (MARSELLUS's ``soc.tensil``): off unless ``enabled``."""

    enabled: bool = param(False, "build the TCU on the SOC AXI (its DRAM0/DRAM1 in L2, or where "
                                   "the SoC's `dram` parameter puts them, e.g. the HyperRAM)")
