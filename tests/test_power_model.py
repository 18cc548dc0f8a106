"""The static power and delay models against the MARSELLUS facts (marsellus.md).

The facts are the specification, written here with their source; every model value is
computed from the data files through the model, never copied from a previous run."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.marsellus.facts import operating_points
from components.pmu import PowerError, PowerModel, abb_tables

W = "matmul_int8_macload"
MHZ = 1e6


@pytest.fixture(scope="module")
def model() -> PowerModel:
    return PowerModel(operating_points())


@pytest.fixture(scope="module")
def delay():
    return operating_points().delay_model("cluster")


def vbb_max() -> float:
    c = abb_tables()["controller"]
    return c["max_code"] * c["vbb_step_v"]


# ----- power calibration ---------------------------------------------------------------------
def test_123mw_at_0v8_420mhz_on_int8_matmul(model):
    p = model.workload_power(W, 0.80, 420 * MHZ)
    assert p.total == pytest.approx(123.0, rel=0.01)                 # 123 mW
    assert p.dynamic / p.total == pytest.approx(0.946, abs=0.003)     # 94.6 % dynamic
    assert p.leakage / p.total == pytest.approx(0.054, abs=0.003)     # 5.4 % leakage


def test_scaling_to_0v5_at_fmax(model, delay):
    f_hi, f_lo = delay.fmax_hz(0.80), delay.fmax_hz(0.50)
    hi = model.workload_power(W, 0.80, f_hi)
    lo = model.workload_power(W, 0.50, f_lo)
    assert hi.dynamic / lo.dynamic == pytest.approx(10.7, rel=0.01)   # dynamic / 10.7
    assert hi.leakage / lo.leakage == pytest.approx(3.5, rel=0.01)    # leakage / 3.5
    # chip power range 12.8-123 mW
    assert lo.total == pytest.approx(12.8, rel=0.02)
    assert hi.total == pytest.approx(123.0, rel=0.01)


def test_cluster_efficiency_matches_software_figures(model):
    # 25.45 Gop/s, 250 Gop/s/W plain Xpulp; MAC&LOAD +67 % performance, +51 % efficiency
    gops = 25.45 * 1.67
    cluster_mw = model.workload_power(W, 0.80, 420 * MHZ).domain("cluster")
    assert gops / (cluster_mw * 1e-3) == pytest.approx(250 * 1.51, rel=0.03)


def test_abb_overhead_is_0p4_percent(model):
    base = model.workload_power(W, 0.80, 420 * MHZ).total
    with_abb = model.workload_power(W, 0.80, 420 * MHZ,
                                    abb_domains=tuple(abb_tables()["monitored_domains"])).total
    assert with_abb / base - 1 == pytest.approx(0.004, abs=0.0005)


def test_dynamic_energy_scales_with_v_squared(model):
    e8 = model.activity_energy_pj("rbe", "op", 1000, 0.8)
    e5 = model.activity_energy_pj("rbe", "op", 1000, 0.5)
    assert e8 / e5 == pytest.approx((0.8 / 0.5) ** 2)


def test_forward_body_bias_raises_leakage(model):
    assert model.leakage_mw("cluster", 0.65, 0.5) > model.leakage_mw("cluster", 0.65, 0.0)
    # the always-on domain has its own wells: no body bias effect
    assert model.leakage_mw("always_on", 0.65, 0.5) == model.leakage_mw("always_on", 0.65, 0.0)


def test_unknown_class_and_kind_are_errors(model):
    with pytest.raises(PowerError, match="known: .*cluster_core"):
        model.activity_class("gpu")
    with pytest.raises(PowerError, match="known: .*op"):
        model.energy_per("rbe", "flop")


# ----- delay model / operating points ----------------------------------------------------------
def test_fmax_calibration_points(delay):
    assert delay.fmax_hz(0.80) == pytest.approx(420 * MHZ, rel=0.01)   # 420 MHz at 0.8 V
    assert delay.fmax_hz(0.50) == pytest.approx(100 * MHZ, rel=0.02)   # 100 MHz at 0.5 V


def test_400mhz_needs_0v74_without_abb_and_0v65_with(delay):
    vmin = delay.vmin(400 * MHZ)
    assert 0.735 < vmin <= 0.740                     # needs >= 0.74 V (5 mV regulator steps)
    assert delay.fmax_hz(0.74) >= 400 * MHZ > delay.fmax_hz(0.73)
    assert delay.fmax_hz(0.65, vbb_max()) >= 400 * MHZ


def test_abb_boost_up_to_30_percent(delay):
    boosts = [delay.boost(v, vbb_max()) for v in np.arange(0.50, 0.8001, 0.0025)]
    assert max(boosts) == pytest.approx(1.30, abs=0.01)
    assert min(boosts) >= 1.0


def test_model_meets_every_characterization_row(delay):
    for row in operating_points().characterization:
        if row.fmax_no_abb is not None:
            assert delay.fmax_hz(row.vdd) == pytest.approx(row.fmax_no_abb, rel=0.01), row
            assert delay.fmax_hz(row.vdd) >= row.fmax_no_abb * 0.999, row
        if row.fmax_abb_min is not None:
            assert delay.fmax_hz(row.vdd, vbb_max()) >= row.fmax_abb_min, row


def test_operating_points_are_consistent():
    plat = operating_points()
    lo, hi = plat.supply_range
    for op in plat.operating_points.values():
        for d, v in op.vdd.items():
            assert lo <= v <= hi, (op.name, d)
        for fll, f in op.freq.items():
            dom = next(x.domain for x in plat.flls if x.name == fll)
            fmax = plat.delay_model(dom).fmax_hz(op.vdd[dom], vbb_max() if op.abb else 0.0)
            assert f <= fmax, (op.name, fll, f, fmax)


@settings(max_examples=60, deadline=None)
@given(v=st.floats(0.45, 0.9), dv=st.floats(0.001, 0.1), b=st.floats(0.0, 1.2),
       db=st.floats(0.01, 0.5))
def test_fmax_grows_with_supply_and_bias(v, dv, b, db):
    d = operating_points().delay_model()
    assert d.fmax_hz(v + dv, b) > d.fmax_hz(v, b)
    assert d.fmax_hz(v, b + db) >= d.fmax_hz(v, b)


@settings(max_examples=40, deadline=None)
@given(f=st.floats(50e6, 450e6), b=st.sampled_from([0.0, 0.5, 1.2]))
def test_vmin_inverts_fmax(f, b):
    d = operating_points().delay_model()
    v = d.vmin(f, b)
    assert v is not None
    assert d.fmax_hz(v, b) >= f
    assert math.isclose(d.fmax_hz(v - 1e-4, b), f, rel_tol=2e-3) or d.fmax_hz(v - 1e-4, b) < f
