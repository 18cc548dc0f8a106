"""The GEMM unit contract and placement, shared by every platform's ONNX deployment: what a
family's block offers (:class:`GemmUnit`, built by a :data:`UnitFactory`), the GEMM of a
convolution (:func:`gemm_of`, :func:`im2col`) and the cores' requantisation after it
(:func:`requantise`), the families' model passes (:func:`passed_model`), and the choice among
candidates with its recorded figures (:func:`place`, :func:`candidates`, :func:`reason`).
The composed platforms' pipeline (:mod:`cosim.deploy.pipeline`) and MARSELLUS's
(:mod:`cosim.onnx.units`) both build on it; it imports neither (docs/plugins.md, "The GEMM
unit contract")."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, TypeVar

import numpy as np

from ..onnx.errors import OnnxImportError
from ..onnx.ir import QNet, QOp

if TYPE_CHECKING:
    from ..scenario import Scenario


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


class Candidate(Protocol):
    """What placement asks of a candidate: whether it runs a GEMM exactly, and at what cost.
    A platform's own paths (MARSELLUS's cores and RBE, :mod:`cosim.onnx.units`) are candidates
    lowered by their deployment; a family's block is a :class:`GemmUnit`."""

    #: the block's name in the platform, and its family
    name: str
    family: str

    def refuse(self, op: QOp, wm: np.ndarray) -> str | None:
        """Why this unit cannot run ``op``'s GEMM exactly (None: it can)."""

    def cost_ps(self, wm: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
        """The GEMM's time on this unit (its cycle model at its clock) and the figures behind it."""


class GemmUnit(Candidate, Protocol):
    """What a family's block offers the pipeline (``units`` in its declaration): a candidate
    that also lowers the GEMM to its own register job."""

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


#: a placement candidate: a :class:`GemmUnit`, or any :class:`Candidate` its platform lowers itself
C = TypeVar("C", bound=Candidate)

#: ``fit(unit, arena, plan) -> why not or None``: whether a placed node's operands fit where
#: the unit reads them (a platform that loads every job's operands at once passes none)
FitFn = Callable[[Any, Arena, dict[str, Any]], "str | None"]


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


def place(net: QNet, op: QOp, wm: np.ndarray, n: int, units: list[tuple[C, Arena]],
          fit: FitFn | None = None) -> tuple[C, Arena, dict[str, Any], dict[str, str]]:
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
