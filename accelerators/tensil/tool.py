"""``cosim tensil dis|asm|run|compile FILE``: disassemble a ``.tprog``, assemble a text program
(with the SIMD -> DataMove hazard lint), run a program on the standalone ISA machine, or
compile a network description.

``run`` and ``compile`` hold a memory budget (an estimate checked before they start, the
resident size watched while they work) and a wall-time limit; ``run`` also a cycle and an
instruction limit (docs/tensil.md, "Tools")."""
from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.asm import AsmError, assemble, disassemble_binary, lint
from accelerators.tensil.model.boards import board_arch
from accelerators.tensil.model.isa import Instruction, IsaError, assemble_binary, decode, disassemble, words_of
from accelerators.tensil.model.machine import TensilMachine
from tlm.errors import SimulationError
from tlm.files import FileAccessError, decode_utf8, read_bytes
from tlm.params import ParameterError, resolve

from cosim.limits import BASE_BYTES, MemoryLimitExceeded, WallLimitExceeded, memory_watch, over_budget, wall_limit
from cosim.report import EXIT_OK, EXIT_SCENARIO_ERROR, EXIT_SIMULATION_ERROR
from cosim.scenario.yamlpos import load_value

if TYPE_CHECKING:
    from cosim.deploy.network import Network

#: without --max-cycles a run stops after a scenario's default ``max_time`` (1000 ms of
#: simulated time, cosim/runner.py) at the TCU's clock
DEFAULT_MAX_SECONDS = 1.0
#: what the machine keeps per instruction of a run, at most: the fetched word (a Python int and
#: its list slot), a timeout and a tracepoint event, the hazards a DataMove can record
#: (performance samples grow with cycles, not instructions: the resident-size watch holds them)
RUN_INSTRUCTION_BYTES = 640
#: what a compile keeps per weight: the seeded float64, its quantised int64, the weight blocks
#: in the constants list and their concatenated DRAM1 image (int64, N+1 vectors per N), the
#: .tdata bytes
COMPILE_WEIGHT_BYTES = 40
#: what ``asm``/``dis`` keep per instruction: measured 355-400 bytes (the text line, the
#: decoded instruction for the hazard lint, the word), rounded up
TEXT_INSTRUCTION_BYTES = 512


def _arch(args: argparse.Namespace) -> TensilArch:
    overrides: dict[str, Any] = {}
    for item in args.arch:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--arch {item!r}: expected KEY=VALUE")
        overrides[key] = load_value(value, f"--arch {key}"[:120])     # the limited loader
    if args.board:
        return board_arch(args.board, overrides)
    return resolve(TensilArch, overrides, "--arch")


def main(args: argparse.Namespace, console: Console) -> int:
    """Run ``cosim tensil ACTION FILE`` (options: accelerators/tensil/cli.py); returns the exit code."""
    err = Console(stderr=True)

    def fail(msg: str, code: int = EXIT_SCENARIO_ERROR) -> int:
        err.print(f"[red]error:[/red] {escape(msg)}", highlight=False, soft_wrap=True)
        return code

    try:
        arch = _arch(args).checked("--arch")
    except (ValueError, KeyError, ParameterError) as e:
        return fail(str(e).strip('"'))
    try:        # bounded: a regular file within the Tensil cap (/dev/zero, a FIFO: refused at once)
        binary = read_bytes(args.file, "program")
    except FileAccessError as e:
        return fail(str(e))
    doing = {"asm": "assembling", "dis": "disassembling", "run": "running", "compile": "compiling"}[args.action]
    try:
        with wall_limit(args.max_wall), memory_watch(args.max_memory):
            if args.action == "compile":
                return _compile(args, binary, arch, console, fail)
            if args.action == "run":
                return _run(args, arch, binary, fail)
            return _text(args, arch, binary, console, fail)
    except (WallLimitExceeded, MemoryLimitExceeded) as e:
        return fail(f"{args.file}: {_limit_message(args, e)} while {doing}", EXIT_SIMULATION_ERROR)


def text_items(action: str, instructions: int) -> list[tuple[str, int]]:
    """What ``asm``/``dis`` of ``instructions`` instructions allocates: each one decoded (or
    parsed), its text line and its word (measured: about 400 bytes each)."""
    what = "disassembly" if action == "dis" else "assembly"
    return [("the tool itself", BASE_BYTES), (f"the {what} of {instructions} instructions",
                                                instructions * TEXT_INSTRUCTION_BYTES)]


