"""MiniGEMM as a GEMM unit of tlm-cosim's ONNX pipeline (cosim/deploy/pipeline.py): its cost
is :func:`minigemm.model.cycles` at its clock; a GEMM is one job on 32-bit words, exact while
no accumulator can leave the int32 range."""
from __future__ import annotations

from typing import Any

import numpy as np

from cosim.deploy.pipeline import Arena, GemmJob

from .model import MiniGemmJob, MiniGemmParams, cycles, encode_job, register_map


def _words(v: np.ndarray) -> bytes:
    return (np.asarray(v, np.int64) & 0xFFFFFFFF).astype("<u4").tobytes()


class MiniGemmUnit:
    """One MiniGEMM block of a composed platform, as the pipeline sees it."""

    family = "minigemm"

    def __init__(self, sc: Any, block: Any, resolved: dict[str, Any], regs: int, clock_hz: float):
        fields = MiniGemmParams.__dataclass_fields__
        self.name = block.name
        self.params = MiniGemmParams(**{k: v for k, v in resolved.items() if k in fields})
        self.regs = regs
        self.period_ps = 1e12 / clock_hz
        self.off = {r.name: r.offset for r in register_map().registers}

    def refuse(self, op: Any, wm: np.ndarray) -> str | None:
        worst = int(np.abs(wm).sum(axis=1).max()) * 256
        return None if worst < 1 << 31 else f"worst-case accumulator {worst} does not fit an int32 word"

    def cost_ps(self, wm: np.ndarray, n: int) -> tuple[int, dict[str, Any]]:
        c = cycles(wm.shape[0], wm.shape[1], n, self.params)
        return round(c * self.period_ps), {"cycles": c}

    def words(self, acc: np.ndarray) -> bytes:
        return _words(acc)

    def lower(self, op: Any, wm: np.ndarray, im: np.ndarray, acc: np.ndarray, arena: Arena,
              plan: dict[str, Any]) -> GemmJob:
        (m, k), n = wm.shape, im.shape[1]
        a_w = arena.take(4 * m * k, f"W of {op.name}")
        a_i = arena.take(4 * k * n, f"I of {op.name}")
        a_o = arena.take(4 * m * n, f"O of {op.name}")
        job = encode_job(MiniGemmJob(m, k, n, a_w, a_i, a_o))
        accesses = [{"write": self.regs + o, "value": v} for o, v in job]
        accesses += [{"write": self.regs + self.off["CTRL"], "value": 1},
                     {"read": self.regs + self.off["STATUS"], "until": 2, "mask": 0xFF07}]
        where = f"MiniGEMM {self.params.rows}x{self.params.cols} ({m}x{k}x{n} GEMM; requantised on the host)"
        return GemmJob([("soc", a_w, _words(wm)), ("soc", a_i, _words(im))], accesses, a_o, _words(acc),
                       {"where": where, "gemm": [m, k, n]})
