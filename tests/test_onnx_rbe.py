"""ONNX convolutions on the RBE: the unsigned mapping of signed weights and zero-pointed
activations is exact (against a direct signed convolution in numpy), every RBE mode gives
the layer's own result, placement follows the cycle models, and the QDQ ResNet-20 with
every convolution on the simulated RBE matches onnxruntime bit for bit."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from components.cluster import Cluster, ops
from components.marsellus.facts import MEMORY_MAP
from components.rbe import layout as rl
from components.rbe.golden import conv_acc
from components.tcdm import Tcdm, TcdmParams
from cosim.onnx import builders
from cosim.onnx.deploy import deploy_qnet, prepare
from cosim.onnx.rbe import candidates, correction, unsigned_weights
from cosim.onnx.reference import forward
from tlm import Clock, Simulator

from marsellus_regions import CLUSTER_ARGS, TCDM_ARGS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
B = MEMORY_MAP["tcdm"].base


def signed_conv(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """Direct valid convolution, int64: x (H, W, C), w (Cout, KH, KW, C)."""
    cout, kh, kw, _ = w.shape
    ho, wo = (x.shape[0] - kh) // stride + 1, (x.shape[1] - kw) // stride + 1
    out = np.zeros((ho, wo, cout), np.int64)
    for i in range(ho):
        for j in range(wo):
            win = x[i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[i, j] = np.tensordot(w, win, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("seed,k,c,stride", [(0, 3, 5, 1), (1, 3, 16, 2), (2, 1, 7, 2), (3, 3, 3, 1)])
def test_unsigned_accumulator_is_the_signed_one_plus_a_channel_constant(seed, k, c, stride):
    rng = np.random.default_rng(seed)
    zp = int(rng.integers(-128, 128))
    x = np.pad(rng.integers(-128, 128, (7, 6, c)), ((1, 1), (1, 1), (0, 0)), constant_values=zp)
    w = rng.integers(-128, 128, (9, k, k, c))
    w[0, 0, 0, 0] = -128                                   # the extreme weight, W- = 128
    want = signed_conv(x, w, stride) + (128 * w.sum(axis=(1, 2, 3)) + 255 * np.maximum(-w, 0).sum(axis=(1, 2, 3)))
    np.testing.assert_array_equal(correction(w), want[0, 0] - signed_conv(x, w, stride)[0, 0])
    kin = -(-2 * k * k * c // 32) * 32
    # gathered windows in 1x1 mode
    xu = ops.rbe_input(x, k, k, stride, kin)
    assert xu.min() >= 0 and xu.max() <= 255
    got = conv_acc(xu, unsigned_weights(w, kin, 32, taps_as_channels=True))[..., :9]
    np.testing.assert_array_equal(got, want)
    if k == 3:                                             # 3x3 mode at stride 1, then subsampled
        kin = -(-2 * c // 32) * 32
        wu = unsigned_weights(w, kin, 32, taps_as_channels=False)
        assert wu.min() >= 0 and wu.max() <= 128
        got = conv_acc(ops.rbe_input(x, 1, 1, 1, kin), wu)[::stride, ::stride, :9]
        np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    p = tmp_path_factory.mktemp("r20") / "r20.onnx"
    onnx.save(builders.resnet20(0), str(p))
    model, net, x, _ = prepare(str(p), 3)
    return model, net, x


def test_every_rbe_mode_gives_the_layers_own_result(resnet):
    _, net, x = resnet
    vals = forward(net, x)           # not placed yet: every op on the cores' arithmetic
    modes = set()
    for op in net.ops:
        if op.kind != "conv":
            continue
        xin = vals[net.aliases.get(op.inputs[0], op.inputs[0])]
        found, why = candidates(op, xin.shape)
        if op.note == "fc":          # its 8x8 pooling scale is not provably exact in 16 bits
            assert not found and "not provably exact" in why
            continue
        if op.note == "pool":        # 1/63 within a 16-bit scale: not exact either
            assert not found
            continue
        xp = np.pad(xin, ((op.pad, op.pad),) * 2 + ((0, 0),), constant_values=op.pad_value)
        for r in found:
            np.testing.assert_array_equal(r.run(xp), vals[op.output], err_msg=f"{op.name} {r.mode}")
            modes.add((r.mode, op.stride))
    assert modes >= {("3x3", 1), ("3x3", 2), ("gather", 2), ("1x1", 2)}


def test_relu_at_an_int8_zero_point_stays_on_the_cores(resnet):
    _, net, _ = resnet
    op = next(o for o in net.ops if o.kind == "conv" and o.note == "conv")
    op.relu = True
    try:
        found, why = candidates(op, net.tensors[op.inputs[0]].shape)
    finally:
        op.relu = False
    assert not found and "ReLU" in why


def test_auto_placement_follows_the_cycle_models(resnet):
    model, net, x = resnet
    dep = deploy_qnet(net, x)
    on_rbe = []
    for op in net.ops:
        if op.kind != "conv":
            continue
        m = op.modelled
        rbe = {k: v for k, v in m.items() if k.startswith("rbe")}
        if op.target == "rbe":
            assert min(rbe.values()) < m["cores"] and op.rbe.cycles["total"] == min(rbe.values())
            on_rbe.append(op.weights.shape)
        else:
            assert not rbe or min(rbe.values()) >= m["cores"]
        assert str(m["cores"]) in op.why
    # the 64-channel stride-1 3x3 convolutions (K_in 128 with the complements) pay off; the
    # 16-channel ones (K_in 32 padded, twice the input channels for the complements) do not
    assert sum(1 for w in on_rbe if w[:2] == (64, 3) and w[3] == 64) == 5
    assert not any(w[0] == 16 for w in on_rbe)
    rows = {r[0]: r for r in dep.onnx["placement"]}
    conv = next(op for op in net.ops if op.target == "rbe")
    assert rows[conv.nodes[0]][3].startswith("RBE ") and "cycles" in rows[conv.nodes[0]][3]


def test_pack_and_unpack_kernels_on_the_simulated_cores():
    rng = np.random.default_rng(5)
    sim = Simulator(1)
    clk = Clock(sim, "cluster_clk", 420e6)
    cl = Cluster(sim, "cluster", clock=clk, **CLUSTER_ARGS)
    tcdm = Tcdm(cl, "tcdm", clk, TcdmParams(), **TCDM_ARGS)
    cl.bind_tcdm(tcdm)
    x = rng.integers(-128, 128, (9, 7, 3))
    y = rng.integers(0, 256, (9, 7, 64))
    tcdm.load(B, x.astype(np.int8).tobytes())
    tcdm.load(B + 0x4000, rl.to_bytes(rl.pack_activations(y, 8)))

    async def main():
        await cl.run_kernel("pack_rbe", 16, h=9, w=7, c=3, kh=3, kw=3, stride=2, k=64, x=B, out=B + 0x1000)
        await cl.run_kernel("unpack_rbe", 16, h=9, w=7, k=64, c=40, stride=2, x=B + 0x4000, out=B + 0x8000)

    sim.spawn(main(), "main")
    sim.run()
    got = rl.unpack_activations(rl.from_bytes(tcdm.dump(B + 0x1000, 4 * 3 * 64 * 8 // 32 * 4), (4, 3, 2, 8)))
    for i in range(4):               # window (i, j): 27 values + 128, their complements, zeros
        for j in range(3):
            win = x[2 * i:2 * i + 3, 2 * j:2 * j + 3].reshape(-1)
            np.testing.assert_array_equal(got[i, j], np.concatenate([win + 128, 127 - win, np.zeros(10)]))
    out = np.frombuffer(tcdm.dump(B + 0x8000, 5 * 4 * 40), np.int8).reshape(5, 4, 40)
    np.testing.assert_array_equal(out, y[::2, ::2, :40] - 128)


@pytest.mark.slow(reason="a full network: test_onnx_deploy.py::test_qdq_resnet20_runs_on_rbe_and_cores_bit_for_bit "
                         "simulates a ResNet-20 with its convolutions on the RBE, "
                         "test_other_models_with_their_convs_on_the_rbe_match_onnxruntime here maps them")
def test_resnet20_with_every_conv_on_the_rbe_matches_onnxruntime(tmp_path):
    onnx.save(builders.resnet20(0), str(tmp_path / "r20.onnx"))
    sc = tmp_path / "r20.yaml"
    sc.write_text("name: r20\nseed: 1\nplatform: {preset: marsellus}\n"
                  "workload:\n  network: {onnx: r20.onnx, convs_on: rbe}\n")
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", str(sc), "--out", str(tmp_path / "o"),
                        "--quiet", "--no-plots"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    res = {c["name"]: c for c in rep["checks"]}
    assert res["network == onnxruntime (bit for bit)"]["passed"]
    assert res["network == onnxruntime (bit for bit)"]["detail"] == "32 tensors identical"
    rows = rep["extra"]["layers"]["table"]["rows"]
    runs = {r[0]: r[-1] for r in rows}
    assert sum(v == "RBE" for v in runs.values()) == 21          # 19 3x3 + 2 strided 1x1 shortcuts
    assert runs["Gemm516"] == "cores"                            # not exact in a 16-bit scale
    assert rep["components"]["cluster.rbe"]["jobs"] == 21 and rep["components"]["cluster.rbe"]["errors"] == 0


@pytest.mark.parametrize("make", [builders.mobilenet, builders.tiny, builders.darknet])
def test_other_models_with_their_convs_on_the_rbe_match_onnxruntime(tmp_path, make):
    """Depthwise (block-diagonal), pooling windows, a 3-channel input, LeakyRelu around them:
    the RBE mapping of every convolution it takes equals onnxruntime's integers."""
    from cosim.onnx.deploy import deploy_file
    p = tmp_path / "m.onnx"
    onnx.save(make(1), str(p))
    dep = deploy_file(str(p), 5, convs_on="rbe")
    assert sum(v.get("runs_on") == "RBE" for v in dep.layer_info.values()) >= 5
    for name, (addr, want) in dep.onnx["goldens"].items():
        assert dep.goldens[name] == (addr, want), name
