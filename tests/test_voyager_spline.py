"""The approximation unit's free-knot splines (splines.yaml, accelerators/voyager/model/spline_fit.py):
the data file is what the fit script makes, each spline has 6 bf16 boundaries and 7 x 3 bf16
coefficients, the vector unit's bf16 evaluation is bit-exact against a numpy evaluation of
the same spline, the documented errors are the real ones, and a job selects a fitted function
through its OP register or programs any spline into the APPROX_ registers (located errors
for a bad one)."""
from __future__ import annotations

import math
from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest
import yaml

from components.l2 import BankedMemory, BankedMemoryParams
from accelerators.voyager.model import spline_fit as S
from accelerators.voyager.model import vector as V
from accelerators.voyager.model.accel import MAP, Voyager
from accelerators.voyager.model.config import VoyagerParams
from accelerators.voyager.model.dtypes import FloatType
from accelerators.voyager.model.job import VoyagerJob, job_registers, spline_codes
from tlm import Clock, GenericPayload, InitiatorSocket, Module, Simulator
from tlm.address_map import Region
from tlm.payload import WRITE

BF = ml_dtypes.bfloat16
BASE = 0x80000000
TABLE = yaml.safe_load(S.DATA.read_text(encoding="utf-8"))["splines"]
EXACT = {"gelu": lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2))),
         "silu": lambda x: x / (1 + math.exp(-x)),
         "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
         "tanh": math.tanh}
#: documented bounds of the bf16 evaluation's largest absolute error over the fitted range
DOC_BOUND = {"gelu": 0.015, "silu": 0.03, "sigmoid": 0.005, "tanh": 0.01}


@pytest.mark.slow
def test_splines_yaml_is_what_the_fit_script_makes():
    assert S.main(["--check"]) == 0


def _all_bf16(lo: float, hi: float) -> np.ndarray:
    codes = np.arange(1 << 16, dtype=np.uint16)
    v = codes[(codes >> 7 & 0xFF) != 0xFF].view(BF).astype(np.float64)
    return np.unique(v[(v >= lo) & (v <= hi)])


def _rne_bf16(v: np.ndarray) -> np.ndarray:
    """float64 -> nearest bf16, ties to even, via float32 only when float32 holds it exactly."""
    v = np.asarray(v, np.float64)
    assert np.all(v.astype(np.float32).astype(np.float64) == v), "reference sum not exact in float32"
    return v.astype(np.float32).astype(BF).astype(np.float64)


def _two_sum_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    s = a + b
    bb = s - a
    assert np.all((a - (s - bb)) + (b - bb) == 0), "reference sum not exact in float64"
    return s


@pytest.mark.parametrize("name", sorted(EXACT))
def test_spline_has_six_bf16_boundaries_and_seven_quadratics_with_asymptotic_tails(name):
    e = TABLE[name]
    b, c = np.array(e["bounds"]), np.array(e["coeffs"])
    assert b.shape == (6,) and c.shape == (7, 3) and np.all(np.diff(b) > 0)
    for v in np.r_[b, c.ravel()]:
        assert float(np.float32(v).astype(BF)) == v          # every parameter is a bf16 value
    lo, hi = e["range"]
    assert lo <= b[0] and b[-1] <= hi
    # outside the fitted range the tails follow the function within a bf16 half-ulp of 1
    for x in (lo * 2, hi * 2):
        seg = c[0] if x < b[0] else c[-1]
        assert abs((seg[0] * x + seg[1]) * x + seg[2] - EXACT[name](x)) < 2 ** -8 * max(1.0, abs(x))


@pytest.mark.parametrize("name", sorted(EXACT))
def test_vector_unit_evaluation_is_bit_exact_against_numpy(name):
    e = TABLE[name]
    b, c = np.array(e["bounds"]), np.array(e["coeffs"])
    x = _all_bf16(-40.0, 40.0)
    # every value whose sums float64 holds exactly (the tiniest ones vanish against c1 anyway)
    x = x[(x == 0) | (np.abs(x) >= 2.0 ** -36)]
    seg = np.searchsorted(b, x, side="right")            # b[i-1] <= x < b[i]
    c2, c1, c0 = c[seg, 0], c[seg, 1], c[seg, 2]
    t = _rne_bf16(c2 * x)                                 # product of two bf16 values: exact in float32
    t = _rne_bf16_sum(t, c1)
    t = _rne_bf16(t * x)
    want = _rne_bf16_sum(t, c0)
    np.testing.assert_array_equal(V.activation(name, x), want)


def _rne_bf16_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """bf16(a + b) for bf16 a, b: the exact float64 sum rounded by mantissa arithmetic."""
    s = _two_sum_exact(np.asarray(a, np.float64), np.asarray(b, np.float64))
    m, ex = np.frexp(s)
    return np.where(s == 0, 0.0, np.ldexp(np.rint(m * 256.0), ex - 8))


@pytest.mark.parametrize("name", sorted(EXACT))
def test_documented_errors_are_the_measured_ones(name):
    e = TABLE[name]
    lo, hi = e["range"]
    x = _all_bf16(lo, hi)
    exact = np.array([EXACT[name](float(v)) for v in x])
    b, c = np.array(e["bounds"]), np.array(e["coeffs"])
    seg = np.searchsorted(b, x, side="right")
    f64 = (c[seg, 0] * x + c[seg, 1]) * x + c[seg, 2]
    assert np.max(np.abs(f64 - exact)) == pytest.approx(e["max_abs_error"], rel=1e-9, abs=1e-12)
    err = np.max(np.abs(V.activation(name, x) - exact))
    assert err == pytest.approx(e["max_abs_error_bf16"], rel=1e-9, abs=1e-12)
    assert err < DOC_BOUND[name]
    # the free knots beat evenly spaced knots over the same range with the same tails
    fn, rng, left, right = S.FUNCTIONS[name]
    even = V.fit_spline(fn, *rng, (left, right))
    assert err < np.max(np.abs(even(x) - exact))


