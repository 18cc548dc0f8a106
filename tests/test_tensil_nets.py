"""The Tensil compiler's layer types (KxK conv of any odd K and stride, max-pool, concat,
channel split, nearest upsample, leaky ReLU, pre-activation BN) and the networks of
Tensil's published evaluation: bit-exact against the numpy fixed-point reference on small
networks in data mode, the same cycles in timing-only mode, published layer shapes."""
from __future__ import annotations

import numpy as np
import pytest

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.asm import lint
from accelerators.tensil.model.boards import board_arch
from accelerators.tensil.model.fixed import FixedFormat
from cosim.deploy.network import NetworkError, family_types, parse_network
from accelerators.tensil.deploy import reference as R
from accelerators.tensil.deploy.compiler import compile_network
from accelerators.tensil.deploy.nets import OPS_NET, build
from accelerators.tensil.deploy.run import read_var, run_program

ARCHS = {"8x8": TensilArch(array_size=8, local_depth=4096, accumulator_depth=1024),
         "pynq_z1": board_arch("pynq_z1"),
         "fp32_4x4": TensilArch(data_type="FP32B16", array_size=4, local_depth=4096, accumulator_depth=1024)}


def _exact(net, arch: TensilArch, seed: int = 3) -> tuple:
    """Data mode against the reference (every tensor), then the timing-only compile and run:
    the same instructions and the same cycles."""
    prog = compile_network(net, arch, seed=seed)
    fmt = FixedFormat(arch.width, arch.frac)
    x = fmt.from_float(np.random.default_rng(seed + 1).uniform(-1, 1, net.input_shape))
    m = run_program(prog, x)
    ref = R.network(net, prog.params, x, arch.array_size, arch.width, arch.frac)
    for name, v in prog.vars.items():
        assert np.array_equal(read_var(m, v), ref[name]), name
    assert not m.hazards and not lint(prog.instructions)
    timing = compile_network(net, arch, seed=seed, data=False)
    assert timing.instructions == prog.instructions and timing.dram1_vectors == prog.dram1_vectors
    assert run_program(timing, None, data=False).stats.cycles == m.stats.cycles
    return prog, m, ref


@pytest.mark.parametrize("arch", list(ARCHS))
def test_every_layer_type_bit_exact_and_timing_mode_same_cycles(arch: str) -> None:
    net = build("tensil_ops")
    prog, m, ref = _exact(net, ARCHS[arch])
    # the leaky ReLU and the max-pool did something: negative values survive scaled
    assert (ref["c7"] < 0).any() and (ref["c7"] > 0).any() and (ref["ad"] < 0).any()
    assert np.array_equal(ref["mp1"], ref["pre"][::2, ::2])


def test_leaky_relu_rounding_documented() -> None:
    # alpha 0.1 is 26/256 in FP16BP8; x * alpha rounds to nearest, ties to even
    y = R.act(np.array([-256, -128, -5, 300]), True, 0.1, 16, 8)
    assert y.tolist() == [-26, -13, round(-5 * 26 / 256), 300]


def test_concat_and_split_placed_without_copies_when_aligned() -> None:
    net = build("tensil_ops")
    p8 = compile_network(net, ARCHS["8x8"])
    views = {k: (v.parent, v.coff) for k, v in p8.vars.items() if v.parent}
    # cat2 = [c1, c1b] and cat3 = [up, c7] hold their inputs; sp is block 1 of mp
    assert views == {"c7": ("cat3", 2), "sp": ("mp", 1), "c1": ("cat2", 0), "c1b": ("cat2", 1),
                     "up": ("cat3", 0)}
    # 12 lanes: 8 and 16 channels are not whole vectors, every concat / split copies
    assert not any(v.parent for v in compile_network(net, ARCHS["pynq_z1"]).vars.values())


SMALL = {"resnet20v2_cifar": {"input_hw": 8, "width": 8, "blocks": 1},
         "resnet50v2_imagenet": {"input_hw": 32, "width": 8, "stacks": (1, 2, 1, 1), "classes": 10},
         "yolov4_tiny": {"input_hw": 32, "width": 8, "classes": 1}}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow(
    reason="every layer type: test_every_layer_type_bit_exact_and_timing_mode_same_cycles; a small network end to "
           "end: [resnet20v2_cifar]")) if n == "yolov4_tiny" else n for n in SMALL])
def test_small_networks_bit_exact(name: str) -> None:
    _exact(build(name, **SMALL[name]), ARCHS["8x8"])


