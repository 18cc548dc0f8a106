"""Networks sized beyond the old fixed 4 MiB banks through the scenario path (`cosim run`):
the tensil platform's DRAM banks are the selected board's (docs/tensil.md, "Scenarios").

ResNet-50v2 at its full width 48 of 64 (30 MiB of FP16 constants: more than the Arty A7-35's
16 MiB and the Pynq Z1's 24 MiB DRAM1, within the Ultra96-V2's 64 MiB) at a 32x32 input,
timing-only: it runs on the Ultra96-V2 and executes exactly what the ISA machine executes
when run directly (bench/tensil.py's path: compile with grown banks, run timing-only).
Constants beyond DRAM1: a located error naming the board, the bank, the bytes and the depth."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from accelerators.tensil.model.boards import board_arch
from accelerators.tensil.deploy.compiler import compile_network
from accelerators.tensil.deploy.nets import build
from accelerators.tensil.deploy.run import run_program
from cosim.launch import run_scenario
from cosim.scenario import ScenarioError, load_scenario

OPTIONS = {"input_hw": 32, "width": 48}


def _scenario(tmp_path: Path, board: str, options: dict = OPTIONS, **overrides: object) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{board}.yaml"
    path.write_text(yaml.safe_dump({
        "name": f"r50_{board}", "seed": 1,
        "platform": {"preset": "tensil", "overrides": {"soc.tcu.board": board, "soc.tcu.data": False,
                                                       **{f"soc.tcu.{k}": v for k, v in overrides.items()}}},
        "workload": {"network": {"preset": "resnet50v2_imagenet", "options": options}}}))
    return path


@pytest.mark.slow
def test_large_network_runs_on_the_ultra96_banks_as_the_isa_machine(tmp_path: Path) -> None:
    arch = board_arch("ultra96_v2")
    rep = run_scenario(load_scenario(_scenario(tmp_path, "ultra96_v2")), out_dir=tmp_path / "out",
                       plots=False).as_dict()
    assert rep["status"] == "passed", rep.get("error")
    tcu = rep["components"]["soc.tcu"]
    # the reference: the ISA machine run directly, as bench/tensil.py part 2 does
    prog = compile_network(build("resnet50v2_imagenet", **OPTIONS), arch, seed=1, data=False, grow_dram=True)
    assert prog.arch == arch                   # fits the board's banks: nothing grown
    assert prog.dram1_vectors * arch.vector_bytes > 24 << 20     # beyond the Pynq Z1's DRAM1
    m = run_program(prog, None, data=False, keep_bursts=False)
    st = m.stats.as_dict(arch)
    assert tcu["instructions"] == st["instructions"] == len(prog.instructions)
    assert {k.split(".", 1)[1]: v for k, v in tcu.items() if k.startswith("instructions.")} == st["by_opcode"]
    assert {k.split(".", 1)[1]: v for k, v in tcu.items() if k.startswith("bytes.")} == st["dram_bytes"]
    # the co-simulation adds AXI latency and the banks' 4-byte port to the machine's
    # one-vector-per-cycle DRAM: never fewer cycles than the serial estimator
    assert tcu["cycles"] >= m.stats.cycles
    assert rep["extra"]["layers"]["latency_ms"] == pytest.approx(tcu["cycles"] / 300e6 * 1e3)


def test_too_large_for_the_bank_names_board_bank_bytes_and_depth(tmp_path: Path) -> None:
    # the library scaled-down ResNet-50v2: its constants beyond a DRAM1 of 2^12 vectors
    small = {"input_hw": 32, "width": 8}
    need = compile_network(build("resnet50v2_imagenet", **small), board_arch("ultra96_v2"), data=False,
                           grow_dram=True).dram1_vectors * 32
    assert need > 4096 * 32
    with pytest.raises(ScenarioError, match=f"on the ultra96_v2 TCU: the constants take {need} bytes .*"
                                            r"DRAM1 of 4096 vectors x 32 bytes") as e:
        run_scenario(load_scenario(_scenario(tmp_path, "ultra96_v2", small, dram1_depth=4096)),
                     out_dir=tmp_path / "out", plots=False)
    assert e.value.line is not None


@pytest.mark.slow
def test_grow_dram_grows_the_banks_as_the_bench_with_the_same_cycles(tmp_path: Path) -> None:
    small = {"input_hw": 32, "width": 8}
    arch = board_arch("ultra96_v2")
    need = compile_network(build("resnet50v2_imagenet", **small), arch, data=False).dram1_vectors
    base = run_scenario(load_scenario(_scenario(tmp_path / "a", "ultra96_v2", small)),
                        out_dir=tmp_path / "a" / "out", plots=False).as_dict()
    sc = load_scenario(_scenario(tmp_path / "b", "ultra96_v2", small, dram1_depth=4096, grow_dram=True))
    grown = run_scenario(sc, out_dir=tmp_path / "b" / "out", plots=False).as_dict()
    assert base["status"] == grown["status"] == "passed"
    # the next power of two of the constants' vectors; a wider address, the same cycles
    assert sc.overrides["soc.tcu.dram1_depth"] == 1 << (need - 1).bit_length() > 4096
    assert grown["components"]["soc.tcu"]["cycles"] == base["components"]["soc.tcu"]["cycles"] > 0
