"""The core kernels' costs in kernel_timing.yaml are the ones firmware/bench_kernels.c and
firmware/bench_core_kernels.c give on our ISS (RV32IMC), scaled to Xpulp; re-measured here."""
from __future__ import annotations

import pytest

from components.cluster.timing import load_timing
from cosim.kernel_costs import CONFIGS, CORE_CONFIGS, FC_OUTPUT_K, derive, derive_core, measure, measure_core


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


def test_core_kernel_costs_reproduce_the_timing_table():
    """firmware/bench_core_kernels.c on the ISS: the int8 loops' costs in kernel_timing.yaml
    follow from the measurement and the instruction counts (iss_loops), and those counts
    are the compiled loops' (the ISS runs them at its CPI)."""
    meas = measure_core()
    assert list(meas) == list(CORE_CONFIGS)
    tm = load_timing()
    counts = tm.data["iss_loops"]
    # the ISS retires the compiled RV32IMC loops at its CPI: the instruction counts of the
    # table are those of this ELF (within the data-dependent clip paths)
    for loop, c in counts.items():
        inst = meas[loop]["per"] / meas[loop]["cpi"]
        if loop == "fc_output":
            inst -= FC_OUTPUT_K * meas["fc_mac"]["per"] / meas["fc_mac"]["cpi"]
        assert inst == pytest.approx(c["rv32imc"], rel=0.08), loop
    # the empty configuration has no elements; every call has a positive set-up cost
    assert meas["empty"]["per"] == pytest.approx(0, abs=2.0)   # marker jitter: CPI 1.25
    assert all(meas[k]["fixed"] > 0 for k in CORE_CONFIGS if k != "empty")
    dot = measure()["dot int8"]
    # the same dot product in both programs: the same cost per MAC (alignment aside)
    assert meas["dot"]["per"] == pytest.approx(dot, rel=0.01)
    rate = tm.rates[("xpulp", 8)]
    d = derive_core(meas, rate, counts, dot)
    # independent of the route: Xpulp cycles = ISS cycles x Xpulp/RV32IMC instructions / k
    k = rate * dot / (counts["dot"]["rv32imc"] / counts["dot"]["xpulp"])
    req = meas["conv_requant"]["per"] * counts["conv_requant"]["xpulp"] / counts["conv_requant"]["rv32imc"] / k
    assert d["conv_requant_cycles_per_output"] == pytest.approx(req)
    # a scalar loop gains far less than the SIMD dot product; fc (no weight re-use) runs
    # below the matmul rate
    assert d["conv_requant_factor"] < d["xpulp_speedup"] / 4 < d["fc_mac_factor"] < d["xpulp_speedup"]
    assert 0.5 < d["fc_rate_vs_matmul_int8_xpulp"] < 1.0
    table = {("conv", "im2col_cycles_per_byte"): (d["im2col_cycles_per_byte"], 1e-4),
             ("conv", "requant_cycles_per_output"): (d["conv_requant_cycles_per_output"], 1e-3),
             ("conv", "row_overhead_cycles"): (d["row_overhead_cycles"], 0.1),
             ("eltwise", "add_int8_cycles_per_element"): (d["add_int8_cycles_per_element"], 1e-3),
             ("pool", "requant_cycles_per_output"): (d["pool_requant_cycles_per_output"], 1e-3),
             ("fc", "rate_vs_matmul_int8_xpulp"): (d["fc_rate_vs_matmul_int8_xpulp"], 1e-4),
             ("fc", "output_overhead_cycles"): (d["fc_output_overhead_cycles"], 1e-3)}
    for (section, key), (value, tol) in table.items():
        assert float(tm.data[section][key]) == pytest.approx(value, abs=tol), f"{section}.{key}: stale"


def test_core_write_updates_only_the_measured_lines(tmp_path):
    """``--write`` sets each value inside its own section (conv and pool share a key name)."""
    from components.cluster.timing import TIMING_FILE, load_timing as load
    from cosim.kernel_costs import CORE_KEYS, _write_core
    f = tmp_path / "kernel_timing.yaml"
    f.write_text(TIMING_FILE.read_text())
    d = {name: 1000.0 + i for i, (_s, _k, name, _n, _note) in enumerate(CORE_KEYS)}
    d.update({k: 1.0 for k in ("rv32imc_im2col_per_byte", "im2col_factor", "rv32imc_conv_requant",
                               "conv_requant_factor", "rv32imc_row_fixed", "cpi_ratio", "rv32imc_add_int8",
                               "add_int8_factor", "rv32imc_pool_requant", "pool_requant_factor",
                               "rv32imc_fc_per_mac", "fc_mac_factor", "rv32imc_fc_per_output",
                               "fc_output_factor")})
    _write_core(f, d)
    new, old = load(f).data, load(TIMING_FILE).data
    for i, (section, key, _name, _n, _note) in enumerate(CORE_KEYS):
        assert new[section][key] == 1000.0 + i
    assert new["conv"]["requant_cycles_per_output"] != new["pool"]["requant_cycles_per_output"]
    for section in ("job", "matmul", "fft", "fitted", "iss_loops"):
        assert new[section] == old[section]
    assert new["eltwise"]["bit_cycles"] == old["eltwise"]["bit_cycles"]
