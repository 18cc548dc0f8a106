"""What the firmware data-header generators (gen_*_data.py) share: a byte array as C, and
the write-or-check step (``--check`` exits 1 when the committed header is stale)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable


def c_bytes(name: str, data: bytes, align: int = 8) -> str:
    """``static const uint8_t name[N]`` holding ``data``, 16 bytes per line, ``align``-aligned."""
    rows = [", ".join(f"0x{b:02x}" for b in data[i:i + 16]) for i in range(0, len(data), 16)]
    body = ",\n    ".join(rows)
    return (f"static const uint8_t {name}[{len(data)}] __attribute__((aligned({align}))) = "
            f"{{\n    {body}\n}};\n")


def run(render: Callable[[], str], out: Path, doc: str | None, argv: list[str] | None = None) -> int:
    """A generator's command line: write ``render()`` to ``out``, or with ``--check`` exit 1
    (naming the script to run) when ``out`` differs from it."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = render()
    old = out.read_text() if out.exists() else None
    if old == text:
        return 0
    if args.check:
        script = "gen_" + out.name.replace("_job_data.h", "_data.py")
        print(f"stale: {out.relative_to(out.parents[1])} (run python firmware/{script})", file=sys.stderr)
        return 1
    out.write_text(text)
    return 0
