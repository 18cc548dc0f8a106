"""The integer reference of an imported network, with the cluster kernels' own definitions
(components.cluster.ops) and, for a convolution placed on the RBE, the RBE's golden
arithmetic (``rbe.py``), so the simulated platform and this reference agree by
construction; onnxruntime (``ort.py``) is the independent check of both."""
from __future__ import annotations

import numpy as np

from components.cluster import ops

from .ir import QNet, QOp


def run_op(op: QOp, xs: list[np.ndarray]) -> np.ndarray:
    """One op on int8 HWC arrays (int64 values)."""
    if op.kind == "conv":
        rq = op.requant
        # the cores read a tensor whose border holds the zero point (ONNX pads with real 0)
        x = np.pad(xs[0], ((op.pad, op.pad), (op.pad, op.pad), (0, 0)), constant_values=op.pad_value)
        if op.target == "rbe":       # pack_rbe, the RBE's arithmetic, unpack_rbe (rbe.py)
            return op.rbe.run(x)
        return ops.conv2d(x, op.weights, rq["scale"], rq["bias"], rq["shift"], op.stride, 0, op.relu)
    if op.kind == "add":
        rq = op.requant
        return ops.add_requant(xs[0], xs[1], rq["m1"], rq["m2"], rq["bias"], rq["shift"], 8, True)
    if op.kind == "concat":
        return np.concatenate(xs, axis=-1)
    if op.kind == "maxpool":
        return ops.maxpool(xs[0], op.kernel, op.stride, op.pad)
    if op.kind == "leaky":
        rq = op.requant
        return ops.leaky_requant(xs[0], **rq["args"]) if "args" in rq else ops.lut(xs[0], rq["table"])
    raise ValueError(f"unknown op kind {op.kind!r}")


def forward(net: QNet, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor's int8 values ``(H, W, C)`` from the int8 input ``x`` ``(H, W, C)``."""
    out = {net.input: np.asarray(x, np.int64)}
    for op in net.ops:
        # a flattened view reads its source (H, W, C): the FC's weights are (N, H, W, C)
        out[op.output] = run_op(op, [out[net.aliases.get(n, n)] for n in op.inputs])
    return out


def input_values(net: QNet, seed: int) -> np.ndarray:
    """The seeded int8 input the run feeds the network (uniform over the int8 range)."""
    from ..deploy.weights import layer_rng
    return layer_rng(seed, "onnx-input").integers(-128, 128, size=net.tensors[net.input].shape, dtype=np.int64)
