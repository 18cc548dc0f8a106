"""A network on the ``tensil`` platform (docs/tensil.md): ``network: {onnx: model.onnx}``
(a float model imported by :mod:`.onnx_float`) or a preset / layer list in our network
description (the Tensil layer types allowed; seeded weights), compiled for the platform's
TCU (its ``soc.tcu.*`` architecture) and deployed as loads and one register task; the
outputs are checked bit for bit against the numpy fixed-point reference. With
``soc.tcu.data: false`` (timing-only) only the program is loaded and nothing is checked.

DRAM0 holds the variables from its start, then the program (4 KiB aligned); DRAM1 the
constants. The input is drawn from the scenario's seed, uniform in [0, 1).
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from accelerators.tensil.model.fixed import FixedFormat

from cosim.deploy.mapping import Deployment

if TYPE_CHECKING:
    from cosim.scenario import Scenario

from accelerators.tensil.model.accelerator import MAP as _TCU_MAP

#: TCU register offsets, from its register map (accelerators/tensil/model/registers.yaml)
PROG_ADDR, PROG_COUNT, DRAM0_BASE, DRAM1_BASE, START, STATUS, CYCLES_LO, CYCLES_HI = (
    _TCU_MAP.offset(n) for n in ("PROG_ADDR", "PROG_COUNT", "DRAM0_BASE", "DRAM1_BASE", "START", "STATUS",
                                 "CYCLES_LO", "CYCLES_HI"))


@dataclass
class TensilDeployment(Deployment):
    """A deployment on the TCU; ``tensil``: the program's statistics (instructions by
    opcode, MatMul vectors, DRAM bytes: a program without branches executes each of its
    instructions once) and the clock the latency is quoted at (the board's)."""

    tensil: dict[str, Any] = field(default_factory=dict)

    def layer_table(self, records: Any) -> dict[str, Any] | None:
        """The program's summary in place of the per-layer table (cosim/deploy/report.py)."""
        return summary_table(records, self) if self.tensil else None


def program_stats(prog: Any) -> dict[str, Any]:
    """Instructions by opcode, MatMul vectors and DRAM bytes by bank and direction of
    ``prog`` (what a run executes)."""
    from accelerators.tensil.model.isa import DataMove, MatMul
    from accelerators.tensil.model.latency import DRAM_FLOWS
    from accelerators.tensil.model.machine import _NAMES
    ops: Counter = Counter()
    dram: Counter = Counter()
    vectors = 0
    vb = prog.arch.vector_bytes
    for ins in prog.instructions:
        ops[_NAMES[type(ins)]] += 1
        if isinstance(ins, MatMul):
            vectors += ins.size
        elif isinstance(ins, DataMove) and ins.flow in DRAM_FLOWS:
            write = ins.flow.name.startswith("LOCAL")
            dram[f"dram{DRAM_FLOWS[ins.flow]}_{'write' if write else 'read'}"] += ins.size * vb
    return {"by_opcode": dict(sorted(ops.items())), "matmul_vectors": vectors,
            "dram_bytes": dict(sorted(dram.items())), "instructions": len(prog.instructions)}


def var_image(v: Any, x: np.ndarray, n: int) -> np.ndarray:
    """The (vectors, n) DRAM0 image of variable ``v`` holding ``x`` (H, W, C), zero border
    and zero padding lanes."""
    image = np.zeros((v.size, n), dtype=np.int64)
    for y in range(v.h):
        for xx in range(v.w):
            a = v.addr(y, xx) - v.base
            image[a:a + v.cb].reshape(-1)[:v.c] = x[y, xx]
    return image


def tcu_arch(sc: "Scenario") -> Any:
    """The architecture of the scenario's TCU (``soc.tcu.*`` after the overrides)."""
    from accelerators.tensil.model.accelerator import TensilParams

    from cosim.platforms import resolved_parameters
    names = {f.name for f in dataclasses.fields(TensilParams)}
    return TensilParams(**{k: v for k, v in resolved_parameters(sc)["soc.tcu"].items() if k in names}).arch()


def tcu_grow(sc: "Scenario") -> bool:
    """Whether the scenario lets the DRAM banks grow (``soc.tcu.grow_dram``)."""
    from cosim.platforms import resolved_parameters
    return bool(resolved_parameters(sc)["soc.tcu"].get("grow_dram", False))


def tcu_data(sc: "Scenario") -> bool:
    """Whether the scenario's TCU computes data (``soc.tcu.data``)."""
    from cosim.platforms import resolved_parameters
    return bool(resolved_parameters(sc)["soc.tcu"].get("data", True))


def deploy_onnx(sc: "Scenario", path: str, label: str, input_shape: list[int] | None) -> Deployment:
    from .compiler import compile_network
    from .onnx_float import import_float, to_raw
    arch = tcu_arch(sc)
    imp = import_float(path, arch, input_shape, label=label)
    prog = compile_network(imp.net, arch, params=imp.params, grow_dram=True)
    x = np.random.default_rng(sc.seed).uniform(0, 1, imp.input_nchw)
    return _deploy(sc, prog, to_raw(x, FixedFormat(arch.width, arch.frac)))


def deploy_network(sc: "Scenario", spec: dict[str, Any]) -> Deployment:
    """A preset or layer list (``workload.network``) on the scenario's TCU, seeded weights;
    the input uniform in [0, 1) from the seed (ValueError naming what does not fit)."""
    from cosim.deploy.network import family_types, parse_network
    from .compiler import compile_network, plan_vars
    arch = tcu_arch(sc)
    net = parse_network(spec, "workload.network", types=family_types("tensil"))
    # the variables alone may not fit DRAM0: say so before compiling (minutes at full size)
    if not tcu_grow(sc):
        _check_fit(sc, arch, net.name, (plan_vars(net, arch.array_size)[1] * arch.vector_bytes, 0),
                   "the variables")
    data = tcu_data(sc)
    # sized with grown banks where they do not fit: _deploy names the bank and the bytes
    prog = compile_network(net, arch, seed=sc.seed, data=data, grow_dram=True)
    x = None
    if data:
        x = FixedFormat(arch.width, arch.frac).from_float(
            np.random.default_rng(sc.seed + 1).uniform(0, 1, net.input_shape))
    return _deploy(sc, prog, x)


def _deploy(sc: "Scenario", prog: Any, raw: np.ndarray | None) -> Deployment:
    """Loads (input, program after the variables 4 KiB aligned, constants), the register
    task, and the goldens of every output (none in timing-only mode, ``raw`` None)."""
    from cosim.platforms import memory_map_of
    from .reference import network as reference
    arch, net = tcu_arch(sc), prog.net
    n, vb = arch.array_size, arch.vector_bytes
    fmt = FixedFormat(arch.width, arch.frac)
    mm = memory_map_of(sc)
    d0, d1, tcu = mm["dram0"].base, mm["dram1"].base, mm["tcu"].base
    binary = prog.binary()
    prog_at = d0 + -(-prog.dram0_vectors * vb // 4096) * 4096
    need = (prog_at - d0 + len(binary), prog.dram1_vectors * vb)
    if tcu_grow(sc):
        from accelerators.tensil.model.isa import assemble_binary
        for _ in range(8):   # a wider instruction makes the program longer: grow until it fits
            grown = _grow(arch, net.name, need)
            if grown == arch:
                break
            arch, binary = grown, assemble_binary(prog.instructions, grown)
            need = (prog_at - d0 + len(binary), need[1])
        for key in ("dram0_depth", "dram1_depth"):   # the platform builds this TCU and these banks
            sc.overrides[f"soc.tcu.{key}"] = getattr(arch, key)
    _check_fit(sc, arch, net.name, need)
    loads = [("soc", prog_at, binary)]
    goldens: dict[str, tuple[int, bytes]] = {}
    vals: dict[str, Any] = {}
    if raw is not None:
        vals = reference(net, prog.params, raw, n, arch.width, arch.frac)
        loads += [("soc", d0 + prog.vars["input"].base * vb, fmt.to_bytes(var_image(prog.vars["input"], raw, n))),
                  ("soc", d1, prog.consts_bytes())]
        for o in prog.manifest(net.name)["outputs"]:
            v = prog.vars[o["name"]]
            image = var_image(v, vals[o["name"]].reshape(v.h, v.w, -1), n)
            goldens[o["name"]] = (d0 + v.base * vb, fmt.to_bytes(image))
    count = len(binary) // arch.instruction_bytes
    tasks = [{"id": "tensil_run", "op": "mmio", "accesses": [
        {"write": tcu + PROG_ADDR, "value": prog_at}, {"write": tcu + PROG_COUNT, "value": count},
        {"write": tcu + DRAM0_BASE, "value": d0}, {"write": tcu + DRAM1_BASE, "value": d1},
        {"write": tcu + START, "value": 1}, {"wait_irq": "tcu_done"},
        # busy and error clear (bit 2, the decoder-timeout flag, is set by any
        # instruction longer than the timeout register's 100 cycles: a long DataMove)
        {"read": tcu + STATUS, "mask": 3, "until": 0},
        {"read": tcu + CYCLES_LO, "as": "cycles_lo"}, {"read": tcu + CYCLES_HI, "as": "cycles_hi"}]}]
    stats = program_stats(prog)
    board = tcu_board(sc)
    stats.update(board=board or "(none)", clock_hz=_board_clock(board), data=raw is not None,
                 array=f"{n}x{n} {arch.data_type}")
    return TensilDeployment(network=net, params=prog.params, tensors={}, tasks=tasks, loads=loads,
                            goldens=goldens, outputs={k: np.asarray(v) for k, v in vals.items()},
                            tensil=stats)


def _check_fit(sc: "Scenario", arch: Any, name: str, need: tuple[int, int],
               dram0_what: str = "the variables and the program") -> None:
    """DRAM0 (variables, then the program 4 KiB aligned) and DRAM1 (constants) must fit the
    TCU's banks (its depths x vector bytes): a ValueError naming the board, the bank, the
    bytes needed and the depth otherwise."""
    board = tcu_board(sc)
    who = f"the {board} TCU" if board else "this TCU"
    for bank, n, what in (("DRAM0", need[0], dram0_what),
                          ("DRAM1", need[1], "the constants")):
        depth = getattr(arch, f"{bank.lower()}_depth")
        if n > depth * arch.vector_bytes:
            raise ValueError(f"{name} on {who}: {what} take {n} bytes ({-(-n // arch.vector_bytes)} vectors), "
                             f"more than its {bank} of {depth} vectors x {arch.vector_bytes} bytes "
                             f"({depth * arch.vector_bytes} bytes); a smaller input or width "
                             "(workload.network.options), a board with deeper DRAM (soc.tcu.board) or "
                             f"a larger soc.tcu.{bank.lower()}_depth fits")


def _grow(arch: Any, name: str, need: tuple[int, int]) -> Any:
    """``soc.tcu.grow_dram``: ``arch`` with each bank too small for ``need`` (bytes) grown
    to the next power of two of vectors; beyond the platform's window a ValueError naming
    the bank."""
    from ..platform import window
    grown = {}
    for bank, n in (("dram0", need[0]), ("dram1", need[1])):
        vectors = -(-n // arch.vector_bytes)
        if vectors > getattr(arch, f"{bank}_depth"):
            depth = 1 << max(1, (vectors - 1).bit_length())
            if depth * arch.vector_bytes > window(bank):
                raise ValueError(f"{name}: {bank.upper()} grown to {depth} vectors x {arch.vector_bytes} "
                                 f"bytes is more than the tensil platform's {window(bank)}-byte window")
            grown[f"{bank}_depth"] = depth
    return dataclasses.replace(arch, **grown).checked() if grown else arch


def tcu_board(sc: "Scenario") -> str:
    from cosim.platforms import resolved_parameters
    return str(resolved_parameters(sc)["soc.tcu"].get("board") or "")


def _board_clock(board: str) -> float:
    """The board's TCU clock (Tensil quotes latency at it); no board: the platform's 150 MHz."""
    from accelerators.tensil.model.boards import board as board_entry
    from tlm.units import parse_frequency
    return float(parse_frequency(board_entry(board)["arch"]["clock_hz"])) if board else 150e6


def summary_table(records: Any, dep: TensilDeployment) -> dict[str, Any]:
    """The report's table for a TCU run: latency and frames/s at the board's clock (the
    cycles the TCU counted), array utilisation, instructions by opcode, DRAM bytes."""
    st = dep.tensil
    rec = (records or {}).get("tensil_run")
    reads = (rec.detail.get("reads") or []) if rec is not None else []
    cycles = int(reads[-2], 16) | int(reads[-1], 16) << 32 if len(reads) >= 2 else 0
    ms = cycles / st["clock_hz"] * 1e3
    mhz = f"{st['clock_hz'] / 1e6:g} MHz"
    rows = [["network", f"{dep.network.name}, input {'x'.join(str(d) for d in dep.network.input_shape)}"],
            ["board", f"{st['board']} ({st['array']}, {mhz})"],
            ["mode", "data (bit-exact check)" if st["data"] else "timing-only"],
            ["TCU cycles", f"{cycles:,}"], [f"latency at {mhz} (board)", f"{ms:.3f} ms"],
            [f"frames/s at {mhz} (board)", f"{1e3 / ms:.1f}" if cycles else "-"],
            ["MAC utilisation", f"{st['matmul_vectors'] / cycles:.1%}" if cycles else "-"],
            ["instructions", f"{st['instructions']:,}: " + ", ".join(f"{k} {v:,}" for k, v in st["by_opcode"].items())],
            ["DRAM bytes", ", ".join(f"{k} {v:,}" for k, v in st["dram_bytes"].items())]]
    return {"cycles": cycles, "latency_ms": ms, "frames_per_s": 1e3 / ms if cycles else 0.0,
            "array_utilisation": st["matmul_vectors"] / cycles if cycles else 0.0, **st,
            "table": {"columns": ["tensil", "value"], "rows": rows,
                      "caption": "latency and frames/s: the cycles the TCU counted at the board's clock, "
                                 "as Tensil quotes them; the header's simulated time runs the run on the "
                                 "platform's clocks (the tensil platform's TCU: 150 MHz whatever the board), "
                                 "so the two differ when the board's clock does. MAC utilisation: MatMul "
                                 "vectors / TCU cycles (the array busy with a MatMul); busy (components): "
                                 "the share of the run the TCU had a job (docs/tensil.md, \"Scenarios\")"}}
