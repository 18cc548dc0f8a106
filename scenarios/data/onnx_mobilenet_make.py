#!/usr/bin/env python3
"""Make ``scenarios/data/onnx_mobilenet.onnx``, the model of the onnx_voyager and onnx_flexisaga scenarios.

A QDQ int8 MobileNet-style network built in code (cosim.onnx.builders.mobilenet: 3x3 conv,
three depthwise-separable blocks with ReLU6, global average pooling, classifier on a 16x16x3
input) with a fixed seed.
``--check`` exits 1 when the committed file differs from what this script makes
(tests/test_onnx_voyager.py runs it).
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cosim.onnx.builders import model_file_main, mobilenet  # noqa: E402

SEED = 2026
OUT = HERE / "onnx_mobilenet.onnx"


def make() -> bytes:
    return mobilenet(SEED).SerializeToString()


def main() -> int:
    return model_file_main(make, OUT, __doc__)


if __name__ == "__main__":
    sys.exit(main())
