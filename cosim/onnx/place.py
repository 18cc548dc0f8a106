"""Where each op of an imported network runs on MARSELLUS, by the cycle models.

A convolution (also Gemm/MatMul and average pooling, which are convolutions here) runs on
the RBE (``rbe.py``: ``pack_rbe`` on the cores, the RBE job, ``unpack_rbe`` on the cores)
or on the cores (``conv2d``), whichever the models give fewer cycles: the cluster's
analytical kernel timing (``components.cluster.timing.estimate_cycles``, the same plan the
simulation runs) and the RBE's cycle model (``components.rbe.cycles``, ideal: no TCDM
stalls). Data movement is the same DMA either way and is left out of the comparison. Each
op records the choice and the numbers behind it (``op.why``), which the report shows per
ONNX node.
"""
from __future__ import annotations

from typing import Any

from components.marsellus.facts import MEMORY_MAP

from components.cluster.kernels import KernelArgError

from ..deploy.tiling import TilingError, align
from .ir import QNet, QOp
from .rbe import RbeConv, candidates

TCDM_USABLE = MEMORY_MAP["tcdm"].size - 256      # the host's kernel args blocks sit at the top
CORES = 16
#: ``convs_on``: ``auto`` by the cycle models; ``rbe`` every conv the RBE can run exactly;
#: ``cores`` none
CHOICES = ("auto", "rbe", "cores")

WHY = {
    "fc": "a fully connected layer",
    "pool": "average pooling (a 0/1 window per channel)",
    "conv": "convolution",
}


def kernel_cycles(name: str, args: dict[str, Any]) -> int:
    """Modelled cycles of one cluster kernel on 16 cores (contention-free, from its plan)."""
    from components.cluster.event_unit import EventUnitParams
    from components.cluster.kernels import KERNELS, job_steps
    from components.cluster.timing import estimate_cycles, load_timing
    k = KERNELS[name]
    base = MEMORY_MAP["tcdm"].base
    a = k.normalize(args | {x.name: base for x in k.args if x.kind == "addr"})
    tm = load_timing()
    return int(estimate_cycles(job_steps(k, a, CORES, tm), tm, EventUnitParams()))


def rbe_cycles(r: RbeConv) -> dict[str, int]:
    """pack_rbe, the RBE job and unpack_rbe, modelled."""
    from components.rbe.cycles import job_cycles
    from components.rbe.job import Mode, RbeJob
    kh, kw, s = r.pack
    pack = kernel_cycles("pack_rbe", {"h": r.h_in, "w": r.w_in, "c": r.c_in, "kh": kh, "kw": kw,
                                      "stride": s, "k": r.k_in})
    job = RbeJob.dense(x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=r.h_out, w_out=r.w_out,
                       k_in=r.k_in, k_out=r.k_out, w_bits=r.w_bits, i_bits=8, o_bits=8,
                       mode=Mode.CONV3X3 if r.rbe_mode == "3x3" else Mode.CONV1X1, shift=r.shift)
    unpack = kernel_cycles("unpack_rbe", {"h": r.h_out, "w": r.w_out, "k": r.k_out, "c": r.c_out,
                                          "stride": r.sub})
    rbe = int(job_cycles(job).ideal)
    return {"pack": pack, "rbe": rbe, "unpack": unpack, "total": pack + rbe + unpack}


def cores_cycles(op: QOp, x_shape: tuple[int, int, int]) -> int:
    h, w, cin = x_shape
    cout, kh, kw, _ = op.weights.shape
    return kernel_cycles("conv2d", {"h": h + 2 * op.pad, "w": w + 2 * op.pad, "cin": cin, "cout": cout,
                                    "kh": kh, "kw": kw, "stride": op.stride, "shift": int(op.requant["shift"])})


def _fits(r: RbeConv) -> bool:
    return sum(align(v, 8) for v in r.sizes().values()) <= TCDM_USABLE


