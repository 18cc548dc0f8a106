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
output, the cores' and the RBE's int8 tensors) plus the task host's programming of the
tasks its path issues (:class:`HostTime`, from the bus's and the crossing's latencies); the
pipeline's own
:func:`cosim.deploy.pipeline.place` picks the fastest (the first of equals: cores, RBE, then
the sites in order) and records every candidate's figures and every refusal. A unit whose
operands do not fit the TCDM at once refuses the node with the arena's reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..deploy.units import (Arena, Candidate, GemmJob, GemmUnit, UnitBlock, candidates, gemm_of, gemm_op, place, reason,
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


@dataclass(frozen=True)
class HostTime:
    """The task host's programming of each task (:mod:`cosim.host`, the accelerators'
    ``run_job``): the host is an in-order bus master on the SOC crossbar, so each register
    access waits for its answer, ``soc.xbar`` latency + the crossing both ways + the cluster
    bus (+ the peripheral bus and the register bank's cycle for a register, the TCDM's
    ``latency + 1`` for a word of a kernel's args block) + one beat of the 4-byte word; the
    completion interrupt comes back over the crossing. What each task pays in series with
    its work: a DMA transfer 4 accesses before it (TCDM and L2 address, CMD read and write)
    and 3 after its interrupt (DONE, ERROR, FREE); a kernel its args block, 4 control
    writes and the STATUS read after its interrupt; a unit job its ``mmio`` accesses (the
    last one the STATUS poll's final read); an RBE job ACQUIRE, its job registers, TRIGGER,
    and FINISHED and STATUS after its interrupt; a 2D transfer 3 more (row length, strides).
    The write that starts the work (CMD, START, CTRL, TRIGGER) counts only its way to the
    register: its answer comes back while the work runs. Left out: the ``mmio`` poll's
    period (the job's end is seen up to ``MMIO_POLL`` late), 2 cycles of clock-edge
    alignment per task, the host's waiting for a busy DMA queue or lock, and the overlap of
    one transfer's programming with another's work when several are pushed together."""

    reg_ps: float           # one access to a cluster peripheral's register, there and back
    start_ps: float         # the write that starts the work: its way there (its answer overlaps the work)
    word_ps: float          # one word into the TCDM
    irq_ps: float           # an interrupt over the crossing

    def dma(self, transfers: int, strided: int = 0) -> int:
        """``transfers`` cluster DMA transfers, ``strided`` of them 2D (row length and strides)."""
        return round(transfers * (6 * self.reg_ps + self.start_ps + self.irq_ps) + 3 * strided * self.reg_ps)

    def kernel(self, name: str) -> int:
        """One cores kernel ``name``: its args block (one word per argument) and the start."""
        from components.cluster.kernels import KERNELS
        return round(len(KERNELS[name].args) * self.word_ps + 4 * self.reg_ps + self.start_ps + self.irq_ps)

    def job(self, accesses: int) -> int:
        """A unit's job of ``accesses`` register accesses (an ``mmio`` task)."""
        return round((accesses - 1) * self.reg_ps + self.start_ps)

    def rbe(self) -> int:
        """One RBE job (:func:`components.rbe.encode_job`'s registers)."""
        from components.rbe import Mode, RbeJob, encode_job
        job = RbeJob.dense(x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=1, w_out=1, k_in=8, k_out=8, w_bits=8,
                           i_bits=8, o_bits=8, mode=Mode.CONV1X1)   # every job writes the same registers
        return round((len(encode_job(job)) + 3) * self.reg_ps + self.start_ps + self.irq_ps)


