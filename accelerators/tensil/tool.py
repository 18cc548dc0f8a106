"""``cosim tensil dis|asm|run FILE``: disassemble a ``.tprog``, assemble a text program (with
the SIMD -> DataMove hazard lint), or run a program on the standalone ISA machine."""
from __future__ import annotations

import argparse
import json
from typing import Any

import yaml
from rich.console import Console
from rich.markup import escape

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.asm import AsmError, assemble, disassemble_binary, lint
from accelerators.tensil.model.boards import board_arch
from accelerators.tensil.model.isa import IsaError, assemble_binary, decode, words_of
from accelerators.tensil.model.machine import TensilMachine
from tlm.errors import SimulationError
from tlm.params import resolve

from cosim.report import EXIT_OK, EXIT_SCENARIO_ERROR, EXIT_SIMULATION_ERROR


def _arch(args: argparse.Namespace) -> TensilArch:
    overrides: dict[str, Any] = {}
    for item in args.arch:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--arch {item!r}: expected KEY=VALUE")
        overrides[key] = yaml.safe_load(value)
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
        arch = _arch(args)
    except (ValueError, KeyError) as e:
        return fail(str(e).strip('"'))
    if not args.file.is_file():
        return fail(f"{args.file}: no such file")
    if args.action == "asm":
        try:
            program = assemble(args.file.read_text(encoding="utf-8"), arch, str(args.file))
        except AsmError as e:
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
    if args.action == "compile":
        return _compile(args, arch, console, fail)
    binary = args.file.read_bytes()
    if args.action == "dis":
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
    from accelerators.tensil.model.latency import TensilTiming
    machine = TensilMachine(arch, TensilTiming(overlap=args.overlap), data=not args.timing_only)
    try:
        stats = machine.run(binary)
    except SimulationError as e:
        return fail(f"{args.file}: {e}", EXIT_SIMULATION_ERROR)
    out = stats.as_dict(arch)
    out["hazards"] = len(machine.hazards)
    print(json.dumps(out, indent=1, sort_keys=True))
    return EXIT_OK


def _compile(args: argparse.Namespace, arch: TensilArch, console: Console, fail: Any) -> int:
    from cosim.deploy.network import NetworkError, family_types, parse_network
    from .deploy.compiler import CompileError, compile_network
    if not args.out:
        return fail("compile needs --out FOLDER")
    try:
        spec = yaml.safe_load(args.file.read_text(encoding="utf-8"))
        if not isinstance(spec, dict):
            raise NetworkError(f"{args.file}: expected a network mapping (preset/options or input/layers)")
        net = parse_network(spec, str(args.file), types=family_types("tensil"))
        prog = compile_network(net, arch)
    except (yaml.YAMLError, NetworkError, CompileError) as e:
        return fail(str(e))
    args.out.mkdir(parents=True, exist_ok=True)
    name = net.name
    (args.out / f"{name}.tprog").write_bytes(prog.binary())
    (args.out / f"{name}.tdata").write_bytes(prog.consts_bytes())
    (args.out / f"{name}.tmodel").write_text(prog.manifest_json(name) + "\n", encoding="utf-8")
    console.print(f"{args.out}/{name}.tprog: {len(prog.instructions)} instructions in {prog.stages} stages; "
                  f"{name}.tdata: {prog.consts.shape[0]} vectors; {name}.tmodel", highlight=False)
    return EXIT_OK
