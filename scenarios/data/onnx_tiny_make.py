#!/usr/bin/env python3
"""Make ``scenarios/data/onnx_tiny.onnx``, the model of ``scenarios/onnx_tiny.yaml``.

A QDQ int8 network built in code (cosim.onnx.builders.tiny: conv, depthwise conv, residual
add, concat, average pooling, flatten, classifier on an 8x8x4 input) with a fixed seed.
``--check`` exits 1 when the committed file differs from what this script makes
(tests/test_onnx_deploy.py runs it).
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cosim.onnx.builders import model_file_main, tiny  # noqa: E402

SEED = 2026
OUT = HERE / "onnx_tiny.onnx"


def make() -> bytes:
    return tiny(SEED).SerializeToString()


def main() -> int:
    return model_file_main(make, OUT, __doc__)


if __name__ == "__main__":
    sys.exit(main())
