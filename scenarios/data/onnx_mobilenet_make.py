#!/usr/bin/env python3
"""Make ``scenarios/data/onnx_mobilenet.onnx``, the model of the onnx_voyager and onnx_flexisaga scenarios.

A QDQ int8 MobileNet-style network built in code (cosim.onnx.builders.mobilenet: 3x3 conv,
three depthwise-separable blocks with ReLU6, global average pooling, classifier on a 16x16x3
input) with a fixed seed.
``--check`` exits 1 when the committed file differs from what this script makes
(tests/test_onnx_voyager.py runs it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cosim.onnx.builders import mobilenet  # noqa: E402

SEED = 2026
OUT = HERE / "onnx_mobilenet.onnx"


def make() -> bytes:
    return mobilenet(SEED).SerializeToString()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead")
    args = ap.parse_args()
    data = make()
    if args.check:
        same = OUT.exists() and OUT.read_bytes() == data
        print(f"{OUT.name}: {'up to date' if same else 'differs from what this script makes'}")
        return 0 if same else 1
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
