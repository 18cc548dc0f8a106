"""The GEMM units of a MARSELLUS preset beside its cores and RBE (docs/onnx.md, "Other units
on MARSELLUS"; docs/plugins.md, the unit contract).

MARSELLUS is built in Python, so its optional blocks are named by its deployer as *sites*
(:class:`Site`: the parameter group that enables one, its block type, its register region,
its clock and the memory it reads its operands from). Every enabled site whose block type a
family declares a GEMM unit for (``units``, reached through the registry: this module names
no family) is a candidate for each Conv/Gemm beside the cores' ``conv2d`` and the RBE. Each
quotes its compute (its cycle model at its clock, for a unit with the cores'
``requant_int32`` of its accumulator; the cores and the RBE the cycles :mod:`.place`
modelled, at the cluster clock) plus its data movement through the cluster DMA
(:class:`DmaTime`: a unit's operands with the requantisation's scale and bias and its int8
output, the cores' and the RBE's int8 tensors); the pipeline's own
:func:`cosim.deploy.pipeline.place` picks the fastest (the first of equals: cores, RBE, then
the sites in order) and records every candidate's figures and every refusal. A unit whose
operands do not fit the TCDM at once refuses the node with the arena's reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..deploy.pipeline import (Arena, GemmJob, GemmUnit, UnitBlock, candidates, gemm_of, gemm_op, place, reason,
                               unit_factories)
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


@dataclass(frozen=True)
class DmaTime:
    """The cluster DMA's transfer duration in burst mode, docs/memory.md "Transfer duration":
    ``T = cmd*Tc + L_path + L_tcdm*Tc + sum over bursts k of occ(B_k)``, the bursts cut by
    the engine's own :func:`components.cluster_dma.engine.split_bursts`; transfers pushed
    together in one direction take the formula of their concatenated bursts. In TCDM word
    mode the TCDM port stores each L2 -> TCDM burst after it arrived, in turn (docs/memory.md:
    for one burst ``T + tcdm_beats(B)*Tc``; a long burst delays the short ones after it). The bursts are
    cut from a page-aligned L2 address (the deployment's are 64-byte aligned: the same
    occupancies, every cut at a multiple of 8 bytes)."""

    tc: float               # cluster clock period (ps)
    ts: float               # SOC clock period (ps)
    params: dict[str, dict[str, Any]]

    def fixed_ps(self) -> float:
        """``cmd*Tc + L_path + L_tcdm*Tc`` (shared L2)."""
        p, tc, ts = self.params, self.tc, self.ts
        l_cdc = p["cdc"]["soc_cycles"] * ts + p["cdc"]["cluster_cycles"] * tc
        l_path = (p["cluster.xbar"]["latency"] * tc + 2 * l_cdc
                  + (p["soc.xbar"]["latency"] + p["soc.l2"]["latency"]) * ts)
        return p["cluster.dma"]["cmd_latency"] * tc + l_path + p["cluster.tcdm"]["latency"] * tc

    def occ_ps(self, b: int) -> float:
        """One burst of ``b`` bytes: the largest occupancy of the hops it crosses."""
        p, tc, ts = self.params, self.tc, self.ts
        words = -(-b // 4)
        return max(-(-b // p["cluster.dma"]["beat_bytes"]) * tc, -(-b // p["cluster.xbar"]["width"]) * tc,
                   -(-b // p["soc.xbar"]["width"]) * ts, -(-words // p["soc.l2"]["banks"]) * ts,
                   -(-words // (p["cluster.tcdm"]["dma_port_bytes"] // 4)) * tc)

    def ps(self, sizes: list[int], to_tcdm: bool) -> int:
        """Transfers of ``sizes`` bytes pushed together in one direction."""
        from components.cluster_dma.engine import split_bursts
        from components.cluster_dma.registers import DmaCommand
        from components.marsellus.facts import MEMORY_MAP
        d = self.params["cluster.dma"]
        bursts = [b for n in sizes if n for _, _, b in split_bursts(
            DmaCommand(MEMORY_MAP["l2"].base, MEMORY_MAP["tcdm"].base, n, to_tcdm),
            d["beat_bytes"], d["max_burst_beats"], d["page_bytes"])]
        if not bursts:
            return 0
        t = stored = self.fixed_ps()
        port = self.params["cluster.tcdm"]["dma_port_bytes"]
        word = to_tcdm and self.params["cluster.tcdm"]["mode"] == "word"
        for b in bursts:
            t += self.occ_ps(b)
            if word:        # the TCDM port stores each burst after it arrived, one after the other
                stored = max(stored, t) + -(-b // port) * self.tc
        return round(max(t, stored))


def dma_time(sc: "Scenario") -> DmaTime:
    """``sc``'s cluster DMA timing (its clocks and its memory path's parameters)."""
    from ..platforms import resolved_parameters
    params = resolved_parameters(sc)
    return DmaTime(1e12 / clock_hz(params, "cluster"), 1e12 / clock_hz(params, "soc"), params)


def clock_hz(params: dict[str, dict[str, Any]], fll: str) -> float:
    """``<fll>.clock.freq``, by default the FLL's frequency at the PMU's operating point."""
    freq = params[f"{fll}.clock"].get("freq")
    if freq is None:
        from components.marsellus.facts import operating_points
        freq = operating_points().operating_points[params["pmu"]["operating_point"]].freq[fll]
    return float(freq)


class Modelled:
    """The cluster cores (``conv2d``) or the RBE as a candidate of the pipeline's placement:
    the cycles :func:`.place.place_conv` modelled, at the cluster clock, plus ``movement_ps``:
    the cluster DMA moving the layer's int8 input and weights in and its int8 output out (the
    same figure for both, so it never changes which of the two wins)."""

    def __init__(self, name: str, op: QOp, period_ps: float, movement_ps: int):
        self.name, self.family, self.op, self.period_ps = name, name, op, period_ps
        self.movement_ps = movement_ps

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
        compute = round(c * self.period_ps)
        return compute + self.movement_ps, {**detail, "cycles": c, "compute_ps": compute,
                                            "movement_ps": self.movement_ps}

    def lower(self, op: QOp, wm: np.ndarray, im: np.ndarray, acc: np.ndarray, arena: Arena,
              plan: dict[str, Any]) -> Any:
        raise NotImplementedError("the deployment's own paths run the cores and the RBE")

    def words(self, acc: np.ndarray) -> bytes:
        raise NotImplementedError("the cores and the RBE store int8 tensors")


class Staged:
    """A unit of the platform with its job's data movement and requantisation: its cost is
    its own (its cycle model at its clock) plus the cores' ``requant_int32`` of its
    accumulator in the TCDM (:func:`requant_args`, modelled like every cluster kernel) plus
    the cluster DMA staging its operands and the requantisation's scale and bias L2 -> TCDM
    (pushed together) and bringing the int8 output back, as :func:`.deploy._conv_unit` runs
    them. The job is lowered once into an empty TCDM to learn those sizes; an operand that
    does not fit is the unit's refusal (``no``), as is a folded bias outside int32."""

    def __init__(self, unit: GemmUnit, op: QOp, im: np.ndarray, acc: np.ndarray, arena: Arena, dma: DmaTime,
                 zp: int):
        self.unit, self.name, self.family = unit, unit.name, unit.family
        self.op, self.im, self.acc, self.arena, self.dma, self.zp = op, im, acc, arena, dma, zp
        self.no: str | None = None

    def refuse(self, op: QOp, wm: np.ndarray) -> str | None:
        no = self.unit.refuse(op, wm)
        folded = requant_args(op, wm, self.zp)
        return no or (folded if isinstance(folded, str) else None)

    def cost_ps(self, wm: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
        compute, detail = self.unit.cost_ps(wm, n)
        try:
            job = self.unit.lower(self.op, wm, self.im, self.acc, self.arena, {"time_ps": compute, **detail})
            a_y, a_sb = requant_buffers(self.op, self.arena, wm.shape[0], n)
        except OnnxImportError as e:
            self.no = e.message
            return compute, detail
        from .place import kernel_cycles
        rq = round(kernel_cycles("requant_int32", requant_kernel_args(self.op, wm.shape[0], n, job.out_addr,
                                                                       a_sb, a_y)) * self.dma.tc)
        moved = movement_ps(self.dma, job, 8 * wm.shape[0], n * wm.shape[0])
        return compute + rq + moved, {**detail, "compute_ps": compute + rq, "requant_ps": rq, "movement_ps": moved}

    def lower(self, op: QOp, wm: np.ndarray, im: np.ndarray, acc: np.ndarray, arena: Arena,
              plan: dict[str, Any]) -> GemmJob:
        return self.unit.lower(op, wm, im, acc, arena, plan)

    def words(self, acc: np.ndarray) -> bytes:
        return self.unit.words(acc)


def requant_args(op: QOp, wm: np.ndarray, zp: int) -> tuple[np.ndarray, np.ndarray] | str:
    """(scale, bias) per output channel of ``requant_int32`` on a unit's accumulator ``W @
    (I - zp)``: the cores' ``(acc P + B) >> S`` with the input zero point folded into the
    bias (``B + zp * P * sum W``), or why that bias does not fit the kernel's int32."""
    rq = op.requant
    cout = wm.shape[0]
    scale = np.broadcast_to(np.asarray(rq["scale"], np.int64), (cout,))
    bias = np.broadcast_to(np.asarray(rq["bias"], np.int64), (cout,)) + zp * scale * wm.sum(axis=1)
    worst = int(np.abs(bias).max(initial=0))
    if worst >= 1 << 31:
        return (f"the requantisation's bias with the input zero point {zp} folded in ({worst}) does not fit "
                "requant_int32's int32 bias")
    return scale, bias


def requant_buffers(op: QOp, arena: Arena, cout: int, n: int) -> tuple[int, int]:
    """TCDM addresses of ``requant_int32``'s int8 output and of its scale and bias (one block)."""
    return arena.take(n * cout, f"int8 output of {op.name}"), arena.take(8 * cout, f"scale and bias of {op.name}")


def requant_kernel_args(op: QOp, cout: int, n: int, acc: int, sb: int, out: int) -> dict[str, Any]:
    """``requant_int32``'s arguments for a unit's accumulator of ``op`` at ``acc``."""
    return {"n": n, "c": cout, "shift": int(op.requant["shift"]), "relu": bool(op.relu), "acc": acc,
            "scale": sb, "bias": sb + 4 * cout, "out": out}


def movement_ps(dma: DmaTime, job: GemmJob, extra_in: int, out: int) -> int:
    """A unit job's DMA: its operands and ``extra_in`` bytes (the requantisation's scale and
    bias) L2 -> TCDM, pushed together, then its ``out`` bytes of int8 output back."""
    return dma.ps([len(d) for _, _, d in job.loads] + [extra_in], True) + dma.ps([out], False)


def int8_movement_ps(dma: DmaTime, net: QNet, op: QOp) -> int:
    """The layer's int8 tensors through the DMA: input and weights in, output out (what
    every path moves at least; the cores' and the RBE's tiling and overlap aside)."""
    size = lambda name: int(np.prod(net.tensors[net.aliases.get(name, name)].shape))  # noqa: E731
    return dma.ps([size(op.inputs[0]), op.weights.size], True) + dma.ps([size(op.output)], False)


def tcdm_arena(net: QNet, base: int, size: int) -> Arena:
    """An empty TCDM for one layer's unit operands."""
    return Arena(base, size, net.file, "TCDM", TCDM_NOTE)


def place_units(net: QNet, vals: dict[str, np.ndarray], units: list[GemmUnit], dma: DmaTime,
                tcdm: tuple[int, int]) -> None:
    """Put each GEMM op of ``net`` (placed on the cores or the RBE by :func:`.place.place_ops`)
    on the fastest of the cores, the RBE and ``units``, each costed with the data movement of
    its path (:class:`Modelled`, :class:`Staged`): sets ``op.candidates`` and ``op.reason``,
    and for a unit ``op.target = "unit"``, ``op.unit`` and ``op.plan``."""
    for op in net.ops:
        if not gemm_op(op):
            continue
        wm, im, _ = gemm_of(net, op, vals[net.aliases.get(op.inputs[0], op.inputs[0])])
        acc = wm @ im
        base = int8_movement_ps(dma, net, op)
        zp = net.tensors[net.aliases.get(op.inputs[0], op.inputs[0])].zp
        staged = [Staged(u, op, im, acc, tcdm_arena(net, *tcdm), dma, zp) for u in units]
        cands: list[tuple[GemmUnit, Arena]] = [(Modelled("cores", op, dma.tc, base), tcdm_arena(net, *tcdm)),
                                               (Modelled("rbe", op, dma.tc, base), tcdm_arena(net, *tcdm))]
        cands += [(u, u.arena) for u in staged]
        unit, _, figures, refused = place(net, op, wm, im.shape[1], cands,
                                          lambda u, a, plan: u.no if isinstance(u, Staged) else None)
        op.candidates = candidates(figures, refused)
        op.reason = reason(unit.name, figures)
        if isinstance(unit, Staged):
            op.target, op.unit, op.plan, op.rbe = "unit", unit.unit, figures[unit.name], None
