"""RTL blocks swapped into scenarios (``platform.models``): the Verilated RBE under cocotb
in a child process, reached over ZeroMQ (cosim/rtl/swap.py, docs/rtl.md).

* ``rtl``: quickstart passes its checks with the same final memories (every memory's
  digest) and the same task timing as the TLM run, and reports RTL cycles vs the model;
* ``shadow``: no divergence on the correct RTL; with a flipped output bit (test-only
  fault injection in the child's TCDM write path, after the real RTL computed the value)
  the first divergence is named with time, address, expected and actual;
* waves (through the CLI's ``--waves``): a non-empty VCD whose path is in the report;
* errors: a bad model name, an unsupported path, a child that dies mid-run (clear error,
  no orphan), a child that hangs (wall-time deadline), a job over its cycle limit (the
  stuck signal named).

The RBE is built once (the cache in cosim/rtl/build.py); the VCD test needs a second
build with tracing.

Every comparison with the TLM model pins ``cluster.rbe.timing: paper``: our SV RBE
implements the paper-calibrated schedule, not the default open-RTL one; ``shadow`` with
another timing is a located error (test_shadow_needs_the_paper_timing).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtl_scenario_support import _isolated, children, gone, options  # noqa: F401

from cosim.rtl.options import WAVES_DIR_ENV  # noqa: E402

from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: one small RBE layer (two jobs of 362 cycles), for the tests that do not need quickstart
TINY = """\
name: tiny_rbe
seed: 3
platform:
  preset: marsellus
  overrides:
    cluster.rbe.timing: paper   # our SV RBE implements the paper-calibrated schedule
  models:
    cluster.rbe: {model}
workload:
  network:
    name: tiny
    input: {{h: 6, w: 6, c: 32, bits: 4}}
    layers:
      - {{name: conv, type: conv3x3, out: 32, w_bits: 2, o_bits: 4}}
checks:
  - no_tlm_errors: true
"""


#: our SV RBE implements the paper-calibrated schedule (the model's default is open_rtl)
PAPER = "cluster.rbe.timing=paper"


def tiny(model: str = "rtl"):
    return load_scenario_text(TINY.format(model=model), Path("tiny_rbe.yaml"))


def rtl_children() -> set[int]:
    return children("rbe_top")


def block(rep) -> dict:
    return rep.extra["rtl"]["blocks"]["cluster.rbe"]


# ------------------------------------------------------------------------ rtl
@pytest.fixture(scope="module")
def quickstart_tlm(tmp_path_factory):
    return run_scenario(load_scenario("quickstart", [PAPER]),
                        out_dir=tmp_path_factory.mktemp("tlm"), plots=False)


def same_results_as_tlm(rep, tlm, jobs: int) -> None:
    """``rep``, an RTL run, has the TLM run's checks, memories and timing, job by job."""
    assert rep.status == "passed", (rep.error, rep.checks)
    assert [c.passed for c in rep.checks] == [c.passed for c in tlm.checks]
    assert all(c.passed for c in rep.checks)
    # the same data everywhere: every memory's final contents
    assert rep.hash["memories"] == tlm.hash["memories"]
    b = block(rep)
    assert b["model"] == "rtl" and b["error"] is None and b["exit_code"] == 0
    assert len(b["jobs"]) == jobs
    for j in b["jobs"]:   # no contention in the RTL process: exactly the cycle model
        assert j["rtl_cycles"] == j["model_cycles"] > 0 and j["rel_diff"] == 0.0
        assert j["bytes_written"] > 0
    assert b["rtl_cycles"] == sum(j["rtl_cycles"] for j in b["jobs"])
    # ... hence the same timing as the model: every task ends at the same time
    assert rep.tasks == tlm.tasks and rep.sim_time_ps == tlm.sim_time_ps
    tab = rep.extra["rtl"]["table"]
    assert tab["columns"][:6] == ["block", "model", "transactions", "RTL cycles", "model cycles",
                                  "diff"]
    assert tab["rows"][0][:6] == ["cluster.rbe", "rtl", f"{jobs} jobs", b["rtl_cycles"], b["model_cycles"],
                                  "+0.00 %"]
    assert gone(b["pid"]) and not rtl_children()