def test_published_layer_shapes() -> None:
    r20 = build("resnet20v2_cifar")
    assert r20.layer("s3b2_add").in_shape == (8, 8, 256) and r20.layer("fc").k == 10
    # 1 + 3 x 2 x 3 convs (the "20" of ResNet-20: with the FC, without the 3 projections)
    assert sum(ly.type.startswith("conv") for ly in r20.layers) == 22
    r50 = build("resnet50v2_imagenet")
    assert r50.layer("conv1").h == 112 and r50.layer("pool1").h == 56
    assert [r50.shape_of(f"s{s}b1_add")[:3] for s in (2, 3, 4, 5)] == [(56, 56, 256), (28, 28, 512),
                                                                     (14, 14, 1024), (7, 7, 2048)]
    assert r50.shape_of("s2b3_add")[:3] == (28, 28, 256)        # stride in the stack's last block
    convs = [ly for ly in r50.layers if ly.type.startswith("conv")]
    assert len(convs) == 1 + 16 * 3 + 4                          # 49 + fc = 50 layers with weights
    yolo = build("yolov4_tiny")
    assert yolo.shape_of("head1")[:3] == (13, 13, 255) and yolo.shape_of("head2")[:3] == (26, 26, 255)
    assert yolo.shape_of("cat")[:3] == (26, 26, 384) and yolo.shape_of("b1_split")[:3] == (104, 104, 32)
    # darknet prints 6.910 BFLOPs (2 per MAC) for yolov4-tiny at 416
    macs = sum(ly.h * ly.w * ly.k * ly.in_shape[2] * ly.kernel ** 2 for ly in yolo.layers if ly.type == "conv")
    assert abs(2 * macs / 1e9 - 6.91) < 0.01


def test_tensil_types_rejected_elsewhere_and_checked() -> None:
    with pytest.raises(NetworkError, match="runs on the tensil deployment only"):
        parse_network(OPS_NET)
    bad = {"input": {"h": 8, "w": 8, "c": 3}, "layers": [{"name": "c", "type": "conv", "kernel": 4, "out": 8}]}
    with pytest.raises(NetworkError, match=r"layers\[0\].kernel: 1..15 and odd"):
        parse_network(bad, types=family_types("tensil"))
    bad["layers"] = [{"name": "s", "type": "split", "groups": 2, "group": 2}]
    with pytest.raises(NetworkError, match="group 2 of 2"):
        parse_network(bad, types=family_types("tensil"))


def _scenario(tmp_path, network: dict, overrides: dict) -> object:
    import yaml

    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "sc.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "seed": 1, "platform": {"preset": "tensil", "overrides": overrides},
                                    "workload": {"network": network}}))
    return run_scenario(load_scenario(path), out_dir=tmp_path / "out", plots=False).as_dict()


def test_scenario_on_a_board_reports_latency_at_its_clock(tmp_path) -> None:
    rep = _scenario(tmp_path, {"preset": "tensil_ops", "options": {"input_hw": 8}}, {"soc.tcu.board": "ultra96_v2"})
    assert rep["status"] == "passed" and all(c["passed"] for c in rep["checks"])
    assert "network == numpy reference" in {c["name"] for c in rep["checks"]}
    summary, tcu = rep["extra"]["layers"], rep["components"]["soc.tcu"]
    # the cycles the TCU counted, quoted at the Ultra96-V2's 300 MHz
    assert summary["cycles"] == tcu["cycles"] > 0
    assert summary["latency_ms"] == pytest.approx(tcu["cycles"] / 300e6 * 1e3)
    assert summary["frames_per_s"] == pytest.approx(1e3 / summary["latency_ms"])
    # the program's static counts are what the TCU executed (no branches)
    assert summary["by_opcode"] == {k.split(".", 1)[1]: v for k, v in tcu.items() if k.startswith("instructions.")}
    assert summary["dram_bytes"] == {k.split(".", 1)[1]: v for k, v in tcu.items() if k.startswith("bytes.")}
    rows = dict(summary["table"]["rows"])
    assert rows["board"].startswith("ultra96_v2 (16x16 FP16BP8, 300 MHz)")
    # the terminal names what each figure is: the board's clock, the input the run used
    assert rows["latency at 300 MHz (board)"] == f"{summary['latency_ms']:.3f} ms"
    assert rows["network"].endswith(", input 8x8x3")
    assert rows["MAC utilisation"] == f"{summary['array_utilisation']:.1%}"
    assert "150 MHz whatever the board" in summary["table"]["caption"]
    # the header's simulated time runs the same cycles at the tensil platform's 150 MHz
    assert rep["sim_time_ps"] >= tcu["cycles"] * 1e12 / 150e6


def test_scenario_timing_only_same_cycles_and_too_large_is_located(tmp_path) -> None:
    net = {"preset": "tensil_ops", "options": {"input_hw": 8}}
    data = _scenario(tmp_path / "a", net, {})
    timing = _scenario(tmp_path / "b", net, {"soc.tcu.data": False})
    assert timing["extra"]["layers"]["cycles"] == data["extra"]["layers"]["cycles"]
    assert dict(timing["extra"]["layers"]["table"]["rows"])["mode"] == "timing-only"
    from cosim.scenario import ScenarioError
    # the output: 128 x 128 pixels x 16 vectors (no reader pads it) and the input's 130 x 130
    # stored pixels (one-pixel border) of 16 bytes, beyond a DRAM0 of 2^16 vectors: the
    # bank, the bytes needed and the depth named
    big = {"input": {"h": 128, "w": 128, "c": 3}, "layers": [{"name": "c", "type": "conv", "kernel": 3, "out": 128}]}
    need = (128 * 128 * 16 + 130 * 130) * 16
    with pytest.raises(ScenarioError, match=f"take {need} bytes .*DRAM0 of 65536 vectors x 16 bytes") as e:
        _scenario(tmp_path / "c", big, {"soc.tcu.data": False, "soc.tcu.dram0_depth": 1 << 16})
    assert e.value.line is not None
