"""Voyager benchmark: whole-network timing runs on the simulated accelerator.

    python bench/voyager.py [--arrays 8x8,16x16] [--skip-resnet50]

Part 1: ResNet-50 (224x224, int8) on a 32x32 array, every matrix operator run as a job
through the registers with its DRAM bursts through TLM (timing mode); target <= 30 s wall.
Part 2: ResNet-18 on the seven published arrays (8x8 .. 64x64, SRAM 48 .. 384 KB): TLM
cycles, the performance model's cycles, MAC utilisation; target <= 2 min wall for all.
Part 3: the three schedule objectives (perf, energy, coarse) of the performance model on
ResNet-18 / 32x32, so their difference shows.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelerators.voyager.model import config as C  # noqa: E402
from accelerators.voyager.model import zoo  # noqa: E402
from accelerators.voyager.model.perf import network_perf  # noqa: E402
from accelerators.voyager.network import run_timing, totals  # noqa: E402

RESNET50_TARGET_S = 30.0
TABLE_TARGET_S = 120.0


def verdict(wall: float, target: float) -> str:
    return f"{wall:.2f} s (target <= {target:.0f} s: {'met' if wall <= target else 'MISSED'})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arrays", default=",".join(r["name"] for r in C.array_table()),
                    help="comma-separated array configurations for the ResNet-18 table")
    ap.add_argument("--skip-resnet50", action="store_true", help="skip part 1")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()} on {platform.machine()}")
    if not args.skip_resnet50:
        t0 = time.perf_counter()
        runs = run_timing(zoo.model("resnet50"), C.array_config("32x32"))
        wall = time.perf_counter() - t0
        tot = totals(runs)
        jobs = sum(1 for r in runs if r.unit == "matrix")
        print(f"ResNet-50 on 32x32: {tot['cycles']} cycles ({tot['cycles'] / 1e6:.2f} ms at 1 GHz), "
              f"model {tot['model_cycles']}, matrix utilisation {tot['utilisation']:.1%}, {jobs} matrix jobs; "
              f"wall {verdict(wall, RESNET50_TARGET_S)}")
    names = [a.strip() for a in args.arrays.split(",") if a.strip()]
    print(f"{'array':8s} {'SRAM KB':>8s} {'TLM cycles':>12s} {'model cycles':>13s} {'utilisation':>12s} {'wall s':>7s}")
    t_all = time.perf_counter()
    for name in names:
        p = C.array_config(name)
        t0 = time.perf_counter()
        tot = totals(run_timing(zoo.model("resnet18"), p))
        wall = time.perf_counter() - t0
        print(f"{name:8s} {p.sram_bytes() // 1024:>8d} {tot['cycles']:>12d} {tot['model_cycles']:>13d} "
              f"{tot['utilisation']:>11.1%} {wall:>7.2f}")
    print(f"ResNet-18 table ({len(names)} arrays): wall {verdict(time.perf_counter() - t_all, TABLE_TARGET_S)}")
    for model in ("perf", "energy", "coarse"):
        net = network_perf(zoo.model("resnet18"), C.array_config("32x32", objective=model))
        t = net.totals()
        print(f"objective {model:6s}: {t['cycles']:>10d} cycles, utilisation {t['utilisation']:.1%}, "
              f"DRAM {t['dram_bytes'] / 2**20:.1f} MiB, energy {t['energy_pj'] / 1e9:.2f} mJ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
