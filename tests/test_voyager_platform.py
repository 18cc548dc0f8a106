"""The Voyager accelerator on the common interface: register semantics, job errors, the
interrupt, bit-exact outputs through the DRAM port, DRAM bandwidth in the timing, the
standalone platform's scenario (checked against numpy) and its report section."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from components.l2 import BankedMemory, BankedMemoryParams
from accelerators.voyager.model import dtypes as D
from accelerators.voyager.model.accel import MAP, Voyager
from accelerators.voyager.model.config import VoyagerParams
from accelerators.voyager.model.job import VoyagerJob, job_registers
from tlm import Clock, GenericPayload, InitiatorSocket, Module, Simulator
from tlm.address_map import Region
from tlm.payload import READ, WRITE
import ml_dtypes

from voyager_ref import F, oracle, ref_gemm_float, ref_posit_encode

ROOT = Path(__file__).resolve().parents[1]
BASE = 0x80000000


def _soc(params: VoyagerParams | None = None, word: int = 64):
    sim = Simulator()
    clk = Clock(sim, "clk", 1e9)
    dram = BankedMemory(sim, "dram", Region("dram", BASE, 0x100000, "soc", "memory", ""), clk,
                        BankedMemoryParams(banks=1, bank_word_bytes=word, latency=10))
    acc = Voyager(sim, "voyager", clock=clk, params=params or VoyagerParams())
    acc.dram.bind(dram.socket)
    acc.host = InitiatorSocket(Module(sim, "host"), "bus")
    acc.host.bind(acc.regs.socket)
    return sim, dram, acc


async def _wr(acc, name, value):
    await acc.host.b_transport(GenericPayload(WRITE, MAP.register(name).offset,
                                                     bytearray(int(value).to_bytes(4, "little"))), 0)


async def _rd(acc, name):
    p = GenericPayload(READ, MAP.register(name).offset, bytearray(4))
    await acc.host.b_transport(p, 0)
    return int.from_bytes(p.data, "little")


def _run_job(sim, acc, job: VoyagerJob, irq: bool = True):
    seen = {}

    async def host():
        await _wr(acc, "IRQ_ENABLE", int(irq))
        for name, v in job_registers(job).items():
            await _wr(acc, name, v)
        await _wr(acc, "CTRL", 4)
        seen["busy"] = await _rd(acc, "STATUS")
        await acc.done
        seen["status"] = await _rd(acc, "STATUS")
        seen["irq"] = await _rd(acc, "IRQ_STATUS")
        seen["cycles"] = await _rd(acc, "CYCLE_LO")

    fired = []
    acc.irq.add_callback(lambda _e: fired.append(sim.now))
    sim.spawn(host(), "host")
    sim.run()
    seen["fired"] = fired
    return seen


def test_bf16_gemm_job_is_bit_exact_through_the_dram_port():
    sim, dram, acc = _soc(replace(VoyagerParams(), dtype="bf16"))
    rng = np.random.default_rng(1)
    bf = D.parse_dtype("bf16")
    x = bf.quantize(rng.standard_normal((12, 40)))
    w = bf.quantize(rng.standard_normal((40, 24)))
    dram.array[0:x.size * 2] = np.frombuffer(bf.encode(x).astype("<u2").tobytes(), np.uint8)
    dram.array[0x4000:0x4000 + w.size * 2] = np.frombuffer(bf.encode(w).astype("<u2").tobytes(), np.uint8)
    job = VoyagerJob(kind=1, dtype="bf16", in_addr=BASE, w_addr=BASE + 0x4000, out_addr=BASE + 0x8000,
                     h=12, w=1, c=40, k=24)
    seen = _run_job(sim, acc, job)
    got = bf.decode(np.frombuffer(dram.array[0x8000:0x8000 + 12 * 24 * 2].tobytes(), "<u2")).reshape(12, 24)
    np.testing.assert_array_equal(got, ref_gemm_float(x, w, 16, "bf16", "bf16"))
    assert seen["busy"] & 3 and seen["status"] == 1 << 8 and seen["irq"] == 1 and len(seen["fired"]) == 1
    e = acc.report_entry().as_dict()
    assert e["jobs"] == 1 and e["ops"] == 12 * 40 * 24 and e["ideal_cycles"] == -(-12 * 40 * 24 // 256)
    assert e["layers"][0]["cycles"] == e["cycles"] == seen["cycles"]
    assert e["bytes"]["dram"] >= (x.size + w.size + 12 * 24) * 2
    # the descriptor may pin the L2 tile (any size, not only the search's candidates)
    sim, dram2, acc = _soc(replace(VoyagerParams(), dtype="bf16"))
    dram2.array[:0x8000] = dram.array[:0x8000]
    _run_job(sim, acc, replace(job, tile=(5, 0, 16, 16)))
    row = acc.report_entry().as_dict()["layers"][0]
    assert row["tile"] == [5, 1, 16, 16] and row["l2_tiles"] == 3 * 3 * 2
    np.testing.assert_array_equal(dram2.array[0x8000:0x8000 + 12 * 24 * 2], dram.array[0x8000:0x8000 + 12 * 24 * 2])


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "posit8"])
def test_each_8bit_float_datatype_through_the_accelerator_with_relu_and_requantisation(name):
    sim, dram, acc = _soc()
    rng = np.random.default_rng(len(name))
    t = D.parse_dtype(name)
    xc = t.encode(rng.standard_normal((10, 33)))
    wc = t.encode(rng.standard_normal((33, 20)) * 0.5)
    dram.array[0:xc.size] = xc.reshape(-1)
    dram.array[0x4000:0x4000 + wc.size] = wc.reshape(-1)
    job = VoyagerJob(kind=1, dtype=name, in_addr=BASE, w_addr=BASE + 0x4000, out_addr=BASE + 0x8000,
                     h=10, w=1, c=33, k=20, relu=True, quant=True)
    _run_job(sim, acc, job)
    got = dram.array[0x8000:0x8000 + 200].reshape(10, 20)
    # reference: the array's bf16 GEMM (exact rationals), ReLU, then the format's own encoder
    y = np.maximum(ref_gemm_float(t.decode(xc), t.decode(wc), 16, "bf16", "bf16"), 0.0)
    if name == "posit8":
        want = np.array([[ref_posit_encode(float(v), 8, 1) for v in row] for row in y], np.uint8)
    else:
        md = ml_dtypes.float8_e4m3fn if name == "e4m3" else ml_dtypes.float8_e5m2
        y32 = y.astype(np.float32)                      # bf16 values: exact in float32
        if name == "e4m3":
            y32 = np.clip(y32, -448, 448)               # saturating conversion
        want = y32.astype(md).view(np.uint8)
    np.testing.assert_array_equal(got, want)


def test_mxint8_gemm_job_dequantises_each_block_with_both_scales():
    sim, dram, acc = _soc()
    rng = np.random.default_rng(4)
    mt = D.MXInt8(32)
    x = mt.quantize_blocks(rng.standard_normal((6, 64)), axis=1)
    w = mt.quantize_blocks(rng.standard_normal((64, 16)) * 0.1, axis=0)
    for off, arr in ((0, x.q), (0x1000, w.q), (0x2000, x.e), (0x3000, w.e)):
        dram.array[off:off + arr.size] = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    job = VoyagerJob(kind=1, dtype="mxint8", in_addr=BASE, w_addr=BASE + 0x1000, scale_addr=BASE + 0x2000,
                     w_scale_addr=BASE + 0x3000, out_addr=BASE + 0x8000, h=6, w=1, c=64, k=16)
    seen = _run_job(sim, acc, job)
    assert seen["status"] == 1 << 8
    got = D.FloatType("bf16").decode(np.frombuffer(dram.array[0x8000:0x8000 + 6 * 16 * 2].tobytes(), "<u2"))
    for i in range(6):
        for j in range(16):
            acc_v = 0.0
            for b in range(2):
                s = sum(int(x.q[i, k]) * int(w.q[k, j]) for k in range(32 * b, 32 * b + 32))
                deq = oracle(s * F(2.0 ** (int(x.e[i, b]) + int(w.e[b, j]) - 266)), "bf16")
                acc_v = oracle(F(acc_v) + F(deq), "bf16")
            assert got[i * 16 + j] == acc_v
    # a 64-row array cannot take 32-element blocks; C = 48 is not a whole number of blocks
    sim, dram, acc = _soc(replace(VoyagerParams(), ic_dim=64))
    assert _run_job(sim, acc, job)["status"] >> 16 == 3
    sim, dram, acc = _soc()
    assert _run_job(sim, acc, replace(job, c=48))["status"] >> 16 == 3


@pytest.mark.parametrize("vop", [0, 1, 2, 3])
def test_vector_unit_jobs_pool_softmax_and_normalise_bf16_tensors(vop):
    from accelerators.voyager.model import vector as V
    sim, dram, acc = _soc()
    rng = np.random.default_rng(vop)
    bf = D.parse_dtype("bf16")
    x = bf.quantize(rng.standard_normal((6, 6, 8)) * 2)
    g, b = bf.quantize(rng.standard_normal(8)), bf.quantize(rng.standard_normal(8))
    for off, arr in ((0, x), (0x1000, g), (0x2000, b)):
        dram.array[off:off + arr.size * 2] = np.frombuffer(bf.encode(arr).astype("<u2").tobytes(), np.uint8)
    job = VoyagerJob(kind=2, vop=vop, dtype="bf16", in_addr=BASE, w_addr=BASE + 0x1000, bias_addr=BASE + 0x2000,
                     out_addr=BASE + 0x8000, h=6, w=6, c=8, k=8, f=3, stride=2, pad=1)
    seen = _run_job(sim, acc, job)
    assert seen["status"] == 1 << 8
    # the vector unit's functions are checked against scalar references in test_voyager_engine.py
    want = [V.pool2d(x, 3, 2, "max", 1), V.pool2d(x, 3, 2, "avg", 1), V.softmax(x.reshape(36, 8)),
            V.layer_norm(x.reshape(36, 8), g, b)][vop].reshape(-1)
    got = bf.decode(np.frombuffer(dram.array[0x8000:0x8000 + want.size * 2].tobytes(), "<u2"))
    np.testing.assert_array_equal(got, want)
    row = acc.report_entry().as_dict()["layers"][0]
    assert row["ideal_cycles"] == 0 and row["cycles"] >= want.size / 16
    # vector jobs take bf16 tensors and one of four operators
    sim, dram, acc = _soc()
    assert _run_job(sim, acc, replace(job, dtype="int8"))["status"] >> 16 == 1
    sim, dram, acc = _soc()
    assert _run_job(sim, acc, replace(job, vop=5))["status"] >> 16 == 1


def test_bad_descriptors_end_with_their_error_code_and_the_interrupt_is_gated():
    sim, dram, acc = _soc()
    seen = _run_job(sim, acc, VoyagerJob(kind=0, dtype="int8", in_addr=BASE, w_addr=BASE, out_addr=BASE,
                                         h=0, w=8, c=16, k=16, f=3), irq=False)
    assert seen["status"] >> 16 & 0xFF == 1 and seen["status"] & (1 << 8)
    assert seen["irq"] == 0 and seen["fired"] == []
    assert acc.report_entry().errors == 1
    # a 3x3 conv needs 9 input-buffer entries for its smallest tile
    sim, dram, acc = _soc(replace(VoyagerParams(), input_buffer_rows=4))
    seen = _run_job(sim, acc, VoyagerJob(kind=0, dtype="int8", in_addr=BASE, w_addr=BASE, out_addr=BASE + 0x1000,
                                         h=8, w=8, c=16, k=16, f=3, pad=1))
    assert seen["status"] >> 16 & 0xFF == 2 and len(seen["fired"]) == 1
    # a tensor beyond the DRAM: error 4, nothing written; too large to compute: error 1
    sim, dram, acc = _soc()
    seen = _run_job(sim, acc, VoyagerJob(kind=1, dtype="int8", in_addr=BASE + 0xFFF00, w_addr=BASE,
                                         out_addr=BASE + 0x1000, h=64, w=1, c=64, k=16))
    assert seen["status"] >> 16 & 0xFF == 4 and not dram.array[0x1000:0x2000].any()
    sim, dram, acc = _soc(replace(VoyagerParams(), data_limit=1000))
    seen = _run_job(sim, acc, VoyagerJob(kind=1, dtype="int8", in_addr=BASE, w_addr=BASE, out_addr=BASE + 0x1000,
                                         h=64, w=1, c=64, k=16))
    assert seen["status"] >> 16 & 0xFF == 1


def test_a_narrower_dram_makes_the_same_job_slower():
    job = VoyagerJob(kind=1, dtype="int8", in_addr=BASE, w_addr=BASE + 0x10000, out_addr=BASE + 0x20000,
                     h=64, w=1, c=256, k=256)
    cycles = []
    for word in (64, 4):
        sim, dram, acc = _soc(word=word)
        _run_job(sim, acc, job)
        cycles.append(acc.report_entry().cycles)
    moved = acc.report_entry().bytes["dram"]
    assert cycles[1] > cycles[0]
    assert cycles[1] >= moved / 4                      # at most 4 bytes per cycle


@pytest.mark.parametrize("setting,needle", [
    ("soc.voyager.ic_dim=0", "soc.voyager.ic_dim"),
    ("soc.voyager.dtype=fp9", "unknown datatype 'fp9'"),
    ("soc.voyager.objective=fast", "unknown performance model 'fast'"),
])
def test_bad_instance_parameters_are_scenario_errors(tmp_path, setting, needle):
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", "voyager_mini", "--set", setting, "--no-plots",
                        "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_library_scenario_is_fresh_and_passes_with_per_layer_figures(tmp_path):
    r = subprocess.run([sys.executable, "scenarios/data/make_voyager.py", "--check"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario("voyager_mini"), out_dir=tmp_path, plots=False)
    assert all(c.passed for c in rep.checks), rep.checks
    e = rep.extra["accelerators"]["soc.voyager"]
    assert [row["op"] for row in e["layers"]] == ["conv 8x8x16->32 int8", "gemm 8x8x32->32 int8"]
    assert e["layers"][0]["ideal_cycles"] == 8 * 8 * 16 * 9 * 32 // 256
    assert e["totals"]["ideal_cycles"] == e["ideal_cycles"] and e["totals"]["cycles"] == e["cycles"]
    assert e["utilisation"] == pytest.approx(e["ideal_cycles"] / e["cycles"])
    for row in e["layers"]:
        assert row["cycles"] >= row["ideal_cycles"] and abs(row["cycles"] - row["model_cycles"]) < 0.2 * row["cycles"]


def test_a_run_plots_utilisation_per_layer(tmp_path, monkeypatch):
    """`cosim run` writes utilisation.png for an accelerator that reports layers: one bar per
    layer at its ideal / achieved cycles and the whole run's line."""
    from cosim import plots
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    figs = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: figs.append((fig, path)))
    rep = run_scenario(load_scenario("voyager_mini"), out_dir=tmp_path, plots=True)
    e = rep.extra["accelerators"]["soc.voyager"]
    [(fig, path)] = [(f, p) for f, p in figs if p.name == "utilisation.png"]
    ax = fig.axes[0]
    assert [round(b.get_height(), 9) for b in ax.patches] == [round(r["utilisation"], 9) for r in e["layers"]]
    [line] = ax.get_lines()
    assert line.get_ydata()[0] == pytest.approx(e["totals"]["utilisation"])
    assert rep.outputs["plot_utilisation"] == str(path)
    assert "plot_layers" not in rep.outputs          # no network: no layer plot
