"""The Tensil compiler: our network description -> stages -> program, bit-exact against
the numpy fixed-point reference on small networks; timing-only mode; stages that fit."""
from __future__ import annotations

import json

import numpy as np
import pytest

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.asm import lint
from accelerators.tensil.model.boards import board_arch
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.isa import MatMul
from cosim.deploy.network import parse_network
from accelerators.tensil.deploy import reference as R
from accelerators.tensil.deploy.compiler import CompileError, compile_network
from accelerators.tensil.deploy.run import read_var, run_program

SMALL = {"preset": "resnet20_cifar", "options": {"width": 8, "blocks": 1, "input_hw": 8}}


def _check(arch: TensilArch, spec: dict = SMALL, seed: int = 1) -> tuple:
    net = parse_network(spec)
    prog = compile_network(net, arch, seed=seed)
    fmt = FixedFormat(arch.width, arch.frac)
    x = fmt.from_float(np.random.default_rng(seed + 1).uniform(0, 1, net.input_shape))
    m = run_program(prog, x)
    ref = R.network(net, prog.params, x, arch.array_size, arch.width, arch.frac)
    for name, v in prog.vars.items():
        assert np.array_equal(read_var(m, v), ref[name]), name
    assert not m.hazards and not lint(prog.instructions)
    return net, prog, m, ref


def test_small_resnet_bit_exact_default_arch() -> None:
    net, prog, m, ref = _check(TensilArch(array_size=8, local_depth=4096, accumulator_depth=1024))
    assert np.abs(ref["fc"]).max() > 0 and prog.stages >= len([ly for ly in net.layers if ly.type != "avgpool"])
    assert m.stats.by_opcode["MatMul"] > 0 and m.stats.macs > 0


@pytest.mark.parametrize("board", ["pynq_z1", "ultra96_v2"])
def test_small_resnet_bit_exact_on_boards(board: str) -> None:
    # 12 lanes: 8/16/32 channels give 1/2/3 vectors per pixel, so strides 3, 6 are not
    # encodable and the compiler falls back to one instruction per vector
    _, prog, _, _ = _check(board_arch(board))
    if board == "pynq_z1":
        assert any(isinstance(i, MatMul) and i.size == 1 for i in prog.instructions)


def test_fp32b16_bit_exact() -> None:
    _check(TensilArch(data_type="FP32B16", array_size=4, local_depth=4096, accumulator_depth=1024),
           {"preset": "resnet20_cifar", "options": {"width": 4, "blocks": 1, "input_hw": 4}})


def test_small_local_memory_splits_into_stages_same_result() -> None:
    big = _check(TensilArch(array_size=8, local_depth=4096, accumulator_depth=1024))
    small = _check(TensilArch(array_size=8, local_depth=160, accumulator_depth=16))
    assert small[1].stages > big[1].stages
    assert np.array_equal(read_var(small[2], small[1].vars["fc"]), read_var(big[2], big[1].vars["fc"]))


def test_timing_only_mode_gives_the_same_cycles() -> None:
    net = parse_network(SMALL)
    arch = TensilArch(array_size=8, local_depth=4096, accumulator_depth=1024)
    prog = compile_network(net, arch)
    x = np.zeros(net.input_shape, dtype=np.int64)
    a, b = run_program(prog, x), run_program(prog, x, data=False)
    assert a.stats.as_dict(arch) == b.stats.as_dict(arch) and a.stats.cycles > 0


def test_nothing_fits_is_a_compile_error() -> None:
    with pytest.raises(CompileError, match="s1b1_c1|conv1"):
        compile_network(parse_network(SMALL), TensilArch(array_size=8, local_depth=16, accumulator_depth=4))


def test_manifest_and_artefacts() -> None:
    net = parse_network(SMALL)
    arch = TensilArch()
    prog = compile_network(net, arch)
    man = json.loads(prog.manifest_json("small"))
    assert man["prog"]["size"] == len(prog.binary()) == len(prog.instructions) * arch.instruction_bytes
    assert man["consts"][0]["size"] * arch.vector_bytes == len(prog.consts_bytes())
    assert man["inputs"][0]["base"] == 0 and man["outputs"][0]["name"] == "fc"
    assert man["arch"]["array_size"] == 8


@pytest.mark.slow(reason="a benchmark script (bench/, slow like a pasted one): "
                         "test_bench_scripts.py::test_kernel_bench_compares_with_simpy_and_says_what_it_found_"
                         "of_systemc runs one; the Tensil compiler and machine on the same networks: "
                         "test_tensil_nets.py::test_small_networks_bit_exact")
def test_bench_script_quick() -> None:
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "bench/tensil.py", "--quick"], cwd=root, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "tensors): yes" in r.stdout and "(the same as the data mode)" in r.stdout
    boards = ("arty_a7_35", "pynq_z1", "ultra96_v2")
    nets = [ln.split()[:2] for ln in r.stdout.splitlines()
            if ln.startswith(("resnet20v2_cifar ", "resnet50v2_imagenet ", "yolov4_tiny ")) and ln.split()[1] in boards]
    assert nets == [[n, b] for n in ("resnet20v2_cifar", "resnet50v2_imagenet", "yolov4_tiny")
                    for b in boards], r.stdout
    rows = [ln.split()[0] for ln in r.stdout.splitlines() if ln.startswith(("arty", "pynq", "ultra96"))]
    assert rows == ["arty_a7_35", "pynq_z1", "ultra96_v2", "ultra96_v2"], r.stdout
    assert r.stdout.count("passed (") == 5 and "FAILED" not in r.stdout
    assert "on MARSELLUS" in r.stdout


def test_cli_compile(tmp_path, capsys) -> None:
    from cosim.cli import main
    spec = tmp_path / "net.yaml"
    spec.write_text("preset: resnet20_cifar\noptions: {width: 8, blocks: 1, input_hw: 8}\n")
    assert main(["tensil", "compile", str(spec), "-o", str(tmp_path / "out"), "--board", "ultra96_v2"]) == 0
    prog = compile_network(parse_network(SMALL), board_arch("ultra96_v2"))
    assert (tmp_path / "out" / "resnet20_cifar.tprog").read_bytes() == prog.binary()
    assert (tmp_path / "out" / "resnet20_cifar.tdata").read_bytes() == prog.consts_bytes()
    assert json.loads((tmp_path / "out" / "resnet20_cifar.tmodel").read_text())["arch"]["array_size"] == 16
    spec.write_text("layers: 3\n")
    assert main(["tensil", "compile", str(spec), "-o", str(tmp_path / "out")]) == 2
    assert f"{spec}:1: layers: expected a list, got int 3" in capsys.readouterr().err
    spec.write_text("name: x\n")
    assert main(["tensil", "compile", str(spec), "-o", str(tmp_path / "out")]) == 2
    assert f"{spec}:1: missing required key 'input' (or give a preset)" in capsys.readouterr().err
