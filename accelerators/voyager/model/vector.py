"""The Voyager vector unit, functionally (docs/voyager.md, "Vector unit").

Every operation works on values of ``vector_dtype`` (bf16 by default) and rounds to it after
each step (round to nearest, ties to even), in the order the pipeline applies them:

* dequantise ``y = rne(rne(acc) * s)``, ``s`` per output channel (stored in bf16);
* bias add, residual add, multiply: one rounding of the exact result;
* ReLU (exact); GELU, SiLU, sigmoid, tanh through the approximation unit: a free-knot
  spline of 7 quadratic segments (:class:`Spline`, the fit of ``splines.yaml``), evaluated as
  ``((c2*x + c1)*x) + c0`` with a rounding after each op;
* exp (stage 1) and 1/sqrt (approximation unit) give the correctly rounded value;
* the reducer sums (or maxes) in element order, rounding after each add;
* softmax and layer norm as the 3-pass programs of the spec; pooling (max, average as sum
  times the rounded 1/k); quantise ``q = sat(rne(rne(x * rne(1/s))))`` to intN, or MX
  quantise per block of channels;
* address generators that permute on access (:func:`permuted_read`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .dtypes import IntType, MXInt8, MXTensor, round_sum, round_to
from .errors import VoyagerError

VF = "bf16"


def rnd(x: np.ndarray, fmt: str = VF) -> np.ndarray:
    return round_to(fmt, x)


def mul(a: np.ndarray, b: np.ndarray, fmt: str = VF) -> np.ndarray:
    """``rne(a * b)``: the product of two vector-format values is exact in float64."""
    return round_to(fmt, np.asarray(a, np.float64) * np.asarray(b, np.float64))


def add(a: np.ndarray, b: np.ndarray, fmt: str = VF) -> np.ndarray:
    return round_sum(fmt, a, b)


def dequantize(acc: np.ndarray, scale: np.ndarray, fmt: str = VF) -> np.ndarray:
    """``rne(rne(acc) * s)``; ``s`` (per output channel, last axis) stored in ``fmt``."""
    return mul(rnd(acc, fmt), rnd(scale, fmt), fmt)


def relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, 0.0)


# ----- approximation unit --------------------------------------------------------------------
@dataclass(frozen=True)
class Spline:
    """7 quadratic segments: segment i holds for ``b[i-1] <= x < b[i]`` (b[-1] = -inf,
    b[6] = +inf); coefficients (c2, c1, c0) per segment, all in the vector format."""

    bounds: tuple[float, ...]
    coeffs: tuple[tuple[float, float, float], ...]

    def __call__(self, x: np.ndarray, fmt: str = VF) -> np.ndarray:
        x = np.asarray(x, np.float64)
        seg = np.searchsorted(np.array(self.bounds), x, side="right")
        c = np.array(self.coeffs)[seg]
        t = mul(c[..., 0], x, fmt)
        t = add(t, c[..., 1], fmt)
        t = mul(t, x, fmt)
        return add(t, c[..., 2], fmt)


def fit_spline(fn: Callable[[np.ndarray], np.ndarray], lo: float, hi: float,
               tails: tuple[tuple[float, float, float], tuple[float, float, float]],
               fmt: str = VF) -> Spline:
    """An even-knot fit: 6 knots evenly over [lo, hi] (5 inner segments fitted by least
    squares, 3 quadratic coefficients each) and two given tail segments; every knot and
    coefficient rounded to ``fmt``. The unit's splines are the free-knot fits of
    ``splines.yaml`` (:mod:`accelerators.voyager.model.spline_fit`); this is the baseline they beat."""
    knots = np.linspace(lo, hi, 6)
    coeffs = [tails[0]]
    for a, b in zip(knots[:-1], knots[1:]):
        xs = np.linspace(a, b, 64)
        coeffs.append(tuple(np.polyfit(xs, fn(xs), 2)))
    coeffs.append(tails[1])
    rk = tuple(float(v) for v in rnd(knots, fmt))
    rc = tuple(tuple(float(v) for v in rnd(np.array(c), fmt)) for c in coeffs)
    return Spline(rk, rc)


#: the approximation unit's functions (splines.yaml, fitted by accelerators/voyager/model/spline_fit.py)
SPLINES = ("gelu", "silu", "sigmoid", "tanh")


@lru_cache(maxsize=None)
def _spline_table() -> dict:
    from tlm.yamlfast import load_file
    return load_file(Path(__file__).with_name("splines.yaml"))["splines"]


@lru_cache(maxsize=None)
def spline(name: str) -> Spline:
    """The fitted free-knot spline of an activation the approximation unit provides."""
    table = _spline_table()
    if name not in table:
        raise VoyagerError("vector unit", f"no approximation for {name!r} (known: {', '.join(table)})")
    e = table[name]
    return Spline(tuple(float(v) for v in e["bounds"]), tuple(tuple(float(v) for v in row) for row in e["coeffs"]))


def activation(name: str, x: np.ndarray, fmt: str = VF) -> np.ndarray:
    """``relu``, ``gelu``, ``silu``, ``sigmoid``, ``tanh`` or ``none``."""
    if name == "none":
        return x
    if name == "relu":
        return relu(x)
    return spline(name)(x, fmt)


def exp(x: np.ndarray, fmt: str = VF) -> np.ndarray:
    return rnd(np.exp(np.asarray(x, np.float64)), fmt)


# ----- reductions ----------------------------------------------------------------------------
def reduce_sum(x: np.ndarray, axis: int = -1, fmt: str = VF) -> np.ndarray:
    """The reducer: a running sum along ``axis`` in element order, rounded after each add."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    acc = np.zeros(x.shape[:-1])
    for i in range(x.shape[-1]):
        acc = add(acc, x[..., i], fmt)
    return acc


