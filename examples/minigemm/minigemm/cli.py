"""``cosim minigemm M K N``: the cycles MiniGEMM's model gives one GEMM (a family's own
subcommand, declared in plugin.py; arguments here, nothing heavy imported)."""
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("minigemm", help="MiniGEMM (example plug-in): the cycles of one GEMM")
    for dim in ("m", "k", "n"):
        p.add_argument(dim, type=int, help=f"GEMM dimension {dim.upper()}")
    p.add_argument("--rows", type=int, default=4, help="array rows R (default 4)")
    p.add_argument("--cols", type=int, default=4, help="array columns C (default 4)")


def run(args: argparse.Namespace, console: Any) -> int:
    from tlm.params import ParameterError, resolve

    from .model import MiniGemmParams, cycles
    try:
        p = resolve(MiniGemmParams, {"rows": args.rows, "cols": args.cols}, "minigemm")
        if min(args.m, args.k, args.n) < 1:
            raise ParameterError(f"M, K, N must be >= 1, got {args.m}, {args.k}, {args.n}", "minigemm")
    except ParameterError as e:
        console.print(f"error: {e}", highlight=False)
        return 2
    print(f"{args.m}x{args.k}x{args.n} on MiniGEMM {p.rows}x{p.cols}: {cycles(args.m, args.k, args.n, p)} cycles")
    return 0
