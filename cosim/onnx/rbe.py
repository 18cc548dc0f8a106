"""An ONNX convolution on the RBE, bit for bit.

The RBE multiplies **unsigned** activations by **unsigned** weights (``components/rbe/
golden.py``). An imported layer has signed int8 weights ``W`` and int8 activations ``x``
(with a zero point). Per input value the cores' ``pack_rbe`` kernel writes two unsigned
channels: ``x + 128`` and its complement ``255 - (x + 128) = 127 - x`` (a NOT of the
bit planes); the weights split into ``W+ = max(W, 0)`` on the first and ``W- = max(-W, 0)``
on the second. The RBE's accumulator is then

    acc_u = sum (x + 128) W+ + sum (127 - x) W-
          = sum x W + 128 sum W + 255 sum W-     (W = W+ - W-)
          = acc + C[co],  C[co] = 128 sum W[co] + 255 sum W-[co],

the cores' accumulator plus a constant per output channel. The open RBE's offset pass
(``sum x`` times the weight offset, per output pixel) is not in our model; this needs no
per-pixel correction at all: ``C`` folds into the norm-quant bias, and the padding pixels
(the zero point in the tensor's border) go through the same mapping. The price is twice
the input channels (``K_in = pad32(2 C)`` per tap), which the cycle models weigh.

The norm-quant is ``(scale * acc_u + bias) >> shift``, clipped to 0..255: ``y + 128``
when ``scale``/``shift`` realise the layer's requantisation within the RBE's 16-bit
unsigned scale and 5-bit shift (``requant.conv_requant`` with those limits, proven exact
the same way) and the output's lower clip is the bottom of the int8 range (a ReLU onto a
uint8 zero point 0 is saturation; a ReLU at an int8 zero point is not expressible: the
RBE clips at 0 only). The accumulator cannot be taken out of the RBE unrequantised (its
output is at most 8 bits, clipped), so a layer whose requantisation the RBE cannot
express runs on the cores. ``unpack_rbe`` turns the output bit planes back into int8
(``- 128``), keeping every ``stride``-th pixel when the RBE ran a strided layer at stride 1.

Modes (the RBE's 3x3 mode is stride 1; its 1x1 mode takes any per-pixel channel vector):

* ``3x3``    3x3 kernels: the padded input pixel by pixel, 3x3 mode, strided outputs kept;
* ``1x1``    1x1 kernels: pixels at the stride, 1x1 mode;
* ``gather`` any kernel (3x3 strided, the classifier over the whole map, pooling windows):
  ``pack_rbe`` gathers each output pixel's window (``K_in = pad32(2 KH KW C)``), 1x1 mode.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from components.rbe import layout as rl
from components.rbe.arch import MAX_CHANNELS, TP
from components.rbe.golden import golden_layer

from .ir import QOp
from .requant import conv_requant

SCALE_MAX = 0xFFFF
SHIFT_MAX = 31


def pad32(k: int) -> int:
    return -(-k // TP) * TP


@dataclass
class RbeConv:
    """One convolution as ``pack_rbe`` -> RBE job -> ``unpack_rbe``."""

    mode: str                              # 3x3 | 1x1 | gather
    h_in: int                              # the padded int8 input the DMA brings
    w_in: int
    c_in: int
    c_out: int
    pack: tuple[int, int, int]             # pack_rbe's window (kh, kw) and stride
    sub: int                               # unpack_rbe's stride
    h_out: int                             # the RBE job's output grid
    w_out: int
    k_in: int
    k_out: int
    w_bits: int
    weights: np.ndarray                    # unsigned (K_out, K_in, 3, 3) or (K_out, K_in)
    scale: np.ndarray                      # uint16 per K_out channel
    bias: np.ndarray                       # int32 per K_out channel
    shift: int
    cycles: dict[str, int] = field(default_factory=dict)

    @property
    def rbe_mode(self) -> str:
        return "3x3" if self.mode == "3x3" else "1x1"

    @property
    def packed_hw(self) -> tuple[int, int]:
        kh, kw, s = self.pack
        return (self.h_in - kh) // s + 1, (self.w_in - kw) // s + 1

    def blob(self) -> bytes:
        """Packed weights, then the norm-quant records (padded to 8 bytes)."""
        pack = rl.pack_weights_3x3 if self.weights.ndim == 4 else rl.pack_weights_1x1
        nq = bytes(rl.pack_normquant(self.scale, self.bias))
        return rl.to_bytes(pack(self.weights, self.w_bits)) + nq + bytes(-len(nq) % 8)

    def sizes(self) -> dict[str, int]:
        """TCDM bytes of every buffer: int8 input, bit-plane input, weights + norm-quant,
        bit-plane output, int8 output."""
        ph, pw = self.packed_hw
        ho, wo = (self.h_out - 1) // self.sub + 1, (self.w_out - 1) // self.sub + 1
        return {"x": self.h_in * self.w_in * self.c_in, "x_rbe": ph * pw * (self.k_in // TP) * 8 * 4,
                "weights": len(self.blob()), "y_rbe": self.h_out * self.w_out * (self.k_out // TP) * 8 * 4,
                "y": ho * wo * self.c_out}

    def run(self, x: np.ndarray) -> np.ndarray:
        """The int8 output from the padded int8 input ``(h_in, w_in, C)``: the arithmetic the
        simulated kernels and RBE perform (``cluster.ops`` + ``rbe.golden``)."""
        from components.cluster import ops
        kh, kw, s = self.pack
        xu = ops.rbe_input(x, kh, kw, s, self.k_in)
        yu = golden_layer(xu, self.weights, self.scale, self.bias, self.shift, 8, relu=False)
        return ops.rbe_output(yu, self.c_out, self.sub)


def unsigned_weights(w: np.ndarray, k_in: int, k_out: int, taps_as_channels: bool) -> np.ndarray:
    """``W+`` on the value channels, ``W-`` on the complement channels, zeros elsewhere:
    ``(K_out, K_in, 3, 3)`` (3x3 mode, per tap C of each) or ``(K_out, K_in)`` with the
    taps gathered tap-major (``taps_as_channels``, the order ``pack_rbe`` writes)."""
    cout, kh, kw, cin = w.shape
    wp, wn = np.maximum(w, 0), np.maximum(-w, 0)
    if taps_as_channels:
        n = kh * kw * cin
        out = np.zeros((k_out, k_in), np.int64)
        out[:cout, :n] = wp.reshape(cout, n)
        out[:cout, n:2 * n] = wn.reshape(cout, n)
        return out
    out = np.zeros((k_out, k_in, kh, kw), np.int64)
    out[:cout, :cin] = wp.transpose(0, 3, 1, 2)
    out[:cout, cin:2 * cin] = wn.transpose(0, 3, 1, 2)
    return out


def correction(w: np.ndarray) -> np.ndarray:
    """``C[co] = 128 sum W + 255 sum W-``: the RBE's accumulator minus the signed one."""
    cout = w.shape[0]
    flat = w.reshape(cout, -1).astype(np.int64)
    return 128 * flat.sum(axis=1) + 255 * np.maximum(-flat, 0).sum(axis=1)