def test_tiny_rtl_same_results_as_tlm(tmp_path):
    same_results_as_tlm(run_scenario(tiny(), out_dir=tmp_path / "rtl", plots=False),
                        run_scenario(tiny("tlm"), out_dir=tmp_path / "tlm", plots=False), jobs=2)


@pytest.mark.slow(reason="the same swap on one layer: test_tiny_rtl_same_results_as_tlm")
def test_quickstart_rtl_same_results_as_tlm(quickstart_tlm, tmp_path):
    rep = run_scenario(load_scenario("quickstart", ["cluster.rbe.model=rtl", PAPER]),
                       out_dir=tmp_path, plots=False)
    same_results_as_tlm(rep, quickstart_tlm, jobs=4)


# ------------------------------------------------------------------------ shadow
@pytest.mark.slow
def test_quickstart_shadow_no_divergence(quickstart_tlm, tmp_path):
    rep = run_scenario(load_scenario("quickstart", ["cluster.rbe.model=shadow", PAPER]),
                       out_dir=tmp_path, plots=False)
    assert rep.status == "passed", (rep.error, rep.checks)
    # the model is in charge: everything as in the TLM run
    assert rep.hash["memories"] == quickstart_tlm.hash["memories"]
    assert rep.tasks == quickstart_tlm.tasks
    b = block(rep)
    assert b["model"] == "shadow" and b["divergence"] is None and b["divergent"] == 0
    assert b["compared"] == sum(j["bytes_written"] for j in b["jobs"]) > 0
    assert [j["rtl_cycles"] for j in b["jobs"]] == [j["model_cycles"] for j in b["jobs"]]
    assert rep.extra["rtl"]["table"]["rows"][0][6] == "none"


def test_shadow_names_first_divergence(monkeypatch, tmp_path):
    # flip bit 3 of the RTL's 5th TCDM write of the second job, as it lands in memory
    options(monkeypatch, inject={"cluster.rbe": {"flip": {"job": 1, "write": 4, "bit": 3}}})
    rep = run_scenario(tiny("shadow"), out_dir=tmp_path, plots=False)
    assert rep.status == "passed", rep.error   # the model's data: checks unaffected
    b = block(rep)
    d = b["divergence"]
    assert d is not None and b["divergent"] == 1
    assert d["job"] == b["jobs"][1]["job"] and d["mismatched_bytes"] == 1
    exp, act = int(d["expected"], 16), int(d["actual"], 16)
    assert bin(exp ^ act).count("1") == 1
    assert int(d["expected_byte"], 16) ^ int(d["actual_byte"], 16) == 8
    assert int(d["address"], 16) >> 2 == int(d["word_address"], 16) >> 2
    assert 0x1000_0000 <= int(d["address"], 16) < 0x1002_0000
    # the time of the RTL's faulty write, inside the job as the model timed it
    start = b["jobs"][1]["start_ps"]
    assert start < d["time_ps"] < start + b["jobs"][1]["model_cycles"] * 2381
    assert d["written_by_rtl"] and d["rtl_cycle"] is not None
    assert f"expected {d['expected']} actual {d['actual']}" in rep.extra["rtl"]["table"]["rows"][0][6]


@pytest.mark.parametrize("override", ["cluster.rbe.timing=open_rtl", "cluster.rbe.setup=3"])
def test_shadow_needs_the_paper_timing(tmp_path, override):
    """The model keeps the time in shadow mode: a timing other than the paper schedule our
    SV RBE implements is a user mistake, refused before any build with a located error
    naming the block and the setting (exit code 2, not a simulation error's 3)."""
    sets = ["cluster.rbe.model=shadow", "cluster.rbe.timing=paper", override]
    with pytest.raises(ScenarioError) as e:
        run_scenario(load_scenario("quickstart", sets), out_dir=tmp_path, plots=False)
    msg = str(e.value)
    assert "quickstart.yaml" in msg and "platform.models.cluster.rbe" in msg
    assert "set cluster.rbe.timing: paper" in msg and "paper-calibrated schedule" in msg
    assert not rtl_children()
    from cosim.cli import main
    args = ["run", "quickstart", "--out", str(tmp_path / "cli"), "--no-plots", "-q"]
    assert main(args + [x for s in sets for x in ("--set", s)]) == 2
    assert not (tmp_path / "cli" / "report.json").exists()


