"""The numpy reference of a whole network, and the parameters it calibrates.

Convolutions use the RBE golden function (plain integer conv + norm-quant, independent of
the bit decomposition); adds, pooling and the classifier use the cluster kernels'
functional definitions (components.cluster.ops), so the simulated platform and this
reference share one definition of every operation's arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from components.cluster import ops
from components.rbe import golden_layer, layout as rl
from components.rbe.golden import conv_acc

from .network import Network
from .tensor import Tensor
from .weights import (calibrate_normquant, conv_weights, fc_weights, input_image)


def _pad_channels(x: np.ndarray, k: int) -> np.ndarray:
    if x.shape[-1] == k:
        return x
    out = np.zeros(x.shape[:-1] + (k,), dtype=x.dtype)
    out[..., :x.shape[-1]] = x
    return out


@dataclass
class NetParams:
    """Per-layer parameters (channel counts padded to multiples of 32 for the RBE)."""

    conv: dict[str, dict[str, Any]] = field(default_factory=dict)
    add: dict[str, dict[str, int]] = field(default_factory=dict)
    pool: dict[str, dict[str, int]] = field(default_factory=dict)
    fc: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def set_windows(self, name: str, k_in: int, packed: bool) -> None:
        """Run conv ``name`` in 1x1 mode on 3x3 windows of ``k_in`` channels: tap-major
        (tap = 3*ky + kx), each tap's channels the padded ones (gathered by the DMA) or,
        ``packed``, only the real ones (the host's input layout, :func:`pack_windows`)."""
        c = self.conv[name]
        c["windows"] = (k_in, c["real_in"] if packed else c["w"].shape[1])

    def shift(self, name: str) -> int:
        return int(self.conv[name]["shift"])

    def add_args(self, name: str) -> dict[str, int]:
        return dict(self.add[name])

    def pool_args(self, name: str) -> dict[str, int]:
        return dict(self.pool[name])

    def blob(self, name: str) -> bytes:
        """The bytes a layer keeps in L3/L2: packed weights followed by norm-quant records
        (convolutions), or int8 weights followed by int32 bias (classifier)."""
        if name in self.conv:
            c = self.conv[name]
            w = c["w"]
            if "windows" in c:    # (Kout, Kin, 3, 3) -> (Kout, 9 taps x Kin) for 1x1 mode
                k_in, per_tap = c["windows"]
                flat = np.zeros((w.shape[0], k_in), dtype=np.int64)
                flat[:, :9 * per_tap] = w[:, :per_tap].transpose(0, 2, 3, 1).reshape(w.shape[0], -1)
                w = flat
            pack = rl.pack_weights_3x3 if w.ndim == 4 else rl.pack_weights_1x1
            wb = rl.to_bytes(pack(w, c["w_bits"]))
            nq = bytes(rl.pack_normquant(c["scale"], c["bias"]))
            nq += bytes(-len(nq) % 8)
            return wb + nq
        if name in self.fc:
            f = self.fc[name]
            return f["w"].astype(np.int8).tobytes() + f["bias"].astype("<i4").tobytes()
        return b""


def forward(net: Network, seed: int, given: dict[str, np.ndarray]) -> tuple[NetParams, dict[str, np.ndarray]]:
    """Generate/calibrate parameters and run the network. Returns (params, outputs by layer
    name, plus 'input'); conv outputs keep their padded channel count."""
    p = NetParams()
    outs: dict[str, np.ndarray] = {}
    h, w, c = net.input_shape
    x = input_image(seed, (h, w, c), net.input_bits, given)
    outs["input"] = _pad_channels(x, -(-c // 32) * 32)
    for ly in net.layers:
        src = [outs[s] for s in ly.inputs]
        if ly.on_rbe:
            xin = src[0]
            k_in = xin.shape[-1]
            k_out = -(-ly.out // 32) * 32
            taps = 9 if ly.type == "conv3x3" else 1
            real_in = net.shape_of(ly.inputs[0])[2]
            wts = conv_weights(seed, ly.name, ly.out, real_in, taps, ly.w_bits, given)
            full = np.zeros((k_out, k_in) + wts.shape[2:], dtype=np.int64)
            full[:ly.out, :real_in] = wts      # padded channels: zero weights -> zero outputs
            if ly.type == "conv3x3":
                xp = np.pad(xin, ((1, 1), (1, 1), (0, 0)))
                acc = conv_acc(xp, full)
                sl = acc[::ly.stride, ::ly.stride]
            else:
                xs = xin[::ly.stride, ::ly.stride]
                sl = acc = conv_acc(xs, full)
            scale, bias, shift = calibrate_normquant(sl[..., :ly.out], ly.o_bits)
            scale = np.concatenate([scale, np.ones(k_out - ly.out, np.int64)])
            bias = np.concatenate([bias, np.zeros(k_out - ly.out, np.int64)])
            y = golden_layer(np.pad(xin, ((1, 1), (1, 1), (0, 0))) if ly.type == "conv3x3" else xs,
                             full, scale, bias, shift, ly.o_bits, ly.relu)
            if ly.type == "conv3x3":
                y = y[::ly.stride, ::ly.stride]
            p.conv[ly.name] = {"w": full, "w_bits": ly.w_bits, "scale": scale, "bias": bias,
                               "shift": shift, "real_in": real_in}
            outs[ly.name] = y
        elif ly.type == "add":
            a, b = src
            ba, bb = net.shape_of(ly.inputs[0])[3], net.shape_of(ly.inputs[1])[3]
            args = ops.add_requant_params(a, b, ba, bb, ly.o_bits)
            p.add[ly.name] = args
            outs[ly.name] = ops.add_requant(a, b, o_bits=ly.o_bits, **args)
        elif ly.type == "avgpool":
            x0 = src[0]
            args = ops.avgpool_params(x0.shape[0] * x0.shape[1])
            p.pool[ly.name] = args
            outs[ly.name] = ops.avgpool(x0.reshape(-1, x0.shape[-1]), **args)
        elif ly.type == "fc":
            v = src[0].reshape(-1)
            wts, bias = fc_weights(seed, ly.name, ly.out, v.size, given)
            p.fc[ly.name] = {"w": wts, "bias": bias}
            outs[ly.name] = ops.fc(v, wts, bias)
    return p, outs


def pack_windows(x: np.ndarray, stride: int) -> np.ndarray:
    """The 3x3 windows of ``x`` (H, W, C) with a one-pixel zero border, one per output pixel
    at ``stride``: (H/stride, W/stride, 9*C), channel ``tap*C + c`` with tap = 3*ky + kx."""
    xp = np.pad(x, ((1, 1), (1, 1), (0, 0)))
    h, w = x.shape[0] // stride, x.shape[1] // stride
    taps = [xp[ky:ky + stride * h:stride, kx:kx + stride * w:stride] for ky in range(3) for kx in range(3)]
    return np.concatenate(taps, axis=-1)


def pack_tensor(values: np.ndarray, t: Tensor) -> bytes:
    """The L2 image of an activation tensor: the bit-plane layout with a zero border."""
    if values.ndim != 3:
        return np.asarray(values).astype("<i4").tobytes()
    v = _pad_channels(values, t.k)
    if t.pad:
        v = np.pad(v, ((t.pad, t.pad), (t.pad, t.pad), (0, 0)))
    return rl.to_bytes(rl.pack_activations(v, t.bits))
