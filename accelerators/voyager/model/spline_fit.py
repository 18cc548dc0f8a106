"""The compiler's fit of the approximation unit's splines (docs/voyager.md, "Spline unit"):
a free-knot spline of 7 quadratic segments per function, written to ``splines.yaml``.

* The two outer segments are the function's asymptotes (constant or linear: GELU and SiLU
  0 and x, sigmoid 0 and 1, tanh -1 and 1), so the spline stays bounded beyond the fitted
  range; the 5 inner segments' coefficients are fitted.
* For given boundaries each inner segment is a near-minimax quadratic: least squares
  reweighted by Lawson's rule on a dense grid of its interval.
* The 6 boundaries are searched (deterministic coordinate descent with a halving step, from
  several even starting placements, the best kept)
  to minimise the largest absolute error over the fitted range of the unit's evaluation:
  bf16 boundaries and coefficients, a bf16 rounding after every operation (in bf16 a large
  intermediate such as ``(c2*x + c1)*x`` loses more than the quadratic's own error, so the
  search must see the rounding).
* Then the boundaries are rounded to bf16, the inner coefficients refitted on the rounded
  boundaries and rounded to bf16. The file records the rounded values and the maximum
  absolute error of the float64 spline and of its bf16 evaluation over every bf16 value of
  the fitted range.

Regenerate with ``python -m accelerators.voyager.model.spline_fit``; ``--check`` exits 1 when the
file differs from a fresh fit. numpy only (no scipy), so the result is the same everywhere.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

DATA = Path(__file__).with_name("splines.yaml")
SEGMENTS = 7
GRID = 1601
LAWSON = 12
#: starting boundaries of the search: evenly over this share of the fitted range
STARTS = (0.5, 0.65, 0.8, 1.0)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


#: name -> (function, fitted range, left asymptote, right asymptote) as (c2, c1, c0)
FUNCTIONS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], tuple[float, float],
                           tuple[float, float, float], tuple[float, float, float]]] = {
    "gelu": (_gelu, (-6.0, 6.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    "silu": (_silu, (-12.0, 12.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    "sigmoid": (_sigmoid, (-12.0, 12.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
    "tanh": (np.tanh, (-6.0, 6.0), (0.0, 0.0, -1.0), (0.0, 0.0, 1.0)),
}


def bf16(x: np.ndarray) -> np.ndarray:
    """Round float64 to the nearest bf16 value, ties to even (normal range; numpy only)."""
    x = np.asarray(x, np.float64)
    m, e = np.frexp(x)
    return np.where(x == 0, 0.0, np.ldexp(np.rint(m * 256.0), e - 8))


def _quad(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Near-minimax quadratic (c2, c1, c0) of ``ys`` over ``xs`` (Lawson-reweighted LS)."""
    if len(xs) < 3:
        return np.polyfit(np.r_[xs, xs + 1e-3, xs + 2e-3][:3], np.r_[ys, ys, ys][:3], 2)
    w = np.ones_like(xs)
    a = np.stack([xs * xs, xs, np.ones_like(xs)], axis=1)
    c = np.zeros(3)
    for _ in range(LAWSON):
        sw = np.sqrt(w)
        c = np.linalg.lstsq(a * sw[:, None], ys * sw, rcond=None)[0]
        err = np.abs(a @ c - ys)
        if err.max() == 0:
            break
        w = w * err / np.sum(w * err)
        w = np.maximum(w, 1e-12)
    return c


