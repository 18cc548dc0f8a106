"""Tensil benchmark: the networks of Tensil's published table (ResNet-20v2 for CIFAR,
ResNet-50v2 and YoloV4-tiny for ImageNet / COCO sizes) compiled for the TCU, on the three
published boards (docs/tensil.md, "Results").

    python bench/tensil.py [--quick] [--nets resnet20v2_cifar,...] [--boards arty_a7_35,...]

Part 1 (target: <= 60 s wall): ResNet-20v2 compiled for the default 8x8 FP16BP8
architecture, run in data mode, every tensor compared with the numpy fixed-point reference;
instruction throughput in data and timing-only mode. Part 2 (target: ResNet-50v2 <= 120 s
wall per board): every network on every board in timing-only mode (the same cycles as the
data mode): compile and run wall time, instructions, cycles, latency (ms) and frames/s at
the board's clock, array utilisation, DRAM bytes, instructions by opcode. Networks larger
than a board's DRAM banks get banks of the next power of two (``grow_dram``; the cycles do
not change). Part 3: ResNet-20v2 co-simulated on each board's platform (TLM DRAM bursts
through the AXI link). Part 4: our ResNet-20 (v1 preset) on the TCU inside MARSELLUS
(``soc.tensil.enabled``, DRAM0/DRAM1 in L2) when its data fit L2.
``--quick`` shrinks every network (tests).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accelerators.tensil.model.arch import TensilArch  # noqa: E402
from accelerators.tensil.model.boards import board_arch, board_names  # noqa: E402
from accelerators.tensil.model.fixed import FixedFormat  # noqa: E402
from cosim.deploy.network import parse_network  # noqa: E402
from accelerators.tensil.deploy import reference  # noqa: E402
from accelerators.tensil.deploy.compiler import compile_network  # noqa: E402
from accelerators.tensil.deploy.cosim_boards import write_board_scenario  # noqa: E402
from accelerators.tensil.deploy.nets import build  # noqa: E402
from accelerators.tensil.deploy.run import read_var, run_program  # noqa: E402
from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import load_scenario  # noqa: E402

NETS = ("resnet20v2_cifar", "resnet50v2_imagenet", "yolov4_tiny")
QUICK = {"resnet20v2_cifar": {"input_hw": 8, "width": 8, "blocks": 1},
         "resnet50v2_imagenet": {"input_hw": 32, "width": 8, "stacks": [1, 1, 1, 1], "classes": 10},
         "yolov4_tiny": {"input_hw": 32, "width": 8, "classes": 1}}


def part1(opts: dict) -> bool:
    net = build("resnet20v2_cifar", **opts)
    arch = TensilArch()
    fmt = FixedFormat(arch.width, arch.frac)
    x = fmt.from_float(np.random.default_rng(2).uniform(0, 1, net.input_shape))
    t0 = time.perf_counter()
    prog = compile_network(net, arch, seed=1)
    t1 = time.perf_counter()
    m = run_program(prog, x)
    t2 = time.perf_counter()
    ref = reference.network(net, prog.params, x, arch.array_size, arch.width, arch.frac)
    t3 = time.perf_counter()
    exact = all(np.array_equal(read_var(m, v), ref[k]) for k, v in prog.vars.items())
    n_ins = len(prog.instructions)
    print(f"{net.name} ({net.input_shape[0]}x{net.input_shape[1]}) on the default architecture (8x8, FP16BP8): "
          f"{n_ins} instructions, {prog.stages} stages, {m.stats.cycles} cycles")
    print(f"  compile {t1 - t0:6.2f} s   machine (data) {t2 - t1:6.2f} s   "
          f"numpy reference {t3 - t2:6.2f} s   total {t3 - t0:6.2f} s (target <= 60 s)")
    print(f"  bit-exact against the numpy reference ({len(prog.vars)} tensors): {'yes' if exact else 'NO'}")
    print(f"  instruction throughput (data mode): {n_ins / (t2 - t1):,.0f} instructions/s")
    t4 = time.perf_counter()
    mt = run_program(compile_network(net, arch, seed=1, data=False), None, data=False, keep_bursts=False)
    t5 = time.perf_counter()
    same = mt.stats.cycles == m.stats.cycles
    print(f"  timing-only (compile + run) {t5 - t4:.2f} s, {mt.stats.cycles} cycles "
          f"({'the same' if same else 'NOT the same'} as the data mode)")
    return exact and same


def part2(nets: list[str], boards: list[str], quick: bool) -> None:
    head = (f"{'network':20s} {'board':11s} {'array':>6s} {'MHz':>4s} {'compile s':>9s} {'run s':>6s} "
            f"{'instr':>9s} {'instr/s':>8s} {'cycles':>11s} {'latency ms':>10s} {'frames/s':>8s} "
            f"{'util':>6s} {'DRAM MiB':>8s}  by opcode")
    print(head)
    for name in nets:
        net = build(name, **(QUICK[name] if quick else {}))
        for b in boards:
            a = board_arch(b)
            t0 = time.perf_counter()
            p = compile_network(net, a, seed=1, data=False, grow_dram=True)
            t1 = time.perf_counter()
            mb = run_program(p, None, data=False, keep_bursts=False)
            t2 = time.perf_counter()
            st = mb.stats.as_dict(a)
            ms = st["cycles"] / a.clock_hz * 1e3
            dram = sum(st["dram_bytes"].values()) / 2 ** 20
            ops = " ".join(f"{k}={v}" for k, v in st["by_opcode"].items())
            grown = "" if p.arch == a else f"  (DRAM banks grown to {p.arch.dram0_depth}/{p.arch.dram1_depth} vectors)"
            print(f"{name:20s} {b:11s} {a.array_size:>3d}x{a.array_size:<2d} {a.clock_hz / 1e6:>4.0f} "
                  f"{t1 - t0:>9.1f} {t2 - t1:>6.1f} {st['instructions']:>9d} "
                  f"{st['instructions'] / (t2 - t1):>8,.0f} {st['cycles']:>11d} {ms:>10.3f} {1e3 / ms:>8.2f} "
                  f"{st['array_utilisation']:>6.1%} {dram:>8.1f}  {ops}{grown}", flush=True)


def part3(opts: dict) -> bool:
    print("ResNet-20v2 co-simulated on each board's platform (TLM: fetcher, AXI DRAM0/DRAM1 bursts through "
          "the crossbar; timing-only, the Ultra96-V2 also with data):")
    print(f"{'board':12s} {'mode':7s} {'latency ms':>10s} {'frames/s':>9s} {'cycles':>10s} {'wall s':>7s}  checks")
    spec = {"preset": "resnet20v2_cifar", "options": opts}
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name in board_names():
            for data in ((False, True) if name == "ultra96_v2" else (False,)):
                folder = Path(tmp) / f"{name}_{data}"
                path = write_board_scenario(folder, name, spec, data=data)
                t6 = time.perf_counter()
                rep = run_scenario(load_scenario(path), out_dir=folder / "out", plots=False)
                wall = time.perf_counter() - t6
                e = rep.extra["accelerators"]["soc.tcu"]
                checks = rep.as_dict()["checks"]
                passed = all(c["passed"] for c in checks) and rep.as_dict()["status"] == "passed"
                ok = ok and passed
                ms = e["busy_ps"] / 1e9
                print(f"{name:12s} {'data' if data else 'timing':7s} {ms:>10.3f} {1e3 / ms:>9.1f} "
                      f"{e['cycles']:>10d} {wall:>7.1f}  {'passed' if passed else 'FAILED'} ({len(checks)})")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small networks (seconds)")
    ap.add_argument("--nets", default=",".join(NETS), help="networks of part 2 (comma-separated)")
    ap.add_argument("--boards", default=",".join(board_names()), help="boards of part 2 (comma-separated)")
    args = ap.parse_args(argv)
    ok = part1(QUICK["resnet20v2_cifar"] if args.quick else {})
    print()
    part2([n for n in args.nets.split(",") if n], [b for b in args.boards.split(",") if b], args.quick)
    print()
    ok = part3(QUICK["resnet20v2_cifar"] if args.quick else {}) and ok
    print()
    opts = {"width": 8, "blocks": 1, "input_hw": 8} if args.quick else {}
    net = parse_network({"preset": "resnet20_cifar", "options": opts})
    arch = TensilArch()
    fmt = FixedFormat(arch.width, arch.frac)
    x = fmt.from_float(np.random.default_rng(2).uniform(0, 1, net.input_shape))
    with tempfile.TemporaryDirectory() as tmp:
        ok = marsellus(net, arch, x, Path(tmp)) and ok
    return 0 if ok else 1


def marsellus(net, arch: TensilArch, x, tmp: Path) -> bool:
    """Part 4: the program on MARSELLUS's TCU with both DRAM banks in L2 (if they fit)."""
    import yaml

    from components.marsellus.facts import MEMORY_MAP
    from accelerators.tensil.deploy.deploy import var_image
    fmt = FixedFormat(arch.width, arch.frac)
    prog = compile_network(net, arch, seed=1)
    vb, l2 = arch.vector_bytes, MEMORY_MAP["l2"]
    align = lambda n: -(-n // 4096) * 4096  # noqa: E731
    prog_at = align(prog.dram0_vectors * vb)
    consts_at = align(prog_at + len(prog.binary()))
    need = consts_at + len(prog.consts_bytes())
    print(f"on MARSELLUS (TCU on the SOC AXI, DRAM0/DRAM1 in L2): the data take {need / 1024:.0f} KiB "
          f"of L2's {l2.size // 1024} KiB")
    if need > l2.size:
        print("  does not fit L2: a larger network needs DRAM paged from the HyperRAM (not modelled)")
        return True
    ref = reference.network(net, prog.params, x, arch.array_size, arch.width, arch.frac)
    out = prog.vars["fc"]
    files = {"input.bin": fmt.to_bytes(var_image(prog.vars["input"], x, arch.array_size)),
             "program.tprog": prog.binary(), "consts.bin": prog.consts_bytes(),
             "expected.bin": fmt.to_bytes(var_image(out, ref["fc"], arch.array_size))}
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    tcu = MEMORY_MAP["tensil"].base
    sc = {"name": "marsellus_tensil_bench", "seed": 1,
          "platform": {"preset": "marsellus", "overrides": {"soc.tensil.enabled": True}},
          "workload": {"tasks": [
              {"id": "input", "op": "load", "to": l2.base, "data": {"file": "input.bin"}},
              {"id": "prog", "op": "load", "to": l2.base + prog_at, "data": {"file": "program.tprog"}},
              {"id": "consts", "op": "load", "to": l2.base + consts_at, "data": {"file": "consts.bin"}},
              {"id": "run", "op": "mmio", "accesses": [
                  {"write": tcu, "value": l2.base + prog_at},
                  {"write": tcu + 4, "value": len(prog.instructions)},
                  {"write": tcu + 8, "value": l2.base}, {"write": tcu + 12, "value": l2.base + consts_at},
                  {"write": tcu + 16, "value": 1}, {"wait_irq": "tensil"}, {"read": tcu + 20, "expect": 0}]}]},
          "checks": [{"name": "logits == numpy reference",
                      "memory": {"at": l2.base + out.base * vb, "size": len(files["expected.bin"]),
                                 "equals_file": "expected.bin"}}]}
    (tmp / "marsellus.yaml").write_text(yaml.safe_dump(sc))
    t0 = time.perf_counter()
    rep = run_scenario(load_scenario(tmp / "marsellus.yaml"), out_dir=tmp / "marsellus_out", plots=False)
    wall = time.perf_counter() - t0
    d = rep.as_dict()
    passed = d["status"] == "passed" and all(c["passed"] for c in d["checks"])
    e = d["extra"]["accelerators"]["soc.tensil"]
    ms = e["busy_ps"] / 1e9
    print(f"  latency {ms:.3f} ms, {1e3 / ms:.1f} frames/s, {e['cycles']} cycles at "
          f"{e['cycles'] / (e['busy_ps'] * 1e-6):.0f} MHz, wall {wall:.1f} s, "
          f"{'passed' if passed else 'FAILED'} ({len(d['checks'])})")
    return passed


if __name__ == "__main__":
    sys.exit(main())
