"""ONNX models over the units of a composed platform: one pipeline for every family that
runs GEMMs (docs/onnx.md, "The unit pipeline"; docs/plugins.md).

The model is imported by :mod:`cosim.onnx` (a float model is first quantised there) into its
integer network. Every Conv (im2col), Gemm and MatMul is a GEMM ``O (Cout x N) = W (Cout x
K) @ I (K x N)`` whose ``O`` is the exact integer accumulator: ``W`` the int8 weights
(grouped convolutions as block-diagonal weights), ``I`` the input's im2col ``x - zp`` (zero
padding is a real 0). Each block of the platform whose type declares a *GEMM unit*
(``units`` in its family's declaration) is a candidate for it; the pipeline asks every
candidate that can run the GEMM exactly for its cost (its own cycle model, in time at its
clock), places the node on the fastest, lowers it to that unit's register job (an ``mmio``
task) and records the choice with every candidate's figures in the node's
``layer_info``.

The rest — the requantisation of each accumulator (the cluster cores' ``(acc P + B) >> S``,
:mod:`cosim.onnx.requant`), ReLU/Clip, Add, pooling, MaxPool, Concat and the im2col itself —
is the **host fallback**: a composed platform's host is a task host with no core, so it
runs in the deployment (numpy, untimed) and its results are loaded as the next job's
operand. Every unit job is simulated (registers, memory traffic, cycles) and its output
checked; the run's checks also compare every job's accumulator with the accumulator of
onnxruntime's own input tensor for that layer, bit for bit.

Network keys a family declares as *model passes* (``passes``: e.g. a structured pruning)
transform the ONNX model before import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..onnx.errors import OnnxImportError
from ..onnx.ir import QNet
from .mapping import Deployment
# the unit contract lives in .units (shared with MARSELLUS's cosim.onnx.units); a family's
# unit module imports it from here or there, alike
from .units import (Arena, FitFn, GemmJob, GemmUnit, UnitBlock, UnitFactory, candidates, gemm_of,  # noqa: F401
                    gemm_op, im2col, model_passes, passed_model, place, reason, requantise, unit_factories)

if TYPE_CHECKING:
    from ..scenario import Scenario

ON_HOST = {"pool": "host fallback (numpy in the deployment, untimed): average pooling",
           "add": "host fallback (numpy in the deployment, untimed): requantising add",
           "concat": "host fallback (numpy in the deployment, untimed): channel concatenation",
           "maxpool": "host fallback (numpy in the deployment, untimed): max pooling"}


def platform_units(sc: "Scenario") -> list[tuple[GemmUnit, Arena]]:
    """The GEMM units of ``sc``'s composed platform, in block order, each with the arena of
    the memory its ``memory`` key names (one arena per memory, shared by its units)."""
    from ..platforms import memory_map_of, resolved_parameters
    spec = sc.composed
    factories = unit_factories()
    mm = memory_map_of(sc)
    params = resolved_parameters(sc)
    arenas: dict[str, Arena] = {}
    out = []
    for b in spec.blocks.values():
        if b.type not in factories:
            continue
        mem = spec.blocks[b.memory]
        region = mm[mem.region]
        arena = arenas.setdefault(mem.name, Arena(region.base, region.size, "", f"{mem.name} memory"))
        unit = factories[b.type][1](sc, b, params[f"{spec.top}.{b.name}"], mm[b.region].base, spec.clocks[b.clock])
        out.append((unit, arena))
    return out


def deploy_onnx(sc: "Scenario", spec: dict, key: tuple) -> Deployment:
    """The pipeline's deployer function (``network: {onnx: ...}`` on a platform with units)."""
    path = str(sc.resolve_file(spec["onnx"], key + ("onnx",)))
    try:
        return _deploy(sc, path, str(spec["onnx"]), spec.get("input_shape"), spec)
    except (OnnxImportError, ValueError) as e:   # ValueError: a job image a unit refuses
        raise sc.error(str(e), key + ("onnx",)) from None