def _run_gemm(job: VoyagerJob, x: np.ndarray, w: np.ndarray, regs: dict | None = None):
    """Run a bf16 GEMM job programmed with ``regs`` (default: the job's); its output and report."""
    bf = FloatType("bf16")
    sim = Simulator()
    clk = Clock(sim, "clk", 1e9)
    dram = BankedMemory(sim, "dram", Region("dram", BASE, 0x100000, "soc", "memory", ""), clk,
                        BankedMemoryParams(banks=1, bank_word_bytes=64, latency=10))
    acc = Voyager(sim, "voyager", clock=clk, params=replace(VoyagerParams(), dtype="bf16"))
    acc.dram.bind(dram.socket)
    host = InitiatorSocket(Module(sim, "host"), "bus")
    host.bind(acc.regs.socket)
    dram.array[0:x.size * 2] = np.frombuffer(bf.encode(x).astype("<u2").tobytes(), np.uint8)
    dram.array[0x4000:0x4000 + w.size * 2] = np.frombuffer(bf.encode(w).astype("<u2").tobytes(), np.uint8)
    regs = regs or job_registers(job)

    async def main():
        for name, v in regs.items():
            await host.b_transport(GenericPayload(WRITE, MAP.register(name).offset,
                                                  bytearray(int(v).to_bytes(4, "little"))), 0)
        await host.b_transport(GenericPayload(WRITE, 0, bytearray((4).to_bytes(4, "little"))), 0)
        await acc.done

    sim.spawn(main(), "host")
    sim.run()
    n = job.h * job.k
    return bf.decode(np.frombuffer(dram.array[0x8000:0x8000 + n * 2].tobytes(), "<u2")), acc.report_entry().as_dict()


def _numpy_spline(bounds, coeffs, y):
    b, c = np.asarray(bounds, np.float64), np.asarray(coeffs, np.float64)
    seg = np.searchsorted(b, y, side="right")
    t = _rne_bf16(c[seg, 0] * y)
    t = _rne_bf16_sum(t, c[seg, 1])
    t = _rne_bf16(t * y)
    return _rne_bf16_sum(t, c[seg, 2])


def test_a_job_selects_or_programs_its_spline_through_the_registers():
    rng = np.random.default_rng(5)
    bf = FloatType("bf16")
    x = bf.quantize(rng.standard_normal((8, 32)))
    w = bf.quantize(rng.standard_normal((32, 16)) * 0.5)
    job = VoyagerJob(kind=1, dtype="bf16", in_addr=BASE, w_addr=BASE + 0x4000, out_addr=BASE + 0x8000,
                     h=8, w=1, c=32, k=16)
    y, _ = _run_gemm(job, x, w)
    for act in ("sigmoid", "tanh", "gelu"):
        regs = job_registers(replace(job, **{act: True}))
        assert regs["OP"] >> {"sigmoid": 14, "tanh": 15, "gelu": 9}[act] & 1
        got, _ = _run_gemm(job, x, w, regs)
        np.testing.assert_array_equal(got, _numpy_spline(TABLE[act]["bounds"], TABLE[act]["coeffs"], y))
    # the fitted GELU programmed into the APPROX_ registers gives the same bits as OP.GELU
    gelu_regs = job_registers(replace(job, spline=spline_codes(V.spline("gelu"))))
    assert gelu_regs["OP"] >> 19 & 1 and not gelu_regs["OP"] >> 9 & 1
    got, _ = _run_gemm(job, x, w, gelu_regs)
    np.testing.assert_array_equal(got, _numpy_spline(TABLE["gelu"]["bounds"], TABLE["gelu"]["coeffs"], y))
    # any spline: a user's 7 segments
    bounds = [-2.0, -1.0, -0.25, 0.25, 1.0, 2.0]
    coeffs = [[0.0, 0.0, -1.0], [0.25, 1.0, 0.0], [0.5, -0.125, 0.375], [1.0, 0.0, 0.0],
              [-0.5, 1.5, 0.0625], [0.0, 0.5, 0.5], [0.0, 0.0, 1.5]]
    user = V.Spline(tuple(bounds), tuple(tuple(c) for c in coeffs))
    got, _ = _run_gemm(job, x, w, job_registers(replace(job, spline=spline_codes(user))))
    np.testing.assert_array_equal(got, _numpy_spline(bounds, coeffs, y))


def test_a_bad_programmed_spline_is_located_at_its_register():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 16)).astype(np.float32).astype(BF).astype(np.float64)
    w = rng.standard_normal((16, 16)).astype(np.float32).astype(BF).astype(np.float64)
    job = VoyagerJob(kind=1, dtype="bf16", in_addr=BASE, w_addr=BASE + 0x4000, out_addr=BASE + 0x8000,
                     h=2, w=1, c=16, k=16)
    codes = list(spline_codes(V.spline("tanh")))
    codes[3] = codes[2]                                   # b3 == b2
    _, rep = _run_gemm(job, x, w, job_registers(replace(job, spline=tuple(codes))))
    err = rep["job_errors"][0]
    assert err["where"] == "voyager.regs.APPROX_B1.HI" and "b3" in err["message"] and err["error"] == 1
    codes = list(spline_codes(V.spline("tanh")))
    codes[6 + 7] = 0x7FC0                                 # coefficient 7 (segment 2's c1) is NaN
    _, rep = _run_gemm(job, x, w, job_registers(replace(job, spline=tuple(codes))))
    assert rep["job_errors"][0]["where"] == "voyager.regs.APPROX_C3.HI"
    assert rep["errors"] == 1
