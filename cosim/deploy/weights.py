"""Network parameters: seeded synthetic weights (or an .npz), calibrated norm-quant.

Synthetic weights are uniform unsigned ``w_bits`` integers drawn from an RNG seeded by
(scenario seed, layer name). Norm-quant parameters are *calibrated* on the network's own
seeded input: per output channel, the accumulator range [p1, p99.5] is mapped onto the
``o_bits`` output range, under the hardware's constraints (scale unsigned 16-bit, bias
signed 32-bit with |scale * offset| < 2^31, one shift per layer). Calibration runs the
reference forward pass layer by layer, so it is exact and deterministic.

An ``.npz`` file may supply the input (key ``input``), convolution weights (``<layer>.w``)
and classifier weights and bias (``<layer>.w``, ``<layer>.bias``); missing ones are
generated. Norm-quant parameters are always calibrated.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np

INT32_MAX = (1 << 31) - 1


def layer_rng(seed: int, name: str) -> np.random.Generator:
    """An RNG per (seed, layer name), stable across processes and runs."""
    h = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(h[:8], "little"))


def calibrate_normquant(acc: np.ndarray, o_bits: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(scale uint16, bias int32, shift) mapping each channel's accumulator range onto
    [0, 2^o_bits). ``acc`` is (..., K)."""
    a = acc.reshape(-1, acc.shape[-1]).astype(np.float64)
    lo = np.percentile(a, 1.0, axis=0)
    hi = np.percentile(a, 99.5, axis=0)
    span = np.maximum(hi - lo, 1.0)
    ratio = ((1 << o_bits) - 1) / span            # wanted scale / 2^shift
    best = 0
    for s in range(0, 32):
        scale = np.maximum(1, np.round(ratio * (1 << s)))
        if scale.max() > 0xFFFF or (scale * np.abs(lo)).max() >= INT32_MAX:
            break
        best = s
    scale = np.clip(np.round(ratio * (1 << best)), 1, 0xFFFF).astype(np.int64)
    bias = np.clip(np.round(-scale * lo), -INT32_MAX - 1, INT32_MAX).astype(np.int64)
    return scale, bias, best


def load_npz(path: Path | None) -> dict[str, np.ndarray]:
    """The arrays of a weights archive (tlm.files.load_npz: bounded, no pickles); {} for None."""
    if path is None:
        return {}
    from tlm.files import load_npz as read_npz
    return read_npz(path, "data")


def conv_weights(seed: int, name: str, k_out: int, k_in: int, taps: int, w_bits: int,
                 given: dict[str, np.ndarray]) -> np.ndarray:
    """(k_out, k_in, 3, 3) or (k_out, k_in) unsigned weights."""
    shape = (k_out, k_in, 3, 3) if taps == 9 else (k_out, k_in)
    key = f"{name}.w"
    if key in given:
        w = np.asarray(given[key], dtype=np.int64)
        if w.shape != shape:
            raise ValueError(f"{key}: expected shape {shape}, got {w.shape}")
        if w.min() < 0 or w.max() >= 1 << w_bits:
            raise ValueError(f"{key}: values must be in [0, {1 << w_bits}) for {w_bits}-bit weights")
        return w
    return layer_rng(seed, name).integers(0, 1 << w_bits, size=shape, dtype=np.int64)


def fc_weights(seed: int, name: str, n_out: int, n_in: int,
               given: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Signed int8 weights (n_out, n_in) and int32 bias (n_out,)."""
    rng = layer_rng(seed, name)
    w = given.get(f"{name}.w")
    b = given.get(f"{name}.bias")
    w = rng.integers(-128, 128, size=(n_out, n_in), dtype=np.int64) if w is None else np.asarray(w, np.int64)
    b = rng.integers(-(1 << 12), 1 << 12, size=n_out, dtype=np.int64) if b is None else np.asarray(b, np.int64)
    if w.shape != (n_out, n_in) or b.shape != (n_out,):
        raise ValueError(f"{name}: fc weights must be ({n_out}, {n_in}) and bias ({n_out},)")
    return w, b


def input_image(seed: int, shape: tuple[int, int, int], bits: int, given: dict[str, Any]) -> np.ndarray:
    x = given.get("input")
    if x is not None:
        x = np.asarray(x, dtype=np.int64)
        if x.shape != shape:
            raise ValueError(f"input: expected shape {shape}, got {x.shape}")
        return x
    return layer_rng(seed, "input").integers(0, 1 << bits, size=shape, dtype=np.int64)


def shift_for_mean(n: int) -> tuple[int, int]:
    """(multiplier, shift) with mult / 2^shift ~= 1/n and mult < 2^16 (average pooling)."""
    shift = 16 + max(0, math.ceil(math.log2(n)))
    return max(1, round((1 << shift) / n)), shift