def _deploy(sc: "Scenario", path: str, label: str, input_shape: list[int] | None, spec: dict) -> Deployment:
    from ..onnx.deploy import prepare
    from ..onnx.ort import run_ort
    from ..onnx.reference import forward, run_op
    from .network import Layer, Network
    from .reference import NetParams
    units = platform_units(sc)
    with passed_model(path, label, input_shape, spec, [u for u, _ in units]) as (p, reports):
        model, net, x, _xf = prepare(p, sc.seed, label, input_shape)
    ort = run_ort(model, net, x)
    ref = forward(net, x)
    for _, arena in units:
        arena.file = net.file
    src = lambda n: net.aliases.get(n, n)  # noqa: E731 - a flattened view reads its source
    layers = [Layer(name=op.name, type=op.note or op.kind, inputs=[src(i) for i in op.inputs]) for op in net.ops]
    h, w, c = net.tensors[net.input].shape
    dep = Deployment(Network(net.name, (h, w, c), 8, layers), NetParams(), {})
    dep.onnx = {"file": net.file, "goldens": {}, "proven": True}
    vals = {net.input: np.asarray(x, np.int64)}
    prev: list[str] = []
    for op in net.ops:
        kind = op.note or op.kind
        ins = [vals[src(i)] for i in op.inputs]
        info = {"type": kind, "onnx_nodes": list(op.nodes),
                "onnx_ops": "+".join(t for t in op.ops if t != "QuantizeLinear")}
        if not gemm_op(op) or not units:
            vals[op.output] = run_op(op, ins)
            dep.layer_info[op.name] = info | {"runs_on": "host", "where": ON_HOST[kind],
                                              "exact_vs_onnxruntime": op.exact}
            dep.onnx["proven"] &= op.exact
            continue
        xt = net.tensors[src(op.inputs[0])]
        wm, im, i_of = gemm_of(net, op, ins[0])
        acc = wm @ im                                            # the units' exact accumulator
        unit, arena, figures, refused = place(net, op, wm, im.shape[1], units)
        job = unit.lower(op, wm, im, acc, arena, figures[unit.name])
        dep.loads += job.loads
        dep.goldens[op.name] = (job.out_addr, job.out_image)
        # onnxruntime's side: the accumulator of its own tensor entering this layer
        o_in = ort.get(src(op.inputs[0]), x if src(op.inputs[0]) == net.input else None)
        if o_in is not None:
            dep.onnx["goldens"][op.name] = (job.out_addr, unit.words(wm @ i_of(o_in)))
        vals[op.output] = requantise(op, acc, wm, xt.zp).reshape(net.tensors[op.output].shape)
        tid = f"{op.name}.gemm"
        dep.tasks.append({"id": tid, "op": "mmio", "layer": op.name, "category": "compute",
                          "after": prev, "accesses": job.accesses})
        prev = [tid]
        dep.layer_info[op.name] = info | {"runs_on": unit.family, "where": job.info.pop("where"),
                                          "exact_vs_onnxruntime": op.exact, **job.info,
                                          "placement": unit.name, "reason": reason(unit.name, figures)}
        if len(figures) + len(refused) > 1:     # every candidate's figures
            dep.layer_info[op.name]["candidates"] = candidates(figures, refused)
        dep.onnx["proven"] &= op.exact
    for name, v in vals.items():       # the host chain is the cores' reference, by construction
        if not np.array_equal(v, ref[name]):
            raise OnnxImportError(net.file, f"host fallback differs from the integer reference at {name!r}")
    dep.onnx["placement"] = _placement(net, dep)
    dep.onnx.update(reports)
    dep.outputs = {k: v for k, v in vals.items()}
    return dep


def _placement(net: QNet, dep: Deployment) -> list[list[str]]:
    rows = []
    for node, (op_type, ours, how) in net.placement.items():
        info = dep.layer_info.get(ours)
        if info is not None and not how:
            how = info["where"]
            if op_type in ("QuantizeLinear", "Relu", "Clip"):
                how = f"host fallback: {ours}'s requantisation (ReLU/Clip as its saturation)"
        rows.append([node, op_type, ours, how])
    return rows


def _pipeline() -> Any:
    from .deployer import Deployer
    return Deployer("ONNX GEMMs on the platform's units, each on the fastest; the rest a host fallback",
                    onnx=deploy_onnx, keys=tuple(sorted(model_passes())))
