"""``cosim import``: write an imported model's network description as YAML.

The description lists the quantised input, every integer layer (what it computes, its
shapes, the ONNX nodes it stands for, its requantisation and where it runs) and every ONNX
node's placement. Weights stay in the .onnx file: a scenario runs the model itself with
``network: {onnx: model.onnx}``; this file is for reading and reviewing the import.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .ir import QNet


def describe(net: QNet) -> dict[str, Any]:
    """A plain-data description of ``net`` (YAML-ready)."""
    from .deploy import SHORT, placement
    from .place import place_ops
    if any(not op.target for op in net.ops):
        place_ops(net)
    tin = net.tensors[net.input]

    def q(name: str) -> dict[str, Any]:
        t = net.tensors[name]
        return {"scale": float(t.scale), "zero_point": t.zp + t.offset,
                "type": "uint8" if t.offset else "int8"}

    layers = []
    for op in net.ops:
        t = net.tensors[op.output]
        kind = op.note or op.kind
        d: dict[str, Any] = {"name": op.name, "type": kind, "inputs": [net.aliases.get(i, i) for i in op.inputs],
                             "output": op.output, "shape": {"h": t.shape[0], "w": t.shape[1], "c": t.shape[2]},
                             "onnx_nodes": list(op.nodes), "onnx_ops": list(op.ops), "quant": q(op.output),
                             "runs_on": SHORT[op.target], "why": op.why, "exact_vs_onnxruntime": bool(op.exact)}
        if op.kind == "conv":
            co, kh, kw, ci = op.weights.shape
            d.update(kernel=int(kh), stride=op.stride, pad=op.pad, groups=op.groups, relu=bool(op.relu),
                     weights={"shape": [int(co), int(kh), int(kw), int(ci)], "layout": "(Cout, KH, KW, Cin) int8"},
                     requant={"shift": int(op.requant["shift"]), "scale": [int(v) for v in op.requant["scale"]],
                              "bias": [int(v) for v in op.requant["bias"]]})
        elif op.kind == "add":
            d["requant"] = {k: int(v) for k, v in op.requant.items()}
        elif op.kind == "leaky":
            rq = op.requant
            d["requant"] = ({"kernel": "leaky_int8", **{k: int(v) for k, v in rq["args"].items()}} if "args" in rq
                            else {"kernel": "lut_int8", "table": [int(v) for v in rq["table"]]})
        elif op.kind == "maxpool":
            d.update(kernel=op.kernel, stride=op.stride, pad=op.pad)
        layers.append(d)
    return {"name": net.name, "source": net.file,
            "input": {"name": net.input, "h": tin.shape[0], "w": tin.shape[1], "c": tin.shape[2], **q(net.input)},
            "output": net.output, "layers": layers,
            "placement": [{"node": n, "op": o, "layer": ly, "how": h} for n, o, ly, h in placement(net)]}


def import_file(path: str | Path, out: str | Path | None, input_shape: list[int] | None = None,
                seed: int = 0) -> str:
    """Import ``path`` (a float model: quantised, calibrated on the input of ``seed``) and
    write (or return) its description as YAML. ``cosim import`` runs it under its memory
    budget and wall limit (:func:`cosim.limits.import_budget`, ``--max-memory``/``--max-wall``)."""
    return _import(path, out, input_shape, seed)


def _import(path: str | Path, out: str | Path | None, input_shape: list[int] | None, seed: int) -> str:
    import yaml

    from .deploy import prepare
    _, net, _, xf = prepare(str(path), seed, None, input_shape)
    from .place import place_ops
    place_ops(net)
    text = ("# made by `cosim import` from " + str(path) + " (docs/onnx.md); run the model with\n"
            "# workload: {network: {onnx: " + str(path) + "}}\n"
            + yaml.safe_dump({"quantised_on_import": xf is not None, **describe(net)}, sort_keys=False, width=120))
    if out is not None:
        Path(out).write_text(text, encoding="utf-8")
    return text
