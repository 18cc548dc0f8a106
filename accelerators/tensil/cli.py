"""``cosim tensil``: the family's subcommand. Its arguments here (read at every ``cosim``
start: nothing heavy imported), the work in :mod:`accelerators.tensil.tool`."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """``cosim tensil``'s arguments (its family's command, accelerators/tensil/plugin.py)."""
    from cosim.limits import add_limit_args, positive_int
    ts = sub.add_parser("tensil", help="Tensil TCU programs: disassemble, assemble, run (docs/tensil.md)")
    ts.add_argument("action", choices=["dis", "asm", "run", "compile"],
                    help="dis: .tprog -> text; asm: text -> .tprog (--out); run: execute a .tprog; "
                         "compile: a network YAML -> .tprog/.tdata/.tmodel in --out")
    ts.add_argument("file", type=Path, help="the program (.tprog for dis/run, text for asm, "
                                            "a network description for compile)")
    ts.add_argument("--board", help="a published board configuration (arty_a7_35, pynq_z1, ultra96_v2)")
    ts.add_argument("--arch", action="append", default=[], metavar="KEY=VALUE",
                    help="an architectural parameter, applied after --board; repeatable")
    ts.add_argument("-o", "--out", type=Path, help="asm: the .tprog to write; compile: the folder")
    ts.add_argument("--timing-only", action="store_true", help="run: compute no data (same cycles)")
    ts.add_argument("--overlap", action="store_true", help="run: the overlap refinement of the latency model")
    add_limit_args(ts, "the action")
    ts.add_argument("--max-cycles", type=positive_int, metavar="N",
                    help="run: stop (exit 3) past N cycles (default: 1000 ms of simulated time at the TCU clock)")
    ts.add_argument("--max-instructions", type=positive_int, metavar="N",
                    help="run: stop (exit 3) after N instructions (default: no limit)")


def run(args: argparse.Namespace, console: Any) -> int:
    """Run ``cosim tensil ACTION FILE``; returns the exit code."""
    from accelerators.tensil.tool import main
    return main(args, console)
