"""Voyager compiler and performance model: the array table against the buffer
organisation, the model zoo against published MAC counts, one schedule against the spec's
equations worked by hand, the objectives' orderings, and located errors."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from accelerators.voyager.model import config as C
from accelerators.voyager.model import perf as P
from accelerators.voyager.model import zoo
from accelerators.voyager.model.compiler import fuse
from accelerators.voyager.model.errors import VoyagerError
from tlm.params import ParameterError


def test_array_table_matches_the_buffer_organisation():
    rows = C.array_table()
    assert [r["name"] for r in rows] == ["8x8", "8x16", "16x16", "16x32", "32x32", "32x64", "64x64"]
    for r in rows:
        # 2 x 1024 x IC x 1 B + 2 x 1024 x OC x 1 B + 1024 x OC x 2 B
        kb = (2 * 1024 * r["ic_dim"] + 2 * 1024 * r["oc_dim"] + 1024 * r["oc_dim"] * 2) / 1024
        assert kb == r["sram_kb"] == C.array_config(r["name"]).sram_bytes() / 1024


def test_model_zoo_mac_counts_match_the_published_totals():
    g = {m: sum(ly.macs for ly in zoo.model(m)) / 1e9 for m in zoo.MODELS}
    assert abs(g["resnet18"] - 1.814) < 0.005 and abs(g["resnet50"] - 4.09) < 0.02
    assert abs(g["mobilenetv2"] - 0.300) < 0.01 and abs(g["vit_base"] - 17.56) < 0.05
    s, d = 128, 768
    bert = 12 * (4 * s * d * d + 2 * s * s * d + 2 * s * d * 3072) + d * d + 2 * d
    assert sum(ly.macs for ly in zoo.model("bert_base")) == bert


def test_fusion_rides_elementwise_ops_on_their_producer_and_folds_reshapes():
    ops = fuse(zoo.model("resnet18"))
    by = {o.name: o for o in ops}
    assert by["conv1"].post == ("relu",) and by["layer1.0.conv2"].post == ("add", "relu")
    assert by["layer2.0.downsample"].post == ("add", "relu")
    assert by["fc"].unit == "vector" and by["maxpool"].unit == "vector"
    bert = {o.name: o for o in fuse(zoo.model("bert_base"))}
    assert bert["encoder0.qk"].folded == ("encoder0.split_heads", "encoder0.k_t")
    assert bert["encoder0.fc1"].post == ("gelu",)
    assert not any(o.layer.kind in zoo.RESHAPES + zoo.ELEMENTWISE for o in ops)


def test_one_gemm_schedule_by_hand():
    # 64 x 32 x 32 int8 GEMM on 16x16, 64 B/cycle: the whole layer in one L2 tile is fastest
    p = replace(C.VoyagerParams(), ic_dim=16, oc_dim=16)
    lp = P.network_perf([zoo.Layer("g", "gemm", m=64, c=32, k=32)], p).layers[0]
    assert lp.tile == (64, 1, 32, 32) and lp.l2_tiles == 1
    compute = 2 * 2 * max(64, 16) + (16 + 16 + 1)            # array tiles x max(P, IC) + fill/drain
    first = (64 * 32 + 32 * 32) / 64                         # first tile's loads are not hidden
    memory = (64 * 32 + 32 * 32 + 64 * 32) / 64
    vector = 64 * 32 / 16 + 8
    assert lp.compute == compute and lp.cycles == first + max(compute, memory, vector)
    assert lp.ideal == 64 * 32 * 32 // 256 and lp.utilisation == 256 / lp.cycles


def test_back_pressure_without_a_double_buffered_accumulation_buffer():
    # 4 reduction tiles per output tile (the weight buffer holds one channel block), a slow
    # vector unit: without double buffering its time adds to each completing tile's max
    layer = zoo.Layer("g", "gemm", m=512, c=64, k=256)
    p = replace(C.VoyagerParams(), ic_dim=16, oc_dim=16, vector_width=8, weight_buffer_rows=16,
                mem_bytes_per_cycle=1024)
    single = P.network_perf([layer], p).layers[0]
    double = P.network_perf([layer], replace(p, double_buffered_accum=True)).layers[0]
    assert single.tile[2:] == double.tile[2:] == (16, 16)
    assert double.cycles < single.cycles
    assert double.cycles >= 512 * 256 / 8                   # every output element through 8 lanes
    # by hand: 16 output tiles x 4 reduction tiles; compute max(512, 16) + fill 33 per tile,
    # vector 512 x 16 / 8 + depth 8 per output tile, first load (512 x 16 + 16 x 16) B / 1024
    tc, tv, first = 512 + 33, 512 * 16 / 8 + 8, (512 * 16 + 16 * 16) / 1024
    assert single.cycles == math.ceil(first + 16 * max(tc, tv) + 48 * tc)
    assert double.cycles == math.ceil(first + max(64 * tc, 16 * tv))


def test_objectives_order_their_own_figure_and_totals_are_sums():
    layers = zoo.model("resnet18")
    perf = P.network_perf(layers, C.array_config("16x16"))
    energy = P.network_perf(layers, C.array_config("16x16", objective="energy"))
    coarse = P.network_perf(layers, C.array_config("16x16", objective="coarse"))
    for a, b in zip(perf.layers, energy.layers):
        assert a.cycles <= b.cycles and b.energy_pj <= a.energy_pj
    assert energy.totals()["energy_pj"] < perf.totals()["energy_pj"] and perf.cycles < energy.cycles
    assert coarse.cycles != perf.cycles
    mats = [lp for lp in perf.layers if lp.unit == "matrix"]
    assert perf.utilisation == sum(lp.ideal for lp in mats) / sum(lp.cycles for lp in mats)
    assert perf.cycles == sum(lp.cycles for lp in perf.layers)


@pytest.mark.parametrize("name", [r["name"] for r in C.array_table()])
def test_every_model_schedules_on_every_array(name):
    p = C.array_config(name)
    for m in zoo.MODELS:
        net = P.network_perf(zoo.model(m), p)
        for lp in net.layers:
            assert lp.cycles >= lp.ideal and lp.cycles > 0, (m, lp)
        assert 0 < net.utilisation <= 1


def test_bigger_arrays_are_faster_but_less_utilised_on_resnet18():
    runs = [P.network_perf(zoo.model("resnet18"), C.array_config(r["name"])) for r in C.array_table()]
    cycles = [r.cycles for r in runs]
    assert cycles == sorted(cycles, reverse=True)
    assert runs[0].utilisation > runs[-1].utilisation


def test_buffers_too_small_name_the_layer_and_the_smallest_buffer_that_fits():
    p = replace(C.VoyagerParams(), input_buffer_rows=4)
    with pytest.raises(VoyagerError, match=r"layer c3: the buffers are too small for any tile; the smallest "
                                           r"tile needs input_buffer_rows >= 9 \(have 4\)"):
        P.network_perf([zoo.Layer("c3", "conv", h=8, w=8, c=16, k=16, f=3, pad=1)], p)
    p = replace(C.VoyagerParams(), weight_buffer_rows=8)
    with pytest.raises(VoyagerError, match=r"layer fc1: .*weight_buffer_rows >= 16 \(have 8\)"):
        P.network_perf([zoo.Layer("fc1", "gemm", m=8, c=64, k=64)], p)


def test_bad_parameters_are_located():
    with pytest.raises(ParameterError, match=r"voyager\.ic_dim"):
        C.checked(replace(C.VoyagerParams(), ic_dim=0))
    with pytest.raises(ParameterError, match="unknown datatype 'int32x'"):
        C.checked(replace(C.VoyagerParams(), dtype="int32x"))
    with pytest.raises(ParameterError, match="unknown performance model 'fast'"):
        C.checked(replace(C.VoyagerParams(), objective="fast"))
    with pytest.raises(VoyagerError, match="array size 0x16"):
        P.network_perf(zoo.model("resnet18"), replace(C.VoyagerParams(), ic_dim=0))
    assert (C.array_config("12x24").ic_dim, C.array_config("12x24").oc_dim) == (12, 24)
    with pytest.raises(VoyagerError, match="unknown array configuration 'big'"):
        C.array_config("big")
    with pytest.raises(ParameterError, match=r"voyager\.oc_dim"):
        C.array_config("16x0")
    with pytest.raises(VoyagerError, match="layer x: unknown layer kind 'lstm'"):
        zoo.Layer("x", "lstm")


def test_model_compute_and_the_cycle_level_array_differ_by_the_first_weight_shift():
    from accelerators.voyager.model.dtypes import design
    from accelerators.voyager.model.matrix import SystolicArray
    p = replace(C.VoyagerParams(), ic_dim=16, oc_dim=16)
    lp = P.network_perf([zoo.Layer("g", "gemm", m=64, c=32, k=16)], p).layers[0]
    assert lp.l2_tiles == 1
    array = SystolicArray(design("int8"), 16, 16).schedule([64, 64])[2]   # two array tiles of 64 vectors
    assert array - lp.compute == 16 - 3
