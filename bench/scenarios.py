"""Scenario benchmark: wall time and simulated-time/wall-time ratio, in one run.

    python bench/scenarios.py [--repeat 3]

Runs quickstart and ResNet-20 through the same path as ``cosim run`` (build, simulate,
check; no plots or files) and prints the best of ``--repeat`` runs. Target: ResNet-20 end to
end in under 30 s of wall time on a 2-core machine.
"""
from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cosim.runner import run_here  # noqa: E402
from cosim.scenario import load_scenario  # noqa: E402

TARGETS = {"resnet20_cifar": 30.0}


def measure(name: str) -> tuple[float, float, int, str]:
    """(total wall s including build and checks, simulate-only wall s, simulated ps, status)."""
    t0 = time.perf_counter()
    sc = load_scenario(name)
    with tempfile.TemporaryDirectory() as out:     # nothing is written there without RTL
        rep, run, _ = run_here(sc, Path(out))
    return time.perf_counter() - t0, run.wall, rep.sim_time_ps, rep.status


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"machine: {platform.machine()} python {platform.python_version()}")
    hdr = (f"{'scenario':16s} {'wall s':>8s} {'sim-only s':>10s} {'simulated':>11s} {'sim/wall':>10s} "
           f"{'status':>7s} {'target':>10s}")
    print(hdr)
    print("-" * len(hdr))
    for name in ("quickstart", "resnet20_cifar"):
        best = min((measure(name) for _ in range(args.repeat)), key=lambda r: r[0])
        wall, sim_wall, sim_ps, status = best
        target = TARGETS.get(name)
        tgt = f"< {target:.0f} s {'met' if wall < target else 'NOT met'}" if target else "-"
        print(f"{name:16s} {wall:8.2f} {sim_wall:10.2f} {sim_ps / 1e9:9.3f} ms "
              f"{sim_ps * 1e-12 / wall:10.2e} {status:>7s} {tgt:>10s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
