"""Run a compiled network on the standalone ISA machine: place the input in DRAM0 and the
constants in DRAM1, execute, read every tensor back (docs/tensil.md)."""
from __future__ import annotations

from typing import Any

import numpy as np

from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.latency import TensilTiming
from accelerators.tensil.model.machine import TensilMachine

from .compiler import Program, Var


def write_var(m: TensilMachine, v: Var, x: Any) -> None:
    """Put raw tensor ``x`` (h, w, c) into DRAM0 at ``v`` (border and padding stay zero)."""
    fmt, n = m.fmt, m.arch.array_size
    x = np.asarray(x, dtype=np.int64)
    vb = m.arch.vector_bytes
    for y in range(v.h):
        row = fmt.from_bytes(m.dram[0].read((v.addr(y, 0) - v.coff) * vb, v.w * v.px * vb)).reshape(v.w, v.px * n)
        row[:, v.coff * n:v.coff * n + v.c] = x[y]
        m.dram[0].write((v.addr(y, 0) - v.coff) * vb, fmt.to_bytes(row))


def read_var(m: TensilMachine, v: Var) -> Any:
    """Raw tensor (h, w, c) of ``v`` from DRAM0."""
    fmt, n = m.fmt, m.arch.array_size
    vb = m.arch.vector_bytes
    rows = [fmt.from_bytes(m.dram[0].read((v.addr(y, 0) - v.coff) * vb, v.w * v.px * vb)).reshape(v.w, v.px * n)
            for y in range(v.h)]
    return np.stack(rows)[:, :, v.coff * n:v.coff * n + v.c]


def run_program(prog: Program, x: Any, *, data: bool = True, timing: TensilTiming | None = None,
                keep_bursts: bool = True) -> TensilMachine:
    """A machine that has run ``prog`` on raw input ``x`` (``keep_bursts``: record the DRAM
    transfers in ``machine.bursts``)."""
    m = TensilMachine(prog.arch, timing, data=data, keep_bursts=keep_bursts)
    if data:
        m.dram[1].write(0, FixedFormat(prog.arch.width, prog.arch.frac).to_bytes(prog.consts))
    if data:
        write_var(m, prog.vars["input"], x)
    m.run(prog.instructions)
    return m