def place_conv(op: QOp, x_shape: tuple[int, int, int], blocks: int, convs_on: str = "auto") -> None:
    """Set ``op.target``, ``op.rbe`` and ``op.why`` for a convolution."""
    what = WHY[op.note or "conv"]
    if convs_on == "cores":
        op.target, op.rbe, op.why = "cores", None, f"cluster cores (conv2d): {what}; convs_on: cores"
        return
    cores = cores_cycles(op, x_shape)
    found, reason = candidates(op, x_shape) if blocks == 1 else ([], "grouped: run in channel blocks")
    fits = [r for r in found if _fits(r)]
    if found and not fits:
        reason = "its int8 and bit-plane buffers do not fit the TCDM together"
    for r in fits:
        r.cycles = rbe_cycles(r)
    best = min(fits, key=lambda r: (r.cycles["total"], r.mode), default=None)
    op.modelled = {"cores": cores} | {f"rbe {r.mode}": r.cycles["total"] for r in fits}
    if best is None:
        op.target, op.rbe, op.rbe_refused = "cores", None, reason
        op.why = f"cluster cores (conv2d): {what}, {cores} cycles modelled; not on the RBE: {reason}"
        return
    c = best.cycles
    rbe_txt = (f"RBE {best.mode} (K_in {best.k_in}, {best.w_bits}-bit weights): pack {c['pack']} + RBE "
               f"{c['rbe']} + unpack {c['unpack']} = {c['total']} cycles")
    if convs_on == "rbe" or c["total"] < cores:
        op.target, op.rbe = "rbe", best
        op.why = f"{rbe_txt} modelled vs cores conv2d {cores}" + ("" if c["total"] < cores else "; convs_on: rbe")
    else:
        op.target, op.rbe = "cores", None
        op.why = f"cluster cores (conv2d): {what}; {cores} cycles modelled vs {rbe_txt}"


def channel_blocks(op: QOp, x_shape: tuple[int, int, int], y_shape: tuple[int, int, int]) -> list[tuple[slice, slice]]:
    """Channel blocks (output, input) that fit the TCDM: all channels at once, or for a
    grouped/depthwise convolution (block-diagonal weights) the most groups that fit."""
    h, w, cin = x_shape
    cout, kh, kw, _ = op.weights.shape
    ho, wo, _ = y_shape
    p = op.pad
    gi, go = cin // op.groups, cout // op.groups

    def need(n: int) -> int:
        ci, co = n * gi if op.groups > 1 else cin, n * go if op.groups > 1 else cout
        return sum(align(b, 8) for b in ((h + 2 * p) * (w + 2 * p) * ci, co * kh * kw * ci + 8 * co, ho * wo * co))
    n = op.groups
    while n > 1 and (op.groups % n or need(n) > TCDM_USABLE):
        n -= 1
    if op.groups == 1 or n == op.groups:
        return [(slice(0, cout), slice(0, cin))]
    return [(slice(b * go, (b + n) * go), slice(b * gi, (b + n) * gi)) for b in range(0, op.groups, n)]


def place_ops(net: QNet, convs_on: str = "auto") -> None:
    """Place every op of ``net`` (see the module docstring)."""
    src = lambda n: net.aliases.get(n, n)  # noqa: E731 - a flattened view reads its source
    for op in net.ops:
        if op.kind == "conv":
            x = net.tensors[src(op.inputs[0])]
            try:
                place_conv(op, x.shape, len(channel_blocks(op, x.shape, net.tensors[op.output].shape)), convs_on)
            except KernelArgError as e:      # e.g. a pooling window beyond conv2d's 16x16
                raise TilingError(f"{net.file}: node {op.nodes[0]!r} ({op.ops[0]}): {e}") from None
        elif op.kind == "add":
            op.target, op.why = "cores", "cluster cores (add_int8): element-wise requantising add"
        elif op.kind == "maxpool":
            op.target, op.why = "cores", "cluster cores (maxpool_int8): max pooling on the int8 values"
        elif op.kind == "leaky" and "args" in op.requant:
            op.target, op.why = "cores", ("cluster cores (leaky_int8): LeakyRelu requantised with one "
                                          "multiplier per side of the zero point, exact on all 256 inputs")
        elif op.kind == "leaky":
            op.target, op.why = "cores", ("cluster cores (lut_int8): LeakyRelu as a 256-entry table of "
                                          "onnxruntime's float32 results (no fixed-point slope reproduces "
                                          "its rounding)")
        elif op.kind == "concat":
            op.target, op.why = "dma", "cluster DMA only: each input into its channel slice"
