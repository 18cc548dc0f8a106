"""Map a quantised network onto MARSELLUS the way the hardware is used.

* Weights (packed in the RBE layout, with their norm-quant records) start in HyperRAM (L3);
  the I/O DMA brings each layer's weights into one of two L2 slots, one layer ahead.
* Activations live in L2 in the RBE bit-plane layout with a one-pixel zero border (so a
  3x3 convolution's input band is a contiguous block of rows).
* Per convolution: the cluster DMA brings weights + norm-quant into the TCDM, then bands of
  input rows (ping-pong), the RBE computes each band, the DMA takes each output band back to
  L2 (subsampling stride-2 outputs on the way). Band i+1 moves while band i computes.
* Residual adds, pooling and the classifier run on the cluster cores, also in bands.

The result is a task graph in the scenario's op vocabulary (``udma``, ``dma``, ``rbe``,
``kernel``), with ``load`` data, and goldens (expected L2 bytes per layer output) computed
by the reference.

How each convolution runs (RBE 3x3 or 1x1 mode, on DMA-gathered windows, on a packed
input layout) is chosen by the cycle models in :mod:`.placement`; ``layer_info`` records
the choice and the reason for the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from components.marsellus.facts import MEMORY_MAP  # planned before a platform is built

from .network import Network
from .placement import Placement, pad32, place_conv
from .reference import NetParams, forward, pack_tensor, pack_windows
from .tensor import Tensor
from .tiling import TilingError, align, conv_tiling, eltwise_tiling

#: the TCDM the deployment may use: the host keeps its kernel args blocks at the top
TCDM_USABLE = MEMORY_MAP["tcdm"].size - 256


@dataclass
class Deployment:
    network: Network
    params: NetParams
    tensors: dict[str, Tensor]
    tasks: list[dict[str, Any]] = field(default_factory=list)
    loads: list[tuple[str, int, bytes]] = field(default_factory=list)   # (space, addr, bytes)
    goldens: dict[str, tuple[int, bytes]] = field(default_factory=dict)  # name -> (addr, bytes)
    layer_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)        # reference tensors
    #: an imported ONNX model: its file, per-node placement, onnxruntime's goldens (cosim.onnx)
    onnx: dict[str, Any] | None = None

    @property
    def logits_addr(self) -> int:
        return self.goldens[self.network.layers[-1].name][0]


class _Alloc:
    """A bump allocator inside one memory region."""

    def __init__(self, name: str, base: int, size: int):
        self.name, self.base, self.size, self.top = name, base, size, base

    def take(self, n: int, what: str) -> int:
        a = align(self.top, 64)
        if a + n > self.base + self.size:
            raise TilingError(f"{what} ({n} B) does not fit {self.name}: "
                              f"{a - self.base} of {self.size} B already used")
        self.top = a + n
        return a


class _Graph:
    def __init__(self) -> None:
        self.tasks: list[dict[str, Any]] = []

    def add(self, tid: str, op: str, after: list[str | None], layer: str, category: str,
            **fields: Any) -> str:
        deps = sorted({a for a in after if a})
        self.tasks.append({"id": tid, "op": op, "after": deps, "layer": layer,
                           "category": category, **fields})
        return tid


def deploy(net: Network, seed: int, given: dict[str, np.ndarray] | None = None) -> Deployment:
    """Plan the whole network. Raises TilingError when something cannot be placed."""
    l2 = MEMORY_MAP["l2"]
    tcdm = MEMORY_MAP["tcdm"]
    input_readers = [ly for ly in net.layers if "input" in ly.inputs]
    places: dict[str, Placement] = {}
    for ly in net.layers:  # every layer must fit the TCDM before anything is allocated
        if ly.on_rbe:
            p = places[ly.name] = place_conv(ly, input_readers == [ly])
            conv_tiling(**_tiling_args(ly, p), tcdm_size=TCDM_USABLE, name=ly.name)
    params, outs = forward(net, seed, given or {})
    for name, p in places.items():
        if p.mode in ("gather", "packed"):
            params.set_windows(name, p.k_in, packed=p.mode == "packed")
    l3 = MEMORY_MAP["hyperram"]
    l2a = _Alloc("L2", l2.base, l2.size)
    l3a = _Alloc("HyperRAM", l3.base, l3.size)
    tensors: dict[str, Tensor] = {}
    dep = Deployment(net, params, tensors, outputs=outs)

    def tensor(name: str) -> Tensor:
        h, w, k, bits = net.shape_of(name)
        packed = places.get(input_readers[0].name) if name == "input" and len(input_readers) == 1 else None
        if packed is not None and packed.mode == "packed":
            # the host lays the input out as the first layer's 3x3 windows (no border)
            ly0 = input_readers[0]
            t = Tensor(name, ly0.h, ly0.w, packed.k_in, bits, pad=0)
            data = pack_tensor(pack_windows(outs[name][..., :k], ly0.stride), t)
        else:
            t = Tensor(name, h, w, pad32(k), bits)
            data = pack_tensor(outs[name], t)
        t.addr = l2a.take(t.size, f"activation tensor {name}")
        tensors[name] = t
        dep.goldens[name] = (t.addr, data)
        return t

    x = tensor("input")
    dep.loads.append(("l2", x.addr, dep.goldens["input"][1]))
    # two L2 weight slots, sized for the largest layer's weights + norm-quant
    blobs = {ly.name: params.blob(ly.name) for ly in net.layers if params.blob(ly.name)}
    slot_size = max((len(b) for b in blobs.values()), default=0)
    slots = [l2a.take(slot_size, "L2 weight slot") for _ in range(2)] if blobs else []
    l3_addr = {}
    for name, blob in blobs.items():
        l3_addr[name] = l3a.take(len(blob), f"weights of {name}")
        dep.loads.append(("hyperram", l3_addr[name], blob))

    g = _Graph()
    done: dict[str, list[str]] = {"input": []}      # tensor -> tasks that produce it
    readers: dict[str, list[str]] = {}              # tensor -> tasks that read it (for reuse)
    prev_compute: list[str] = []                    # last layer's tasks that use the TCDM
    slot_users: list[list[str]] = [[], []]
    wl = 0
    for ly in net.layers:
        out = tensor(ly.name) if ly.type not in ("avgpool",) else None
        blob = blobs.get(ly.name)
        w_l2 = None
        udma = None
        if blob:
            slot = wl % 2
            w_l2 = slots[slot]
            # the slot is free once the layer that used it two layers ago has its weights in TCDM
            udma = g.add(f"{ly.name}.l3", "udma", slot_users[slot], ly.name, "l3_l2",
                         src=f"hyperram+{l3_addr[ly.name]}", dst=w_l2, size=len(blob))
            slot_users[slot] = []
            wl += 1
        inputs_ready = [t for src in ly.inputs for t in done.get(src, [])]
        if ly.on_rbe:
            tasks, wtask = _conv(g, ly, places[ly.name], tensors[ly.inputs[0]], out, params, w_l2,
                                 udma, inputs_ready, prev_compute, tcdm.base, TCDM_USABLE, dep)
            slot_users[(wl - 1) % 2].append(wtask)
        elif ly.type == "add":
            tasks = _add(g, ly, [tensors[s] for s in ly.inputs], out, params, inputs_ready,
                         prev_compute, tcdm.base, TCDM_USABLE, dep)
        elif ly.type == "avgpool":
            tasks = []
            dep.layer_info[ly.name] = {"type": "avgpool", "fused_with": "next fc"}
            done[ly.name] = inputs_ready
            tensors[ly.name] = tensors[ly.inputs[0]]
            continue
        else:  # fc, fused with a preceding avgpool
            tasks = _pool_fc(g, net, ly, tensors, params, w_l2, udma, inputs_ready, prev_compute,
                             tcdm.base, TCDM_USABLE, dep, l2a)
            slot_users[(wl - 1) % 2].append(tasks[0])
        done[ly.name] = [t for t in tasks if ".out" in t or t.endswith(".store")] or tasks[-1:]
        prev_compute = tasks
        for s in ly.inputs:
            readers.setdefault(s, []).extend(tasks)
    dep.tasks = g.tasks
    dep.layer_info["_memory"] = {"l2_bytes": l2a.top - l2a.base, "hyperram_bytes": l3a.top - l3a.base}
    return dep


def _tiling_args(ly, p: Placement) -> dict[str, Any]:
    """conv_tiling's geometry for a placement (gathered/packed layers run in 1x1 mode)."""
    h, w, _k, bits = ly.in_shape + (ly.i_bits,)
    common = dict(k_out=p.k_out, i_bits=bits, w_bits=ly.w_bits, o_bits=ly.o_bits)
    if p.mode == "packed":       # the input tensor is already the output grid of windows
        return dict(mode="conv1x1", stride=1, h_in=ly.h, w_in=ly.w, k_in=p.k_in, **common)
    if p.mode == "gather":       # per output pixel 9 input pixels of pad32(K_in) channels
        return dict(mode="gather", stride=ly.stride, h_in=h, w_in=w, k_in=p.k_in // 9, **common)
    return dict(mode=ly.type, stride=ly.stride, h_in=h, w_in=w, k_in=p.k_in, **common)


def _conv(g: _Graph, ly, p: Placement, x: Tensor, y: Tensor, params: NetParams, w_l2: int,
          udma: str, ready: list[str], prev: list[str], tbase: int, tsize: int,
          dep: Deployment) -> tuple[list[str], str]:
    kind = p.mode
    t = conv_tiling(**_tiling_args(ly, p), tcdm_size=tsize, name=ly.name)
    w_tcdm = tbase
    nq_tcdm = tbase + align(t.w_bytes)
    buf0 = nq_tcdm + t.nq_bytes
    in_buf = [buf0, buf0 + t.in_band]
    out_buf = [buf0 + 2 * t.in_band + i * t.out_band for i in range(2)]
    name = ly.name
    # weights + norm-quant: one blob in L2, one DMA into the TCDM (after the previous layer)
    wtask = g.add(f"{name}.weights", "dma", [udma, *prev], name, "l2_l1", src=w_l2, dst=w_tcdm,
                  size=t.w_bytes + t.nq_bytes)
    tasks = [wtask]
    subsample = kind == "3x3" and ly.stride == 2
    h_full = x.h if kind == "3x3" else ly.h          # rows the RBE computes
    w_full = x.w if kind == "3x3" else ly.w
    taps_in = 9 if kind == "gather" else 1           # input pixels per RBE input pixel
    in_pix = taps_in * x.pix
    rbe_ids: list[str] = []
    out_ids: list[str] = []
    for b in range(t.bands):
        r0 = b * t.rows
        rows = min(t.rows, h_full - r0)
        i = b % 2
        after_in = ready + prev + ([rbe_ids[b - 2]] if b >= 2 else [])
        if kind == "3x3":
            tid = g.add(f"{name}.in{b}", "dma", after_in, name, "l2_l1",
                        src=x.addr + r0 * x.row, dst=in_buf[i], size=(rows + 2) * x.row)
        elif kind == "gather":
            # per output row and filter row, the window pixels side by side: 2D transfers of
            # `stride` pixels per window (the DMA's L2 rows may not overlap), then the rest
            ids = []
            s = ly.stride
            for r in range(rows):
                for ky in range(3):
                    for kx in range(0, 3, s):
                        n = min(s, 3 - kx)
                        ids.append(g.add(f"{name}.in{b}_{r}_{ky}{kx}", "dma", after_in, name, "l2_l1",
                                         src=x.addr + (s * (r0 + r) + ky) * x.row + kx * x.pix,
                                         dst=in_buf[i] + r * w_full * in_pix + (3 * ky + kx) * x.pix,
                                         size=n * x.pix, rows=w_full, src_stride=s * x.pix,
                                         dst_stride=in_pix))
            tid = g.add(f"{name}.in{b}", "barrier", ids, name, "l2_l1")
            tasks.extend(ids)
        elif ly.stride == 1 or kind == "packed":
            tid = g.add(f"{name}.in{b}", "dma", after_in, name, "l2_l1", src=x.at(r0), dst=in_buf[i],
                        size=x.w * x.pix, rows=rows, src_stride=x.row, dst_stride=x.w * x.pix)
        else:  # 1x1 stride 2: pick every other pixel of every other row (one 2D DMA per row)
            ids = []
            for r in range(rows):
                ids.append(g.add(f"{name}.in{b}_{r}", "dma", after_in, name, "l2_l1",
                                 src=x.at(2 * (r0 + r)), dst=in_buf[i] + r * w_full * x.pix,
                                 size=x.pix, rows=w_full, src_stride=2 * x.pix, dst_stride=x.pix))
            tid = g.add(f"{name}.in{b}", "barrier", ids, name, "l2_l1")
            tasks.extend(ids)
        tasks.append(tid)
        in_w = (x.w + 2) if kind == "3x3" else w_full
        rb = g.add(f"{name}.rbe{b}", "rbe", [tid, wtask] + ([rbe_ids[-1]] if rbe_ids else [])
                   + ([out_ids[b - 2]] if b >= 2 else []), name, "compute",
                   mode="3x3" if kind == "3x3" else "1x1", w_bits=ly.w_bits, i_bits=x.bits,
                   o_bits=y.bits, k_in=p.k_in, k_out=y.k, h_out=rows, w_out=w_full,
                   shift=params.shift(name), relu=ly.relu, input=in_buf[i], weights=w_tcdm,
                   normquant=nq_tcdm, output=out_buf[i],
                   x_row_stride=in_w * in_pix, x_pix_stride=in_pix,
                   y_row_stride=w_full * y.pix, y_pix_stride=y.pix)
        rbe_ids.append(rb)
        tasks.append(rb)
        if not subsample:
            oid = g.add(f"{name}.out{b}", "dma", [rb], name, "l2_l1", src=out_buf[i],
                        dst=y.at(r0), size=w_full * y.pix, rows=rows,
                        src_stride=w_full * y.pix, dst_stride=y.row)
            tasks.append(oid)
        else:  # 3x3 stride 2 at stride 1: keep even rows and even columns of the band
            ids = []
            for r in range(0, rows, 2):
                ids.append(g.add(f"{name}.out{b}_{r}", "dma", [rb], name, "l2_l1",
                                 src=out_buf[i] + r * w_full * y.pix, dst=y.at((r0 + r) // 2),
                                 size=y.pix, rows=w_full // 2, src_stride=2 * y.pix, dst_stride=y.pix))
            tasks.extend(ids)
            oid = g.add(f"{name}.out{b}", "barrier", ids, name, "l2_l1")
            tasks.append(oid)
        out_ids.append(oid)
    h_in, w_in, k_real = ly.in_shape
    taps = 9 if ly.type == "conv3x3" else 1
    dep.layer_info[name] = {"type": ly.type, "stride": ly.stride, "bands": t.bands, "rows": t.rows,
                            "tcdm_bytes": t.tcdm_bytes, "weights_bytes": t.w_bytes,
                            "w_bits": ly.w_bits, "i_bits": x.bits, "o_bits": y.bits,
                            "k_in": p.k_in, "k_out": y.k, "rbe_mode": kind,
                            "placement": p.label, "runs_on": "RBE", "reason": p.reason,
                            "modelled_cycles": dict(p.cycles),
                            "real_ops": 2 * ly.h * ly.w * ly.out * k_real * taps,
                            "rbe_ops": 2 * h_full * w_full * y.k * p.k_in * (9 if kind == "3x3" else 1)}
    return tasks, wtask


def _add(g: _Graph, ly, srcs: list[Tensor], y: Tensor, params: NetParams, ready: list[str],
         prev: list[str], tbase: int, tsize: int, dep: Deployment) -> list[str]:
    a, b = srcs
    t = eltwise_tiling(h=y.h, w=y.w, k=y.k, bits=(a.bits, b.bits, y.bits), tcdm_size=tsize, name=ly.name)
    sa, sb, so = t.band_bytes
    bufs = [[tbase + i * (sa + sb + so) + off for off in (0, sa, sa + sb)] for i in range(2)]
    tasks: list[str] = []
    kern_ids: list[str] = []
    out_ids: list[str] = []
    name = ly.name
    for bnd in range(t.bands):
        r0 = bnd * t.rows
        rows = min(t.rows, y.h - r0)
        i = bnd % 2
        after = ready + prev + ([kern_ids[bnd - 2], out_ids[bnd - 2]] if bnd >= 2 else [])
        ins = []
        for j, src in enumerate((a, b)):
            ins.append(g.add(f"{name}.in{bnd}{'ab'[j]}", "dma", after, name, "l2_l1", src=src.at(r0),
                             dst=bufs[i][j], size=src.w * src.pix, rows=rows, src_stride=src.row,
                             dst_stride=src.w * src.pix))
        k = g.add(f"{name}.k{bnd}", "kernel", ins + ([kern_ids[-1]] if kern_ids else []), name, "compute",
                  name="add_requant", cores=16,
                  args=params.add_args(name) | {"a": bufs[i][0], "b": bufs[i][1], "out": bufs[i][2],
                                                "pixels": rows * y.w, "k": y.k, "channels": ly.k,
                                                "a_bits": a.bits, "b_bits": b.bits, "o_bits": y.bits})
        o = g.add(f"{name}.out{bnd}", "dma", [k], name, "l2_l1", src=bufs[i][2], dst=y.at(r0),
                  size=y.w * y.pix, rows=rows, src_stride=y.w * y.pix, dst_stride=y.row)
        tasks += ins + [k, o]
        kern_ids.append(k)
        out_ids.append(o)
    dep.layer_info[name] = {"type": "add", "bands": t.bands, "rows": t.rows, "tcdm_bytes": t.tcdm_bytes,
                            "placement": "cores", "runs_on": "cores",
                            "reason": "element-wise add with requantisation: the RBE only convolves",
                            "real_ops": 4 * y.h * y.w * ly.k}
    return tasks


def _pool_fc(g: _Graph, net: Network, ly, tensors: dict[str, Tensor], params: NetParams, w_l2: int,
             udma: str, ready: list[str], prev: list[str], tbase: int, tsize: int, dep: Deployment,
             l2a: _Alloc) -> list[str]:
    """Global average pooling (if it precedes) fused with the classifier, on the cores."""
    name = ly.name
    pool = net.layer(ly.inputs[0])
    x = tensors[pool.inputs[0]] if pool.type == "avgpool" else tensors[ly.inputs[0]]
    n_in, n_out = x.k, ly.out
    dense = x.h * x.w * x.pix
    fcw = params.blob(name)
    need = align(dense) + align(x.k) + align(len(fcw)) + align(n_out * 4)
    if need > tsize:
        raise TilingError(f"{name}: pooling input ({dense} B) and classifier weights "
                          f"({len(fcw)} B) do not fit the TCDM")
    a_x = tbase
    a_v = a_x + align(dense)
    a_w = a_v + align(x.k)
    a_y = a_w + align(len(fcw))
    win = g.add(f"{name}.weights", "dma", [udma, *prev], name, "l2_l1", src=w_l2, dst=a_w, size=len(fcw))
    xin = g.add(f"{name}.in", "dma", ready + prev, name, "l2_l1", src=x.at(0), dst=a_x,
                size=x.w * x.pix, rows=x.h, src_stride=x.row, dst_stride=x.w * x.pix)
    kp = g.add(f"{name}.pool", "kernel", [xin], pool.name, "compute", name="avgpool",
               cores=16, args=params.pool_args(pool.name) | {"x": a_x, "out": a_v, "pixels": x.h * x.w,
                                                             "k": x.k, "bits": x.bits})
    kf = g.add(f"{name}.fc", "kernel", [kp, win], name, "compute", name="fc", cores=16,
               args={"x": a_v, "w": a_w, "bias": a_w + n_out * n_in, "out": a_y,
                     "n_in": n_in, "n_out": n_out})
    logits = l2a.take(n_out * 4, "logits")
    st = g.add(f"{name}.store", "dma", [kf], name, "l2_l1", src=a_y, dst=logits, size=n_out * 4)
    dep.goldens[name] = (logits, dep.outputs[name].astype("<i4").tobytes())
    dep.goldens.pop(pool.name, None)
    dep.layer_info[name] = {"type": "avgpool+fc", "tcdm_bytes": need, "placement": "cores",
                            "runs_on": "cores",
                            "reason": "pooling and a fully connected layer: the RBE only convolves",
                            "real_ops": 2 * n_out * pool.k + x.h * x.w * pool.k}
    return [win, xin, kp, kf, st]