def test_rtl_mode_compares_with_the_timing_the_run_uses(tmp_path):
    """rtl: the RTL is in charge of time. The report's model cycles are the run's own
    timing (here the model's default, open_rtl), so the table's difference is the simulated
    time the header shows beyond the model run; the RTL against its specification (the
    paper schedule our SV RBE implements) is ``spec_cycles``, 0 % apart."""
    from tlm.units import fmt_time

    def tiny_open_rtl(model: str):
        text = TINY.format(model=model).replace("cluster.rbe.timing: paper", "cluster.rbe.timing: open_rtl")
        return load_scenario_text(text, Path("tiny_rbe.yaml"))
    rep = run_scenario(tiny_open_rtl("rtl"), out_dir=tmp_path / "rtl", plots=False)
    assert rep.status == "passed", rep.error
    b = block(rep)
    assert b["timing"] == "open_rtl" and "cluster.rbe.timing: open_rtl" in b["estimate"]
    assert [j["rtl_cycles"] for j in b["jobs"]] == [j["spec_cycles"] for j in b["jobs"]]
    assert b["spec_rel_diff"] == 0.0 and b["rtl_cycles"] == rep.extra["accelerators"]["cluster.rbe"]["cycles"]
    tlm = run_scenario(tiny_open_rtl("tlm"), out_dir=tmp_path / "tlm", plots=False)
    model = tlm.extra["accelerators"]["cluster.rbe"]["cycles"]    # the model run (no TCDM stalls here)
    assert sum(v for k, v in tlm.stats["cluster.rbe"].items() if k.startswith("stalls.")) == 0
    assert b["model_cycles"] == model < b["rtl_cycles"]
    # the RBE is the critical path: the header's extra time is the table's extra cycles
    extra = b["rtl_cycles"] - model
    assert rep.sim_time_ps - tlm.sim_time_ps == extra * b["period_ps"]
    tab = rep.extra["rtl"]["table"]
    assert tab["rows"][0][3:6] == [b["rtl_cycles"], model, f"{100 * extra / model:+.2f} %"]
    assert "cluster.rbe.timing: open_rtl" in tab["caption"]
    assert f"{extra:+,} cycles = +{fmt_time(extra * b['period_ps'])}" in tab["caption"]


# ------------------------------------------------------------------------ waves (CLI)
@pytest.mark.slow(reason="the CLI's --waves and a VCD's contents: "
                         "test_waves_default_to_what_this_machine_can_write_and_a_big_file_is_pointed_out")
def test_cli_waves_vcd(tmp_path, monkeypatch):
    from cosim.cli import main
    f = tmp_path / "tiny.yaml"
    f.write_text(TINY.format(model="tlm"))
    wdir = tmp_path / "w"
    monkeypatch.setenv(WAVES_DIR_ENV, str(wdir))
    rc = main(["run", str(f), "--set", "cluster.rbe.model=rtl", "--waves", "--out",
               str(tmp_path / "out"), "-q", "--no-plots"])
    assert rc == 0
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    b = rep["extra"]["rtl"]["blocks"]["cluster.rbe"]
    wave = Path(b["waves"])
    assert wave == (wdir / "cluster.rbe.vcd").resolve()
    assert wave.stat().st_size > 10_000
    head = wave.read_text(errors="replace")[:4000]
    assert "$timescale" in head and "busy_o" in head and "tcdm_req_o" in head
    assert rep["extra"]["rtl"]["table"]["rows"][0][7] == str(wave)


