"""Benchmark of the RTL bridge: cycles per second of the RTL RBE driven by the bridge's
adapters vs a plain cocotb testbench with the same stimulus, in one simulator run.

    python bench/rtl.py [--window-cycles N] [--json]

Target (issue 8): the bridge costs <= 1.5x the plain cocotb testbench (wall time per
simulated cycle). Also prints the RBE build times (first build and cached rebuild).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cosim.rtl import blocks, build, run_tests  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--window-cycles", type=int, default=1000)
    ap.add_argument("--fresh-build", action="store_true",
                    help="also time a first build in an empty cache")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    builds = {}
    if args.fresh_build:
        tmp = Path(tempfile.mkdtemp(prefix="rtl-bench-cache-"))
        try:
            builds["rbe first build (empty cache)"] = build(blocks.rbe(), cache_dir=tmp).seconds
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    b = build(blocks.rbe())
    builds["rbe build (project cache)" + (" hit" if b.cached else " miss")] = b.seconds
    b2 = build(blocks.rbe())
    builds["rbe cached rebuild"] = b2.seconds
    rep = Path(tempfile.mkdtemp(prefix="rtl-bench-")) / "report.json"
    t0 = time.perf_counter()
    run = run_tests(b, "rtl_tb", python_paths=[ROOT, ROOT / "bench"],
                    extra_env={"BENCH_REPORT": str(rep),
                               "BENCH_WINDOW_CYCLES": str(args.window_cycles)})
    wall = time.perf_counter() - t0
    if not run.passed or not rep.exists():
        print("benchmark run failed:\n" + run.failures() + "\n" + run.log[-3000:])
        return 1
    rows = json.loads(rep.read_text())
    plain = next(r for r in rows if r["name"].startswith("plain"))
    for r in rows:
        r["cost_vs_plain"] = r["wall_s"] / r["cycles"] / (plain["wall_s"] / plain["cycles"])
    if args.json:
        print(json.dumps({"builds_s": builds, "runs": rows, "sim_process_wall_s": wall}, indent=1))
        return 0
    print(f"RTL RBE job: {rows[0]['cycles']} cycles (model: {rows[0]['model_cycles']}), "
          f"one simulator process, {wall:.1f} s wall incl. start-up")
    print(f"{'driver':28s} {'cycles':>8s} {'wall s':>8s} {'cycles/s':>10s} {'cost vs plain':>14s} ok")
    for r in rows:
        print(f"{r['name']:28s} {r['cycles']:8d} {r['wall_s']:8.3f} {r['cycles_per_s']:10.0f} "
              f"{r['cost_vs_plain']:13.2f}x {'yes' if r['ok'] else 'NO'}")
    for k, v in builds.items():
        print(f"{k}: {v:.2f} s")
    worst = max(r["cost_vs_plain"] for r in rows if not r["name"].startswith("plain"))
    print(f"target: bridge <= 1.5x plain testbench -> {'met' if worst <= 1.5 else 'MISSED'} "
          f"(worst {worst:.2f}x)")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
