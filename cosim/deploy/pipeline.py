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

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

import numpy as np

from ..onnx.errors import OnnxImportError
from ..onnx.ir import QNet, QOp
from .mapping import Deployment

if TYPE_CHECKING:
    from ..scenario import Scenario

ON_HOST = {"pool": "host fallback (numpy in the deployment, untimed): average pooling",
           "add": "host fallback (numpy in the deployment, untimed): requantising add",
           "concat": "host fallback (numpy in the deployment, untimed): channel concatenation",
           "maxpool": "host fallback (numpy in the deployment, untimed): max pooling"}


class Arena:
    """The operands of every job, placed at once in one memory region (64-byte aligned);
    ``note`` says what the region holds when an operand does not fit."""

    def __init__(self, base: int, size: int, file: str, what: str,
                 note: str = "every job's operands are loaded at once"):
        self.base, self.size, self.top, self.file, self.what, self.note = base, size, base, file, what, note

    def take(self, n: int, what: str) -> int:
        a = -(-self.top // 64) * 64
        if a + n > self.base + self.size:
            raise OnnxImportError(self.file, f"{what} ({n} B) does not fit the {self.what} "
                                             f"({self.size} B; {self.note})")
        self.top = a + n
        return a


@dataclass
class GemmJob:
    """A unit's lowering of one GEMM: data to load, the register accesses that run it, where
    its output lands and the bytes it must hold (the accumulator as the unit stores it)."""

    loads: list[tuple[str, int, bytes]]
    accesses: list[dict[str, Any]]
    out_addr: int
    out_image: bytes
    #: unit-specific placement details (``where`` is the human sentence)
    info: dict[str, Any] = field(default_factory=dict)


class GemmUnit(Protocol):
    """What a family's block offers the pipeline (``units`` in its declaration)."""

    #: the block's name in the platform, and its family
    name: str
    family: str

    def refuse(self, op: QOp, wm: np.ndarray) -> str | None:
        """Why this unit cannot run ``op``'s GEMM exactly (None: it can)."""

    def cost_ps(self, wm: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
        """The GEMM's time on this unit (its cycle model at its clock) and the figures behind it."""

    def lower(self, op: QOp, wm: np.ndarray, im: np.ndarray, acc: np.ndarray, arena: Arena,
              plan: dict[str, Any]) -> GemmJob:
        """Place the operands in ``arena`` and program the job (``plan``: what
        :meth:`cost_ps` found, e.g. the dataflow)."""

    def words(self, acc: np.ndarray) -> bytes:
        """An accumulator as the unit stores its output (for the onnxruntime goldens)."""


@dataclass(frozen=True)
class UnitBlock:
    """What a unit factory may read of its block: its name in the platform and its block
    type. A composed platform passes its block spec (which has both, and more); a platform
    built in Python (MARSELLUS, :mod:`cosim.onnx.units`) passes one of these."""

    name: str
    type: str


#: ``factory(scenario, block, resolved parameters, register base, clock Hz) -> unit``;
#: ``block``: a :class:`UnitBlock` or a composed block spec (read only ``name`` and ``type``)
UnitFactory = Callable[["Scenario", Any, dict[str, Any], int, float], GemmUnit]

#: ``fit(unit, arena, plan) -> why not or None``: whether a placed node's operands fit where
#: the unit reads them (a platform that loads every job's operands at once passes none)
FitFn = Callable[[GemmUnit, Arena, dict[str, Any]], "str | None"]


def gemm_op(op: QOp) -> bool:
    """A node the units run: a convolution or a fully connected layer with weights."""
    return op.kind == "conv" and op.note in ("conv", "fc", "")


def im2col(x: np.ndarray, kh: int, kw: int, stride: int, pad: int) -> np.ndarray:
    """``(KH*KW*Cin, Ho*Wo)``: columns of the zero-padded ``(H, W, Cin)`` input, rows in the
    weights' ``(KH, KW, Cin)`` order."""
    from numpy.lib.stride_tricks import sliding_window_view
    xp = np.pad(np.asarray(x, np.int64), ((pad, pad), (pad, pad), (0, 0)))
    win = sliding_window_view(xp, (kh, kw), axis=(0, 1))[::stride, ::stride]    # (Ho, Wo, C, kh, kw)
    ho, wo = win.shape[:2]
    return win.transpose(3, 4, 2, 0, 1).reshape(kh * kw * x.shape[2], ho * wo)


def gemm_of(net: QNet, op: QOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, Callable[[Any], np.ndarray]]:
    """A conv op's GEMM: W as ``Cout x K``, the im2col of its input ``x`` less the zero point,
    and that im2col of any input (onnxruntime's tensor)."""
    zp = net.tensors[net.aliases.get(op.inputs[0], op.inputs[0])].zp
    cout, kh, kw, _ = op.weights.shape

    def i_of(v: Any) -> np.ndarray:
        return im2col(np.asarray(v, np.int64) - zp, kh, kw, op.stride, op.pad)
    return op.weights.reshape(cout, -1), i_of(x), i_of


def requantise(op: QOp, acc: np.ndarray, wm: np.ndarray, zp: int) -> np.ndarray:
    """The host fallback after a unit's GEMM: the cluster cores' requantisation ``(acc P + B)
    >> S`` of its accumulator (the input zero point folded back), as ``(N, Cout)`` int8 values."""
    from components.cluster.ops import requantize
    full = (acc + zp * wm.sum(axis=1)[:, None]).T.reshape(-1, wm.shape[0])
    rq = op.requant
    return requantize(full, rq["scale"], rq["bias"], rq["shift"], 0 if op.relu else -128, 127)


def unit_factories() -> dict[str, tuple[str, UnitFactory]]:
    """Block type -> (family, unit factory), from the families' declarations."""
    from components.plugins import units
    return {block_type: (fam, ref.load()) for block_type, (fam, ref) in units().items()}


def model_passes() -> dict[str, tuple[str, Callable[..., Any]]]:
    """Network key -> (family, pass): ``pass(model, value, units) -> (model, report)``."""
    from components.plugins import passes
    return {key: (fam, ref.load()) for key, (fam, ref) in passes().items()}


@contextmanager
def passed_model(path: str, label: str, input_shape: list[int] | None, spec: dict,
                 units: list[GemmUnit]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``path``, or the model after the passes that ``spec``'s network keys name (the
    families' :func:`model_passes`, in key order, each given ``units``) saved in a temporary
    directory that lasts the block; with the passes' reports (for ``onnx`` in the deployment)."""
    passes = {k: v for k, v in sorted(model_passes().items()) if k in spec and spec[k]}
    if not passes:
        yield path, {}
        return
    import tempfile
    from pathlib import Path

    import onnx

    from ..onnx.load import load_model
    model, reports = load_model(path, input_shape, label), {}
    for k, (_, fn) in passes.items():
        model, rep = fn(model, spec[k], units)
        reports.update(rep)
    with tempfile.TemporaryDirectory(prefix="cosim-pass-") as tmp:
        onnx.save(model, str(Path(tmp) / "model.onnx"))
        yield str(Path(tmp) / "model.onnx"), reports


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


def place(net: QNet, op: QOp, wm: np.ndarray, n: int, units: list[tuple[GemmUnit, Arena]],
          fit: FitFn | None = None) -> tuple[GemmUnit, Arena, dict[str, Any], dict[str, str]]:
    """The fastest unit that runs ``op`` exactly (the first of equals), with every accepting
    candidate's figures and every refusing one's reason (a refusal of ``fit`` included); a
    located error naming each unit's reason when none can."""
    why: list[str] = []
    best: tuple[int, int] | None = None
    figures: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for i, (unit, arena) in enumerate(units):
        no = unit.refuse(op, wm)
        if no is None:
            ps, detail = unit.cost_ps(wm, n)
            plan = {"time_ps": ps, **detail}
            no = fit(unit, arena, plan) if fit is not None else None
        if no is not None:
            refused[unit.name] = no
            why.append(no if len(units) == 1 else f"{unit.name}: {no}")
            continue
        figures[unit.name] = plan
        if best is None or ps < best[0]:
            best = (ps, i)
    if best is None:
        raise OnnxImportError(net.file, "; ".join(why), op.nodes[0], op.ops[0])
    unit, arena = units[best[1]]
    return unit, arena, figures, refused


def candidates(figures: dict[str, Any], refused: dict[str, str]) -> dict[str, Any]:
    """A node's ``candidates`` entry: each accepting unit's figures, each refusing unit's reason."""
    return figures | {name: {"refused": why} for name, why in refused.items()}


def reason(chosen: str, figures: dict[str, dict[str, Any]]) -> str:
    """``fastest of: a 1.23 us (sOS, 308 cycles), b 2.00 us (500 cycles)`` (or ``the only unit
    that runs it: ...``); a candidate costed with its data movement (``compute_ps`` and
    ``movement_ps``) shows both: ``a 1.23 us = 0.73 compute + 0.50 DMA (sOS, 308 cycles)``, the
    part of compute a requantisation on the cores takes (``requant_ps``) and the task host's
    programming (``host_ps``: ``+ 0.30 host``) when there are."""
    split = ("compute_ps", "movement_ps")

    def one(name: str, f: dict[str, Any]) -> str:
        extra = ", ".join([str(v) for k, v in f.items()
                           if k not in ("time_ps", "cycles", "requant_ps", "host_ps", *split)]
                          + [f"{f.get('cycles')} cycles"])
        rq = f" (incl. {f['requant_ps'] / 1e6:.3f} requant on the cores)" if "requant_ps" in f else ""
        host = f" + {f['host_ps'] / 1e6:.3f} host" if "host_ps" in f else ""
        parts = (f" = {f['compute_ps'] / 1e6:.3f} compute{rq} + {f['movement_ps'] / 1e6:.3f} DMA{host}"
                 if all(k in f for k in split) else "")
        return f"{name} {f['time_ps'] / 1e6:.3f} us{parts} ({extra})"
    if len(figures) == 1:
        return "the only unit that runs it: " + one(chosen, figures[chosen])
    return "fastest of: " + ", ".join(one(n, f) for n, f in sorted(figures.items(), key=lambda kv: kv[1]["time_ps"]))


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
