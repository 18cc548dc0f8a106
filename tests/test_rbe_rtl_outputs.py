"""The open RBE RTL (pulp-platform/rbe, Verilated in tests/rtl/rbe_open_top.sv) computes what
its own bit-true golden model (the vendored model/rbe.py) says, word for word, in both modes,
with two input and two output passes, over several tiles and channel tiles; and takes
exactly the cycles CycleParams.open_rtl() gives for the job (data do not change the RTL's
timing).

Our golden (components/rbe/golden.py) is not the reference here: the open RTL's layouts and
its signed-weight offset scheme differ from ours (tests/rtl/rbe_open_golden.py, docs/rbe.md
"Calibration on the open RTL")."""
from __future__ import annotations

import pytest

from components.rbe import CycleParams, Mode, RbeJob, job_cycles

CASES = [
    dict(mode="3x3", h_out=3, w_out=3, k_in=32, k_out=32, w=2, i=4, o=4),
    dict(mode="3x3", h_out=6, w_out=3, k_in=64, k_out=32, w=3, i=6, o=7),
    dict(mode="1x1", h_out=3, w_out=6, k_in=32, k_out=64, w=5, i=3, o=5),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from tests.rtl.rbe_open import measure
    from tests.rtl.rbe_open_golden import stimuli
    gold = [stimuli(c, tmp_path_factory.mktemp(f"model{k}"), seed=11 + k)
            for k, c in enumerate(CASES)]
    cases = [dict(c, x_words=s["x"], w_words=s["w"], nq_words=s["nq"], shift=s["shift"],
                  y_words=len(s["y"])) for c, s in zip(CASES, gold)]
    return gold, measure(cases, workers=2, timeout=600)


# the first Verilator build of the open RBE (~160 C++ files) takes minutes on two cores;
# it is cached by content hash, so the run after it takes seconds
@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("k", range(len(CASES)))
def test_rtl_outputs_equal_its_golden_model(runs, k):
    gold, rows = runs
    y = rows[k]["y"]
    assert len(y) == len(gold[k]["y"]) > 0
    bad = [j for j, (a, b) in enumerate(zip(y, gold[k]["y"])) if a != b]
    assert not bad, (CASES[k], len(bad), [(hex(y[j]), hex(gold[k]["y"][j])) for j in bad[:4]])
    assert any(v != 0 for v in y)          # a layer that produced something


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("k", range(len(CASES)))
def test_rtl_cycles_with_data_equal_the_calibrated_model(runs, k):
    c = CASES[k]
    job = RbeJob.dense(x_addr=0, w_addr=0x10000, nq_addr=0x30000, y_addr=0x38000,
                       h_out=c["h_out"], w_out=c["w_out"], k_in=c["k_in"], k_out=c["k_out"],
                       w_bits=c["w"], i_bits=c["i"], o_bits=c["o"],
                       mode=Mode.CONV3X3 if c["mode"] == "3x3" else Mode.CONV1X1)
    assert runs[1][k]["cycles"] == job_cycles(job, params=CycleParams.open_rtl()).total
