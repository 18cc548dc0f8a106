"""Residual adds cost what their real channels cost: ``add_requant`` with ``channels`` below
the padded ``k`` unpacks/packs only the real channels (time and ops), leaves the padding
bits 0, and the deployment passes each add's real channel count."""
from __future__ import annotations

import numpy as np

from components.cluster import Cluster
from components.cluster.timing import load_timing
from components.marsellus.facts import MEMORY_MAP
from components.rbe.layout import from_bytes, pack_activations, unpack_activations
from components.tcdm import Tcdm, TcdmParams
from cosim.deploy import deploy, parse_network
from marsellus_regions import CLUSTER_ARGS, TCDM_ARGS  # noqa: E402
from tlm import Clock, Simulator

B = MEMORY_MAP["tcdm"].base


def test_add_on_real_channels_costs_and_computes_only_those():
    rng = np.random.default_rng(2)
    h, w, k, real = 4, 4, 32, 16
    x1 = np.zeros((h, w, k), np.int64)
    x2 = np.zeros((h, w, k), np.int64)
    x1[..., :real] = rng.integers(0, 256, (h, w, real))
    x2[..., :real] = rng.integers(0, 16, (h, w, real))
    common = dict(pixels=h * w, k=k, a_bits=8, b_bits=4, o_bits=8, m1=3, m2=40, bias=4, shift=3,
                  a=B, b=B + 0x4000, out=B + 0x8000)
    runs = {}
    for ch in (0, real):
        tcdm_data = [(B, pack_activations(x1, 8)), (B + 0x4000, pack_activations(x2, 4))]
        r, tcdm = _run_loaded(tcdm_data, channels=ch, **common)
        assert r.ok
        got = unpack_activations(from_bytes(tcdm.dump(B + 0x8000, h * w * 8 * 4), (h, w, 1, 8)))
        want = np.clip((3 * x1 + 40 * x2 + 4) >> 3, 0, 255)
        if ch:
            want[..., ch:] = 0            # padding is never written
        assert np.array_equal(got, want)
        runs[ch] = r
    assert runs[real].ops == 4 * h * w * real and runs[0].ops == 4 * h * w * k
    # one core, 16 pixels in one chunk: the spec's per-element cost on real channels only
    ew = load_timing().ew
    per = (8 + 4 + 8) * ew["bit_cycles"] + ew["requant_cycles_per_element"]
    saved = (k - real) * h * w * per
    assert abs(runs[0].cycles - runs[real].cycles - saved) <= 1      # whole cycles


def _run_loaded(data, **args):
    sim = Simulator(1)
    clk = Clock(sim, "cluster_clk", 420e6)
    cl = Cluster(sim, "cluster", clock=clk, **CLUSTER_ARGS)
    tcdm = Tcdm(cl, "tcdm", clk, TcdmParams(mode="burst"), **TCDM_ARGS)
    cl.bind_tcdm(tcdm)
    for addr, words in data:
        tcdm.load(addr, words.astype("<u4").tobytes())
    out = {}

    async def main():
        out["run"] = await cl.run_kernel("add_requant", 1, **args)

    sim.spawn(main(), "main")
    sim.run()
    return out["run"], tcdm


def test_deployment_adds_use_the_real_channel_count():
    net = parse_network({"preset": "resnet20_cifar", "options": {"blocks": 1, "input_hw": 8}})
    dep = deploy(net, seed=3)
    adds = [t for t in dep.tasks if t["op"] == "kernel" and t["name"] == "add_requant"]
    assert adds
    for t in adds:
        assert t["args"]["channels"] == net.layer(t["layer"]).k <= t["args"]["k"]
    assert any(t["args"]["channels"] < t["args"]["k"] for t in adds)       # stage 1: 16 of 32
