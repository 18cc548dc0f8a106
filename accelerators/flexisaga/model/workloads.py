"""DNN workloads for FlexiSAGA: the CIFAR-10 networks of ``networks.yaml`` as GEMMs, seeded
weights pruned with :mod:`accelerators.flexisaga.model.pruning`, and the per-operator search for the
fastest dataflow with the fast cycle model (docs/flexisaga.md, "Workloads").

CONV layers become ``W (C_out x C_in*k*k) @ I (C_in*k*k x H_out*W_out)`` (im2col); FC layers
``W (out x in) @ I (in x 1)``. Pooling, activations and residual adds do not run on the
array (the cluster cores do them) and appear only through the shapes they produce.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from accelerators.flexisaga.model.config import DATAFLOWS, ArrayConfig
from accelerators.flexisaga.model.cycles import CycleReport, estimate
from accelerators.flexisaga.model.pruning import prune_group

NETWORKS = ("alexnet", "vgg16", "googlenet", "resnet50")
#: the 72-PE grid shapes of the design-space exploration (rows x cols)
SHAPES_72 = ((4, 18), (6, 12), (8, 9), (9, 8), (12, 6), (18, 4))


@dataclass(frozen=True)
class Operator:
    """One GEMM of a network: ``kind`` 'conv' or 'fc', ``O (m x n) = W (m x k) @ I (k x n)``."""

    name: str
    kind: str
    m: int
    k: int
    n: int

    @property
    def macs(self) -> int:
        return self.m * self.k * self.n


@lru_cache(maxsize=None)
def _tables() -> dict[str, Any]:
    from tlm.yamlfast import load_file
    out: dict[str, Any] = load_file(Path(__file__).with_name("networks.yaml"))
    return out


def _out(size: int, kernel: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - kernel) // stride + 1


class _Builder:
    def __init__(self) -> None:
        self.ops: list[Operator] = []
        self.c, self.hw = 3, 32

    def conv(self, name: str, c_out: int, k: int = 3, stride: int = 1, pad: int = 1,
             c_in: int | None = None, hw: int | None = None) -> int:
        cin = self.c if c_in is None else c_in
        size = _out(self.hw if hw is None else hw, k, stride, pad)
        self.ops.append(Operator(name, "conv", c_out, cin * k * k, size * size))
        return size

    def fc(self, name: str, out: int) -> None:
        self.ops.append(Operator(name, "fc", out, self.c * self.hw * self.hw, 1))
        self.c, self.hw = out, 1


def operators(network: str) -> list[Operator]:
    """The CONV and FC operators of ``network`` (one of :data:`NETWORKS`), in order."""
    if network not in NETWORKS:
        raise ValueError(f"flexisaga: network {network!r} is not one of {', '.join(NETWORKS)}")
    t = _tables()[network]
    b = _Builder()
    if network == "alexnet":
        for layer in t:
            if "conv" in layer:
                name, c_out, k, s, p = layer["conv"]
                b.hw = b.conv(name, c_out, k, s, p)
                b.c = c_out
            elif "pool" in layer:
                k, s = layer["pool"]
                b.hw = _out(b.hw, k, s, 0)
            else:
                b.fc(*layer["fc"])
    elif network == "vgg16":
        i = 0
        for v in t["plan"]:
            if v == "M":
                b.hw //= 2
            else:
                i += 1
                b.conv(f"conv{i}", int(v))
                b.c = int(v)
        for j, out in enumerate(t["fc"]):
            b.fc(f"fc{j + 1}", out)
    elif network == "googlenet":
        b.conv("pre", t["stem"])
        b.c = t["stem"]
        for item in t["inceptions"]:
            if item == "M":
                b.hw = _out(b.hw, 3, 2, 1)
                continue
            (name, (n1, r3, n3, r5, n5, pp)), = item.items()
            cin = b.c
            b.conv(f"{name}.b1", n1, 1, 1, 0)
            b.conv(f"{name}.b2red", r3, 1, 1, 0)
            b.conv(f"{name}.b2", n3, 3, 1, 1, c_in=r3)
            b.conv(f"{name}.b3red", r5, 1, 1, 0)
            b.conv(f"{name}.b3a", n5, 3, 1, 1, c_in=r5)
            b.conv(f"{name}.b3b", n5, 3, 1, 1, c_in=n5)
            b.conv(f"{name}.b4", pp, 1, 1, 0, c_in=cin)
            b.c = n1 + n3 + n5 + pp
        b.hw = 1  # global average pool
        for j, out in enumerate(t["fc"]):
            b.fc(f"fc{j + 1}", out)
    else:  # resnet50
        b.conv("conv1", t["stem"])
        b.c = t["stem"]
        exp = t["expansion"]
        for si, (planes, blocks, stride) in enumerate(t["stages"]):
            for bi in range(blocks):
                s = stride if bi == 0 else 1
                cin, hw = b.c, b.hw
                tag = f"layer{si + 1}.{bi}"
                b.conv(f"{tag}.conv1", planes, 1, 1, 0)
                hw2 = b.conv(f"{tag}.conv2", planes, 3, s, 1, c_in=planes, hw=hw)
                b.conv(f"{tag}.conv3", planes * exp, 1, 1, 0, c_in=planes, hw=hw2)
                if s != 1 or cin != planes * exp:
                    b.conv(f"{tag}.shortcut", planes * exp, 1, s, 0, c_in=cin, hw=hw)
                b.c, b.hw = planes * exp, hw2
        b.hw = 1
        for j, out in enumerate(t["fc"]):
            b.fc(f"fc{j + 1}", out)
    return b.ops


@dataclass(frozen=True)
class Pruning:
    """A pruning setting: vectors of length ``n`` (None: the grid's rows for 'col', columns
    for 'row'), per-group sparsity for CONV and FC; the FC group may have its own
    orientation and length (``fc_orientation``, ``fc_n``; None: the CONV group's)."""

    name: str
    orientation: str = "col"
    n: int | None = None
    conv_sparsity: float = 0.7
    fc_sparsity: float = 0.9
    fc_orientation: str | None = None
    fc_n: int | None = None

    def group(self, kind: str) -> tuple[str, int | None, float]:
        """(orientation, vector length or None, sparsity) of operator group ``kind``."""
        if kind == "fc":
            return (self.fc_orientation or self.orientation,
                    self.fc_n if self.fc_n is not None else (None if self.fc_orientation else self.n),
                    self.fc_sparsity)
        return self.orientation, self.n, self.conv_sparsity

    def length(self, cfg: ArrayConfig, kind: str = "conv") -> int:
        orientation, n, _ = self.group(kind)
        if n is not None:
            return n
        return cfg.rows if orientation == "col" else cfg.cols


def from_groups(name: str, groups: dict[str, dict[str, Any]]) -> Pruning:
    """A :class:`Pruning` from a scenario's ``workload.flexisaga`` section (``conv`` / ``fc``:
    ``sparsity``, ``vector``, ``orientation``; missing keys: sparsity 0, column vectors as
    tall as the grid)."""
    conv, fc = groups.get("conv") or {}, groups.get("fc") or {}
    return Pruning(name, conv.get("orientation", "col"), conv.get("vector"),
                   float(conv.get("sparsity", 0.0)), float(fc.get("sparsity", 0.0)),
                   fc.get("orientation", "col"), fc.get("vector"))


#: the pruning variants of the design-space sweep
VARIANTS = (Pruning("unstructured", "col", 1), Pruning("col-R", "col"), Pruning("row-C", "row"))


def weights(ops: Sequence[Operator], seed: int = 0) -> list[np.ndarray]:
    """Seeded random fp32 weights (GEMM matrices) for ``ops``."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((op.m, op.k)).astype(np.float32) for op in ops]


def prune(ops: Sequence[Operator], ws: Sequence[np.ndarray], variant: Pruning,
          cfg: ArrayConfig) -> list[np.ndarray]:
    """Prune the CONV group and the FC group separately with ``variant``."""
    out: list[np.ndarray] = list(ws)
    for kind in ("conv", "fc"):
        orientation, _, s = variant.group(kind)
        idx = [j for j, op in enumerate(ops) if op.kind == kind]
        if idx:
            pruned = prune_group([ws[j] for j in idx], s, variant.length(cfg, kind), orientation)
            for j, p in zip(idx, pruned):
                out[j] = p
    return out


@dataclass(frozen=True)
class OperatorResult:
    """Every dataflow's cost for one operator, and the fastest."""

    op: Operator
    reports: tuple[CycleReport, ...]

    @property
    def best(self) -> CycleReport:
        return min(self.reports, key=lambda r: r.cycles)

    @property
    def dense_best(self) -> CycleReport:
        return min((r for r in self.reports if r.dataflow.startswith("d")), key=lambda r: r.cycles)


def evaluate(ops: Sequence[Operator], ws: Sequence[np.ndarray], cfg: ArrayConfig,
             dataflows: Sequence[str] = DATAFLOWS) -> list[OperatorResult]:
    """Cycles of every dataflow for every operator (fast model)."""
    return [OperatorResult(op, tuple(estimate(df, w, op.n, cfg) for df in dataflows))
            for op, w in zip(ops, ws)]


def summary(results: Sequence[OperatorResult]) -> dict[str, Any]:
    """Whole-DNN cycles with the best dense and the best overall dataflow per operator."""
    dense = sum(r.dense_best.cycles for r in results)
    best = sum(r.best.cycles for r in results)
    chosen: dict[str, int] = {}
    for r in results:
        chosen[r.best.dataflow] = chosen.get(r.best.dataflow, 0) + 1
    return {"dense_cycles": dense, "sparse_cycles": best,
            "speedup": dense / best if best else 0.0, "chosen": dict(sorted(chosen.items()))}
