#!/usr/bin/env python3
"""Measure RBE job cycles on the open RTL (pulp-platform/rbe) over a grid and write the
table components/rbe/rtl_cycles.yaml (the calibration data of components/rbe/cycles.py).

    PYTHONPATH=. python bench/rbe_rtl_grid.py            # full grid, 2 simulators in parallel
    PYTHONPATH=. python bench/rbe_rtl_grid.py --check    # re-measure, compare to the table

The grid (:func:`grid`): both modes (3x3, 1x1); K_in x K_out in {32, 64, 128}^2 at W=I=O=4;
each of W, I, O over 2..8 with the other two at 4 plus the corners (2,2,2), (8,8,8) and
(3,5,7), at K_in=K_out=64; output 3x3 and 6x6 (one and four spatial tiles); and at
K_in=64, K_out=32, W=3, I=O=4 the outputs 6x3, 3x6, 9x3, 3x9, 9x6, 4x5 and 7x2. Each job runs
from reset on the Verilated RTL with an ideal memory (tests/rtl/rbe_open_top.sv: every TCDM
request granted at once, read data one cycle later); cycles count from the edge that takes
the TRIGGER write to the end-of-job event.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.rtl.rbe_open import measure  # noqa: E402

TABLE = ROOT / "components" / "rbe" / "rtl_cycles.yaml"
COLUMNS = ["mode", "h_out", "w_out", "k_in", "k_out", "w", "i", "o", "cycles", "reads", "writes"]


def grid() -> list[dict]:
    pts: list[tuple] = []
    for mode in ("3x3", "1x1"):
        for hw in (3, 6):
            for k_in in (32, 64, 128):
                for k_out in (32, 64, 128):
                    pts.append((mode, hw, k_in, k_out, 4, 4, 4))
            bits = {(b, 4, 4) for b in range(2, 9)} | {(4, b, 4) for b in range(2, 9)}
            bits |= {(4, 4, b) for b in range(2, 9)} | {(2, 2, 2), (8, 8, 8), (3, 5, 7)}
            for w, i, o in sorted(bits):
                if (w, i, o) != (4, 4, 4):
                    pts.append((mode, hw, 64, 64, w, i, o))
    out = [dict(mode=m, h_out=hw, w_out=hw, k_in=ki, k_out=ko, w=w, i=i, o=o)
           for m, hw, ki, ko, w, i, o in pts]
    # tile grids that are not square, and sizes that are not multiples of the 3x3 tile
    for mode in ("3x3", "1x1"):
        for h, w in ((6, 3), (3, 6), (9, 3), (3, 9), (9, 6), (4, 5), (7, 2)):
            out.append(dict(mode=mode, h_out=h, w_out=w, k_in=64, k_out=32, w=3, i=4, o=4))
    return out


def rtl_commits() -> dict[str, str]:
    src = yaml.safe_load((ROOT / "rtl" / "third_party" / "SOURCES.yaml").read_text())["packages"]
    return {name.split("/", 1)[1]: p["commit"] for name, p in src.items()
            if name.startswith("rbe-rtl/")}


def write_table(rows: list[dict], seconds: float) -> None:
    commits = rtl_commits()
    head = (
        "# RBE job cycles measured on the open RTL (pulp-platform/rbe) by bench/rbe_rtl_grid.py:\n"
        "# the calibration table of components/rbe/cycles.py (tests/test_rbe_rtl_cycles.py checks\n"
        "# the model is within 5 % of every row and re-measures a few rows on the RTL).\n"
        "# How: Verilated rbe_top_wrap (rtl/third_party/rbe-rtl, commits below) in\n"
        "# tests/rtl/rbe_open_top.sv: ideal memory on its nine 32-bit TCDM ports (every request\n"
        "# granted at once, read data one cycle later), one job from reset programmed through the\n"
        "# peripheral port (tests/rtl/rbe_open_tb.py); cycles = clock edges from the one taking\n"
        "# the TRIGGER write to the first cycle of the end-of-job event (evt_o[0][0]);\n"
        "# reads/writes = 32-bit TCDM port words moved (the nine ports move together).\n"
        "# mode 3x3/1x1; h_out x w_out output pixels; k_in/k_out channels; w/i/o = weight, input,\n"
        "# output bits.\n")
    data = {"rtl": {"repo": "pulp-platform/rbe", "commit": commits.pop("rbe"),
                    "dependencies": commits, "harness": "tests/rtl/rbe_open_top.sv",
                    "memory_latency_cycles": 1, "measure_seconds": round(seconds)},
            "columns": COLUMNS,
            "rows": [[r[c] for c in COLUMNS] for r in rows]}
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)
    TABLE.write_text(head + text)


def load_table() -> list[dict]:
    data = yaml.safe_load(TABLE.read_text())
    return [dict(zip(data["columns"], r)) for r in data["rows"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2, help="simulators in parallel")
    ap.add_argument("--check", action="store_true", help="compare with the table, do not write")
    ap.add_argument("--limit", type=int, default=0, help="first N grid points only")
    a = ap.parse_args(argv)
    cases = grid()[:a.limit or None]
    t0 = time.perf_counter()
    rows = measure(cases, workers=a.workers)
    dt = time.perf_counter() - t0
    print(f"{len(rows)} jobs in {dt:.0f} s", file=sys.stderr)
    if a.check:
        want = {tuple(r[c] for c in COLUMNS[:8]): r for r in load_table()}
        bad = [r for r in rows if want.get(tuple(r[c] for c in COLUMNS[:8]), {}).get("cycles")
               != r["cycles"]]
        for r in bad:
            print("differs:", r, file=sys.stderr)
        return 1 if bad else 0
    write_table(rows, dt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
