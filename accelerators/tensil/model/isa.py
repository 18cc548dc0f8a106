"""The Tensil instruction set: instruction objects, their bit layout, encode and decode
(spec §3-§5; docs/tensil.md).

Layout of one instruction word (width from :class:`TensilArch`)::

    | opcode:4 | flags:4 | operand #2 | operand #1 | operand #0 |

An address operand is ``| zero padding | log2(stride) | address |``; size operands hold
size - 1. Instruction objects carry *sizes as vector counts* and *strides as strides*
(1, 2, 4, ...); only the encoding uses size - 1 and log2. Decoding is strict: every bit
the layout does not give a meaning must be zero, so ``encode(decode(w)) == w`` for every
word ``decode`` accepts.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import Union

from .arch import TensilArch


class Opcode(IntEnum):
    NOOP = 0x0
    MATMUL = 0x1
    DATAMOVE = 0x2
    LOADWEIGHT = 0x3
    SIMD = 0x4
    LOADLUT = 0x5
    CONFIGURE = 0xF


class DataFlow(IntEnum):
    """DataMove flags: the direction of the move (0x4-0xB and 0xE are reserved)."""

    DRAM0_TO_LOCAL = 0x0
    LOCAL_TO_DRAM0 = 0x1
    DRAM1_TO_LOCAL = 0x2
    LOCAL_TO_DRAM1 = 0x3
    ACC_TO_LOCAL = 0xC
    LOCAL_TO_ACC = 0xD
    LOCAL_TO_ACC_ADD = 0xF


class SimdOp(IntEnum):
    NOOP = 0x00
    ZERO = 0x01
    MOVE = 0x02
    NOT = 0x03
    AND = 0x04
    OR = 0x05
    INCREMENT = 0x06
    DECREMENT = 0x07
    ADD = 0x08
    SUBTRACT = 0x09
    MULTIPLY = 0x0A
    ABS = 0x0B
    GREATER_THAN = 0x0C
    GREATER_THAN_EQUAL = 0x0D
    MIN = 0x0E
    MAX = 0x0F
    LOOKUP = 0x10


class ConfigReg(IntEnum):
    """Configuration registers written by Configure (spec §7)."""

    DRAM0_OFFSET = 0x0
    DRAM0_CACHE = 0x1
    DRAM1_OFFSET = 0x4
    DRAM1_CACHE = 0x5
    TIMEOUT = 0x8
    TRACEPOINT = 0x9
    PROGRAM_COUNTER = 0xA
    SAMPLE_INTERVAL = 0xB


#: width in bits of each configuration register's value
CONFIG_WIDTHS: dict[int, int] = {ConfigReg.DRAM0_OFFSET: 32, ConfigReg.DRAM0_CACHE: 4,
                                 ConfigReg.DRAM1_OFFSET: 32, ConfigReg.DRAM1_CACHE: 4,
                                 ConfigReg.TIMEOUT: 16, ConfigReg.TRACEPOINT: 32,
                                 ConfigReg.PROGRAM_COUNTER: 32, ConfigReg.SAMPLE_INTERVAL: 16}


class IsaError(ValueError):
    """An instruction that cannot be encoded or a word that cannot be decoded; ``field``
    names the offending field (``opcode``, ``flags``, ``local_stride``, ...)."""

    def __init__(self, message: str, field: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.detail = message


@dataclass(frozen=True)
class NoOp:
    """Does nothing for one instruction slot (the fix for the SIMD -> DataMove hazard)."""


@dataclass(frozen=True)
class MatMul:
    """``size`` vectors from local memory through the array into the accumulators."""

    local_address: int
    accumulator_address: int
    size: int = 1
    local_stride: int = 1
    accumulator_stride: int = 1
    accumulate: bool = False
    zeroes: bool = False


@dataclass(frozen=True)
class DataMove:
    """``size`` vectors between local memory and DRAM0/DRAM1/accumulators (``flow``)."""

    flow: DataFlow
    local_address: int
    address: int
    size: int = 1
    local_stride: int = 1
    stride: int = 1


@dataclass(frozen=True)
class LoadWeight:
    """Push ``size`` vectors (or zero vectors) into the array's weight shift register."""

    local_address: int
    size: int = 1
    local_stride: int = 1
    zeroes: bool = False