def test_fst_waves_need_lz4(tmp_path, monkeypatch):
    """Without the lz4 headers FST is refused before building, with the package to install;
    with them, the FST file is written (whichever this machine has is what gets tested)."""
    from types import SimpleNamespace

    from cosim.platforms import rtl_swappable
    from cosim.rtl.swap import _have_lz4, attach_models
    if not _have_lz4():     # the user's flag: a usage error naming it (exit code 2)
        with pytest.raises(ScenarioError, match="--waves: FST waves need .*liblz4-dev"):
            attach_models(SimpleNamespace(sc=tiny()), rtl_swappable(tiny()), waves="fst")   # refused before building
        assert not rtl_children()
        return
    monkeypatch.setenv(WAVES_DIR_ENV, str(tmp_path / "w"))
    rep = run_scenario(tiny(), out_dir=tmp_path / "out", plots=False, waves="fst")
    wave = Path(rep.extra["rtl"]["blocks"]["cluster.rbe"]["waves"])
    assert rep.status == "passed" and wave.suffix == ".fst" and wave.stat().st_size > 1000


# ------------------------------------------------------------------------ errors
def test_bad_model_name_is_a_scenario_error():
    with pytest.raises(ScenarioError) as e:
        load_scenario("quickstart", ["cluster.rbe.model=verilog"])
    msg = str(e.value)
    assert "quickstart.yaml" in msg and "platform.models.cluster.rbe" in msg and "verilog" in msg


def test_unsupported_path_is_a_scenario_error(tmp_path):
    sc = load_scenario("quickstart", ["cluster.tcdm.model=rtl"])
    with pytest.raises(ScenarioError) as e:
        run_scenario(sc, out_dir=tmp_path, plots=False)
    msg = str(e.value)
    assert "platform.models.cluster.tcdm" in msg and "quickstart.yaml:" in msg
    assert "rtl/shadow are available for: cluster.rbe" in msg
    assert not rtl_children()


@pytest.mark.slow(reason="a child that dies mid-run, shared RTL child machinery: "
                         "test_rtl_scenarios_tcdm.py::test_child_dies_mid_run")
def test_child_dies_mid_run(monkeypatch, tmp_path):
    options(monkeypatch, inject={"cluster.rbe": {"crash": {"job": 1, "after_cycles": 50}}})
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    err = rep.error
    assert "cluster.rbe" in err and "died (exit code -9)" in err and "during job" in err
    assert " us:" in err or " ns:" in err      # the simulated time of the failure
    b = block(rep)
    assert b["exit_code"] == -9 and len(b["jobs"]) == 1
    assert gone(b["pid"]) and not rtl_children()


@pytest.mark.slow(reason="the child-hangs wall deadline of the shared RTL child machinery: "
                         "test_rtl_scenarios_tcdm.py::test_child_hangs_wall_deadline")
def test_child_hangs_wall_deadline(monkeypatch, tmp_path):
    options(monkeypatch, timeout_s=2, inject={"cluster.rbe": {"hang": {"job": 0}}})
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "cluster.rbe" in rep.error and "is stuck: no window reply (job" in rep.error
    assert "within 2 s of wall time" in rep.error and "killed" in rep.error
    b = block(rep)
    assert gone(b["pid"]) and not rtl_children()


@pytest.mark.slow(reason="a cycle limit naming the stuck signal, shared RTL child machinery: "
                         "test_rtl_scenarios_tcdm.py::test_cycle_limit_status_names_gnt")
def test_cycle_limit_names_stuck_signal(monkeypatch, tmp_path):
    options(monkeypatch, max_cycles_factor=0.1, max_cycles_extra=20)
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "did not finish job" in rep.error and "the model estimates 362" in rep.error
    assert "waiting for busy_o to fall" in rep.error and "busy_o = 1" in rep.error
    assert gone(block(rep)["pid"]) and not rtl_children()


def test_no_child_before_first_job(tmp_path):
    """The child starts with the block's first job: a process that builds the scenario
    but never runs the block (another partition, a run that ends earlier) starts none."""
    rep = run_scenario(load_scenario("quickstart", ["cluster.rbe.model=rtl",
                                                    "limits.max_time=1us"]),
                       out_dir=tmp_path, plots=False)
    b = block(rep)
    assert b["pid"] is None and b["jobs"] == [] and b["error"] is None
    assert not rtl_children()


