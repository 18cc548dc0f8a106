"""CLI start-up: the CPU time of ``cosim --help`` (and a few other commands that run
nothing) against a bare interpreter start, in one run.

    python bench/cli_start.py [--repeat 7]

Each command runs ``--repeat`` times in a fresh process (one untimed run of each first, so
the bytecode cache is warm as in an installed copy); the figure is the minimum CPU time
(user + system of the child) over the runs, steadier than wall time on a shared machine.
The baseline is ``python -c pass`` with the same interpreter and environment.

Target (issue 32): ``cosim --help`` <= 2 x the bare start + 50 ms of CPU.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (label, arguments after ``cosim``)
COMMANDS = [("cosim --help", ["--help"]),
            ("cosim validate --help", ["validate", "--help"]),
            ("cosim run --help", ["run", "--help"]),
            ("cosim tensil --help", ["tensil", "--help"])]
#: the target: at most this factor of the bare start ...
TARGET_FACTOR = 2.0
#: ... plus this many CPU seconds
TARGET_EXTRA_S = 0.05


def cosim_command() -> list[str]:
    """The installed ``cosim`` console script beside this interpreter, else ``python -m cosim``."""
    script = Path(sys.executable).with_name("cosim")
    if script.exists():
        return [str(script)]
    found = shutil.which("cosim")
    return [found] if found else [sys.executable, "-m", "cosim"]


def child_cpu(cmd: list[str]) -> float:
    """CPU seconds (user + system) of one run of ``cmd``, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best_cpu(cmd: list[str], repeat: int) -> float:
    """The minimum CPU time of ``repeat`` runs, after one untimed run."""
    child_cpu(cmd)
    return min(child_cpu(cmd) for _ in range(repeat))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per command (default 7)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat: at least 1")
    cosim = cosim_command()
    bare = best_cpu([sys.executable, "-c", "pass"], args.repeat)
    print(f"{'command':26s} {'CPU s':>7s} {'x bare':>7s}")
    print(f"{'python -c pass':26s} {bare:7.3f} {1.0:7.2f}")
    ok = True
    for i, (label, argv) in enumerate(COMMANDS):
        cpu = best_cpu(cosim + argv, args.repeat)
        print(f"{label:26s} {cpu:7.3f} {cpu / bare:7.2f}")
        if i == 0:
            limit = TARGET_FACTOR * bare + TARGET_EXTRA_S
            ok = cpu <= limit
            head = (cpu, limit)
    cpu, limit = head
    print(f"\ncosim --help: {cpu / bare:.2f}x a bare start ({cpu * 1e3:.0f} ms vs {bare * 1e3:.0f} ms of CPU); "
          f"target <= {TARGET_FACTOR:g} x bare + {TARGET_EXTRA_S * 1e3:.0f} ms = {limit * 1e3:.0f} ms: "
          f"{'met' if ok else 'MISSED'}  ({' '.join(cosim[-1:])}, min of {args.repeat}, "
          f"{os.cpu_count()} cores)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