def fit_coeffs(name: str, bounds: np.ndarray, xs: np.ndarray | None = None) -> np.ndarray:
    """The 7 x 3 coefficients for ``bounds``: asymptotes outside, fitted quadratics inside."""
    fn, (lo, hi), left, right = FUNCTIONS[name]
    xs = np.linspace(lo, hi, GRID) if xs is None else xs
    ys = fn(xs)
    coeffs = [np.array(left)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        sel = (xs >= a) & (xs < b)
        coeffs.append(_quad(xs[sel], ys[sel]))
    coeffs.append(np.array(right))
    return np.array(coeffs)


def evaluate(bounds: np.ndarray, coeffs: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The spline in float64: segment i for ``b[i-1] <= x < b[i]``."""
    seg = np.searchsorted(bounds, x, side="right")
    c = coeffs[seg]
    return (c[:, 0] * x + c[:, 1]) * x + c[:, 2]


def evaluate_bf16(bounds: np.ndarray, coeffs: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The vector unit's evaluation: bf16 operands, a rounding to bf16 after every op."""
    seg = np.searchsorted(bounds, x, side="right")
    c = coeffs[seg]
    t = bf16(c[:, 0] * x)
    t = bf16(t + c[:, 1])
    t = bf16(t * x)
    return bf16(t + c[:, 2])


def _max_err(name: str, bounds: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> float:
    """Largest error of the unit's bf16 evaluation with the rounded boundaries and coefficients."""
    b = bf16(bounds)
    if np.any(np.diff(b) <= 0):
        return math.inf
    return float(np.max(np.abs(evaluate_bf16(b, bf16(fit_coeffs(name, b, xs)), xs) - ys)))


def search_bounds(name: str) -> np.ndarray:
    """The 6 boundaries minimising the largest error over the fitted range."""
    fn, (lo, hi), _, _ = FUNCTIONS[name]
    # a dense grid plus every bf16 value of magnitude >= 1/16 (where the roundings show)
    every = bf16_values(lo, hi)
    xs = np.unique(np.r_[bf16(np.linspace(lo, hi, GRID)), every[np.abs(every) >= 0.0625]])
    ys = fn(xs)
    found = [_descend(name, np.linspace(f * lo, f * hi, SEGMENTS - 1), xs, ys, (hi - lo)) for f in STARTS]
    return min(found, key=lambda r: r[1])[0]


def _descend(name: str, b: np.ndarray, xs: np.ndarray, ys: np.ndarray, span: float) -> tuple[np.ndarray, float]:
    """Coordinate descent from boundaries ``b``: move one boundary by +-step while the
    error falls; halve the step when no move helps."""
    lo, hi = xs[0], xs[-1]
    best = _max_err(name, b, xs, ys)
    step = span / 8
    while step > span / 2048:
        improved = False
        for i in range(len(b)):
            for d in (-step, step):
                cand = b.copy()
                cand[i] = min(hi, max(lo, cand[i] + d))
                e = _max_err(name, cand, xs, ys)
                if e < best:
                    b, best, improved = cand, e, True
        if not improved:
            step /= 2
    return b, best


def bf16_values(lo: float, hi: float) -> np.ndarray:
    """Every bf16 value in [lo, hi] (finite, both signs)."""
    codes = np.arange(1 << 16, dtype=np.uint32)
    sign = np.where(codes >> 15, -1.0, 1.0)
    exp = (codes >> 7) & 0xFF
    man = codes & 0x7F
    val = sign * np.where(exp == 0, np.ldexp(man.astype(np.float64), -133),
                          np.ldexp((man | 0x80).astype(np.float64), exp.astype(np.int64) - 134))
    val = val[(exp != 0xFF) & (val >= lo) & (val <= hi)]
    return np.unique(val)


def fit(name: str) -> dict:
    """The rounded spline of ``name`` and its errors (one ``splines.yaml`` entry)."""
    fn, (lo, hi), _, _ = FUNCTIONS[name]
    bounds = bf16(search_bounds(name))
    coeffs = bf16(fit_coeffs(name, bounds))
    xs = bf16_values(lo, hi)
    ys = fn(xs)
    return {"range": [lo, hi], "bounds": [float(v) for v in bounds],
            "coeffs": [[float(v) for v in row] for row in coeffs],
            "max_abs_error": float(np.max(np.abs(evaluate(bounds, coeffs, xs) - ys))),
            "max_abs_error_bf16": float(np.max(np.abs(evaluate_bf16(bounds, coeffs, xs) - ys)))}


def render() -> str:
    body = {"splines": {name: fit(name) for name in FUNCTIONS}}
    head = ("# Approximation-unit splines: 7 quadratic segments per function (6 boundaries, 7 x 3\n"
            "# coefficients, all bf16 values), segment i for b[i-1] <= x < b[i]; errors over every bf16\n"
            "# value of the fitted range. Generated by `python -m accelerators.voyager.model.spline_fit`; "
            "do not edit.\n")
    return head + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if splines.yaml differs from a fresh fit")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        from tlm.files import read_text
        same = DATA.exists() and read_text(DATA, "package_data") == text
        print("splines.yaml is " + ("fresh" if same else "stale: run python -m accelerators.voyager.model.spline_fit"))
        return 0 if same else 1
    DATA.write_text(text, encoding="utf-8")
    print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