def host_time(dma: DmaTime) -> HostTime:
    """The task host's timing on the clocks and bus parameters of ``dma`` (the platform's)."""
    p, tc, ts = dma.params, dma.tc, dma.ts
    cdc = p["cdc"]["soc_cycles"] * ts + p["cdc"]["cluster_cycles"] * tc
    to_cluster = p["soc.xbar"]["latency"] * ts + 2 * cdc + p["cluster.xbar"]["latency"] * tc
    at_reg = (p["cluster.periph"]["latency"] + p["cluster"]["ctrl_latency"]) * tc
    reg = to_cluster + at_reg + -(-4 // p["cluster.periph"]["width"]) * tc
    word = to_cluster + (p["cluster.tcdm"]["latency"] + 1 + -(-4 // p["cluster.xbar"]["width"])) * tc
    start = p["soc.xbar"]["latency"] * ts + cdc + p["cluster.xbar"]["latency"] * tc + at_reg
    return HostTime(reg, start, word, cdc)


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
    """The cluster cores (``conv2d``) or the RBE as a candidate of the pipeline's placement
    (a :class:`~cosim.deploy.units.Candidate`: the deployment's own paths lower it):
    the cycles :func:`.place.place_conv` modelled, at the cluster clock, plus ``movement_ps``:
    the cluster DMA moving the layer's int8 input and weights in and its int8 output out (the
    same figure for both, so it never changes which of the two wins)."""

    def __init__(self, name: str, op: QOp, period_ps: float, movement_ps: int, host_ps: int):
        self.name, self.family, self.op, self.period_ps = name, name, op, period_ps
        self.movement_ps, self.host_ps = movement_ps, host_ps

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
        return compute + self.movement_ps + self.host_ps, {**detail, "cycles": c, "compute_ps": compute,
                                                           "movement_ps": self.movement_ps, "host_ps": self.host_ps}


class Staged:
    """A unit of the platform with its job's data movement and requantisation: its cost is
    its own (its cycle model at its clock) plus the cores' ``requant_int32`` of its
    accumulator in the TCDM (:func:`requant_args`, modelled like every cluster kernel) plus
    the cluster DMA staging its operands and the requantisation's scale and bias L2 -> TCDM
    (pushed together) and bringing the int8 output back, as :func:`.deploy._conv_unit` runs
    them. The job is lowered once into an empty TCDM to learn those sizes; an operand that
    does not fit is the unit's refusal (``no``), as is a folded bias outside int32."""

    def __init__(self, unit: GemmUnit, op: QOp, im: np.ndarray, acc: np.ndarray, arena: Arena, dma: DmaTime,
                 host: HostTime, strided: tuple[int, int], zp: int):
        self.unit, self.name, self.family = unit, unit.name, unit.family
        self.op, self.im, self.acc, self.arena, self.dma, self.zp = op, im, acc, arena, dma, zp
        self.host, self.strided = host, strided
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
        # its operands, the scale and bias and the output: one transfer each (the output into
        # the interior of its tensor, 2D under a border); the job; requant_int32
        host = (self.host.dma(len(job.loads) + 2, self.strided[1]) + self.host.job(len(job.accesses))
                + self.host.kernel("requant_int32"))
        return compute + rq + moved + host, {**detail, "compute_ps": compute + rq, "requant_ps": rq,
                                             "movement_ps": moved, "host_ps": host}

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


def borders(net: QNet) -> dict[str, int]:
    """Each tensor's zero-point border in L2: the largest padding of the convolutions that
    read it (the deployment keeps it there, :func:`.deploy.deploy_qnet`)."""
    out: dict[str, int] = {}
    for op in net.ops:
        if op.kind == "conv":
            x = net.aliases.get(op.inputs[0], op.inputs[0])
            out[x] = max(out.get(x, 0), op.pad)
    return out


def strided(net: QNet, op: QOp, border: dict[str, int]) -> tuple[int, int]:
    """Whether ``op``'s padded input window in and its output out are 2D transfers (1 or 0
    each): the window's rows are not contiguous in L2 unless the input's border is the
    padding, the output's unless it has no border (:func:`.deploy._window_in`, ``_out``)."""
    x = net.aliases.get(op.inputs[0], op.inputs[0])
    hx, hy = net.tensors[x].shape[0], net.tensors[op.output].shape[0]
    return int(hx + 2 * op.pad > 1 and border.get(x, 0) != op.pad), int(hy > 1 and border.get(op.output, 0) > 0)


def cores_host_ps(host: HostTime, two_d: tuple[int, int]) -> int:
    """The cores' path of a layer in one piece (:func:`.deploy._conv`): its input window,
    weights and output transfers (``two_d``: :func:`strided`) and ``conv2d``."""
    return host.dma(3, sum(two_d)) + host.kernel("conv2d")


def rbe_host_ps(host: HostTime, two_d: tuple[int, int]) -> int:
    """The RBE's path (:func:`.deploy._conv_rbe`): the same three transfers, ``pack_rbe``,
    the RBE job, ``unpack_rbe``."""
    return host.dma(3, sum(two_d)) + host.kernel("pack_rbe") + host.rbe() + host.kernel("unpack_rbe")


def tcdm_arena(net: QNet, base: int, size: int) -> Arena:
    """An empty TCDM for one layer's unit operands."""
    return Arena(base, size, net.file, "TCDM", TCDM_NOTE)


def place_units(net: QNet, vals: dict[str, np.ndarray], units: list[GemmUnit], dma: DmaTime,
                tcdm: tuple[int, int]) -> None:
    """Put each GEMM op of ``net`` (placed on the cores or the RBE by :func:`.place.place_ops`)
    on the fastest of the cores, the RBE and ``units``, each costed with the data movement of
    its path (:class:`Modelled`, :class:`Staged`): sets ``op.candidates`` and ``op.reason``,
    and for a unit ``op.target = "unit"``, ``op.unit`` and ``op.plan``."""
    host, border = host_time(dma), borders(net)
    for op in net.ops:
        if not gemm_op(op):
            continue
        wm, im, _ = gemm_of(net, op, vals[net.aliases.get(op.inputs[0], op.inputs[0])])
        acc = wm @ im
        base = int8_movement_ps(dma, net, op)
        zp = net.tensors[net.aliases.get(op.inputs[0], op.inputs[0])].zp
        two_d = strided(net, op, border)
        staged = [Staged(u, op, im, acc, tcdm_arena(net, *tcdm), dma, host, two_d, zp) for u in units]
        cores, rbe = cores_host_ps(host, two_d), rbe_host_ps(host, two_d)
        cands: list[tuple[Candidate, Arena]] = [
            (Modelled("cores", op, dma.tc, base, cores), tcdm_arena(net, *tcdm)),
            (Modelled("rbe", op, dma.tc, base, rbe), tcdm_arena(net, *tcdm))]
        cands += [(u, u.arena) for u in staged]
        unit, _, figures, refused = place(net, op, wm, im.shape[1], cands,
                                          lambda u, a, plan: u.no if isinstance(u, Staged) else None)
        op.candidates = candidates(figures, refused)
        op.reason = reason(unit.name, figures)
        if isinstance(unit, Staged):
            op.target, op.unit, op.plan, op.rbe = "unit", unit.unit, figures[unit.name], None
