"""A numpy reference of Tensil's fixed-point arithmetic, written apart from the model's
(:mod:`accelerators.tensil.model.fixed`) so that each checks the other: rounding by floor
division instead of bit tests."""
from __future__ import annotations

from typing import Any

import numpy as np


def rne_div(t: Any, frac: int) -> Any:
    """``t / 2^frac`` rounded to nearest, ties to even (int64)."""
    t = np.asarray(t, dtype=np.int64)
    q, r = np.divmod(t, np.int64(1) << frac)
    half = 1 << (frac - 1)
    return q + ((r > half) | ((r == half) & (q % 2 == 1)))


def sat(x: Any, width: int) -> Any:
    return np.clip(x, -(1 << (width - 1)), (1 << (width - 1)) - 1)


def lane_chain(x: Any, w: Any, b: Any, width: int, frac: int) -> Any:
    """One array pass: rows ``x`` (M, N) through weights ``w`` (out N, in N) from bias
    ``b``: p_-1 = b[r], p_j = sat(rne(x[j] * w[r][j] + p_{j-1} * 2^F)), input lanes in order."""
    x = np.asarray(x, dtype=np.int64)
    p = np.broadcast_to(np.asarray(b, dtype=np.int64), (x.shape[0], len(b))).copy()
    for j in range(x.shape[1]):
        p = sat(rne_div(x[:, j:j + 1] * np.asarray(w, dtype=np.int64)[None, :, j] + (p << frac), frac), width)
    return p