def softmax(x: np.ndarray, fmt: str = VF) -> np.ndarray:
    """3 passes along the last axis: max; sum of exp(x - max); exp(x - max) * rne(1/sum)."""
    m = np.max(x, axis=-1, keepdims=True)
    e = exp(add(x, -m, fmt), fmt)
    s = reduce_sum(e, -1, fmt)[..., None]
    return mul(e, rnd(1.0 / s, fmt), fmt)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5,
               fmt: str = VF) -> np.ndarray:
    """3 passes along the last axis: mean; variance of the deviations; normalise, scale,
    shift. ``1/n``, ``eps`` and ``1/sqrt(var + eps)`` are rounded to the vector format."""
    n = x.shape[-1]
    inv_n = rnd(1.0 / n, fmt)
    mean = mul(reduce_sum(x, -1, fmt), inv_n, fmt)[..., None]
    d = add(x, -mean, fmt)
    var = mul(reduce_sum(mul(d, d, fmt), -1, fmt), inv_n, fmt)[..., None]
    inv = rnd(1.0 / np.sqrt(add(var, rnd(eps, fmt), fmt)), fmt)
    return add(mul(mul(d, inv, fmt), rnd(gamma, fmt), fmt), rnd(beta, fmt), fmt)


def pool2d(x: np.ndarray, k: int, stride: int, kind: str = "max", pad: int = 0, fmt: str = VF) -> np.ndarray:
    """Pooling over [H, W, C]: max (exact; padding is -inf) or average (window sum in
    row-major order times rne(1/k^2); padding counts as 0)."""
    if kind not in ("max", "avg"):
        raise VoyagerError("vector unit", f"pooling kind {kind!r} (known: max, avg)")
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(np.asarray(x, np.float64), ((pad, pad), (pad, pad), (0, 0)), constant_values=fill)
    ho = (xp.shape[0] - k) // stride + 1
    wo = (xp.shape[1] - k) // stride + 1
    wins = [xp[dy:dy + stride * ho:stride, dx:dx + stride * wo:stride] for dy in range(k) for dx in range(k)]
    if kind == "max":
        return np.max(np.stack(wins), axis=0)
    acc = np.zeros_like(wins[0])
    for w in wins:
        acc = add(acc, w, fmt)
    return mul(acc, rnd(1.0 / (k * k), fmt), fmt)


# ----- quantise ------------------------------------------------------------------------------
def quantize(x: np.ndarray, dtype: IntType, scale: float, fmt: str = VF) -> np.ndarray:
    """Output quantisation to intN: ``sat(rne(rne(x * rne(1/scale))))``."""
    return dtype.encode(mul(x, rnd(1.0 / scale, fmt), fmt))


def mx_quantize(x: np.ndarray, dtype: MXInt8, axis: int = -1, where: str = "vector unit") -> MXTensor:
    """MX quantisation (stage 3) in blocks along ``axis``."""
    return dtype.quantize_blocks(x, axis, where)


# ----- address generators --------------------------------------------------------------------
def permuted_read(buf: np.ndarray, shape: Sequence[int], perm: Sequence[int]) -> np.ndarray:
    """What an address generator yields when it reads a tensor stored row-major with
    ``shape`` in the order of ``perm`` (a transpose or reshape folded into the access): the
    flat addresses it visits, then the values there."""
    shape = tuple(int(s) for s in shape)
    if sorted(perm) != list(range(len(shape))):
        raise VoyagerError("address generator", f"permutation {list(perm)} of a rank-{len(shape)} tensor")
    if int(np.prod(shape)) != np.asarray(buf).size:
        raise VoyagerError("address generator", f"shape {shape} does not match {np.asarray(buf).size} elements")
    strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1]
    out_shape = [shape[p] for p in perm]
    addr = np.zeros(out_shape, dtype=np.int64)
    for ax, p in enumerate(perm):
        idx = np.arange(shape[p]).reshape([-1 if i == ax else 1 for i in range(len(perm))])
        addr = addr + idx * int(strides[p])
    return np.asarray(buf).reshape(-1)[addr]
