"""Tensil assembly text: assembler, disassembler and the SIMD -> DataMove hazard lint.

One instruction per line, in the form :func:`accelerators.tensil.model.isa.disassemble` prints::

    DataMove dram1_to_local local_address=0 address=16 size=9
    LoadWeight local_address=0 size=9
    MatMul local_address=64 accumulator_address=0 size=32 accumulate
    SIMD max left=0 right=1 read write read_address=3 write_address=3
    NoOp                      ; comments start with ';' or '#'

The mnemonic comes first; flags are bare words; enums (data flow, SIMD op) are bare
words by name; numbers are ``key=value`` (decimal or 0x hex). Sizes count vectors and
strides are strides (1, 2, 4, ...), as in the instruction objects.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import Sequence

from .arch import TensilArch
from .isa import (
    Configure, DataFlow, DataMove, Instruction, IsaError, LoadLut, LoadWeight, MatMul, NoOp, Simd,
    SimdOp, assemble_binary, describe_word, disassemble, encode, words_of,
)

MNEMONICS: dict[str, type] = {"noop": NoOp, "matmul": MatMul, "datamove": DataMove,
                              "loadweight": LoadWeight, "simd": Simd, "loadlut": LoadLut,
                              "configure": Configure}
ENUMS: dict[str, type[IntEnum]] = {"flow": DataFlow, "op": SimdOp}


class AsmError(ValueError):
    """A line that does not assemble (``line`` is 1-based)."""

    def __init__(self, message: str, line: int, source: str = "<asm>"):
        super().__init__(f"{source}:{line}: {message}")
        self.line = line


def parse_line(text: str, line: int = 1, source: str = "<asm>") -> Instruction | None:
    """The instruction on one line (None for a blank or comment line)."""
    body = text.split(";", 1)[0].split("#", 1)[0].strip()
    if not body:
        return None
    tokens = body.split()
    cls = MNEMONICS.get(tokens[0].lower())
    if cls is None:
        raise AsmError(f"unknown mnemonic {tokens[0]!r} (known: NoOp, MatMul, DataMove, "
                       "LoadWeight, SIMD, LoadLUT, Configure)", line, source)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, object] = {}
    for tok in tokens[1:]:
        if "=" in tok:
            key, _, raw = tok.partition("=")
            f = fields.get(key)
            if f is None or key in ENUMS or f.type in ("bool", bool):
                raise AsmError(f"{tokens[0]} has no numeric field {key!r}", line, source)
            try:
                values[key] = int(raw, 0)
            except ValueError:
                raise AsmError(f"{key}={raw!r} is not a number", line, source) from None
            continue
        if tok in fields and fields[tok].type in ("bool", bool):
            values[tok] = True
            continue
        key = next((k for k in ENUMS if k in fields), None)
        try:
            if key is None:
                raise KeyError(tok)
            values[key] = ENUMS[key][tok.upper()]
        except KeyError:
            raise AsmError(f"{tok!r} is neither a flag nor a value of {tokens[0]}", line,
                           source) from None
    missing = [n for n, f in fields.items() if n not in values
               and f.default is dataclasses.MISSING]
    if missing:
        raise AsmError(f"{tokens[0]} needs {', '.join(missing)}", line, source)
    return cls(**values)  # type: ignore[no-any-return]


def assemble(text: str, arch: TensilArch, source: str = "<asm>") -> list[Instruction]:
    """The instructions of assembly ``text``, each checked against ``arch``'s layout."""
    out: list[Instruction] = []
    for n, raw in enumerate(text.splitlines(), 1):
        ins = parse_line(raw, n, source)
        if ins is None:
            continue
        try:
            encode(ins, arch)
        except IsaError as e:
            raise AsmError(str(e), n, source) from None
        out.append(ins)
    return out


def assemble_to_binary(text: str, arch: TensilArch, source: str = "<asm>") -> bytes:
    """``.tprog`` bytes of assembly ``text``."""
    return assemble_binary(assemble(text, arch, source), arch)


def disassemble_binary(binary: bytes, arch: TensilArch) -> list[str]:
    """One line per instruction word of ``.tprog`` bytes (undecodable words as ``.word``
    lines naming the problem); a ragged tail is an IsaError."""
    return [describe_word(w, arch) for w in words_of(binary, arch)]


def disassemble_program(program: Sequence[Instruction]) -> str:
    return "".join(disassemble(i) + "\n" for i in program)


@dataclass(frozen=True)
class LintWarning:
    """A DataMove at ``pc`` reading accumulator ``address`` only ``pc - simd_pc``
    instructions after the SIMD write at ``simd_pc``."""

    pc: int
    simd_pc: int
    address: int

    def __str__(self) -> str:
        return (f"pc {self.pc}: DataMove reads accumulator {self.address} "
                f"{self.pc - self.simd_pc} instruction(s) after the SIMD write at pc "
                f"{self.simd_pc}: insert NoOps (the result lands about 2 instructions later)")


def lint(program: Sequence[Instruction], hazard: int = 2) -> list[LintWarning]:
    """Every accumulator-reading DataMove within ``hazard`` instructions of a SIMD write to
    one of the addresses it reads (spec §6)."""
    out: list[LintWarning] = []
    recent: list[tuple[int, int]] = []  # (pc, write address) of SIMD writes
    for pc, ins in enumerate(program):
        recent = [r for r in recent if pc - r[0] <= hazard]
        if isinstance(ins, DataMove) and ins.flow == DataFlow.ACC_TO_LOCAL:
            for simd_pc, a in recent:
                if a >= ins.address and (a - ins.address) % ins.stride == 0 \
                        and (a - ins.address) // ins.stride < ins.size:
                    out.append(LintWarning(pc, simd_pc, a))
        if isinstance(ins, Simd) and ins.write:
            recent.append((pc, ins.write_address))
    return out