# ------------------------------------------------------------------------ composed platform
@pytest.mark.parametrize("model", ["rtl", pytest.param("shadow", marks=pytest.mark.slow(
    reason="shadow after the rtl variant: [rtl] and test_shadow_names_first_divergence here, a passing "
           "shadow run in test_rtl_scenarios_abb.py::test_abb_phases_shadow_no_divergence"))])
def test_rtl_rbe_swaps_into_a_composed_platform(tmp_path, model):
    """The swap works through the accelerator interface: the RBE of a platform composed in
    YAML (block ``soc.rbe``) runs on the RTL with the TLM model's data, bit for bit."""
    paper = "soc.rbe.timing=paper"   # the schedule our SV RBE implements
    tlm = run_scenario(load_scenario("mini_rbe", [paper]), out_dir=tmp_path / "tlm", plots=False)
    rep = run_scenario(load_scenario("mini_rbe", [f"soc.rbe.model={model}", paper]),
                       out_dir=tmp_path / model, plots=False)
    assert rep.status == "passed" and all(c.passed for c in rep.checks), rep.checks
    assert rep.hash["memories"] == tlm.hash["memories"]
    b = rep.extra["rtl"]["blocks"]["soc.rbe"]
    assert b["model"] == model and b["count"] == 1 and b["rtl_cycles"] > 0 and b["error"] is None
    if model == "shadow":
        assert b["divergence"] is None and b["compared"] > 0
    acc = rep.extra["accelerators"]["soc.rbe"]
    assert acc["jobs"] == 1 and acc["cycles"] == b["rtl_cycles" if model == "rtl" else "model_cycles"]


def test_rtl_swap_refuses_a_composed_block_without_rtl(tmp_path):
    with pytest.raises(ScenarioError, match=r"platform\.models\.soc\.xbar: .*no RTL model of "
                                            r"soc\.xbar; rtl/shadow are available for: soc\.rbe"):
        run_scenario(load_scenario("mini_rbe", ["soc.xbar.model=rtl"]), out_dir=tmp_path,
                     plots=False)


def test_waves_default_to_what_this_machine_can_write_and_a_big_file_is_pointed_out(tmp_path, monkeypatch):
    import cosim.runner as runner
    from cosim.cli import main
    from cosim.rtl.swap import _have_lz4
    f = tmp_path / "tiny.yaml"
    f.write_text(TINY.format(model="tlm"))
    monkeypatch.setenv(WAVES_DIR_ENV, str(tmp_path / "w"))
    monkeypatch.setattr(runner, "WAVES_WARN_BYTES", 1000)       # this small file counts as big
    rc = main(["run", str(f), "--set", "cluster.rbe.model=rtl", "--waves", "--out", str(tmp_path / "out"),
               "-q", "--no-plots"])
    assert rc == 0
    b = json.loads((tmp_path / "out" / "report.json").read_text())["extra"]["rtl"]["blocks"]["cluster.rbe"]
    assert b["waves"].endswith(".fst" if _have_lz4() else ".vcd")
    assert b["waves_bytes"] == Path(b["waves"]).stat().st_size > 1000
    from cosim.scenario import load_scenario
    rep = runner.run_here(load_scenario(f, ["cluster.rbe.model=rtl"]), tmp_path / "o2", waves="vcd")[0]
    assert any("cluster.rbe: the waveform" in w and "--waves fst writes a compressed one" in w for w in rep.warnings)
    # the VCD asked for: the block's signals, its path in the report's RTL table
    wave = Path(rep.extra["rtl"]["blocks"]["cluster.rbe"]["waves"])
    assert wave == (tmp_path / "w" / "cluster.rbe.vcd").resolve() and wave.stat().st_size > 10_000
    head = wave.read_text(errors="replace")[:4000]
    assert "$timescale" in head and "busy_o" in head and "tcdm_req_o" in head
    assert rep.extra["rtl"]["table"]["rows"][0][7] == str(wave)
