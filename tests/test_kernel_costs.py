"""The bit-plane kernels' costs in kernel_timing.yaml are the ones firmware/bench_kernels.c
gives on our ISS (RV32IMC), scaled by the paper's Xpulp int8 rate; re-measured here."""
from __future__ import annotations

import pytest

from components.cluster.timing import load_timing
from cosim.kernel_costs import CONFIGS, derive, measure


def test_iss_measurement_reproduces_the_timing_table():
    meas = measure()
    assert set(meas) == set(CONFIGS)
    # scalar RV32IMC at CPI 1.25: a MAC (2 byte loads, mul, add, loop) takes several instructions
    assert 5 < meas["dot int8"] < 20
    # fewer bits, fewer unpack/pack steps: the 4/4/4 add is strictly cheaper
    assert meas["add_requant 4/4/4"] < meas["add_requant 8/8/8"]
    tm = load_timing()
    d = derive(meas, tm.rates[("xpulp", 8)])
    assert d["xpulp_speedup"] == pytest.approx(tm.rates[("xpulp", 8)] * meas["dot int8"])
    # the spec's decomposition: cost(bits) = requant + (a+b+o bits) x per-bit, both configurations
    for bits in (8, 4):
        assert d["rv32imc_requant_cycles"] + 3 * bits * d["rv32imc_bit_cycles"] == pytest.approx(
            meas[f"add_requant {bits}/{bits}/{bits}"])
    assert tm.ew["bit_cycles"] == pytest.approx(d["bit_cycles"], abs=1e-4)
    assert tm.ew["requant_cycles_per_element"] == pytest.approx(d["requant_cycles_per_element"], abs=1e-4)
    assert tm.pl["accumulate_cycles_per_element"] == pytest.approx(d["accumulate_cycles_per_element"], abs=1e-4)
    # firmware/bench_pool.c: a max-pooling tap is a load and a compare, far below a LeakyRelu
    # element's multiply, rounding and clip; a table look-up is two loads and a store
    assert 2 < d["rv32imc_max_cycles_per_tap"] < d["rv32imc_lut_cycles"] < d["rv32imc_leaky_cycles"]
    assert tm.pl["max_cycles_per_tap"] == pytest.approx(d["max_cycles_per_tap"], abs=1e-4)
    assert tm.ew["leaky_cycles_per_element"] == pytest.approx(d["leaky_cycles_per_element"], abs=1e-4)
    assert tm.ew["lut_cycles_per_element"] == pytest.approx(d["lut_cycles_per_element"], abs=1e-4)
