#!/usr/bin/env python3
"""Make the operand and expected-output files of ``scenarios/mini_rbe.yaml``.

One 3x3 layer (8x8 output, 32 -> 32 channels, 4-bit weights, 8-bit activations) drawn with
a fixed seed; the expected output is the RBE golden model's (components/rbe/golden.py), in
the RBE's packed output layout. ``--check`` exits 1 when a committed file differs from what
this script makes (tests/test_composed_platform.py runs it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "mini_rbe"
ROOT = HERE.parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from components.rbe.layout import (pack_activations, pack_normquant,  # noqa: E402
                                   pack_weights_3x3, to_bytes)
from components.rbe.stimuli import random_layer  # noqa: E402

SEED = 2026
SHAPE = dict(h_out=8, w_out=8, k_in=32, k_out=32, w_bits=4, i_bits=8, o_bits=8)


def make_layer():
    """The layer (its ``shift`` is the scenario's ``shift``)."""
    return random_layer(np.random.default_rng(SEED), **SHAPE)


def files() -> dict[str, bytes]:
    """File name -> contents."""
    layer = make_layer()
    return {
        "input.bin": to_bytes(pack_activations(layer.x, layer.i_bits)),
        "weights.bin": to_bytes(pack_weights_3x3(layer.w, layer.w_bits)),
        "normquant.bin": bytes(pack_normquant(layer.scale, layer.bias)),
        "expected.bin": to_bytes(pack_activations(layer.golden, layer.o_bits)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    args = ap.parse_args(argv)
    stale = []
    for name, data in files().items():
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
        else:
            HERE.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    if stale:
        print(f"stale: {', '.join(stale)} (run python {Path(__file__).name})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
