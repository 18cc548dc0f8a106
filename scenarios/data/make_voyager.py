#!/usr/bin/env python3
"""Make the data files and the task lists of ``scenarios/voyager_mini.yaml`` and
``scenarios/marsellus_voyager.yaml`` (the same layers on MARSELLUS's Voyager unit, tensors in L2).

Two int8 layers drawn with a fixed seed: a 3x3 convolution (8x8x16 -> 32, pad 1) with
bias, ReLU and output quantisation, then a GEMM over its 64 output pixels (32 -> 32) with
bias, a residual add of the first layer's output, ReLU and quantisation. The expected
outputs come from this script's own numpy reference (exact integer convolution, then the
vector unit's bf16 steps with ml_dtypes, each step checked to be exact before rounding),
not from the Voyager model. The scenario's register writes use the offsets and fields of
accelerators/voyager/model/registers.yaml. ``--check`` exits 1 when a committed file differs.
"""
from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent / "voyager"
ROOT = HERE.parents[2]
SCENARIO = ROOT / "scenarios" / "voyager_mini.yaml"
SOC_SCENARIO = ROOT / "scenarios" / "marsellus_voyager.yaml"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from components.marsellus.facts import MEMORY_MAP  # noqa: E402
from tlm.regmap import load_regmap  # noqa: E402

MAP = load_regmap(ROOT / "accelerators" / "voyager" / "model" / "registers.yaml")
SEED = 2027
DRAM = 0x80000000
L2 = MEMORY_MAP["l2"].base             # MARSELLUS: the tensors at the same offsets in L2
AT = {"x1": 0x0000, "w1": 0x1000, "b1": 0x3000, "s1": 0x3100, "y1": 0x4000,
      "w2": 0x5000, "b2": 0x5400, "s2": 0x5500, "y2": 0x6000}
OUT1, OUT2 = 0.05, 0.04                # output scales


def bf(x: np.ndarray) -> np.ndarray:
    """Round to bf16 from float32 (exact input required: checked against float64)."""
    x64 = np.asarray(x, np.float64)
    x32 = x64.astype(np.float32)
    assert np.array_equal(x32.astype(np.float64), x64), "a step is not exact in float32"
    return x32.astype(ml_dtypes.bfloat16).astype(np.float64)


def bfc(v: float) -> np.float64:
    """A constant rounded to bf16 through float32 (refused if float32 landed on a bf16 tie,
    where rounding twice could differ from rounding once)."""
    x32 = np.float32(v)
    assert int(np.array(x32).view(np.uint32)) & 0xFFFF != 0x8000, "constant on a bf16 tie"
    return np.float64(np.array(x32).astype(ml_dtypes.bfloat16).astype(np.float64))


