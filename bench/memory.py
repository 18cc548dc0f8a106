"""Memory-system benchmark: how fast the models simulate (wall clock), in one run.

    python bench/memory.py [--repeat 3] [--json out.json]

Rows:

* DMA, burst mode: a 1 MiB L2 -> TCDM copy through the full path (cluster bus, crossing,
  SOC crossbar, L2, TCDM) in 128 KiB transfers (the TCDM holds 128 KiB), one after the
  other. Simulated bytes per wall-clock second; target >= 100 MB/s.
* TCDM, word mode, 16 cores each issuing single-word loads/stores at random addresses
  (bank conflicts happen as they would): word accesses simulated per wall-clock second;
  target >= 200 k/s. The same with 16-word bursts per transaction.
* Information only: a 128 KiB DMA with the TCDM in word mode.

Each row is the best of ``--repeat`` runs (the least disturbed by other load); the machine
is shared, so compare runs made back to back.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from components.cluster_dma import DmaCommand  # noqa: E402
from components.marsellus.facts import MEMORY_MAP  # noqa: E402
from components.marsellus.memory_system import build_memory_system  # noqa: E402
from tlm import READ, WRITE, GenericPayload, InitiatorSocket, Module, Simulator  # noqa: E402

L2, TC = MEMORY_MAP["l2"], MEMORY_MAP["tcdm"]
CHUNK = 128 * 1024


def dma_copy(total: int, mode: str) -> tuple[float, int, float]:
    """Copy ``total`` bytes L2 -> TCDM in CHUNK transfers; (wall s, bytes, simulated s)."""
    sim = Simulator()
    ms = build_memory_system(sim, {"cluster.tcdm.mode": mode})
    ms.l2.array[:] = np.random.default_rng(0).integers(0, 256, ms.l2.size, dtype=np.uint8)
    slots = L2.size // CHUNK
    done = []

    async def main():
        moved = 0
        i = 0
        while moved < total:
            n = min(CHUNK, total - moved)
            src = L2.base + (i % slots) * CHUNK
            x = await ms.dma.submit(DmaCommand(src, TC.base, n, True))
            assert x.ok, x
            moved += n
            i += 1
            done.append((src, n))
    sim.spawn(main(), "main")
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    src, n = done[-1]
    assert ms.dump(TC.base, n) == ms.dump(src, n), "DMA copy is wrong"
    return wall, total, sim.now / 1e12


def tcdm_words(words_per_txn: int, per_core: int) -> tuple[float, int, dict]:
    """16 cores on the word-mode TCDM; (wall s, word accesses, TCDM statistics)."""
    sim = Simulator(seed=1)
    ms = build_memory_system(sim, {"cluster.tcdm.mode": "word"})
    rng = np.random.default_rng(7)
    n = 4 * words_per_txn
    counted = [0]
    for c in range(16):
        core = Module(ms.cluster, f"core{c}")
        sock = InitiatorSocket(core, "data")
        sock.bind(ms.tcdm.core_ports[c])
        addrs = (TC.base + 4 * rng.integers(0, (TC.size - n) // 4, per_core)).tolist()
        cmds = rng.integers(0, 2, per_core).tolist()

        async def run(sock=sock, addrs=addrs, cmds=cmds, path=core.path):
            p = GenericPayload(READ, 0, bytearray(n), initiator=path)
            for a, w in zip(addrs, cmds):
                p.reset(WRITE if w else READ, a, n)
                await sock.b_transport(p, 0)
                counted[0] += words_per_txn
        core.spawn(run(), "run")
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    st = sim.stats.as_dict()["cluster.tcdm"]
    assert counted[0] == 16 * per_core * words_per_txn
    return wall, counted[0], st


def best(fn, repeat: int):
    runs = [fn() for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []

    wall, nbytes, simt = best(lambda: dma_copy(1 << 20, "burst"), args.repeat)
    rows.append(("DMA 1 MiB L2->TCDM, burst mode", nbytes / wall / 1e6, "MB/s", 100.0,
                 f"simulated {simt * 1e6:.1f} us = {nbytes / simt / 1e9:.2f} GB/s on chip"))
    wall, words, st = best(lambda: tcdm_words(1, 2000), args.repeat)
    rows.append(("TCDM word mode, 16 cores, 1-word accesses", words / wall / 1e3, "k words/s",
                 200.0, f"{st['cycles']} cycles, {st['conflict_cycles']} conflict cycles"))
    wall, words, st = best(lambda: tcdm_words(16, 250), args.repeat)
    rows.append(("TCDM word mode, 16 cores, 16-word bursts", words / wall / 1e3, "k words/s",
                 200.0, f"{st['cycles']} cycles, {st['conflict_cycles']} conflict cycles"))
    wall, nbytes, simt = best(lambda: dma_copy(CHUNK, "word"), 1)
    rows.append(("DMA 128 KiB L2->TCDM, word mode (info)", nbytes / wall / 1e6, "MB/s", None,
                 f"simulated {simt * 1e6:.1f} us"))

    print(f"bench/memory.py on {platform.machine()} {platform.processor() or ''}, "
          f"Python {platform.python_version()}, best of {args.repeat}")
    w = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{w}}  {'measured':>12}  {'target':>10}  status   notes")
    failed = False
    out = []
    for name, value, unit, target, note in rows:
        if target is None:
            status, tgt = "info", "-"
        else:
            ok = value >= target
            failed |= not ok
            status, tgt = ("met" if ok else "NOT met"), f">= {target:g}"
        print(f"{name:<{w}}  {value:>8.1f} {unit:<3}  {tgt:>10}  {status:<7}  {note}")
        out.append({"name": name, "value": round(value, 2), "unit": unit, "target": target,
                    "status": status, "notes": note})
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
