"""FlexiSAGA design-space sweep with the fast cycle model (docs/flexisaga.md, "Bench").

Every CONV and FC operator of one CIFAR-10 DNN, on every 72-PE grid shape (4x18 ... 18x4),
with all seven dataflows and each pruning variant: whole-DNN cycles with the best dense
dataflow per operator and with the best of all seven, the sparse-over-dense speed-up and
the dataflows chosen. The paper's virtual prototype needed 17.6 min per (operator, shape,
dataflow, pruning) point; the last line prints our wall time and the ratio.

    python bench/flexisaga.py                    # AlexNet, the full sweep
    python bench/flexisaga.py --network vgg16 --shapes 8x9 --variants col-R
    python bench/flexisaga.py --network vgg16 --shapes 8x9 --scenario scenarios/marsellus_flexisaga.yaml
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelerators.flexisaga.model.config import DATAFLOWS, ArrayConfig  # noqa: E402
from accelerators.flexisaga.model.workloads import (  # noqa: E402
    NETWORKS, SHAPES_72, VARIANTS, Pruning, evaluate, from_groups, operators, prune, summary, weights)

PAPER_MIN_PER_POINT = 17.6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", choices=NETWORKS, default="alexnet")
    ap.add_argument("--shapes", nargs="*", default=[f"{r}x{c}" for r, c in SHAPES_72],
                    help="grid shapes ROWSxCOLS (default: the six 72-PE shapes)")
    ap.add_argument("--variants", nargs="*", default=[v.name for v in VARIANTS],
                    choices=[v.name for v in VARIANTS])
    ap.add_argument("--scenario", help="prune with the operator groups of this scenario's "
                    "workload.flexisaga section (sparsity, vector, orientation) instead of the variants")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-ops", type=int, default=0, help="only the first N operators (smoke runs)")
    ap.add_argument("--footprint", action="store_true",
                    help="print only the format footprints of a 128x512 fp32 matrix (s = 0.5..0.9)")
    a = ap.parse_args(argv)
    if a.footprint:
        return footprints(a.seed)
    shapes = []
    for s in a.shapes:
        r, _, c = s.partition("x")
        shapes.append((int(r), int(c)))
    variants = [v for v in VARIANTS if v.name in a.variants]
    if a.scenario:
        variants = [scenario_pruning(a.scenario)]
    ops = operators(a.network)
    if a.max_ops:
        ops = ops[:a.max_ops]
    ws = weights(ops, a.seed)
    t0 = time.perf_counter()
    c0 = time.process_time()
    points = 0
    print(f"{a.network}: {len(ops)} CONV/FC operators, {len(shapes)} shapes, {len(DATAFLOWS)} dataflows, "
          f"{len(variants)} pruning variants")
    print(f"{'shape':>6} {'pruning':>13} {'dense cycles':>13} {'best cycles':>12} {'speed-up':>8}  chosen")
    for rows, cols in shapes:
        cfg = ArrayConfig(rows=rows, cols=cols)
        for v in variants:
            res = evaluate(ops, prune(ops, ws, v, cfg), cfg)
            points += len(ops) * len(DATAFLOWS)
            s = summary(res)
            chosen = " ".join(f"{k}:{n}" for k, n in s["chosen"].items())
            print(f"{rows:>2}x{cols:<3} {v.name:>13} {s['dense_cycles']:>13} {s['sparse_cycles']:>12} "
                  f"{s['speedup']:>7.2f}x  {chosen}", flush=True)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    paper = points * PAPER_MIN_PER_POINT * 60
    print(f"sweep: {points} points in {wall:.1f} s wall, {cpu:.1f} s CPU ({wall / points * 1e3:.1f} ms "
          "per point); "
          f"at 17.6 min per point the virtual prototype needs {paper / 3600:.0f} h: "
          f"{paper / wall:,.0f}x faster")
    return 0


def scenario_pruning(file: str) -> Pruning:
    """The pruning of ``file``'s ``workload.flexisaga`` groups (the scenario is loaded and
    validated like ``cosim validate``: a bad value is a located error, exit code 2)."""
    from cosim.scenario import ScenarioError, load_scenario
    try:
        sc = load_scenario(file)
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    groups = (sc.raw.get("workload") or {}).get("flexisaga") or {}
    if not groups:
        print(f"error: {file}: the scenario has no workload.flexisaga section", file=sys.stderr)
        raise SystemExit(2)
    return from_groups(Path(file).stem, groups)


def footprints(seed: int) -> int:
    """Memory footprint of each format, in KiB, for a 128x512 fp32 matrix with uniformly
    spread zeros (the comparison the FlexiSAGA paper plots)."""
    import numpy as np

    from accelerators.flexisaga.model.formats import FOOTPRINT_FORMATS, footprint_bits
    rng = np.random.default_rng(seed)
    print("sparsity " + " ".join(f"{f:>16}" for f in FOOTPRINT_FORMATS))
    for s in (0.5, 0.6, 0.7, 0.8, 0.9):
        w = rng.standard_normal((128, 512)).astype(np.float32)
        w[rng.random(w.shape) < s] = 0
        print(f"{s:>8.1f} " + " ".join(f"{footprint_bits(w, f) / 8192:>16.1f}" for f in FOOTPRINT_FORMATS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
