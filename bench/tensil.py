"""Tensil benchmark: ResNet-20 (our network preset, CIFAR 32x32x3) compiled for the TCU and
run bit-exactly on the ISA machine against the numpy fixed-point reference, the machine's
instruction throughput, and the latency model's figures on the three published boards.

    python bench/tensil.py [--quick]

Part 1 (target: <= 60 s wall): compile, run in data mode, compare every tensor with the
reference. Part 2: each board's architecture in timing-only mode (the same cycles as the
data mode): instructions, cycles, latency (ms) and frames/s at the board's clock, array
utilisation, DRAM bytes, the overlap refinement's latency, instructions by opcode. Part 3:
the same program co-simulated on each board's platform (TLM DRAM bursts through the AXI link).
Part 4: the TCU inside MARSELLUS (``soc.tensil.enabled``, DRAM0/DRAM1 in L2, SOC clock of
the default operating point), data mode, when the network's data fit L2.
``--quick`` shrinks the network (tests).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.tensil.arch import TensilArch  # noqa: E402
from components.tensil.boards import board_arch, board_names  # noqa: E402
from components.tensil.fixed import FixedFormat  # noqa: E402
from components.tensil.latency import TensilTiming  # noqa: E402
from cosim.deploy.network import parse_network  # noqa: E402
from cosim.deploy.tensil import reference  # noqa: E402
from cosim.deploy.tensil.compiler import compile_network  # noqa: E402
from cosim.deploy.tensil.cosim_boards import write_board_scenario  # noqa: E402
from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import load_scenario  # noqa: E402
from cosim.deploy.tensil.run import read_var, run_program  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small network (seconds)")
    args = ap.parse_args(argv)
    opts = {"width": 8, "blocks": 1, "input_hw": 8} if args.quick else {}
    net = parse_network({"preset": "resnet20_cifar", "options": opts})
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
    print(f"{net.name} on the default architecture (8x8, FP16BP8): {n_ins} instructions, "
          f"{prog.stages} stages, {m.stats.cycles} cycles")
    print(f"  compile {t1 - t0:6.2f} s   machine (data) {t2 - t1:6.2f} s   "
          f"numpy reference {t3 - t2:6.2f} s   total {t3 - t0:6.2f} s (target <= 60 s)")
    print(f"  bit-exact against the numpy reference: {'yes' if exact else 'NO'}")
    print(f"  instruction throughput (data mode): {n_ins / (t2 - t1):,.0f} instructions/s")
    t4 = time.perf_counter()
    run_program(prog, x, data=False)
    t5 = time.perf_counter()
    print(f"  instruction throughput (timing-only): {n_ins / (t5 - t4):,.0f} instructions/s")

    print()
    head = (f"{'board':12s} {'array':>6s} {'clock':>8s} {'instr':>8s} {'cycles':>10s} "
            f"{'latency ms':>10s} {'frames/s':>9s} {'util':>6s} {'DRAM KiB':>9s} {'overlap ms':>10s}  by opcode")
    print(head)
    for name in board_names():
        a = board_arch(name)
        p = compile_network(net, a, seed=1)
        mb = run_program(p, None, data=False)
        st = mb.stats.as_dict(a)
        ov = run_program(p, None, data=False, timing=TensilTiming(overlap=True)).stats.cycles / a.clock_hz * 1e3
        ms = st["cycles"] / a.clock_hz * 1e3
        dram = sum(st["dram_bytes"].values()) / 1024
        ops = " ".join(f"{k}={v}" for k, v in st["by_opcode"].items())
        print(f"{name:12s} {a.array_size:>3d}x{a.array_size:<2d} {a.clock_hz / 1e6:>5.0f}MHz "
              f"{st['instructions']:>8d} {st['cycles']:>10d} {ms:>10.3f} {1e3 / ms:>9.1f} "
              f"{st['array_utilisation']:>6.1%} {dram:>9.1f} {ov:>10.3f}  {ops}")

    print()
    print("co-simulated on each board's platform (TLM: fetcher, AXI DRAM0/DRAM1 bursts through the "
          "crossbar; timing-only, the Ultra96-V2 also with data):")
    print(f"{'board':12s} {'mode':7s} {'latency ms':>10s} {'frames/s':>9s} {'cycles':>10s} {'wall s':>7s}  checks")
    spec = {"preset": "resnet20_cifar", "options": opts}
    ok = exact
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
        print()
        ok = marsellus(net, arch, x, Path(tmp)) and ok
    return 0 if ok else 1


def marsellus(net, arch: TensilArch, x, tmp: Path) -> bool:
    """Part 4: the program on MARSELLUS's TCU with both DRAM banks in L2 (if they fit)."""
    import yaml

    from components.marsellus.facts import MEMORY_MAP
    from cosim.deploy.tensil.deploy import var_image
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
