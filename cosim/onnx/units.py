"""The GEMM units of a MARSELLUS preset beside its cores and RBE (docs/onnx.md, "Other units
on MARSELLUS"; docs/plugins.md, the unit contract).

MARSELLUS is built in Python, so its optional blocks are named by its deployer as *sites*
(:class:`Site`: the parameter group that enables one, its block type, its register region,
its clock and the memory it reads its operands from). Every enabled site whose block type a
family declares a GEMM unit for (``units``, reached through the registry: this module names
no family) is a candidate for each Conv/Gemm beside the cores' ``conv2d`` and the RBE. Each
quotes its own time (its cycle model at its clock; the cores and the RBE the cycles
:mod:`.place` modelled, at the cluster clock); the pipeline's own
:func:`cosim.deploy.pipeline.place` picks the fastest (the first of equals: cores, RBE, then
the sites in order) and records every candidate's figures and every refusal. A unit whose
operands do not fit the TCDM at once refuses the node with the arena's reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..deploy.pipeline import Arena, GemmUnit, UnitBlock, candidates, gemm_of, gemm_op, place, reason, unit_factories
from .errors import OnnxImportError
from .ir import QNet, QOp

if TYPE_CHECKING:
    from ..scenario import Scenario

#: what an operand that does not fit says: the unit's operands come into the TCDM per layer
TCDM_NOTE = "a unit's operands are staged into the TCDM per layer, all at once"


@dataclass(frozen=True)
class Site:
    """An optional block of a platform built in Python that may be a GEMM unit."""

    group: str       # its parameter group (``<group>.enabled`` builds it), e.g. ``cluster.<block>``
    type: str        # its block type (the key of a family's ``units``)
    region: str      # the memory-map region of its registers
    clock: str       # the clock it runs on (an FLL: cluster | soc)
    memory: str      # where it reads its operands: ``tcdm`` (staged from L2 by the cluster DMA)


def preset_units(sc: "Scenario", sites: tuple[Site, ...]) -> list[GemmUnit]:
    """The units of ``sc``'s enabled sites whose block type a family declares a unit for."""
    factories = unit_factories()
    typed = [s for s in sites if s.type in factories]
    if not typed:
        return []
    from ..platforms import memory_map_of, resolved_parameters
    params = resolved_parameters(sc)
    mm = memory_map_of(sc)
    out = []
    for s in typed:
        p = params[s.group]
        if not p.get("enabled"):
            continue
        if s.memory != "tcdm":
            raise ValueError(f"site {s.group}: operands in {s.memory!r}; the MARSELLUS deployment stages "
                             "a unit's operands into the TCDM only")
        block = UnitBlock(s.group.rsplit(".", 1)[-1], s.type)
        out.append(factories[s.type][1](sc, block, p, mm[s.region].base, clock_hz(params, s.clock)))
    return out


def cluster_hz(sc: "Scenario") -> float:
    """The cluster clock of ``sc``'s MARSELLUS (the cores', the RBE's and a cluster unit's)."""
    from ..platforms import resolved_parameters
    return clock_hz(resolved_parameters(sc), "cluster")


def clock_hz(params: dict[str, dict[str, Any]], fll: str) -> float:
    """``<fll>.clock.freq``, by default the FLL's frequency at the PMU's operating point."""
    freq = params[f"{fll}.clock"].get("freq")
    if freq is None:
        from components.marsellus.facts import operating_points
        freq = operating_points().operating_points[params["pmu"]["operating_point"]].freq[fll]
    return float(freq)


class Modelled:
    """The cluster cores (``conv2d``) or the RBE as a candidate of the pipeline's placement:
    the cycles :func:`.place.place_conv` modelled, at the cluster clock. Their data movement
    is the deployment's own (tiling, channel blocks), left out of every candidate's figure."""

    def __init__(self, name: str, op: QOp, period_ps: float):
        self.name, self.family, self.op, self.period_ps = name, name, op, period_ps

    def _rbe(self) -> tuple[str, int] | None:
        modes = [(c, k[4:]) for k, c in self.op.modelled.items() if k.startswith("rbe ")]
        return min(modes, default=None)   # place_conv's best: fewest cycles, then the mode name

    def refuse(self, op: QOp, wm: np.ndarray) -> str | None:
        if self.name == "cores" or self._rbe() is not None:
            return None
        return self.op.rbe_refused or "no RBE mode runs it"

    def cost_ps(self, wm: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
        if self.name == "cores":
            c, detail = self.op.modelled["cores"], {"kernel": "conv2d"}
        else:
            best = self._rbe()
            assert best is not None       # refuse() said so
            c, detail = best[0], {"mode": best[1]}
        return round(c * self.period_ps), {**detail, "cycles": c}

    def lower(self, op: QOp, wm: np.ndarray, im: np.ndarray, acc: np.ndarray, arena: Arena,
              plan: dict[str, Any]) -> Any:
        raise NotImplementedError("the deployment's own paths run the cores and the RBE")

    def words(self, acc: np.ndarray) -> bytes:
        raise NotImplementedError("the cores and the RBE store int8 tensors")


def tcdm_arena(net: QNet, base: int, size: int) -> Arena:
    """An empty TCDM for one layer's unit operands."""
    return Arena(base, size, net.file, "TCDM", TCDM_NOTE)


def place_units(net: QNet, vals: dict[str, np.ndarray], units: list[GemmUnit], cluster_hz: float,
                tcdm: tuple[int, int]) -> None:
    """Put each GEMM op of ``net`` (placed on the cores or the RBE by :func:`.place.place_ops`)
    on the fastest of the cores, the RBE and ``units``: sets ``op.candidates`` and
    ``op.reason``, and for a unit ``op.target = "unit"``, ``op.unit`` and ``op.plan``."""
    period = 1e12 / cluster_hz
    for op in net.ops:
        if not gemm_op(op):
            continue
        wm, im, _ = gemm_of(net, op, vals[net.aliases.get(op.inputs[0], op.inputs[0])])
        acc = wm @ im

        def fit(unit: GemmUnit, arena: Arena, plan: dict[str, Any]) -> str | None:
            if isinstance(unit, Modelled):
                return None
            try:      # a trial lowering into an empty TCDM: the job's operands, all at once
                unit.lower(op, wm, im, acc, tcdm_arena(net, *tcdm), plan)
            except OnnxImportError as e:
                return e.message
            return None
        cands: list[tuple[GemmUnit, Arena]] = [(Modelled("cores", op, period), tcdm_arena(net, *tcdm)),
                                               (Modelled("rbe", op, period), tcdm_arena(net, *tcdm))]
        cands += [(u, tcdm_arena(net, *tcdm)) for u in units]
        unit, _, figures, refused = place(net, op, wm, im.shape[1], cands, fit)
        op.candidates = candidates(figures, refused)
        op.reason = reason(unit.name, figures)
        if not isinstance(unit, Modelled):
            op.target, op.unit, op.plan, op.rbe = "unit", unit, figures[unit.name], None
