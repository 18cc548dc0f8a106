"""BatchNormalization folded into the Conv before it (float models)."""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from .errors import OnnxImportError

#: metadata key of the folded model: {BatchNormalization node: Conv node}
FOLDED_KEY = "cosim.onnx.batchnorm_folded"


def fold_batchnorm(model: Any, file: str) -> Any:
    """A copy of ``model`` with every Conv -> BatchNormalization pair merged into one Conv:
    ``w' = w * g / sqrt(var + eps)`` per output channel, ``b' = (b - mean) * g / sqrt(var +
    eps) + beta``. A BatchNormalization after anything else is an error naming it."""
    import onnx
    from onnx import numpy_helper as nh
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, int] = {}
    for n in g.node:
        for i in n.input:
            consumers[i] = consumers.get(i, 0) + 1
    drop = []
    folded: dict[str, str] = {}
    for bn in [n for n in g.node if n.op_type == "BatchNormalization"]:
        conv = producer.get(bn.input[0])
        name = bn.name or bn.output[0]
        if conv is None or conv.op_type != "Conv" or consumers.get(bn.input[0], 0) != 1:
            raise OnnxImportError(file, "BatchNormalization must follow a Conv whose output nothing else "
                                        "reads (it is folded into that Conv)", name, "BatchNormalization")
        if any(i not in inits for i in bn.input[1:5]) or conv.input[1] not in inits:
            raise OnnxImportError(file, "BatchNormalization parameters and Conv weights must be constant "
                                        "initializers", name, "BatchNormalization")
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (nh.to_array(inits[i]).astype(np.float64) for i in bn.input[1:5])
        w = nh.to_array(inits[conv.input[1]]).astype(np.float64)
        b = nh.to_array(inits[conv.input[2]]).astype(np.float64) if len(conv.input) > 2 and conv.input[2] \
            else np.zeros(w.shape[0])
        k = gamma / np.sqrt(var + eps)
        w2 = (w * k[:, None, None, None]).astype(np.float32)
        b2 = ((b - mean) * k + beta).astype(np.float32)
        wname, bname = conv.input[1] + "_bnfold", (conv.name or conv.output[0]) + "_bnfold_bias"
        g.initializer.append(nh.from_array(w2, wname))
        g.initializer.append(nh.from_array(b2, bname))
        x = conv.input[0]
        del conv.input[:]
        conv.input.extend([x, wname, bname])
        conv.output[0] = bn.output[0]
        drop.append(bn)
        folded[name] = conv.name or conv.output[0]
    for bn in drop:
        g.node.remove(bn)
    used = {i for n in g.node for i in n.input}
    for init in [i for i in g.initializer if i.name not in used]:   # the replaced originals
        g.initializer.remove(init)
    if folded:  # the placement report names each BatchNormalization and the Conv that took it
        m.metadata_props.add(key=FOLDED_KEY, value=json.dumps(folded))
    return m

