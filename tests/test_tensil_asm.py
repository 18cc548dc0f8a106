"""Tensil assembly text, the hazard lint and ``cosim tensil dis|asm|run``."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tensil_isa import archs, instructions

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.asm import AsmError, assemble, disassemble_binary, lint, parse_line
from accelerators.tensil.model.isa import (
    DataFlow, DataMove, MatMul, NoOp, Simd, SimdOp, assemble_binary, disassemble, encode,
)
from cosim.cli import main

ARCH = TensilArch()


def text_round_trip(data: st.DataObject) -> None:
    arch = data.draw(archs)
    prog = data.draw(st.lists(instructions(arch), min_size=1, max_size=6))
    text = "\n".join(disassemble(i) for i in prog)
    assert assemble(text, arch) == prog
    assert disassemble_binary(assemble_binary(prog, arch), arch) == text.splitlines()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_text_round_trip(data: st.DataObject) -> None:
    text_round_trip(data)


@pytest.mark.slow(reason="the same round trip on 60 examples: test_text_round_trip")
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_text_round_trip_at_length(data: st.DataObject) -> None:
    text_round_trip(data)


def test_parse_written_by_hand() -> None:
    text = """
    ; conv tap
    MatMul local_address=0x10 accumulator_address=3 size=4 local_stride=2 accumulate  # comment
    datamove acc_to_local local_address=1 address=2
    SIMD max right=1 read write read_address=7 write_address=7
    NoOp
    """
    prog = assemble(text, ARCH)
    assert prog == [MatMul(16, 3, 4, 2, 1, True, False), DataMove(DataFlow.ACC_TO_LOCAL, 1, 2),
                    Simd(SimdOp.MAX, 0, 1, 0, True, True, False, 7, 7), NoOp()]


@pytest.mark.parametrize("text,line,what", [
    ("NoOp\nJump 3", 2, "unknown mnemonic"), ("MatMul local_address=1", 1, "needs accumulator_address"),
    ("MatMul local_address=x accumulator_address=0", 1, "not a number"),
    ("SIMD maxx", 1, "neither a flag"), ("NoOp\n\nMatMul local_address=0 accumulator_address=0 local_stride=3",
                                         3, "power of two"),
    ("DataMove dram0_to_local local_address=0 address=0 flow=1", 1, "no numeric field"),
])
def test_assembler_errors_name_the_line(text: str, line: int, what: str) -> None:
    with pytest.raises(AsmError) as e:
        assemble(text, ARCH, "prog.asm")
    assert e.value.line == line and what in str(e.value) and f"prog.asm:{line}:" in str(e.value)


def test_lint_flags_exactly_the_hazard_window() -> None:
    w = Simd(SimdOp.MOVE, read=True, write=True, read_address=9, write_address=9)
    dm = DataMove(DataFlow.ACC_TO_LOCAL, 0, 8, size=2)          # reads 8, 9
    far = DataMove(DataFlow.ACC_TO_LOCAL, 0, 10, size=2)        # reads 10, 11: no overlap
    strided = DataMove(DataFlow.ACC_TO_LOCAL, 0, 7, size=3, stride=2)  # reads 7, 9, 11
    assert [(x.pc, x.simd_pc, x.address) for x in lint([w, dm])] == [(1, 0, 9)]
    assert [(x.pc, x.simd_pc) for x in lint([w, NoOp(), dm])] == [(2, 0)]
    assert lint([w, NoOp(), NoOp(), dm]) == []
    assert lint([w, far]) == [] and len(lint([w, strided])) == 1
    assert lint([Simd(SimdOp.MOVE, read=True, read_address=9), dm]) == []  # no Write flag
    assert lint([w, dm], hazard=0) == []


def test_cli_asm_dis_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "p.asm"
    src.write_text("SIMD zero dest=1\nSIMD increment read write\nDataMove acc_to_local local_address=0 address=0\n"
                   "DataMove local_to_dram0 local_address=0 address=4\n")
    out = tmp_path / "p.tprog"
    assert main(["tensil", "asm", str(src), "-o", str(out), "--board", "pynq_z1"]) == 0
    arch_bytes = 8  # pynq_z1: 8 + 16 + 24 + 16 bits
    assert len(out.read_bytes()) == 4 * arch_bytes
    err = capsys.readouterr().err
    assert "pc 2" in err and "SIMD write at pc 1" in err
    assert main(["tensil", "dis", str(out), "--board", "pynq_z1"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[1] == "SIMD increment read write"
    assert main(["tensil", "run", str(out), "--board", "pynq_z1"]) == 0
    assert '"hazards": 1' in capsys.readouterr().out
    assert main(["tensil", "run", str(out), "--board", "pynq_z1", "--timing-only", "--overlap"]) == 0
    assert '"cycles": 4' in capsys.readouterr().out
    # errors: unknown board, bad assembly line, ragged binary -> exit 2
    assert main(["tensil", "dis", str(out), "--board", "nope"]) == 2
    src.write_text("NoOp\nMatMul\n")
    assert main(["tensil", "asm", str(src), "-o", str(out)]) == 2
    assert "p.asm:2:" in capsys.readouterr().err
    (tmp_path / "r.tprog").write_bytes(b"\x00" * 10)
    assert main(["tensil", "dis", str(tmp_path / "r.tprog")]) == 2
    bad = tmp_path / "bad.tprog"
    bad.write_bytes(encode(NoOp(), ARCH).to_bytes(9, "little") + (0x7 << 68).to_bytes(9, "little"))
    assert main(["tensil", "dis", str(bad)]) == 0
    assert "undefined opcode 0x7" in capsys.readouterr().out
    assert main(["tensil", "run", str(bad)]) == 3
    assert "pc 1" in capsys.readouterr().err


def test_parse_blank_and_comment() -> None:
    assert parse_line("   ; only a comment") is None and parse_line("") is None
