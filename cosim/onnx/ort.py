"""The golden reference: onnxruntime runs the model itself on the same input.

Graph optimisations are off, so onnxruntime evaluates the QDQ graph as written (float32
ops between DequantizeLinear and QuantizeLinear) rather than its own fused integer kernels.
Every quantised tensor we deploy is added as a graph output, so each can be compared.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .errors import OnnxImportError
from .ir import QNet


def _first(e: BaseException) -> str:
    """The first line of an onnxruntime error, without its status-code prefix."""
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    return msg.split(" : ")[-1]


def run_ort(model: Any, net: QNet, x: np.ndarray) -> dict[str, np.ndarray]:
    """Our tensors' values ``(H, W, C)`` in int8 storage as onnxruntime computes them from
    the int8 input ``x``, plus ``'output:float'``: the graph's own (float) output."""
    import onnx
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    wanted = {}
    for op in net.ops:
        t = net.tensors[op.output]
        wanted[t.onnx] = op.output
        if t.onnx not in have:
            vi = next((v for v in m.graph.value_info if v.name == t.onnx), None)
            if vi is None:
                vi = onnx.helper.make_empty_tensor_value_info(t.onnx)
            m.graph.output.append(vi)
            have.add(t.onnx)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3          # no warnings on stderr
    opts.inter_op_num_threads = 1
    try:
        sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types (a C++ extension)
        raise OnnxImportError(net.file, f"onnxruntime cannot load the model: {_first(e)}") from None
    tin = net.tensors[net.input]
    # the float input whose QuantizeLinear gives exactly x: (x + offset - zp) * scale
    xf = ((np.asarray(x, np.float64) - tin.zp) * np.float64(np.float32(tin.scale))).astype(np.float32)
    xf = xf.transpose(2, 0, 1)[None] if xf.shape[:2] != (1, 1) or len(sess.get_inputs()[0].shape) == 4 \
        else xf.reshape(1, -1)
    names = [o.name for o in sess.get_outputs()]
    try:
        res = sess.run(names, {sess.get_inputs()[0].name: xf})
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types (a C++ extension)
        raise OnnxImportError(net.file, f"onnxruntime cannot run the model: {_first(e)}") from None
    out: dict[str, np.ndarray] = {}
    for name, v in zip(names, res):
        if name in wanted:
            t = net.tensors[wanted[name]]
            v = np.asarray(v).astype(np.int64) - t.offset
            out[t.name] = v[0].transpose(1, 2, 0) if v.ndim == 4 else v.reshape(t.shape)
    out["output:float"] = np.asarray(res[0])
    return out
