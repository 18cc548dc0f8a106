"""RBE benchmark: wall time of the bit-exact engine vs the numpy golden, and the cycle model's
ops/cycle and Gop/s over the (W, I) grid.

    python bench/rbe.py [--repeat N] [--freq-mhz F]

Part 1 runs a 64->64 channel 3x3 layer on a 32x32 output at 8/8/8 bits through the engine
(reading and writing a byte memory, as in the simulator) and through the plain numpy
golden (im2col matmul, exact in float64 BLAS, + norm-quant); target: engine within 10x of the golden.
Part 2 prints the cycle model's whole-job ops/cycle and Gop/s for a K_in = K_out = 64,
3x3-output layer (O = I, no TCDM stalls) in 3x3 and 1x1 modes.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.rbe import Mode, RbeJob, job_cycles, run_job  # noqa: E402
from components.rbe.stimuli import ByteMemory, place_layer, random_layer  # noqa: E402

BITS = range(2, 9)


def _median_time(fn, repeat: int) -> float:
    fn()  # warm-up: BLAS threads, page faults
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_engine(repeat: int) -> tuple[float, float]:
    rng = np.random.default_rng(2024)
    layer = random_layer(rng, h_out=32, w_out=32, k_in=64, k_out=64, w_bits=8, i_bits=8,
                         o_bits=8, mode=Mode.CONV3X3)
    mem = ByteMemory(1 << 20)
    job = place_layer(layer, mem)
    res = run_job(job, mem.read, mem.write)
    gold = layer.golden
    if not np.array_equal(res.outputs, gold):
        raise SystemExit("engine output differs from the golden: benchmark aborted")
    t_engine = _median_time(lambda: run_job(job, mem.read, mem.write), repeat)
    t_golden = _median_time(lambda: layer.golden, repeat)
    return t_engine, t_golden


def grid(mode: int, freq_hz: float) -> list[list[str]]:
    rows = []
    for wb in BITS:
        row = [f"W={wb}"]
        for ib in BITS:
            job = RbeJob.dense(x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=3, w_out=3,
                               k_in=64, k_out=64, w_bits=wb, i_bits=ib, o_bits=ib, mode=mode)
            c = job_cycles(job)
            row.append(f"{c.ops_per_cycle:6.0f} {c.gops(freq_hz):5.0f}")
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--freq-mhz", type=float, default=420.0)
    args = ap.parse_args()
    print(f"# RBE benchmark on {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    t_e, t_g = bench_engine(args.repeat)
    print("\n## Engine vs golden: 64->64 3x3, 32x32 output, W/I/O = 8/8/8 (median of "
          f"{args.repeat})")
    print(f"engine (bit-exact, via byte memory) : {t_e * 1e3:8.1f} ms")
    print(f"golden (im2col matmul)              : {t_g * 1e3:8.1f} ms")
    print(f"ratio engine/golden                 : {t_e / t_g:8.2f}x   (target <= 10x: "
          f"{'met' if t_e / t_g <= 10 else 'MISSED'})")
    f = args.freq_mhz * 1e6
    for mode, name in ((Mode.CONV3X3, "3x3"), (Mode.CONV1X1, "1x1")):
        print(f"\n## Cycle model, {name} mode: K_in = K_out = 64, 3x3 output, O = I, no stalls")
        print(f"cells: ops/cycle  Gop/s at {args.freq_mhz:.0f} MHz")
        header = ["     "] + [f"   I={ib}      " for ib in BITS]
        print(" | ".join(header))
        for row in grid(mode, f):
            print(" | ".join(row))


if __name__ == "__main__":
    main()