@dataclass(frozen=True)
class Simd:
    """One lane-parallel ALU operation on one accumulator vector and the registers."""

    op: SimdOp
    left: int = 0
    right: int = 0
    dest: int = 0
    read: bool = False
    write: bool = False
    accumulate: bool = False
    write_address: int = 0
    read_address: int = 0


@dataclass(frozen=True)
class LoadLut:
    """Load lookup table ``table`` (0 = key index, i+1 = value table i) from local memory."""

    local_address: int
    table: int
    local_stride: int = 1


@dataclass(frozen=True)
class Configure:
    """Write ``value`` into configuration register ``register``."""

    register: int
    value: int


Instruction = Union[NoOp, MatMul, DataMove, LoadWeight, Simd, LoadLut, Configure]

OPCODE_OF: dict[type, Opcode] = {NoOp: Opcode.NOOP, MatMul: Opcode.MATMUL,
                                 DataMove: Opcode.DATAMOVE, LoadWeight: Opcode.LOADWEIGHT,
                                 Simd: Opcode.SIMD, LoadLut: Opcode.LOADLUT,
                                 Configure: Opcode.CONFIGURE}
CLASS_OF: dict[int, type] = {int(v): k for k, v in OPCODE_OF.items()}


# ---------------------------------------------------------------- field helpers
def _fit(value: int, bits: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise IsaError(f"expected an integer, got {value!r}", field)
    if value < 0 or value >= (1 << bits):
        raise IsaError(f"{value} does not fit in {bits} bits", field)
    return value


def _stride_code(stride: int, depth: int, field: str) -> int:
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1 or stride & (stride - 1):
        raise IsaError(f"stride {stride!r} is not a power of two", field)
    code = stride.bit_length() - 1
    if code >= depth:
        raise IsaError(f"stride {stride} is too large (largest encodable: {1 << (depth - 1)})", field)
    return code


def _size_code(size: int, bits: int, field: str) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise IsaError(f"size {size!r} must be at least 1 vector", field)
    if size - 1 >= (1 << bits):
        raise IsaError(f"size {size} does not fit (size - 1 needs more than {bits} bits)", field)
    return size - 1


def _addr_operand(address: int, stride: int, addr_bits: int, stride_depth: int,
                  name: str) -> int:
    a = _fit(address, addr_bits, name)
    s = _stride_code(stride, stride_depth, name.replace("address", "stride"))
    return (s << addr_bits) | a


def _split_addr(operand: int, addr_bits: int, stride_bits: int, name: str) -> tuple[int, int]:
    if operand >> (addr_bits + stride_bits):
        raise IsaError("padding bits above the stride are not zero", name)
    return operand & ((1 << addr_bits) - 1), 1 << (operand >> addr_bits)


# ---------------------------------------------------------------- encode
def encode(ins: Instruction, arch: TensilArch) -> int:
    """The instruction word of ``ins`` as an integer (IsaError naming the field if a value
    does not fit the layout)."""
    op0 = op1 = op2 = flags = 0
    a0, a1 = arch.op0_addr_bits, arch.op1_addr_bits
    if isinstance(ins, NoOp):
        pass
    elif isinstance(ins, MatMul):
        flags = int(ins.accumulate) | int(ins.zeroes) << 1
        op0 = _addr_operand(ins.local_address, ins.local_stride, a0, arch.stride0_depth, "local_address")
        op1 = _addr_operand(ins.accumulator_address, ins.accumulator_stride, a1,
                            arch.stride1_depth, "accumulator_address")
        op2 = _size_code(ins.size, arch.op2_bits, "size")
    elif isinstance(ins, DataMove):
        try:
            flags = int(DataFlow(ins.flow))
        except ValueError:
            raise IsaError(f"{ins.flow!r} is not a data-flow value", "flow") from None
        op0 = _addr_operand(ins.local_address, ins.local_stride, a0, arch.stride0_depth, "local_address")
        op1 = _addr_operand(ins.address, ins.stride, a1, arch.stride1_depth, "address")
        op2 = _size_code(ins.size, arch.op2_bits, "size")
    elif isinstance(ins, LoadWeight):
        flags = int(ins.zeroes)
        op0 = _addr_operand(ins.local_address, ins.local_stride, a0, arch.stride0_depth, "local_address")
        op1 = _size_code(ins.size, arch.op1_bits, "size")
    elif isinstance(ins, Simd):
        flags = int(ins.read) | int(ins.write) << 1 | int(ins.accumulate) << 2
        op0 = _fit(ins.write_address, a0, "write_address")
        op1 = _fit(ins.read_address, a1, "read_address")
        op2 = encode_simd(ins.op, ins.left, ins.right, ins.dest, arch)
    elif isinstance(ins, LoadLut):
        op0 = _addr_operand(ins.local_address, ins.local_stride, a0, arch.stride0_depth, "local_address")
        if not 0 <= ins.table <= arch.num_luts:
            raise IsaError(f"table {ins.table} out of 0..{arch.num_luts} (num_luts = {arch.num_luts})",
                           "table")
        op1 = _fit(ins.table, arch.op1_bits, "table")
    elif isinstance(ins, Configure):
        _fit(ins.register, 4, "register")
        value_bits = arch.op0_bits + arch.op1_bits + arch.op2_bits - 4
        _fit(ins.value, value_bits, "value")
        operands = ins.value << 4 | ins.register
        return (int(Opcode.CONFIGURE) << 4) << (arch.instruction_bits - 8) | operands
    else:
        raise IsaError(f"{ins!r} is not an instruction", "opcode")
    word = int(OPCODE_OF[type(ins)]) << 4 | flags
    word = word << arch.op2_bits | op2
    word = word << arch.op1_bits | op1
    return word << arch.op0_bits | op0


def encode_simd(op: SimdOp | int, left: int, right: int, dest: int, arch: TensilArch) -> int:
    """The SIMD sub-instruction ``op | left | right | dest`` (right-aligned in operand #2)."""
    if isinstance(op, bool) or not isinstance(op, int) or not 0 <= int(op) < arch.simd_num_ops:
        raise IsaError(f"op {op!r} is not one of the {arch.simd_num_ops} SIMD ops of this "
                       "architecture", "op")
    r = arch.simd_reg_bits
    R = arch.simd_registers_depth
    for name, v in (("left", left), ("right", right), ("dest", dest)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= R:
            raise IsaError(f"register {v!r} out of 0..{R} (simd_registers_depth = {R})", name)
    return ((int(op) << r | left) << r | right) << r | dest


def to_bytes(word: int, arch: TensilArch) -> bytes:
    """An instruction word as stored in ``.tprog`` (least significant byte first)."""
    return word.to_bytes(arch.instruction_bytes, "little")


def assemble_binary(program: list[Instruction], arch: TensilArch) -> bytes:
    """The ``.tprog`` bytes of ``program``."""
    return b"".join(to_bytes(encode(i, arch), arch) for i in program)


# ---------------------------------------------------------------- decode
def decode(word: int, arch: TensilArch) -> Instruction:
    """The instruction of ``word`` (IsaError naming the field of any illegal value)."""
    if word < 0 or word >> arch.instruction_bits:
        raise IsaError(f"word does not fit {arch.instruction_bits} bits", "word")
    n0, n1, n2 = arch.op0_bits, arch.op1_bits, arch.op2_bits
    op0 = word & ((1 << n0) - 1)
    op1 = (word >> n0) & ((1 << n1) - 1)
    op2 = (word >> (n0 + n1)) & ((1 << n2) - 1)
    flags = (word >> (n0 + n1 + n2)) & 0xF
    opcode = word >> (n0 + n1 + n2 + 4)
    a0, a1, s0, s1 = arch.op0_addr_bits, arch.op1_addr_bits, arch.stride0_bits, arch.stride1_bits

    def no_flags(mask: int = 0) -> None:
        if flags & ~mask:
            raise IsaError(f"undefined flag bits set (0b{flags:04b})", "flags")

    def zero(value: int, name: str) -> None:
        if value:
            raise IsaError(f"unused operand is not zero (0x{value:x})", name)

    if opcode == Opcode.NOOP:
        no_flags()
        zero(op0, "operand0")
        zero(op1, "operand1")
        zero(op2, "operand2")
        return NoOp()
    if opcode == Opcode.MATMUL:
        no_flags(0b11)
        la, ls = _split_addr(op0, a0, s0, "local_address")
        aa, as_ = _split_addr(op1, a1, s1, "accumulator_address")
        return MatMul(la, aa, op2 + 1, ls, as_, bool(flags & 1), bool(flags & 2))
    if opcode == Opcode.DATAMOVE:
        try:
            flow = DataFlow(flags)
        except ValueError:
            raise IsaError(f"reserved data-flow value 0x{flags:X}", "flow") from None
        la, ls = _split_addr(op0, a0, s0, "local_address")
        addr, st = _split_addr(op1, a1, s1, "address")
        return DataMove(flow, la, addr, op2 + 1, ls, st)
    if opcode == Opcode.LOADWEIGHT:
        no_flags(0b1)
        la, ls = _split_addr(op0, a0, s0, "local_address")
        zero(op2, "operand2")
        return LoadWeight(la, op1 + 1, ls, bool(flags & 1))
    if opcode == Opcode.SIMD:
        no_flags(0b111)
        if op0 >> a0:
            raise IsaError("SIMD addresses carry no stride: bits above the address are set",
                           "write_address")
        if op1 >> a1:
            raise IsaError("SIMD addresses carry no stride: bits above the address are set",
                           "read_address")
        op, left, right, dest = decode_simd(op2, arch)
        return Simd(op, left, right, dest, bool(flags & 1), bool(flags & 2), bool(flags & 4),
                    op0, op1)
    if opcode == Opcode.LOADLUT:
        no_flags()
        la, ls = _split_addr(op0, a0, s0, "local_address")
        zero(op2, "operand2")
        if op1 > arch.num_luts:
            raise IsaError(f"table {op1} out of 0..{arch.num_luts} (num_luts = {arch.num_luts})",
                           "table")
        return LoadLut(la, op1, ls)
    if opcode == Opcode.CONFIGURE:
        no_flags()
        operands = word & ((1 << (n0 + n1 + n2)) - 1)
        return Configure(operands & 0xF, operands >> 4)
    raise IsaError(f"undefined opcode 0x{opcode:X}", "opcode")


def decode_simd(op2: int, arch: TensilArch) -> tuple[SimdOp, int, int, int]:
    """(op, left, right, dest) of a SIMD operand #2."""
    r = arch.simd_reg_bits
    mask = (1 << r) - 1
    if op2 >> arch.simd_bits:
        raise IsaError("bits above the SIMD sub-instruction are set", "operand2")
    dest, right, left = op2 & mask, (op2 >> r) & mask, (op2 >> 2 * r) & mask
    op = op2 >> 3 * r
    if op >= arch.simd_num_ops:
        raise IsaError(f"undefined SIMD op 0x{op:X}", "op")
    R = arch.simd_registers_depth
    for name, v in (("left", left), ("right", right), ("dest", dest)):
        if v > R:
            raise IsaError(f"register {v} out of 0..{R} (simd_registers_depth = {R})", name)
    return SimdOp(op), left, right, dest


def words_of(binary: bytes, arch: TensilArch) -> list[int]:
    """Split ``.tprog`` bytes into instruction words (IsaError if the length is ragged)."""
    k = arch.instruction_bytes
    if len(binary) % k:
        raise IsaError(f"{len(binary)} bytes is not a whole number of {k}-byte instructions",
                       "program")
    return [int.from_bytes(binary[i:i + k], "little") for i in range(0, len(binary), k)]


# ---------------------------------------------------------------- text form
_NAMES: dict[type, str] = {NoOp: "NoOp", MatMul: "MatMul", DataMove: "DataMove",
                           LoadWeight: "LoadWeight", Simd: "SIMD", LoadLut: "LoadLUT",
                           Configure: "Configure"}


def disassemble(ins: Instruction) -> str:
    """One line of assembly: the mnemonic, then each field that differs from its default
    (flags as bare words, enums by name, numbers as ``key=value``)."""
    parts = [_NAMES[type(ins)]]
    for f in dataclasses.fields(ins):
        v = getattr(ins, f.name)
        if isinstance(v, IntEnum):
            parts.append(v.name.lower())
        elif isinstance(v, bool):
            if v:
                parts.append(f.name)
        elif f.default is dataclasses.MISSING or v != f.default:
            parts.append(f"{f.name}={v}")
    return " ".join(parts)


def describe_word(word: int, arch: TensilArch) -> str:
    """The disassembly of ``word``, or its hex digits and why it does not decode."""
    try:
        return disassemble(decode(word, arch))
    except IsaError as e:
        return f".word 0x{word:0{arch.instruction_bytes * 2}x} ; {e}"