def requant(op: QOp, k_out: int) -> dict | str:
    """The RBE's norm-quant for ``op`` (scale, bias per K_out channel, shift, proven), or why
    there is none."""
    if op.relu:
        return "its ReLU clips at the int8 zero point; the RBE clips at 0..255 only"
    t = op.terms
    if not t:
        return "no requantisation terms"
    c = correction(op.weights)
    offs = [o - int(ck) for o, ck in zip(t["offsets"], c)]
    try:
        rq = conv_requant(t["ms"], offs, t["zp_out"] + 128, t["bounds"], t["units"],
                          max_shift=SHIFT_MAX, max_scale=SCALE_MAX)
    except ValueError:
        return "the requantisation needs a multiplier beyond the RBE's 16-bit scale and 5-bit shift"
    if not (rq["proven"] and op.exact):
        return "the requantisation is not provably exact within the RBE's 16-bit scale and 5-bit shift"
    pad = k_out - len(rq["scale"])
    return {"scale": np.concatenate([rq["scale"], np.zeros(pad, np.int64)]),
            "bias": np.concatenate([rq["bias"], np.zeros(pad, np.int64)]), "shift": int(rq["shift"])}


def candidates(op: QOp, x_shape: tuple[int, int, int]) -> tuple[list[RbeConv], str]:
    """Every way ``op`` can run on the RBE (input ``x_shape``, unpadded), or the reason
    why none."""
    h, w, cin = x_shape
    cout, kh, kw, _ = op.weights.shape
    p, s = op.pad, op.stride
    hp, wp = h + 2 * p, w + 2 * p
    k_out = pad32(cout)
    if k_out > MAX_CHANNELS:
        return [], f"{cout} output channels exceed the RBE's {MAX_CHANNELS}"
    rq = requant(op, k_out)
    if isinstance(rq, str):
        return [], rq
    wmax = int(np.abs(op.weights).max(initial=0))
    w_bits = max(2, wmax.bit_length())
    if w_bits > 8:
        return [], "weights beyond 8 bits"
    ho, wo = (hp - kh) // s + 1, (wp - kw) // s + 1
    out = []

    def make(mode: str, pack: tuple[int, int, int], sub: int, h_out: int, w_out: int, k_in: int) -> None:
        wts = unsigned_weights(op.weights, k_in, k_out, taps_as_channels=mode != "3x3")
        out.append(RbeConv(mode, hp, wp, cin, cout, pack, sub, h_out, w_out, k_in, k_out, w_bits, wts,
                           rq["scale"], rq["bias"], rq["shift"]))

    if kh == kw == 3 and s <= 2 and pad32(2 * cin) <= MAX_CHANNELS:
        make("3x3", (1, 1, 1), s, hp - 2, wp - 2, pad32(2 * cin))
    if kh == kw == 1 and pad32(2 * cin) <= MAX_CHANNELS:
        make("1x1", (1, 1, s), 1, ho, wo, pad32(2 * cin))
    elif pad32(2 * kh * kw * cin) <= MAX_CHANNELS:
        make("gather", (kh, kw, s), 1, ho, wo, pad32(2 * kh * kw * cin))
    if not out:
        return [], f"{kh}x{kw} windows of {cin} channels exceed the RBE's {MAX_CHANNELS} input channels"
    return out, ""