def _text(args: argparse.Namespace, arch: TensilArch, binary: bytes, console: Console, fail: Any) -> int:
    """``asm`` and ``dis``, after their estimate (an instruction per line, or per word)."""
    err = Console(stderr=True)
    count = binary.count(b"\n") + 1 if args.action == "asm" else -(-len(binary) // arch.instruction_bytes)
    message = over_budget(text_items(args.action, count), args.max_memory, f"`tensil {args.action}`")
    if message is not None:
        return fail(f"{args.file}: {message}; raise --max-memory")
    if args.action == "asm":
        try:
            program = assemble(decode_utf8(binary, args.file, "Tensil program"), arch, str(args.file))
        except (AsmError, FileAccessError) as e:
            return fail(str(e))
        for w in lint(program):
            err.print(f"[yellow]warning:[/yellow] {args.file}: {escape(str(w))}", highlight=False,
                      soft_wrap=True)
        if not args.out:
            return fail("asm needs --out FILE.tprog")
        args.out.write_bytes(assemble_binary(program, arch))
        console.print(f"{args.out}: {len(program)} instructions, {arch.instruction_bytes} bytes each",
                      highlight=False)
        return EXIT_OK
    try:
        lines = disassemble_binary(binary, arch)
    except IsaError as e:
        return fail(f"{args.file}: {e}")
    for line in lines:
        print(line)
    try:
        program = [decode(w, arch) for w in words_of(binary, arch)]
    except IsaError:
        return EXIT_OK
    for w in lint(program):
        err.print(f"[yellow]warning:[/yellow] {args.file}: {escape(str(w))}", highlight=False,
                  soft_wrap=True)
    return EXIT_OK


class _Limit(Exception):
    """The run reached --max-cycles or --max-instructions (after the instruction at ``pc``)."""

    def __init__(self, message: str, pc: int, ins: Instruction):
        super().__init__(f"pc {pc} [{disassemble(ins)}]: {message}")


def run_items(arch: TensilArch, instructions: int, data: bool) -> list[tuple[str, int]]:
    """What running ``instructions`` instructions on ``arch`` allocates, item by item: the
    machine's memories (DRAM banks only when it computes data: their pages are allocated
    on first touch, up to the bank) and its per-instruction records."""
    n = arch.array_size
    items = [("the simulator itself", BASE_BYTES), ("local memory", arch.local_depth * n * 8),
             ("the accumulators", arch.accumulator_depth * n * 8),
             ("the lookup tables", (arch.num_luts + 1) * arch.lut_depth_vectors * n * 8),
             (f"the program's {instructions} instructions", instructions * RUN_INSTRUCTION_BYTES)]
    if data:
        items += [("DRAM0", arch.dram0_depth * arch.vector_bytes), ("DRAM1", arch.dram1_depth * arch.vector_bytes)]
    return items


def _run(args: argparse.Namespace, arch: TensilArch, binary: bytes, fail: Any) -> int:
    from accelerators.tensil.model.latency import TensilTiming
    data = not args.timing_only
    count = -(-len(binary) // arch.instruction_bytes)
    message = over_budget(run_items(arch, count, data), args.max_memory, "the run")
    if message is not None:
        hint = "raise --max-memory" + ("" if args.timing_only else " or run --timing-only")
        return fail(f"{args.file}: {message}; {hint}")
    max_cycles = args.max_cycles if args.max_cycles is not None else round(arch.clock_hz * DEFAULT_MAX_SECONDS)
    max_instructions = args.max_instructions
    # the standalone machine keeps no DRAM bursts (only a TLM wrapper replays them)
    machine = TensilMachine(arch, TensilTiming(overlap=args.overlap), data=data, keep_bursts=False)

    def guard(pc: int, ins: Instruction, cycles: int) -> None:
        done = machine.stats
        if done.cycles > max_cycles:
            why = "--max-cycles" if args.max_cycles is not None else (
                f"the default limit ({DEFAULT_MAX_SECONDS * 1000:g} ms at {arch.clock_hz / 1e6:g} MHz; "
                "set --max-cycles)")
            raise _Limit(f"the run reached {done.cycles} cycles, over {why} of {max_cycles}", pc, ins)
        if max_instructions is not None and done.instructions >= max_instructions and pc + 1 < count:
            raise _Limit(f"--max-instructions ({max_instructions}) reached; the program has {count}", pc, ins)
    machine.on_instruction = guard
    try:
        stats = machine.run(binary)
    except SimulationError as e:
        return fail(f"{args.file}: {e}", EXIT_SIMULATION_ERROR)
    except _Limit as e:
        return fail(f"{args.file}: {e}", EXIT_SIMULATION_ERROR)
    except (WallLimitExceeded, MemoryLimitExceeded) as e:
        return fail(f"{args.file}: {_limit_message(args, e)} at pc {machine.index} after "
                    f"{machine.stats.instructions} instructions", EXIT_SIMULATION_ERROR)
    out = stats.as_dict(arch)
    out["hazards"] = len(machine.hazards)
    print(json.dumps(out, indent=1, sort_keys=True))
    return EXIT_OK


def _limit_message(args: argparse.Namespace, e: BaseException) -> str:
    if isinstance(e, WallLimitExceeded):
        return f"--max-wall ({args.max_wall:g} s) exceeded"
    return f"--max-memory: {e}"


def compile_items(net: Network, arch: TensilArch) -> list[tuple[str, int]]:
    """What compiling ``net`` allocates before its instructions, item by item: every layer's
    weights (conv and fc) on their way into the DRAM1 image."""
    items = [("the compiler itself", BASE_BYTES)]
    for ly in net.layers:
        if ly.type in ("conv3x3", "conv1x1", "conv", "fc"):
            from accelerators.tensil.deploy.compiler import kernel_of
            k = kernel_of(ly) if ly.type != "fc" else 1
            items.append((f"layer {ly.name!r} weights", ly.out * ly.in_shape[2] * k * k * COMPILE_WEIGHT_BYTES))
    return items


def load_network(text: str, file: str) -> Network:
    """The network description ``text`` (of ``file``), checked as a scenario's
    ``workload.network`` (the same schema, preset options included): a ScenarioError at the
    line and key otherwise."""
    from cosim.scenario.validate import validate_network
    from cosim.scenario.yamlpos import load
    from cosim.deploy.network import NetworkError, family_types, parse_network
    spec, lines = load(text, file)
    validate_network(spec, lines, file)
    try:
        return parse_network(spec, file, types=family_types("tensil"))
    except NetworkError as e:       # "FILE.layers[2].kernel: ..." -> at the key's line
        raise _located(str(e), file, lines) from None


def _located(message: str, file: str, lines: dict) -> Exception:
    """A ScenarioError at the line of the key path that begins ``message`` (after ``file.``)."""
    from cosim.scenario import ScenarioError
    from cosim.scenario.yamlpos import line_of
    head, sep, rest = message.partition(": ")
    if not sep or not head.startswith(file + "."):
        return ScenarioError(message.removeprefix(file + ": "), file)
    dotted = head[len(file) + 1:]
    key = tuple(int(p[1:-1]) if p.startswith("[") else p for p in re.findall(r"\[\d+\]|[^.\[\]]+", dotted))
    line = None
    while key and line is None:       # the deepest key the file has (a missing key: its mapping)
        line = line_of(lines, key)
        key = key[:-1]
    return ScenarioError(rest, file, line, dotted)


def _compile(args: argparse.Namespace, text: bytes, arch: TensilArch, console: Console, fail: Any) -> int:
    from cosim.scenario import ScenarioError
    from cosim.deploy.network import NetworkError
    from accelerators.tensil.deploy.compiler import CompileError, compile_network
    if not args.out:
        return fail("compile needs --out FOLDER")
    try:
        net = load_network(decode_utf8(text, args.file, "network description"), str(args.file))
        message = over_budget(compile_items(net, arch), args.max_memory, "the compile")
        if message is not None:
            return fail(f"{args.file}: {message}; raise --max-memory")
        prog = compile_network(net, arch)
        args.out.mkdir(parents=True, exist_ok=True)
        name = net.name
        (args.out / f"{name}.tprog").write_bytes(prog.binary())
        (args.out / f"{name}.tdata").write_bytes(prog.consts_bytes())
        (args.out / f"{name}.tmodel").write_text(prog.manifest_json(name) + "\n", encoding="utf-8")
    except (ScenarioError, FileAccessError) as e:
        return fail(str(e))
    except (NetworkError, CompileError) as e:
        return fail(f"{args.file}: {e}" if not str(e).startswith(str(args.file)) else str(e))
    console.print(f"{args.out}/{name}.tprog: {len(prog.instructions)} instructions in {prog.stages} stages; "
                  f"{name}.tdata: {prog.consts.shape[0]} vectors; {name}.tmodel", highlight=False)
    return EXIT_OK