def dense(x: Any, w: Any, b: Any, n: int, width: int, frac: int) -> Any:
    """``x`` (M, K) times ``w`` (O, K) plus ``b`` (O) as the compiler schedules it: K in
    blocks of n (zero-padded), bias on the last block, blocks added with saturation."""
    x, w, b = (np.asarray(a, dtype=np.int64) for a in (x, w, b))
    M, K = x.shape
    n_out = w.shape[0]
    kb, ob = -(-K // n), -(-n_out // n)
    xp = np.zeros((M, kb * n), dtype=np.int64)
    xp[:, :K] = x
    wp = np.zeros((ob * n, kb * n), dtype=np.int64)
    wp[:n_out, :K] = w
    bp = np.zeros(ob * n, dtype=np.int64)
    bp[:n_out] = b
    out = np.zeros((M, ob * n), dtype=np.int64)
    for o in range(ob):
        acc = None
        for k in range(kb):
            bias = bp[o * n:(o + 1) * n] if k == kb - 1 else np.zeros(n, dtype=np.int64)
            part = lane_chain(xp[:, k * n:(k + 1) * n], wp[o * n:(o + 1) * n, k * n:(k + 1) * n],
                              bias, width, frac)
            acc = part if acc is None else sat(acc + part, width)
        out[:, o * n:(o + 1) * n] = acc
    return out[:, :n_out]


def act(y: Any, relu: bool, alpha: float, width: int, frac: int) -> Any:
    """ReLU ``max(y, 0)``, or leaky ``max(y, y * a)`` with the slope ``a`` rounded to the data
    type and the product rounded like a SIMD Multiply."""
    if not relu:
        return y
    if alpha > 0:
        a = int(np.floor(alpha * (1 << frac) + 0.5))
        return np.maximum(y, sat(rne_div(np.asarray(y, dtype=np.int64) * a, frac), width))
    return np.maximum(y, 0)


def conv(x: Any, w: Any, b: Any, stride: int, relu: bool, n: int, width: int, frac: int,
         alpha: float = 0.0) -> Any:
    """A k x k convolution (zero padding (k - 1) // 2) of ``x`` (H, W, C) with ``w``
    (K, C, k, k) and ``b`` (K) as the compiler schedules it: per output-channel block, input
    blocks in order, taps row-major, bias on the last pass, passes added with saturation."""
    x = np.asarray(x, dtype=np.int64)
    h, wd, c = x.shape
    k_out, _, k, _ = w.shape
    p = (k - 1) // 2
    cb, ob = -(-c // n), -(-k_out // n)
    xp = np.zeros((h + 2 * p, wd + 2 * p, cb * n), dtype=np.int64)
    xp[p:h + p, p:wd + p, :c] = x
    wp = np.zeros((ob * n, cb * n, k, k), dtype=np.int64)
    wp[:k_out, :c] = w
    bp = np.zeros(ob * n, dtype=np.int64)
    bp[:k_out] = b
    ho, wo = (h + 2 * p - k) // stride + 1, (wd + 2 * p - k) // stride + 1
    out = np.zeros((ho, wo, ob * n), dtype=np.int64)
    taps = [(ky, kx) for ky in range(k) for kx in range(k)]
    for o in range(ob):
        acc = None
        for ci in range(cb):
            for t, (ky, kx) in enumerate(taps):
                xs = xp[ky:ky + (ho - 1) * stride + 1:stride, kx:kx + (wo - 1) * stride + 1:stride,
                        ci * n:(ci + 1) * n].reshape(-1, n)
                last = ci == cb - 1 and t == len(taps) - 1
                bias = bp[o * n:(o + 1) * n] if last else np.zeros(n, dtype=np.int64)
                part = lane_chain(xs, wp[o * n:(o + 1) * n, ci * n:(ci + 1) * n, ky, kx], bias, width, frac)
                acc = part if acc is None else sat(acc + part, width)
        assert acc is not None
        out[:, :, o * n:(o + 1) * n] = act(acc, relu, alpha, width, frac).reshape(ho, wo, n)
    return out[:, :, :k_out]


def bn(x: Any, scale: Any, offset: Any, relu: bool, alpha: float, width: int, frac: int) -> Any:
    """Per channel ``sat(rne(x * scale + offset * 2^F))`` (+ activation)."""
    x = np.asarray(x, dtype=np.int64)
    y = sat(rne_div(x * np.asarray(scale, dtype=np.int64) + (np.asarray(offset, dtype=np.int64) << frac), frac),
            width)
    return act(y, relu, alpha, width, frac)


def maxpool(x: Any, k: int, stride: int) -> Any:
    """Maximum over k x k windows of ``x`` zero-padded by (k - 1) // 2 (every value is exact)."""
    x = np.asarray(x, dtype=np.int64)
    h, wd, c = x.shape
    p = (k - 1) // 2
    xp = np.zeros((h + 2 * p, wd + 2 * p, c), dtype=np.int64)
    xp[p:h + p, p:wd + p] = x
    ho, wo = (h + 2 * p - k) // stride + 1, (wd + 2 * p - k) // stride + 1
    out = np.full((ho, wo, c), np.iinfo(np.int64).min, dtype=np.int64)
    for ky in range(k):
        for kx in range(k):
            out = np.maximum(out, xp[ky:ky + (ho - 1) * stride + 1:stride, kx:kx + (wo - 1) * stride + 1:stride])
    return out


def add(a: Any, b: Any, relu: bool, width: int, alpha: float = 0.0, frac: int = 8) -> Any:
    out = sat(np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64), width)
    return act(out, relu, alpha, width, frac)


def avgpool(x: Any, factor: int, width: int, frac: int) -> Any:
    """Global average: pixels summed in row-major order with saturation, then times the
    raw ``factor`` (1/pixels in the data type), rounded like a SIMD Multiply."""
    x = np.asarray(x, dtype=np.int64)
    flat = x.reshape(-1, x.shape[2])
    acc = flat[0].copy()
    for p in range(1, flat.shape[0]):
        acc = sat(acc + flat[p], width)
    return sat(rne_div(acc * factor, frac), width)


def network(net: Any, params: dict[str, dict[str, Any]], x: Any, n: int, width: int,
            frac: int) -> dict[str, Any]:
    """Every tensor of ``net`` (cosim/deploy/network.py) for raw input ``x`` (H, W, C)."""
    vals: dict[str, Any] = {"input": np.asarray(x, dtype=np.int64)}
    for ly in net.layers:
        src = vals[ly.inputs[0]]
        if ly.type in ("conv3x3", "conv1x1", "conv"):
            p = params[ly.name]
            vals[ly.name] = conv(src, p["w"], p["b"], ly.stride, ly.relu, n, width, frac, ly.alpha)
        elif ly.type == "add":
            vals[ly.name] = add(src, vals[ly.inputs[1]], ly.relu, width, ly.alpha, frac)
        elif ly.type == "bn":
            p = params[ly.name]
            vals[ly.name] = bn(src, p["scale"], p["offset"], ly.relu, ly.alpha, width, frac)
        elif ly.type == "maxpool":
            vals[ly.name] = maxpool(src, ly.kernel, ly.stride)
        elif ly.type == "concat":
            vals[ly.name] = np.concatenate([vals[s] for s in ly.inputs], axis=2)
        elif ly.type == "split":
            vals[ly.name] = src[:, :, ly.group * ly.k:(ly.group + 1) * ly.k]
        elif ly.type == "upsample":
            vals[ly.name] = src.repeat(2, axis=0).repeat(2, axis=1)
        elif ly.type == "avgpool":
            pixels = src.shape[0] * src.shape[1]
            factor = int(np.floor((1 << frac) / pixels + 0.5))
            vals[ly.name] = avgpool(src, factor, width, frac).reshape(1, 1, -1)
        elif ly.type == "fc":
            p = params[ly.name]
            vals[ly.name] = dense(src.reshape(1, -1), p["w"], p["b"], n, width, frac).reshape(1, 1, -1)
    return vals
