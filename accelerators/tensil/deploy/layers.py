"""The Tensil TCU's network layer types (docs/tensil.md): ``conv`` (``kernel`` K odd, any
``stride``, zero padding K // 2), ``maxpool`` (``kernel``, ``stride``, zero padding
(kernel - 1) // 2), ``concat`` (channels of its inputs in order), ``split`` (channel group
``group`` of ``groups``), ``upsample`` (nearest, 2x), ``bn`` (per-channel scale and offset,
a batch normalisation folded; the pre-activation of ResNet-v2); ``alpha`` > 0 makes a
``relu`` leaky with that slope. Their names are the ONNX operators they come from."""
from __future__ import annotations

from typing import Any

from cosim.deploy.network import NetworkError


def infer(net: Any, ly: Any, where: str, h: int, w: int, k: int) -> None:
    """Shapes of the Tensil-only layer types (zero 'same' padding, output rounded up)."""
    if not 0.0 <= ly.alpha < 1.0:
        raise NetworkError(f"{where}.alpha: a leaky slope in [0, 1), got {ly.alpha}")
    if ly.type in ("conv", "maxpool"):
        if len(ly.inputs) != 1:
            raise NetworkError(f"{where}: a {ly.type} takes one input")
        if not 1 <= ly.kernel <= 15 or (ly.type == "conv" and ly.kernel % 2 == 0):
            raise NetworkError(f"{where}.kernel: 1..15{' and odd' if ly.type == 'conv' else ''}, "
                               f"got {ly.kernel}")
        if not 1 <= ly.stride <= 8:
            raise NetworkError(f"{where}.stride: 1..8, got {ly.stride}")
        pad = (ly.kernel - 1) // 2
        if h + 2 * pad < ly.kernel or w + 2 * pad < ly.kernel:
            raise NetworkError(f"{where}: a {ly.kernel}x{ly.kernel} window does not fit {h}x{w}")
        ly.h, ly.w = (h + 2 * pad - ly.kernel) // ly.stride + 1, (w + 2 * pad - ly.kernel) // ly.stride + 1
        if ly.type == "conv":
            if ly.out <= 0:
                raise NetworkError(f"{where}.out: output channels must be > 0")
            ly.k = ly.out
        else:
            ly.k = k
    elif ly.type == "concat":
        if len(ly.inputs) < 2:
            raise NetworkError(f"{where}: concat takes two or more inputs")
        total = 0
        for src in ly.inputs:
            h2, w2, k2, _ = net.shape_of(src)
            if (h2, w2) != (h, w):
                raise NetworkError(f"{where}: concat of different sizes {h}x{w} and {h2}x{w2} ({src})")
            total += k2
        ly.h, ly.w, ly.k = h, w, total
    elif ly.type == "split":
        if ly.groups < 1 or k % ly.groups or not 0 <= ly.group < ly.groups:
            raise NetworkError(f"{where}: group {ly.group} of {ly.groups} of {k} channels")
        ly.h, ly.w, ly.k = h, w, k // ly.groups
    elif ly.type == "upsample":
        ly.h, ly.w, ly.k = 2 * h, 2 * w, k
    elif ly.type == "bn":
        ly.h, ly.w, ly.k = h, w, k
    if ly.type not in ("concat",) and len(ly.inputs) != 1:
        raise NetworkError(f"{where}: a {ly.type} takes one input")


#: type -> shape inference (cosim.deploy.network.family_layer_types)
LAYER_TYPES = {t: infer for t in ("conv", "maxpool", "concat", "split", "upsample", "bn")}
