"""Tensil instruction layout: widths from the parameters, hand-worked encodings written
from the spec's rules (§3, §5), strict decoding and encode/decode round trips."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.isa import (
    Configure, DataFlow, DataMove, IsaError, LoadLut, LoadWeight, MatMul, NoOp, Simd, SimdOp,
    assemble_binary, decode, disassemble, encode, words_of,
)
from tlm.params import ParameterError

DOC = TensilArch()  # the documentation's example architecture (spec §1)


def test_doc_example_widths() -> None:
    # spec §3 worked example: #0 = bytes(14+3), #1 = bytes(20+3), #2 = bytes(max(12,14,14,7))
    assert (DOC.op0_bits, DOC.op1_bits, DOC.op2_bits) == (24, 24, 16)
    assert DOC.instruction_bits == 72 and DOC.instruction_bytes == 9
    assert DOC.simd_bits == 4 + 3 * 1


def test_two_byte_operand_example() -> None:
    # the docs' example: 11-bit address, 3-bit stride -> bits 15:14 padding, 13:11 stride
    arch = TensilArch(local_depth=2048, accumulator_depth=2048)
    assert arch.op0_bits == 16
    w = encode(MatMul(local_address=0x7FF, accumulator_address=0, local_stride=128), arch)
    assert w & 0xFFFF == 0b0011_1111_1111_1111
    w = encode(MatMul(local_address=0x001, accumulator_address=0, local_stride=2), arch)
    assert w & 0xFFFF == (0b001 << 11) | 1


def test_matmul_hand_encoding() -> None:
    ins = MatMul(local_address=5, accumulator_address=7, size=3, local_stride=2,
                 accumulator_stride=4, accumulate=True)
    # opcode 71:68, flags 67:64 (Accumulate = bit 0), op#2 63:48 = size-1,
    # op#1 47:24 = stride code 46:44 | address 43:24, op#0 23:0 = stride 16:14 | address 13:0
    expect = (0x1 << 68) | (0b0001 << 64) | (2 << 48) | (((2 << 20) | 7) << 24) | ((1 << 14) | 5)
    assert encode(ins, DOC) == expect
    zeroes = MatMul(local_address=0, accumulator_address=0, zeroes=True)
    assert encode(zeroes, DOC) == (0x1 << 68) | (0b0010 << 64)


@pytest.mark.parametrize("flow,code", [
    (DataFlow.DRAM0_TO_LOCAL, 0x0), (DataFlow.LOCAL_TO_DRAM0, 0x1), (DataFlow.DRAM1_TO_LOCAL, 0x2),
    (DataFlow.LOCAL_TO_DRAM1, 0x3), (DataFlow.ACC_TO_LOCAL, 0xC), (DataFlow.LOCAL_TO_ACC, 0xD),
    (DataFlow.LOCAL_TO_ACC_ADD, 0xF)])
def test_datamove_flow_in_flags(flow: DataFlow, code: int) -> None:
    ins = DataMove(flow, local_address=9, address=0xABCDE, size=256, stride=8)
    expect = (0x2 << 68) | (code << 64) | (255 << 48) | (((3 << 20) | 0xABCDE) << 24) | 9
    assert encode(ins, DOC) == expect
    assert decode(expect, DOC) == ins


def test_loadweight_size_in_operand1() -> None:
    ins = LoadWeight(local_address=3, size=9, zeroes=True)
    assert encode(ins, DOC) == (0x3 << 68) | (1 << 64) | (8 << 24) | 3


def test_simd_hand_encoding() -> None:
    # R = 1: op 4 bits, left/right/dest 1 bit each, right-aligned: op | left | right | dest
    ins = Simd(SimdOp.MAX, left=0, right=1, dest=1, read=True, write=True,
               write_address=40, read_address=41)
    sub = (0xF << 3) | (0 << 2) | (1 << 1) | 1
    assert encode(ins, DOC) == (0x4 << 68) | (0b011 << 64) | (sub << 48) | (41 << 24) | 40
    # R = 4: 3 bits per register field; 16 ops -> 4-bit op
    arch = TensilArch(simd_registers_depth=4)
    ins = Simd(SimdOp.ADD, left=3, right=4, dest=2, accumulate=True)
    assert encode(ins, arch) >> 48 == (0x4 << 20) | (0b100 << 16) | (0x8 << 9) | (3 << 6) | (4 << 3) | 2


def test_lookup_needs_luts() -> None:
    with pytest.raises(IsaError) as e:
        encode(Simd(SimdOp.LOOKUP), DOC)
    assert e.value.field == "op"
    arch = TensilArch(num_luts=1)
    assert arch.simd_op_bits == 5
    assert decode(encode(Simd(SimdOp.LOOKUP, dest=1), arch), arch) == Simd(SimdOp.LOOKUP, dest=1)


def test_configure_layout_and_loadlut() -> None:
    w = encode(Configure(0xB, 100), DOC)
    assert w == (0xF << 68) | (100 << 4) | 0xB
    assert assemble_binary([Configure(0xB, 100)], DOC) == bytes([0x4B, 0x06] + [0] * 6 + [0xF0])
    arch = TensilArch(num_luts=2, simd_registers_depth=2)
    assert encode(LoadLut(local_address=6, table=2, local_stride=4), arch) == \
        (0x5 << 68) | (2 << 24) | (2 << 14) | 6


@pytest.mark.parametrize("word,field", [
    (0x6 << 68, "opcode"), (0xE << 68, "opcode"),
    ((0x2 << 68) | (0x4 << 64), "flow"), ((0x2 << 68) | (0xB << 64), "flow"),
    ((0x2 << 68) | (0xE << 64), "flow"),
    ((0x4 << 68) | (1 << 14), "write_address"), ((0x4 << 68) | (1 << 44), "read_address"),
    ((0x1 << 68) | (1 << 17), "local_address"), ((0x1 << 68) | (1 << 66), "flags"),
    ((0x0 << 68) | 1, "operand0"), ((0x4 << 68) | (1 << 55), "operand2"),
    ((0x5 << 68) | (1 << 24), "table"),
])
def test_decode_rejects_with_field(word: int, field: str) -> None:
    with pytest.raises(IsaError) as e:
        decode(word, DOC)
    assert e.value.field == field


@pytest.mark.parametrize("ins,field", [
    (MatMul(0, 0, local_stride=3), "local_stride"), (MatMul(0, 0, local_stride=256), "local_stride"),
    (MatMul(1 << 14, 0), "local_address"), (MatMul(0, 0, size=0), "size"),
    (MatMul(0, 0, size=(1 << 16) + 1), "size"), (Simd(SimdOp.ADD, left=2), "left"),
    (Configure(16, 0), "register"), (DataMove(DataFlow.ACC_TO_LOCAL, 0, 1 << 20), "address"),
])
def test_encode_rejects_with_field(ins: object, field: str) -> None:
    with pytest.raises(IsaError) as e:
        encode(ins, DOC)  # type: ignore[arg-type]
    assert e.value.field == field


def test_arch_bounds_and_rules() -> None:
    with pytest.raises(ParameterError):
        TensilArch(stride0_depth=6).checked()
    with pytest.raises(ParameterError):
        TensilArch(array_size=300).checked()
    assert TensilArch(array_size=256).checked().vector_bytes == 512


# ---------------------------------------------------------------- round trips
archs = st.builds(
    TensilArch,
    data_type=st.sampled_from(["FP16BP8", "FP32B16"]), array_size=st.integers(2, 32),
    dram0_depth=st.integers(2, 1 << 32), dram1_depth=st.integers(2, 1 << 32),
    local_depth=st.integers(2, 1 << 16), accumulator_depth=st.integers(2, 1 << 16),
    simd_registers_depth=st.integers(0, 16),
    stride0_depth=st.sampled_from([1, 2, 4, 8, 16]), stride1_depth=st.sampled_from([1, 2, 4, 8, 16]),
    num_luts=st.integers(0, 2)).filter(lambda a: a.num_luts <= a.simd_registers_depth)


def instructions(arch: TensilArch) -> st.SearchStrategy:
    a0, a1 = arch.op0_addr_bits, arch.op1_addr_bits
    addr0, addr1 = st.integers(0, (1 << a0) - 1), st.integers(0, (1 << a1) - 1)
    s0 = st.integers(0, arch.stride0_depth - 1).map(lambda k: 1 << k)
    s1 = st.integers(0, arch.stride1_depth - 1).map(lambda k: 1 << k)
    size2 = st.integers(1, 1 << arch.op2_bits)
    regs = st.integers(0, arch.simd_registers_depth)
    ops = st.sampled_from([op for op in SimdOp if op < arch.simd_num_ops])
    return st.one_of(
        st.just(NoOp()),
        st.builds(MatMul, addr0, addr1, size2, s0, s1, st.booleans(), st.booleans()),
        st.builds(DataMove, st.sampled_from(list(DataFlow)), addr0, addr1, size2, s0, s1),
        st.builds(LoadWeight, addr0, st.integers(1, 1 << arch.op1_bits), s0, st.booleans()),
        st.builds(Simd, ops, regs, regs, regs, st.booleans(), st.booleans(), st.booleans(),
                  addr0, addr1),
        st.builds(LoadLut, addr0, st.integers(0, arch.num_luts), s0),
        st.builds(Configure, st.integers(0, 15),
                  st.integers(0, (1 << (arch.instruction_bits - 12)) - 1)),
    )


def round_trip_instruction(data: st.DataObject) -> None:
    arch = data.draw(archs)
    ins = data.draw(instructions(arch))
    word = encode(ins, arch)
    assert word >> arch.instruction_bits == 0
    assert decode(word, arch) == ins
    assert words_of(assemble_binary([ins, ins], arch), arch) == [word, word]
    assert disassemble(ins).split()[0] in {"NoOp", "MatMul", "DataMove", "LoadWeight", "SIMD",
                                            "LoadLUT", "Configure"}


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_round_trip_instruction(data: st.DataObject) -> None:
    round_trip_instruction(data)


@pytest.mark.slow(reason="the same round trip on 100 examples: test_round_trip_instruction")
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_round_trip_instruction_at_length(data: st.DataObject) -> None:
    round_trip_instruction(data)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_round_trip_word(data: st.DataObject) -> None:
    arch = data.draw(archs)
    word = data.draw(st.integers(0, (1 << arch.instruction_bits) - 1))
    try:
        ins = decode(word, arch)
    except IsaError:
        return
    assert encode(ins, arch) == word
