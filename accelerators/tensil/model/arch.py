"""Tensil TCU architectural parameters and the widths derived from them (docs/tensil.md).

One :class:`TensilArch` describes one generated TCU: data type, array size N, the depth of
every memory (in vectors), the SIMD register count R and the number of encodable strides.
Everything the encoder, the machine and the compiler need to know about field widths is
derived here, in one place, from the spec's layout rules (§3 of the spec).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tlm.params import check_params, freq_field, param

DataType = Literal["FP16BP8", "FP32B16"]

#: (width W in bits, fractional bits F) of each data type
FORMATS: dict[str, tuple[int, int]] = {"FP16BP8": (16, 8), "FP32B16": (32, 16)}


def bits_for(count: int) -> int:
    """Bits needed to hold ``count`` distinct values 0..count-1 (0 for count <= 1)."""
    return max(int(count) - 1, 0).bit_length()


def byte_align(bits: int) -> int:
    """``bits`` rounded up to a whole number of bytes (in bits)."""
    return -(-bits // 8) * 8


@dataclass(frozen=True)
class TensilArch:
    """The architectural parameters of one TCU (spec §1). Depths are in vectors."""

    data_type: DataType = param("FP16BP8", "scalar format: FP16BP8 or FP32B16")
    array_size: int = param(8, "N: the array is NxN, a vector holds N scalars", lo=2, hi=256)
    dram0_depth: int = param(1 << 20, "vectors in DRAM bank 0 (variables)", lo=2, hi=1 << 32)
    dram1_depth: int = param(1 << 20, "vectors in DRAM bank 1 (constants)", lo=2, hi=1 << 32)
    local_depth: int = param(1 << 14, "vectors in local memory", lo=2, hi=1 << 16)
    accumulator_depth: int = param(1 << 12, "vectors in the accumulators", lo=2, hi=1 << 16)
    simd_registers_depth: int = param(1, "R: registers per SIMD ALU", lo=0, hi=16)
    stride0_depth: int = param(8, "encodable strides of operand #0 (power of two)", lo=1, hi=64)
    stride1_depth: int = param(8, "encodable strides of operand #1 (power of two)", lo=1, hi=64)
    num_luts: int = param(0, "value lookup tables for the SIMD Lookup op", lo=0, hi=15)
    lut_depth_vectors: int = param(1, "vectors per lookup table", lo=1, hi=256)
    clock_hz: float = freq_field(150e6, "TCU clock")

    def validate(self) -> None:
        """Cross-field rules: power-of-two stride depths, a known data type."""
        if self.data_type not in FORMATS:
            raise ValueError(f"data_type {self.data_type!r}: expected FP16BP8 or FP32B16")
        for name in ("stride0_depth", "stride1_depth"):
            v = getattr(self, name)
            if v & (v - 1):
                raise ValueError(f"{name} = {v} is not a power of two")
        if self.num_luts and self.simd_registers_depth < self.num_luts:
            raise ValueError(f"num_luts = {self.num_luts} needs at least that many SIMD "
                             f"registers (simd_registers_depth = {self.simd_registers_depth})")

    def checked(self, path: str = "tensil.arch") -> TensilArch:
        """``self`` after the bounds and cross-field checks (ParameterError at ``path``)."""
        check_params(self, path)
        return self

    # ---- number format ----
    @property
    def width(self) -> int:
        """W: bits per scalar."""
        return FORMATS[self.data_type][0]

    @property
    def frac(self) -> int:
        """F: fractional bits."""
        return FORMATS[self.data_type][1]

    @property
    def scalar_bytes(self) -> int:
        return self.width // 8

    @property
    def vector_bytes(self) -> int:
        """Bytes of one vector in DRAM (N scalars, little-endian, lane 0 first)."""
        return self.array_size * self.scalar_bytes

    # ---- address and field widths (spec §3, assumption "exact field widths") ----
    @property
    def local_bits(self) -> int:
        return bits_for(self.local_depth)

    @property
    def acc_bits(self) -> int:
        return bits_for(self.accumulator_depth)

    @property
    def dram0_bits(self) -> int:
        return bits_for(self.dram0_depth)

    @property
    def dram1_bits(self) -> int:
        return bits_for(self.dram1_depth)

    @property
    def stride0_bits(self) -> int:
        return bits_for(self.stride0_depth)

    @property
    def stride1_bits(self) -> int:
        return bits_for(self.stride1_depth)

    @property
    def simd_op_bits(self) -> int:
        """4 bits (16 ops) without lookup tables, 5 (17 ops, Lookup = 0x10) with them."""
        return bits_for(self.simd_num_ops)

    @property
    def simd_num_ops(self) -> int:
        return 17 if self.num_luts else 16

    @property
    def simd_reg_bits(self) -> int:
        """Width of each of left/right/dest: ceil(log2(R+1))."""
        return bits_for(self.simd_registers_depth + 1)

    @property
    def simd_bits(self) -> int:
        return self.simd_op_bits + 3 * self.simd_reg_bits

    @property
    def op0_addr_bits(self) -> int:
        return max(self.local_bits, self.acc_bits)

    @property
    def op1_addr_bits(self) -> int:
        return max(self.local_bits, self.dram0_bits, self.dram1_bits, self.acc_bits)

    @property
    def op0_bits(self) -> int:
        return byte_align(self.op0_addr_bits + self.stride0_bits)

    @property
    def op1_bits(self) -> int:
        return byte_align(self.op1_addr_bits + self.stride1_bits)

    @property
    def op2_bits(self) -> int:
        return byte_align(max(min(self.local_bits, self.acc_bits),
                              min(self.local_bits, self.dram0_bits),
                              min(self.local_bits, self.dram1_bits), self.simd_bits))

    @property
    def instruction_bits(self) -> int:
        return 8 + self.op0_bits + self.op1_bits + self.op2_bits

    @property
    def instruction_bytes(self) -> int:
        return self.instruction_bits // 8

    @property
    def depths(self) -> dict[str, int]:
        """Depth in vectors of each memory, by the names the machine reports."""
        return {"local": self.local_depth, "accumulator": self.accumulator_depth,
                "dram0": self.dram0_depth, "dram1": self.dram1_depth}
