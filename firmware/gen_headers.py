#!/usr/bin/env python3
"""Generate the firmware's view of the platform from the single sources of truth.

Writes (relative to this folder):

* ``include/marsellus_map.h`` — region bases/sizes
  (components/marsellus/facts/memory_map.yaml), the FC interrupt lines
  (components/marsellus/facts/irqs.yaml) and every block's register map (its
  ``registers.yaml``, docs/registers.md);
* ``memory.ld`` — the linker script's MEMORY block (included by ``link.ld``).

The rendering lives in ``cosim/regs`` (``cosim regs`` writes these files too, with the SV
packages and the docs tables). ``python firmware/gen_headers.py`` rewrites them;
``--check`` exits 1 when a file is stale (tests/test_firmware.py runs the check).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    from cosim.regs import HEADER, LINKER, update

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = ap.parse_args(argv)
    stale = update(ROOT, check=args.check, only=(HEADER, LINKER))
    if args.check and stale:
        for p in stale:
            print(f"stale: {p} (run python firmware/gen_headers.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