def conv_ref(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    f = w.shape[0]
    xp = np.pad(x.astype(np.int64), ((pad, pad), (pad, pad), (0, 0)))
    ho, wo = xp.shape[0] - f + 1, xp.shape[1] - f + 1
    out = np.zeros((ho, wo, w.shape[3]), np.int64)
    for dy in range(f):
        for dx in range(f):
            out += np.einsum("hwc,ck->hwk", xp[dy:dy + ho, dx:dx + wo], w[dy, dx].astype(np.int64))
    return out


def post(acc: np.ndarray, scale: np.ndarray, out_scale: float, skip: np.ndarray | None = None,
         skip_scale: float = 1.0) -> np.ndarray:
    y = bf(bf(acc.astype(np.float64)) * bf(scale))
    if skip is not None:
        y = bf(y + bf(skip.astype(np.float64) * bfc(skip_scale)))
    y = np.maximum(y, 0.0)
    q = bf(y * bfc(1.0 / out_scale))
    return np.clip(np.rint(q), -128, 127).astype(np.int8)


def tensors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    x1 = rng.integers(-128, 128, (8, 8, 16), dtype=np.int8)
    w1 = rng.integers(-128, 128, (3, 3, 16, 32), dtype=np.int8)
    b1 = rng.integers(-20000, 20000, 32).astype("<i4")
    s1 = rng.uniform(2e-5, 6e-5, 32).astype(ml_dtypes.bfloat16)
    w2 = rng.integers(-128, 128, (32, 32), dtype=np.int8)
    b2 = rng.integers(-5000, 5000, 32).astype("<i4")
    s2 = rng.uniform(2e-4, 5e-4, 32).astype(ml_dtypes.bfloat16)
    acc1 = conv_ref(x1, w1, 1) + b1
    y1 = post(acc1, s1.astype(np.float64), OUT1)
    acc2 = y1.reshape(64, 32).astype(np.int64) @ w2.astype(np.int64) + b2
    y2 = post(acc2, s2.astype(np.float64), OUT2, y1.reshape(64, 32), OUT1)
    return {"x1": x1, "w1": w1, "b1": b1, "s1": s1, "w2": w2, "b2": b2, "s2": s2, "y1": y1, "y2": y2}


def f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def field(reg: str, **values: int) -> int:
    out = 0
    for name, v in values.items():
        f = MAP.field(reg, name)
        out |= (v << f.lsb) & f.mask
    return out


def descriptor(kind: int, at: dict[str, str], h: int, w: int, c: int, k: int, f: int, pad: int,
               out_scale: float, add: bool, skip_scale: float = 0.0, base: int = DRAM) -> dict[str, int]:
    return {
        "OP": field("OP", KIND=kind, DTYPE=0, RELU=1, ADD=int(add), QUANT=1, BIAS=1),
        "IN_ADDR": base + AT[at["x"]], "W_ADDR": base + AT[at["w"]], "BIAS_ADDR": base + AT[at["b"]],
        "SCALE_ADDR": base + AT[at["s"]], "SKIP_ADDR": base + AT[at.get("skip", "x1")],
        "OUT_ADDR": base + AT[at["y"]], "SHAPE_HW": field("SHAPE_HW", H=h, W=w),
        "SHAPE_CK": field("SHAPE_CK", C=c, K=k), "CONV": field("CONV", F=f, STRIDE=1, PAD=pad),
        "OUT_SCALE": f32(out_scale), "SKIP_SCALE": f32(skip_scale), "TILE_YX": 0, "TILE_CK": 0}


def mmio(regs: dict[str, int], irq: str = "voyager_done") -> list[str]:
    lines = []
    for name, v in regs.items():
        lines.append(f"        - {{write: voyager+0x{MAP.register(name).offset:03x}, value: 0x{v:08x}}}   # {name}")
    start = field("CTRL", START_FUSED=1)
    done = field("STATUS", DONE=1)
    ctrl, status = MAP.register("CTRL").offset, MAP.register("STATUS").offset
    lines += [f"        - {{write: voyager+0x{ctrl:03x}, value: 0x{start:x}}}   # CTRL.START_FUSED",
              f"        - {{wait_irq: {irq}}}",
              f"        - {{read: voyager+0x{status:03x}, expect: 0x{done:x}}}   # DONE, no error",
              f"        - {{write: voyager+0x{MAP.register('STATUS').offset:03x}, value: 0x{done:x}}}",
              f"        - {{write: voyager+0x{MAP.register('IRQ_STATUS').offset:03x}, value: 1}}"]
    return lines


#: the tensors the scenarios load, in load order
LOADED = ("x1", "w1", "b1", "s1", "w2", "b2", "s2")


def _workload(space: str, j1: dict[str, int], j2: dict[str, int], irq: str) -> list[str]:
    """The tasks (loads into ``space``, the two jobs through the registers, each waiting for
    interrupt ``irq``) and the checks of the outputs, as scenario lines."""
    loads = [f"    - {{id: load_{n}, op: load, to: {space}+0x{AT[n]:04x}, data: {{file: data/voyager/{n}.bin}}}}"
             for n in LOADED]
    irq_on = f"        - {{write: voyager+0x{MAP.register('IRQ_ENABLE').offset:03x}, value: 1}}   # IRQ_ENABLE"
    return [
        "workload:",
        "  tasks:",
        *loads,
        "    - id: conv3x3",
        "      op: mmio",
        "      layer: conv3x3",
        f"      after: [{', '.join('load_' + n for n in LOADED)}]",
        "      accesses:",
        irq_on,
        *mmio(j1, irq),
        "    - id: gemm_residual",
        "      op: mmio",
        "      layer: gemm_residual",
        "      after: [conv3x3]",
        "      accesses:",
        *mmio(j2, irq),
        "checks:",
        "  - name: conv3x3 output matches numpy",
        f"    memory: {{at: {space}+0x{AT['y1']:04x}, size: 2048, equals_file: data/voyager/y1.bin}}",
        "  - name: gemm + residual output matches numpy",
        f"    memory: {{at: {space}+0x{AT['y2']:04x}, size: 2048, equals_file: data/voyager/y2.bin}}",
        "  - no_tlm_errors: true",
        "  - deadline: 100 us",
    ]


def scenario() -> str:
    j1 = descriptor(0, {"x": "x1", "w": "w1", "b": "b1", "s": "s1", "y": "y1"}, 8, 8, 16, 32, 3, 1, OUT1, False)
    j2 = descriptor(1, {"x": "y1", "w": "w2", "b": "b2", "s": "s2", "y": "y2", "skip": "y1"}, 8, 8, 32, 32, 1, 0,
                    OUT2, True, OUT1)
    text = [
        "# Made by scenarios/data/make_voyager.py (do not edit: rerun it). Two int8 layers on the",
        "# standalone Voyager platform, programmed through the descriptor registers; the outputs",
        "# are checked against the script's own numpy reference.",
        "name: voyager_mini",
        "description: Voyager (16x16, int8) runs a 3x3 conv + ReLU and a GEMM with a residual add, "
        "bit-exact against numpy; per-layer cycles and utilisation in extra.accelerators (docs/voyager.md)",
        "seed: 1",
        "platform: voyager",
        *_workload("dram", j1, j2, "voyager_done"),
    ]
    return "\n".join(text) + "\n"


def soc_scenario() -> str:
    """The two layers on MARSELLUS (``soc.voyager.enabled``): tensors in L2, the task host
    programs the unit at the ``voyager`` region and waits for its interrupt line."""
    j1 = descriptor(0, {"x": "x1", "w": "w1", "b": "b1", "s": "s1", "y": "y1"}, 8, 8, 16, 32, 3, 1, OUT1, False,
                    base=L2)
    j2 = descriptor(1, {"x": "y1", "w": "w2", "b": "b2", "s": "s2", "y": "y2", "skip": "y1"}, 8, 8, 32, 32, 1, 0,
                    OUT2, True, OUT1, base=L2)
    text = [
        "# Made by scenarios/data/make_voyager.py (do not edit: rerun it). voyager_mini's two int8",
        "# layers on MARSELLUS's Voyager unit (soc.voyager.enabled): tensors in L2, the task host",
        "# programs the descriptor registers and waits for the unit's interrupt line; the outputs",
        "# are checked against the script's own numpy reference.",
        "name: marsellus_voyager",
        "description: MARSELLUS with a Voyager unit (16x16, int8) on its SOC AXI runs a 3x3 conv + ReLU and a "
        "GEMM with a residual add on tensors in L2, bit-exact against numpy (docs/voyager.md)",
        "seed: 1",
        "platform:",
        "  preset: marsellus",
        "  overrides:",
        "    soc.voyager.enabled: true",
        *_workload("l2", j1, j2, "voyager"),
    ]
    return "\n".join(text) + "\n"


def files() -> dict[Path, bytes]:
    t = tensors()
    out = {HERE / f"{n}.bin": np.ascontiguousarray(v).tobytes() for n, v in t.items()}
    out[SCENARIO] = scenario().encode()
    out[SOC_SCENARIO] = soc_scenario().encode()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    args = ap.parse_args(argv)
    stale = []
    for path, data in files().items():
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(path.name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    if stale:
        print(f"stale: {', '.join(stale)} (run python {Path(__file__).name})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
