"""Make the operands and the expected output of gemm_registers.yaml (seeded; run it to
rewrite them, or with --check to compare with the committed files): W (6 x 20) and I (20 x 9)
as little-endian int32 words, and O = W @ I."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def make() -> dict[str, bytes]:
    rng = np.random.default_rng(20261129)
    w = rng.integers(-100, 100, (6, 20), dtype=np.int64)
    i = rng.integers(-1000, 1000, (20, 9), dtype=np.int64)
    return {name: a.astype("<i4").tobytes() for name, a in (("w.bin", w), ("i.bin", i), ("o.bin", w @ i))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files")
    args = ap.parse_args(argv)
    stale = []
    for name, data in make().items():
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
        else:
            path.write_bytes(data)
    for name in stale:
        print(f"{name}: differs from what this script makes")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
