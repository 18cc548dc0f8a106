"""Network deployment does only the real work: the RBE computes only strided outputs of
stride-2 layers (DMA-gathered windows in 1x1 mode), the first layer runs on a packed input
layout when the cycle models say it is fastest, each layer's placement and reason reach the
report, and every tensor stays bit-exact against the numpy reference."""
from __future__ import annotations

import numpy as np
import pytest

from components.rbe.cycles import job_cycles
from components.rbe.golden import conv_acc
from components.rbe.job import Mode, RbeJob
from cosim.deploy import deploy, parse_network
from cosim.deploy.placement import cores_cycles, place_conv
from cosim.deploy.reference import pack_windows

SMALL = {"preset": "resnet20_cifar", "options": {"blocks": 1, "input_hw": 8}}


def _real_conv_ops(net) -> int:
    """2 x MACs of every convolution at its real channel counts and stride (spec equation)."""
    total = 0
    for ly in net.layers:
        if ly.on_rbe:
            h, w, cin = ly.in_shape
            taps = 9 if ly.type == "conv3x3" else 1
            total += 2 * (h // ly.stride) * (w // ly.stride) * ly.out * cin * taps
    return total


def test_windows_times_flattened_weights_equal_the_strided_3x3_convolution():
    rng = np.random.default_rng(3)
    for stride, cin in ((1, 3), (2, 5)):
        x = rng.integers(0, 256, size=(8, 8, cin))
        wt = rng.integers(0, 8, size=(7, cin, 3, 3))
        want = conv_acc(np.pad(x, ((1, 1), (1, 1), (0, 0))), wt)[::stride, ::stride]
        win = pack_windows(x, stride)
        assert win.shape == (8 // stride, 8 // stride, 9 * cin)
        flat = wt.transpose(0, 2, 3, 1).reshape(7, 9 * cin)    # channel tap*cin + c, tap = 3ky+kx
        assert np.array_equal(win @ flat.T, want)


def test_resnet20_placements_follow_the_cycle_models():
    net = parse_network({"preset": "resnet20_cifar"})
    places = {ly.name: place_conv(ly, ly.inputs == ["input"]) for ly in net.layers if ly.on_rbe}
    # the model's choice is the minimum of the candidates it reports, and it says why
    for p in places.values():
        assert p.cycles[p.mode] == min(p.cycles.values()) and str(p.cycles[p.mode]) in p.reason
    assert places["conv1"].mode == "packed" and places["conv1"].k_in == 32      # 27 real channels
    assert places["conv1"].cycles["cores"] > places["conv1"].cycles["packed"]
    assert {n for n, p in places.items() if p.mode == "gather"} == {"s2b1_c1", "s3b1_c1"}
    assert all(p.mode == "3x3" for n, p in places.items() if n.endswith("_c2"))
    # an independent job: the gathered stride-2 layer is a 1x1 job on the 16x16 output grid
    ly = net.layer("s2b1_c1")
    job = RbeJob.dense(x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=16, w_out=16, k_in=288, k_out=32,
                       w_bits=3, i_bits=8, o_bits=4, mode=Mode.CONV1X1)
    assert places["s2b1_c1"].cycles["gather"] == job_cycles(job).ideal
    assert cores_cycles(ly) > 0


def test_rbe_executes_fewer_ops_and_reports_them():
    net = parse_network({"preset": "resnet20_cifar"})
    dep = deploy(net, seed=7)
    info = {k: v for k, v in dep.layer_info.items() if "rbe_ops" in v}
    real = sum(v["real_ops"] for v in info.values())
    assert real == _real_conv_ops(net)
    rbe = sum(v["rbe_ops"] for v in info.values())
    # the RBE tasks' own job sizes add up to the reported executed ops
    tasks = sum(2 * t["h_out"] * t["w_out"] * t["k_in"] * t["k_out"] * (9 if t["mode"] == "3x3" else 1)
                for t in dep.tasks if t["op"] == "rbe")
    assert tasks == rbe
    # before: padding everything to 32 and stride 2 at stride 1 gave 2.55x; stage 1's 16
    # channels on 32-wide BinConvs remain (4x on those layers), nothing else
    assert rbe / real < 2.1
    assert info["conv1"]["rbe_ops"] == 2 * 32 * 32 * 32 * 32
    assert info["s2b1_c1"]["rbe_ops"] == 2 * 16 * 16 * 32 * 288
    for name, v in dep.layer_info.items():
        if not name.startswith("_") and v["type"] != "avgpool":
            assert v["placement"] and v["reason"], name


def test_small_resnet_is_bit_exact_and_reports_placement(tmp_path):
    from cosim.runner import run_here
    from cosim.scenario import load_scenario_text
    text = ("name: placement\nseed: 5\nplatform: {preset: marsellus}\nworkload:\n"
            f"  network: {SMALL}\n".replace("'", '"'))
    rep, _run, _ = run_here(load_scenario_text(text, tmp_path / "s.yaml"), tmp_path / "out")
    checks = {c.name: c.passed for c in rep.checks}
    assert checks["network == numpy reference"] and checks["tasks"], rep.checks
    layers = rep.extra["layers"]
    rows = {r["layer"]: r for r in layers["rows"]}
    # at 8x8 every way of running a convolution occurs, and all of them are bit-exact
    assert rows["conv1"]["placement"] == "RBE 1x1, packed input"
    assert rows["s3b1_c1"]["placement"] == "RBE 1x1, gathered taps"
    assert "cycles modelled" in rows["s3b1_c1"]["reason"]
    assert rows["s2b1_c1"]["placement"] == "RBE 3x3" and "subsampled" in rows["s2b1_c1"]["reason"]
    assert rows["s2b1_sc"]["placement"] == "RBE 1x1"
    assert rows["s1b1_add"]["placement"] == "cores"
    assert layers["table"]["columns"][-1] == "placement"
    net = parse_network(SMALL)
    assert layers["conv_real_ops"] == _real_conv_ops(net)
    assert layers["rbe_ops_per_real_op"] == pytest.approx(layers["rbe_ops"] / layers["conv_real_ops"], abs=1e-4)
