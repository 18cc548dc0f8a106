"""Place an imported network on MARSELLUS: convolutions on the RBE or the cluster cores
(by the cycle models, ``place.py``), everything else on the cores or the DMA.

Tensors live in L2 as dense int8 HWC, each with a border as wide as the largest padding
of a convolution reading it, filled with the tensor's zero point (ONNX pads with real 0,
which is the zero point in the integers). Weights (int8 with int32 scale and bias per
output channel for the cores; the RBE's packed unsigned weights and norm-quant records
for the RBE) start in HyperRAM; the I/O DMA prefetches them into two L2 slots, one block
ahead. Per op, in order: the cluster DMA brings the input window(s) and the weights into
the TCDM; the cores run the kernel (conv2d for Conv, Gemm, MatMul and AveragePool;
add_int8 for Add), or for a convolution on the RBE the cores turn the int8 window into
the RBE's bit planes (``pack_rbe``), the RBE computes and the cores turn its output back
into int8 (``unpack_rbe``, ``rbe.py``); the DMA puts the output into its tensor's
interior. Concat is DMA only (each input into its channel slice). An op whose data does
not fit the TCDM at once runs in bands of output rows (``_bands``: the input rows each
band needs come from L2, two buffer sets when they fit); only when one output row with its
inputs and weights does not fit is it an error naming the node.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from components.marsellus.facts import MEMORY_MAP

from ..deploy.mapping import Deployment, _Alloc, _Graph
from ..deploy.network import Layer, Network
from ..deploy.reference import NetParams
from ..deploy.tiling import TilingError, align
from .errors import OnnxImportError
from .ir import QNet, QOp
from .place import CORES, TCDM_USABLE, channel_blocks, place_ops
from .reference import forward
from .units import borders, place_units, tcdm_arena

if TYPE_CHECKING:
    from ..deploy.units import GemmUnit
    from .units import DmaTime

SHORT = {"cores": "cores", "rbe": "RBE", "dma": "DMA"}


class _Buf:
    def __init__(self, name: str, shape: tuple[int, int, int], border: int, zp: int):
        self.name, self.shape, self.b, self.zp = name, shape, border, zp
        self.addr = 0

    @property
    def row(self) -> int:
        return (self.shape[1] + 2 * self.b) * self.shape[2]

    @property
    def size(self) -> int:
        return (self.shape[0] + 2 * self.b) * self.row

    def at(self, r: int, c: int, pad: int = 0) -> int:
        """Address of pixel (r, c) of the tensor padded by ``pad`` (<= the border)."""
        return self.addr + (r + self.b - pad) * self.row + (c + self.b - pad) * self.shape[2]

    def image(self, v: np.ndarray) -> bytes:
        b = self.b
        v = np.pad(v, ((b, b), (b, b), (0, 0)), constant_values=self.zp) if b else v
        return v.astype(np.int8).tobytes()


def deploy_qnet(net: QNet, x: np.ndarray, ort_out: dict[str, np.ndarray] | None = None,
                convs_on: str = "auto", units: list[GemmUnit] | None = None,
                dma: "DmaTime | None" = None) -> Deployment:
    """The task graph, loads and goldens of ``net`` on input ``x``; ``ort_out`` (onnxruntime's
    tensors) becomes the second set of goldens the run's checks compare. ``convs_on``:
    ``auto`` (the cycle models choose), ``rbe`` (every conv the RBE can run exactly) or
    ``cores``. ``units``: the platform's other GEMM units (``units.preset_units``), each a
    candidate of every Conv/Gemm under ``auto`` beside the cores and the RBE (``dma``: the
    platform's cluster DMA timing and clocks, ``units.dma_time``)."""
    place_ops(net, convs_on)
    vals = forward(net, x)
    if units and convs_on == "auto":
        assert dma is not None, "units are placed with the platform's DMA timing"
        place_units(net, vals, units, dma, (MEMORY_MAP["tcdm"].base, TCDM_USABLE))
    src = lambda n: net.aliases.get(n, n)  # noqa: E731 - a flattened view reads its source
    border = borders(net)
    l2 = MEMORY_MAP["l2"]
    l2a = _Alloc("L2", l2.base, l2.size)
    bufs: dict[str, _Buf] = {}
    layers = [Layer(name=op.name, type=op.note or op.kind, inputs=[src(i) for i in op.inputs])
              for op in net.ops]
    h, w, c = net.tensors[net.input].shape
    dep = Deployment(Network(net.name, (h, w, c), 8, layers), NetParams(), {})
    for name in [net.input] + [op.output for op in net.ops]:
        t = net.tensors[name]
        b = bufs[name] = _Buf(name, t.shape, border.get(name, 0), t.zp)
        b.addr = l2a.take(b.size, f"tensor {t.onnx}")
        dep.goldens[name] = (b.addr, b.image(vals[name]))
        if name == net.input:
            dep.loads.append(("l2", b.addr, dep.goldens[name][1]))
        elif b.b:                 # the border: the zero point (the producer writes the interior)
            dep.loads.append(("l2", b.addr, bytes([t.zp & 0xFF]) * b.size))
    g = _Graph()
    prev: list[str] = []
    tbase = MEMORY_MAP["tcdm"].base
    lowered = {op.name: _UnitJob(net, op, vals, tbase) for op in net.ops if op.target == "unit"}
    wq = _Weights(net, bufs, src, l2a, dep, [u.blob for u in lowered.values()])
    for op in net.ops:
        if op.target == "rbe":
            prev = _conv_rbe(g, net, op, bufs[src(op.inputs[0])], bufs[op.output], prev, tbase, dep, wq)
        elif op.target == "unit":
            prev = _conv_unit(g, net, op, bufs[src(op.inputs[0])], bufs[op.output], prev, dep, l2a, vals, wq,
                              lowered[op.name])
        elif op.kind == "conv":
            prev = _conv(g, net, op, bufs[src(op.inputs[0])], bufs[op.output], prev, tbase, dep, wq)
        elif op.kind == "add":
            prev = _add(g, net, op, [bufs[src(i)] for i in op.inputs], bufs[op.output], prev, tbase, dep)
        elif op.kind == "maxpool":
            prev = _maxpool(g, net, op, bufs[src(op.inputs[0])], bufs[op.output], prev, tbase, dep)
        elif op.kind == "leaky":
            prev = _leaky(g, net, op, bufs[src(op.inputs[0])], bufs[op.output], prev, tbase, dep, l2a)
        else:
            prev = _concat(g, net, op, [bufs[src(i)] for i in op.inputs], bufs[op.output], prev, tbase, dep)
        kind = op.note or op.kind
        info = dep.layer_info.get(op.name, {})
        if "bands" in info and "tiled" not in op.why:     # activation tiling: say so where it ran
            op.why += (f"; tiled: {info['bands']} bands of up to {info['rows']} output rows "
                       f"({info['buffers']} buffer set{'s' if info['buffers'] > 1 else ''} in the TCDM)")
        dep.layer_info[op.name] = dep.layer_info.get(op.name, {}) | {"type": kind, "onnx_nodes": list(op.nodes),
                                   "onnx_ops": "+".join(t for t in op.ops if t != "QuantizeLinear"),
                                   "runs_on": op.unit.family if op.unit else SHORT[op.target], "where": op.why,
                                   "reason": op.reason or op.why, "placement": _label(op),
                                   "exact_vs_onnxruntime": op.exact}
        if op.candidates:         # placed among the platform's units: every candidate's figures
            dep.layer_info[op.name]["candidates"] = op.candidates
    dep.tasks = g.tasks
    dep.layer_info["_memory"] = {"l2_bytes": l2a.top - l2a.base, "hyperram_bytes": wq.l3.top - wq.l3.base}
    dep.onnx = {"file": net.file, "placement": placement(net),
                "goldens": {n: (bufs[n].addr, bufs[n].image(v)) for n, v in (ort_out or {}).items()
                            if n in bufs},
                "proven": all(op.exact for op in net.ops)}
    return dep


def _label(op: QOp) -> str:
    if op.candidates:             # the pipeline's candidate that won
        return op.unit.name if op.unit else {"rbe": "rbe"}.get(op.target, "cores")
    if op.target != "rbe":
        return SHORT[op.target]
    return {"3x3": "RBE 3x3", "1x1": "RBE 1x1", "gather": "RBE 1x1, gathered windows"}[op.rbe.mode]


def placement(net: QNet) -> list[list[str]]:
    """Per ONNX node: [node, op type, our op, where it ran and why]."""
    if any(not op.target for op in net.ops):
        place_ops(net)
    whys = {op.name: op.why for op in net.ops}
    rows = []
    for node, (op_type, ours, how) in net.placement.items():
        if ours in whys and not how:
            how = whys[ours]
            if op_type in ("QuantizeLinear", "Relu", "Clip"):
                how = f"fused into {ours}'s requantisation"
        rows.append([node, op_type, ours, how])
    return rows


def _blob(op: QOp, co: slice, ci: slice) -> bytes:
    """Weights (Cout, KH, KW, Cin) int8, then scale and bias int32, of one channel block."""
    rq = op.requant
    return (op.weights[co, :, :, ci].astype(np.int8).tobytes() + rq["scale"][co].astype("<i4").tobytes()
            + rq["bias"][co].astype("<i4").tobytes())


def _fit(net: QNet, op: QOp, parts: list[int]) -> list[int]:
    """TCDM offsets of ``parts`` (bytes each), or an error naming the ONNX node."""
    offs, top = [], 0
    for n in parts:
        offs.append(top)
        top += align(n, 8)
    if top > TCDM_USABLE:
        raise TilingError(f"{net.file}: node {op.nodes[0]!r} ({op.ops[0]}): its input, weights and "
                          f"output ({top} B) do not fit the TCDM ({TCDM_USABLE} B); the ONNX path runs "
                          "each op in one piece (small models only)")
    return offs


def _bands(net: QNet, op: QOp, total: int, fixed: list[int], per_band: Any) -> tuple[int, int, list[int]]:
    """Activation tiling: (rows per band, buffers, TCDM offsets) for an op whose data does
    not fit the TCDM at once. ``fixed`` stays for the whole op (weights, a table); each
    band needs ``per_band(rows)`` buffers. Two sets (ping-pong: the DMA moves band i+1 while
    the cores compute band i) when a band fits twice, else one. Offsets: the fixed parts,
    then each set's buffers."""
    fx = sum(align(v, 8) for v in fixed)
    for nbuf in (2, 1):
        for r in range(total, 0, -1):
            if fx + nbuf * sum(align(v, 8) for v in per_band(r)) <= TCDM_USABLE:
                offs, top = [], 0
                for v in fixed + per_band(r) * nbuf:
                    offs.append(top)
                    top += align(v, 8)
                return r, nbuf, offs
    need = fx + sum(align(v, 8) for v in per_band(1))
    raise TilingError(f"{net.file}: node {op.nodes[0]!r} ({op.ops[0]}): even one output row with what it "
                      f"needs ({need} B) does not fit the TCDM ({TCDM_USABLE} B)")


def _fits(parts: list[int]) -> bool:
    return sum(align(v, 8) for v in parts) <= TCDM_USABLE


def _window_in(g: _Graph, tid: str, x: _Buf, pad: int, dst: int, after: list[str], layer: str) -> str:
    h, w, c = x.shape
    return g.add(tid, "dma", after, layer, "l2_l1", src=x.at(0, 0, pad), dst=dst,
                 size=(w + 2 * pad) * c, rows=h + 2 * pad, src_stride=x.row, dst_stride=(w + 2 * pad) * c)


def _out(g: _Graph, tid: str, y: _Buf, src: int, after: list[str], layer: str) -> str:
    h, w, c = y.shape
    return g.add(tid, "dma", after, layer, "l2_l1", src=src, dst=y.at(0, 0), size=w * c, rows=h,
                 src_stride=w * c, dst_stride=y.row)


class _Weights:
    """Weights in HyperRAM (L3); the I/O DMA brings each block's weights into one of two L2
    slots, a block ahead: the slot is free once the block that used it two blocks ago has
    its weights in the TCDM (the scheme of the RBE path, cosim/deploy/mapping.py). A unit's
    weight operands (``unit_blobs``) take the same queue."""

    def __init__(self, net: QNet, bufs: dict[str, _Buf], src: Any, l2a: _Alloc, dep: Deployment,
                 unit_blobs: list[bytes]):
        l3 = MEMORY_MAP["hyperram"]
        self.l3 = _Alloc("HyperRAM", l3.base, l3.size)
        sizes = [len(op.rbe.blob()) for op in net.ops if op.target == "rbe"]
        sizes += [len(_blob(op, co, ci)) for op in net.ops if op.kind == "conv" and op.target == "cores"
                  for co, ci in channel_blocks(op, bufs[src(op.inputs[0])].shape, bufs[op.output].shape)]
        sizes += [len(b) for b in unit_blobs]
        slot = max(sizes, default=0)
        self.slots = [l2a.take(slot, "L2 weight slot") for _ in range(2)] if sizes else []
        self.users: list[list[str]] = [[], []]
        self.n = 0
        self.dep = dep

    def fetch(self, g: _Graph, tid: str, layer: str, blob: bytes) -> tuple[int, str, int]:
        """(L2 address, the I/O DMA task, slot index) of a weight blob."""
        a3 = self.l3.take(len(blob), f"weights of {layer}")
        self.dep.loads.append(("hyperram", a3, blob))
        k = self.n % 2
        self.n += 1
        t = g.add(tid, "udma", self.users[k], layer, "l3_l2", src=f"hyperram+{a3}", dst=self.slots[k],
                  size=len(blob))
        self.users[k] = []
        return self.slots[k], t, k


def _conv(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, prev: list[str], tbase: int,
          dep: Deployment, wq: _Weights) -> list[str]:
    h, w, cin = x.shape
    cout, kh, kw, _ = op.weights.shape
    p = op.pad
    ho, wo, _ = y.shape
    blocks = channel_blocks(op, x.shape, y.shape)
    outs: list[str] = []
    after = prev
    for bi, (co, ci) in enumerate(blocks):
        nco, nci = co.stop - co.start, ci.stop - ci.start
        blob = _blob(op, co, ci)
        n = op.name if len(blocks) == 1 else f"{op.name}.b{bi}"
        w_l2, t_l3, slot = wq.fetch(g, f"{n}.l3", op.name, blob)
        xin = (h + 2 * p) * (w + 2 * p) * nci
        if not _fits([xin, len(blob), ho * wo * nco]):
            outs += _conv_bands(g, net, op, x, y, co, ci, n, blob, w_l2, t_l3, slot, after, tbase, wq, dep)
            after = list(outs)
            continue
        a_x, a_w, a_y = (tbase + o for o in _fit(net, op, [xin, len(blob), ho * wo * nco]))
        if nci == cin:
            ins = [_window_in(g, f"{n}.in", x, p, a_x, after, op.name)]
        else:             # a channel slice of every pixel: one 2D DMA per padded row
            ins = [g.add(f"{n}.in{r}", "dma", after, op.name, "l2_l1", src=x.at(r - p, 0, 0) - p * cin + ci.start,
                         dst=a_x + r * (w + 2 * p) * nci, size=nci, rows=w + 2 * p, src_stride=cin, dst_stride=nci)
                   for r in range(h + 2 * p)]
        t_w = g.add(f"{n}.weights", "dma", after + [t_l3], op.name, "l2_l1", src=w_l2, dst=a_w, size=len(blob))
        wq.users[slot].append(t_w)
        nw = nco * kh * kw * nci
        k = g.add(f"{n}.k", "kernel", ins + [t_w], op.name, "compute", name="conv2d", cores=CORES,
                  args={"h": h + 2 * p, "w": w + 2 * p, "cin": nci, "cout": nco, "kh": kh, "kw": kw,
                        "stride": op.stride, "pad": 0, "shift": int(op.requant["shift"]), "relu": bool(op.relu),
                        "x": a_x, "weights": a_w, "scale": a_w + nw, "bias": a_w + nw + 4 * nco, "out": a_y})
        if nco == cout:
            outs += [_out(g, f"{n}.out", y, a_y, [k], op.name)]
        else:
            outs += [g.add(f"{n}.out{r}", "dma", [k], op.name, "l2_l1", src=a_y + r * wo * nco,
                           dst=y.at(r, 0) + co.start, size=nco, rows=wo, src_stride=nco, dst_stride=cout)
                     for r in range(ho)]
        after = outs[-1:] if nco == cout else list(outs[-ho:])   # the TCDM is reused by the next block
    dep.layer_info.setdefault(op.name, {})["blocks"] = len(blocks)
    return outs


def _conv_bands(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, co: slice, ci: slice, n: str, blob: bytes,
                w_l2: int, t_l3: str, slot: int, after: list[str], tbase: int, wq: _Weights,
                dep: Deployment) -> list[str]:
    """A convolution (channel block) in bands of output rows: the weights once, then per
    band the input rows it needs (from the zero-point border on), conv2d, the rows out."""
    h, w, cin = x.shape
    cout, kh, kw, _ = op.weights.shape
    p, st = op.pad, op.stride
    ho, wo, _ = y.shape
    nco, nci = co.stop - co.start, ci.stop - ci.start
    wp = w + 2 * p
    rows, nbuf, offs = _bands(net, op, ho, [len(blob)],
                              lambda r: [((r - 1) * st + kh) * wp * nci, r * wo * nco])
    a_w = tbase + offs[0]
    xb = [tbase + offs[1 + 2 * i] for i in range(nbuf)]
    yb = [tbase + offs[2 + 2 * i] for i in range(nbuf)]
    t_w = g.add(f"{n}.weights", "dma", after + [t_l3], op.name, "l2_l1", src=w_l2, dst=a_w, size=len(blob))
    wq.users[slot].append(t_w)
    nw = nco * kh * kw * nci
    outs: list[str] = []
    used: list[list[str]] = []          # per band: the tasks that use its buffer set
    for b, r0 in enumerate(range(0, ho, rows)):
        rr = min(rows, ho - r0)
        nin = (rr - 1) * st + kh
        i = b % nbuf
        free = used[b - nbuf] if b >= nbuf else []
        if nci == cin:
            ins = [g.add(f"{n}.in{b}", "dma", after + free, op.name, "l2_l1", src=x.at(r0 * st, 0, p), dst=xb[i],
                         size=wp * cin, rows=nin, src_stride=x.row, dst_stride=wp * cin)]
        else:
            ins = [g.add(f"{n}.in{b}_{r}", "dma", after + free, op.name, "l2_l1",
                         src=x.at(r0 * st + r, 0, p) + ci.start, dst=xb[i] + r * wp * nci, size=nci, rows=wp,
                         src_stride=cin, dst_stride=nci) for r in range(nin)]
        k = g.add(f"{n}.k{b}", "kernel", ins + [t_w] + free, op.name, "compute", name="conv2d", cores=CORES,
                  args={"h": nin, "w": wp, "cin": nci, "cout": nco, "kh": kh, "kw": kw, "stride": st, "pad": 0,
                        "shift": int(op.requant["shift"]), "relu": bool(op.relu), "x": xb[i], "weights": a_w,
                        "scale": a_w + nw, "bias": a_w + nw + 4 * nco, "out": yb[i]})
        if nco == cout:
            o = [g.add(f"{n}.out{b}", "dma", [k], op.name, "l2_l1", src=yb[i], dst=y.at(r0, 0), size=wo * cout,
                       rows=rr, src_stride=wo * cout, dst_stride=y.row)]
        else:
            o = [g.add(f"{n}.out{b}_{r}", "dma", [k], op.name, "l2_l1", src=yb[i] + r * wo * nco,
                       dst=y.at(r0 + r, 0) + co.start, size=nco, rows=wo, src_stride=nco, dst_stride=cout)
                 for r in range(rr)]
        outs += o
        used.append([k] + o)
    dep.layer_info.setdefault(op.name, {}).update(bands=len(used), rows=rows, buffers=nbuf)
    return outs


def _copy(g: _Graph, tid: str, src: int, dst: int, size: int, after: list[str], layer: str) -> str:
    """One contiguous cluster DMA transfer between L2 and the TCDM (either way)."""
    return g.add(tid, "dma", after, layer, "l2_l1", src=src, dst=dst, size=size)


class _UnitJob:
    """A unit layer lowered into an empty TCDM: its job, the TCDM buffers of the cores'
    requantisation, and its weight blob for HyperRAM (the unit's weight operands, then the
    requantisation's scale and bias, each part 64-byte aligned: ``parts`` = (offset in the
    blob, TCDM address, size)) apart from its input operand (``inputs``: TCDM address, bytes)."""

    def __init__(self, net: QNet, op: QOp, vals: dict[str, np.ndarray], tbase: int):
        from ..deploy.units import gemm_of
        from components.cluster.ops import requantize
        from .units import requant_args, requant_buffers
        x = net.aliases.get(op.inputs[0], op.inputs[0])
        wm, im, _ = gemm_of(net, op, vals[x])
        acc = wm @ im
        self.cout, self.npx = wm.shape[0], im.shape[1]
        arena = tcdm_arena(net, tbase, TCDM_USABLE)
        self.job = op.unit.lower(op, wm, im, acc, arena, op.plan)
        self.a_y, self.a_sb = requant_buffers(op, arena, self.cout, self.npx)
        folded = requant_args(op, wm, net.tensors[x].zp)
        assert not isinstance(folded, str), folded         # the placement refused the unit otherwise
        scale, bias = folded
        y = requantize(acc.T, scale, bias, int(op.requant["shift"]), 0 if op.relu else -128, 127)
        if not np.array_equal(y.reshape(vals[op.output].shape), vals[op.output]):
            raise OnnxImportError(net.file, f"requant_int32 of {op.name}'s accumulator differs from the integer "
                                  "reference", op.nodes[0], op.ops[0])
        image = op.unit.words(im)          # the input operand: the only one not from HyperRAM
        self.inputs = [(addr, data) for _, addr, data in self.job.loads if data == image]
        assert len(self.inputs) == 1, "one input operand per unit job"
        weights = [(addr, data) for _, addr, data in self.job.loads if data != image]
        weights.append((self.a_sb, scale.astype("<i4").tobytes() + bias.astype("<i4").tobytes()))
        self.parts, blob = [], b""
        for addr, data in weights:
            self.parts.append((len(blob), addr, len(data)))
            blob += data + bytes(-len(data) % 64)
        self.blob = blob


def _conv_unit(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, prev: list[str], dep: Deployment,
               l2a: _Alloc, vals: dict[str, np.ndarray], wq: _Weights, u: _UnitJob) -> list[str]:
    """A GEMM on a unit of the platform (``units.py``), lowered by :class:`_UnitJob`: its
    weight operands as the unit lays them out (e.g. int32 words of W) with the
    requantisation's scale and bias (the input zero point folded into the bias) start in
    HyperRAM and come through an L2 weight slot like the cores' and the RBE's weights; its
    input operand (the unit's words of the im2col of ``x - zp``, made in the deployment)
    waits in L2; the cluster DMA brings each into the TCDM; the unit's job (an ``mmio``
    task); the cores' ``requant_int32`` turns its int32 accumulator in the TCDM into the
    int8 output (``(acc P + B) >> S``, the integer reference's arithmetic, checked), which
    the DMA puts into the output tensor's interior, as the cores' path does."""
    from .units import requant_kernel_args
    n, job = op.name, u.job
    w_l2, t_l3, slot = wq.fetch(g, f"{n}.l3", n, u.blob)
    ins = []
    for i, (addr, data) in enumerate(u.inputs):
        a2 = l2a.take(len(data), f"input operand of {n} (staged in L2)")
        dep.loads.append(("l2", a2, data))
        ins.append(_copy(g, f"{n}.in{i}", a2, addr, len(data), prev, n))
    ws = [_copy(g, f"{n}.w{i}", w_l2 + off, addr, size, prev + [t_l3], n)
          for i, (off, addr, size) in enumerate(u.parts)]
    wq.users[slot] += ws
    t_job = g.add(f"{n}.gemm", "mmio", ins + ws[:-1], n, "compute", accesses=job.accesses)
    k = g.add(f"{n}.requant", "kernel", [t_job, ws[-1]], n, "compute", name="requant_int32", cores=CORES,
              args=requant_kernel_args(op, u.cout, u.npx, job.out_addr, u.a_sb, u.a_y))
    info = dict(job.info)
    # the unit's own sentence names the composed platforms' host requantisation: not this path's
    where = info.pop("where").replace("; requantised on the host", "")
    op.why = f"{where}; its weights from HyperRAM and its input staged in L2, moved by the cluster DMA, " \
             "requantised by the cores (requant_int32)"
    dep.layer_info.setdefault(n, {}).update(info, accumulator_bytes=len(job.out_image))
    return [_out(g, f"{n}.out", y, u.a_y, [k], n)]


def _conv_rbe(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, prev: list[str], tbase: int,
              dep: Deployment, wq: _Weights) -> list[str]:
    """DMA in the padded int8 window, pack_rbe, the RBE job, unpack_rbe, DMA out."""
    r = op.rbe
    n = op.name
    blob = r.blob()
    w_l2, t_l3, slot = wq.fetch(g, f"{n}.l3", n, blob)
    sz = r.sizes()
    a_x, a_xr, a_w, a_yr, a_y = (tbase + o for o in _fit(net, op, [sz[k] for k in ("x", "x_rbe", "weights",
                                                                                     "y_rbe", "y")]))
    t_in = _window_in(g, f"{n}.in", x, op.pad, a_x, prev, n)
    t_w = g.add(f"{n}.weights", "dma", prev + [t_l3], n, "l2_l1", src=w_l2, dst=a_w, size=len(blob))
    wq.users[slot].append(t_w)
    kh, kw, s = r.pack
    k1 = g.add(f"{n}.pack", "kernel", [t_in], n, "compute", name="pack_rbe", cores=CORES,
               args={"h": r.h_in, "w": r.w_in, "c": r.c_in, "kh": kh, "kw": kw, "stride": s, "k": r.k_in,
                     "x": a_x, "out": a_xr})
    nw = len(blob) - align(6 * r.k_out, 8)
    rb = g.add(f"{n}.rbe", "rbe", [k1, t_w], n, "compute", mode=r.rbe_mode, w_bits=r.w_bits, i_bits=8,
               o_bits=8, k_in=r.k_in, k_out=r.k_out, h_out=r.h_out, w_out=r.w_out, shift=r.shift, relu=False,
               input=a_xr, weights=a_w, normquant=a_w + nw, output=a_yr)
    k2 = g.add(f"{n}.unpack", "kernel", [rb], n, "compute", name="unpack_rbe", cores=CORES,
               args={"h": r.h_out, "w": r.w_out, "k": r.k_out, "c": r.c_out, "stride": r.sub, "x": a_yr,
                     "out": a_y})
    h, w, c = y.shape
    dep.layer_info.setdefault(n, {}).update(
        blocks=1, rbe_mode=r.mode, k_in=r.k_in, k_out=r.k_out, w_bits=r.w_bits,
        modelled_cycles=dict(r.cycles), tcdm_bytes=sum(align(v, 8) for v in sz.values()),
        real_ops=2 * h * w * c * int(np.prod(op.weights.shape[1:])),
        rbe_ops=2 * r.h_out * r.w_out * r.k_out * r.k_in * (9 if r.rbe_mode == "3x3" else 1))
    return [_out(g, f"{n}.out", y, a_y, [k2], n)]


def _add(g: _Graph, net: QNet, op: QOp, xs: list[_Buf], y: _Buf, prev: list[str], tbase: int,
         dep: Deployment) -> list[str]:
    size = int(np.prod(y.shape))
    if not _fits([size] * 3):
        return _eltwise_bands(g, net, op, xs, y, prev, tbase, dep, "add_int8")
    a_a, a_b, a_y = (tbase + o for o in _fit(net, op, [size] * 3))
    n = op.name
    ins = [_window_in(g, f"{n}.in{i}", x, 0, a, prev, n) for i, (x, a) in enumerate(zip(xs, (a_a, a_b)))]
    rq = op.requant
    k = g.add(f"{n}.k", "kernel", ins, n, "compute", name="add_int8", cores=CORES,
              args={"n": size, "signed": True, "m1": int(rq["m1"]), "m2": int(rq["m2"]),
                    "bias": int(rq["bias"]), "shift": int(rq["shift"]), "a": a_a, "b": a_b, "out": a_y})
    return [_out(g, f"{n}.out", y, a_y, [k], n)]


def _maxpool(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, prev: list[str], tbase: int,
             dep: Deployment) -> list[str]:
    """The input's interior in, maxpool_int8 (it pads with -128 itself), the output out."""
    h, w, c = x.shape
    if not _fits([h * w * c, int(np.prod(y.shape))]):
        return _maxpool_bands(g, net, op, x, y, prev, tbase, dep)
    a_x, a_y = (tbase + o for o in _fit(net, op, [h * w * c, int(np.prod(y.shape))]))
    n = op.name
    t_in = _window_in(g, f"{n}.in", x, 0, a_x, prev, n)
    k = g.add(f"{n}.k", "kernel", [t_in], n, "compute", name="maxpool_int8", cores=CORES,
              args={"h": h, "w": w, "c": c, "k": op.kernel, "stride": op.stride, "pad": op.pad, "x": a_x, "out": a_y})
    return [_out(g, f"{n}.out", y, a_y, [k], n)]


def _maxpool_bands(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, prev: list[str], tbase: int,
                   dep: Deployment) -> list[str]:
    """Max pooling in bands of output rows: each band's input rows (its windows' rows inside
    the tensor); the kernel pads only the band's outer edges."""
    h, w, c = x.shape
    ho, wo, _ = y.shape
    k, st, p = op.kernel, op.stride, op.pad
    n = op.name
    rows, nbuf, offs = _bands(net, op, ho, [], lambda r: [((r - 1) * st + k) * w * c, r * wo * c])
    outs: list[str] = []
    used: list[list[str]] = []
    for b, r0 in enumerate(range(0, ho, rows)):
        rr = min(rows, ho - r0)
        top, end = r0 * st - p, (r0 + rr - 1) * st - p + k          # input rows, may poke out
        y0, y1 = max(0, top), min(h, end)
        a_x, a_y = tbase + offs[2 * (b % nbuf)], tbase + offs[2 * (b % nbuf) + 1]
        free = used[b - nbuf] if b >= nbuf else []
        t_in = g.add(f"{n}.in{b}", "dma", prev + free, n, "l2_l1", src=x.at(y0, 0), dst=a_x, size=w * c,
                     rows=y1 - y0, src_stride=x.row, dst_stride=w * c)
        kk = g.add(f"{n}.k{b}", "kernel", [t_in] + free, n, "compute", name="maxpool_int8", cores=CORES,
                   args={"h": y1 - y0, "w": w, "c": c, "k": k, "stride": st, "pad": p, "pad_top": y0 - top,
                         "pad_bottom": end - y1, "x": a_x, "out": a_y})
        o = g.add(f"{n}.out{b}", "dma", [kk], n, "l2_l1", src=a_y, dst=y.at(r0, 0), size=wo * c, rows=rr,
                  src_stride=wo * c, dst_stride=y.row)
        outs.append(o)
        used.append([kk, o])
    dep.layer_info.setdefault(n, {}).update(bands=len(used), rows=rows, buffers=nbuf)
    return outs


def _leaky(g: _Graph, net: QNet, op: QOp, x: _Buf, y: _Buf, prev: list[str], tbase: int,
           dep: Deployment, l2a: _Alloc) -> list[str]:
    """The input in, leaky_int8 (or lut_int8 with its table, loaded into L2) in place, the
    output out."""
    size = int(np.prod(x.shape))
    rq = op.requant
    n = op.name
    table = []
    if "args" not in rq:
        t2 = l2a.take(256, f"table of {n}")
        dep.loads.append(("l2", t2, np.asarray(rq["table"]).astype(np.int8).tobytes()))
        table = [t2]
    if not _fits([size, 256]):
        return _eltwise_bands(g, net, op, [x], y, prev, tbase, dep, "leaky_int8" if not table else "lut_int8",
                              table)
    a_x, a_t = (tbase + o for o in _fit(net, op, [size, 256]))
    ins = [_window_in(g, f"{n}.in", x, 0, a_x, prev, n)]
    if "args" in rq:
        args = {"n": size, **{k: int(v) for k, v in rq["args"].items()}, "x": a_x, "out": a_x}
        name = "leaky_int8"
    else:
        ins.append(g.add(f"{n}.table", "dma", prev, n, "l2_l1", src=table[0], dst=a_t, size=256))
        args, name = {"n": size, "table": a_t, "x": a_x, "out": a_x}, "lut_int8"
    k = g.add(f"{n}.k", "kernel", ins, n, "compute", name=name, cores=CORES, args=args)
    return [_out(g, f"{n}.out", y, a_x, [k], n)]


def _eltwise_bands(g: _Graph, net: QNet, op: QOp, xs: list[_Buf], y: _Buf, prev: list[str], tbase: int,
                   dep: Deployment, kernel: str, table: list[int] | None = None) -> list[str]:
    """An element-wise op (add_int8, leaky_int8 / lut_int8 in place) in bands of rows."""
    h, w, c = y.shape
    n = op.name
    row = w * c
    nb = len(xs) + (1 if kernel == "add_int8" else 0)      # add: a, b, out; leaky: in place
    rows, nbuf, offs = _bands(net, op, h, [256] if table else [], lambda r: [r * row] * nb)
    fixed = 1 if table else 0
    sets = [[tbase + offs[fixed + nb * i + j] for j in range(nb)] for i in range(nbuf)]
    pre = []
    if table:
        a_t = tbase + offs[0]
        pre = [g.add(f"{n}.table", "dma", prev, n, "l2_l1", src=table[0], dst=a_t, size=256)]
    outs: list[str] = []
    used: list[list[str]] = []
    for b, r0 in enumerate(range(0, h, rows)):
        rr = min(rows, h - r0)
        bufs = sets[b % nbuf]
        free = used[b - nbuf] if b >= nbuf else []
        ins = [g.add(f"{n}.in{b}{'ab'[j]}", "dma", prev + free, n, "l2_l1", src=x.at(r0, 0), dst=bufs[j],
                     size=row, rows=rr, src_stride=x.row, dst_stride=row) for j, x in enumerate(xs)]
        cnt = rr * row
        if kernel == "add_int8":
            rq = op.requant
            args = {"n": cnt, "signed": True, "m1": int(rq["m1"]), "m2": int(rq["m2"]), "bias": int(rq["bias"]),
                    "shift": int(rq["shift"]), "a": bufs[0], "b": bufs[1], "out": bufs[2]}
        elif kernel == "leaky_int8":
            args = {"n": cnt, **{k: int(v) for k, v in op.requant["args"].items()}, "x": bufs[0], "out": bufs[0]}
        else:
            args = {"n": cnt, "table": a_t, "x": bufs[0], "out": bufs[0]}
        k = g.add(f"{n}.k{b}", "kernel", ins + pre + free, n, "compute", name=kernel, cores=CORES, args=args)
        o = g.add(f"{n}.out{b}", "dma", [k], n, "l2_l1", src=bufs[-1], dst=y.at(r0, 0), size=row, rows=rr,
                  src_stride=row, dst_stride=y.row)
        outs.append(o)
        used.append([k, o])
    dep.layer_info.setdefault(n, {}).update(bands=len(used), rows=rows, buffers=nbuf)
    return outs


def _concat(g: _Graph, net: QNet, op: QOp, xs: list[_Buf], y: _Buf, prev: list[str], tbase: int,
            dep: Deployment) -> list[str]:
    h, w, ct = y.shape
    n = op.name
    if not _fits([h * w * ct]):       # bands of rows, one buffer each (ping-pong when two fit)
        rows, nbuf, offs = _bands(net, op, h, [], lambda r: [r * w * ct])
        outs: list[str] = []
        for b, r0 in enumerate(range(0, h, rows)):
            rr = min(rows, h - r0)
            a_y = tbase + offs[b % nbuf]
            free = outs[b - nbuf:b - nbuf + 1] if b >= nbuf else []
            ins, c0 = [], 0
            for i, x in enumerate(xs):
                c = x.shape[2]
                for r in range(rr):
                    ins.append(g.add(f"{n}.in{b}_{i}_{r}", "dma", prev + free, n, "l2_l1", src=x.at(r0 + r, 0),
                                     dst=a_y + r * w * ct + c0, size=c, rows=w, src_stride=c, dst_stride=ct))
                c0 += c
            outs.append(g.add(f"{n}.out{b}", "dma", ins, n, "l2_l1", src=a_y, dst=y.at(r0, 0), size=w * ct,
                              rows=rr, src_stride=w * ct, dst_stride=y.row))
        dep.layer_info.setdefault(n, {}).update(bands=len(outs), rows=rows, buffers=nbuf)
        return outs
    (a_y,) = (tbase + o for o in _fit(net, op, [h * w * ct]))
    ins, c0 = [], 0
    for i, x in enumerate(xs):
        c = x.shape[2]
        for r in range(h):      # one 2D DMA per row: pixels of c bytes into slices of ct
            ins.append(g.add(f"{n}.in{i}_{r}", "dma", prev, n, "l2_l1", src=x.at(r, 0),
                             dst=a_y + (r * w) * ct + c0, size=c, rows=w, src_stride=c, dst_stride=ct))
        c0 += c
    return [_out(g, f"{n}.out", y, a_y, ins, n)]


def prepare(path: str, seed: int, label: str | None = None,
            input_shape: list[int] | None = None) -> tuple[Any, QNet, np.ndarray, np.ndarray | None]:
    """(QDQ model, our network, int8 input, float input or None): a float model is first
    quantised (``quantize.py``), calibrated on the seeded float input."""
    from .graph import translate
    from .load import load_model
    from .quantize import is_float_model, quantize
    from .reference import input_values
    file = label or str(path)
    model = load_model(path, input_shape, label)
    xf = None
    if is_float_model(model):
        from ..deploy.weights import layer_rng
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        xf = layer_rng(seed, "onnx-float-input").standard_normal(shape).astype(np.float32)
        model = quantize(model, xf, file)
    net = translate(model, file)
    return model, net, (input_values(net, seed) if xf is None else quantised_input(net, xf)), xf


def deploy_file(path: str, seed: int, label: str | None = None,
                input_shape: list[int] | None = None, convs_on: str = "auto",
                units: list[GemmUnit] | None = None, dma: "DmaTime | None" = None) -> Any:
    """Load, import and deploy an ONNX file on a seeded input, onnxruntime the golden. A
    float model's dequantised output is also compared with onnxruntime's float output of
    the original model (``FLOAT_TOL``). ``convs_on``, ``units``, ``dma``: see
    :func:`deploy_qnet`."""
    from .ort import run_ort
    model, net, x, xf = prepare(path, seed, label, input_shape)
    dep = deploy_qnet(net, x, run_ort(model, net, x), convs_on, units, dma)
    if xf is not None:
        t = net.tensors[net.output]
        src = dep.goldens[net.output]
        dep.onnx["float"] = {"addr": src[0], "size": len(src[1]), "scale": float(t.scale), "zp": t.zp,
                             "reference": float_reference(path, xf, input_shape, label).tolist(),
                             "tolerance": FLOAT_TOL}
    return dep


#: a float model's dequantised output may differ from onnxruntime's float output by this
#: fraction of the output's largest magnitude (int8 quantisation of every tensor; measured
#: on ResNet-20 and the MobileNet-style network, see docs/onnx.md)
FLOAT_TOL = 0.25


def quantised_input(net: QNet, xf: np.ndarray) -> np.ndarray:
    """The int8 storage of the float input as the model's QuantizeLinear makes it (RNE)."""
    t = net.tensors[net.input]
    v = xf[0].transpose(1, 2, 0) if xf.ndim == 4 else xf.reshape(1, 1, -1)
    q = np.round(v.astype(np.float64) / np.float64(np.float32(t.scale))) + t.zp
    return np.clip(q, -128, 127).astype(np.int64)


def float_reference(path: str, xf: np.ndarray, input_shape: list[int] | None, label: str | None) -> np.ndarray:
    """onnxruntime's output of the float model itself."""
    import onnxruntime as ort
    from .load import load_model
    model = load_model(path, input_shape, label)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3          # no warnings on stderr
    from .ort import _first
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return np.asarray(sess.run(None, {sess.get_inputs()[0].name: xf})[0], np.float64).reshape(-1)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types (a C++ extension)
        raise OnnxImportError(label or str(path), f"onnxruntime cannot run the float model: {_first(e)}") from None
