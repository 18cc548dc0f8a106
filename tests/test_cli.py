"""The ``cosim`` CLI end to end (subprocesses): exit codes, report keys, check results,
outputs, and errors that name the file, line and key."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT_KEYS = {"tool", "scenario", "status", "exit_code", "sim_time_ps", "sim_time", "wall_time_s",
               "sim_per_wall", "components", "utilisation", "traffic", "energy", "tasks", "checks",
               "tlm_errors", "error", "outputs", "extra"}


def cosim(*args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def run_report(tmp_path: Path, scenario: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "out"
    r = cosim("run", scenario, "--out", str(out), "--quiet", *extra)
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return r, report


def test_quickstart_passes_with_report_trace_and_plots(tmp_path):
    r, rep = run_report(tmp_path, "scenarios/quickstart.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert set(rep) >= REPORT_KEYS
    assert rep["status"] == "passed" and rep["exit_code"] == 0
    names = {c["name"]: c["passed"] for c in rep["checks"]}
    assert names == {"tasks": True, "network == numpy reference": True, "no TLM errors": True,
                     "deadline 2 ms": True}
    assert rep["tasks"]["conv.rbe0"]["ok"] and rep["tasks"]["conv.rbe0"]["op"] == "rbe"
    assert rep["energy"]["total_j"] > 0
    assert rep["extra"]["layers"]["rows"][0]["layer"] == "conv"
    # trace: valid trace-event JSON with one track per component path
    trace = json.loads(Path(rep["outputs"]["trace"]).read_text())
    tracks = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert {"cluster.rbe", "soc.host.l2_l1", "soc.host.compute", "soc.host.l3_l2"} <= tracks
    for key in ("plot_layers", "plot_power", "plot_timeline"):
        assert Path(rep["outputs"][key]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_scenario_is_the_quickstart(tmp_path):
    out = tmp_path / "o"
    r = cosim("run", "--out", str(out), "--quiet", "--no-plots")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((out / "report.json").read_text())["scenario"]["name"] == "quickstart"


def test_same_seed_same_report(tmp_path):
    reps = []
    for i in range(2):
        r = cosim("run", "scenarios/quickstart.yaml", "--out", str(tmp_path / str(i)), "-q", "--no-plots")
        assert r.returncode == 0 and r.stderr == ""       # without -v a passing run logs nothing
        rep = json.loads((tmp_path / str(i) / "report.json").read_text())
        reps.append({k: rep[k] for k in ("sim_time_ps", "components", "tasks", "energy", "checks")})
    assert reps[0] == reps[1]


def test_failed_check_exits_1(tmp_path):
    r, rep = run_report(tmp_path, "scenarios/quickstart.yaml", "--no-plots", "--set",
                        "checks=[{deadline: 1 us}]")
    assert r.returncode == 1
    assert rep["status"] == "failed"
    assert [c["passed"] for c in rep["checks"] if c["name"].startswith("deadline")] == [False]


@pytest.mark.parametrize("text,expected", [
    ("platform: {preset: marsellus}\nworkload:\n  tasks:\n    - {op: dma, src: l2, dst: tcdm, sz: 64}\n",
     "bad.yaml:4: workload.tasks[0].sz: unknown key 'sz' (did you mean 'size'?)"),
    ("platform: {preset: marsellus}\nworkload:\n  tasks:\n    - {op: dma, src: l2, dst: tcdm, size: big}\n",
     "bad.yaml:4: workload.tasks[0].size: expected an integer, got str 'big'"),
    ("platform: {preset: marsellus}\nworkload:\n  firmware: missing.elf\n",
     "bad.yaml:3: workload.firmware: file not found: missing.elf"),
    ("platform:\n  preset: marsellus\n  overrides: {cluster.tcdm.mdoe: word}\n"
     "workload: {tasks: [{op: wait, time: 1 ns}]}\n",
     "bad.yaml:3: platform.overrides.cluster.tcdm.mdoe: unknown parameter 'mdoe' (did you mean 'mode'?)"),
    ("platform: {preset: marsellus}\nworkload:\n  network:\n    input: {h: 8, w: 8, c: 32, bits: 8}\n"
     "    layers: [{name: big, type: conv3x3, out: 1024, w_bits: 8, o_bits: 8}]\n",
     "bad.yaml:3: big: impossible tiling"),
])
def test_broken_scenarios_exit_2_with_exact_location(tmp_path, text, expected):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    r = cosim("run", str(f), "--out", str(tmp_path / "o"), "-q")
    assert r.returncode == 2, r.stdout + r.stderr
    msg = " ".join(r.stderr.split())
    assert expected.replace("bad.yaml", str(f)) in msg, msg
    assert "Traceback" not in r.stderr


def test_validate_show_list_and_schema(tmp_path):
    r = cosim("validate", "scenarios/quickstart.yaml")
    assert r.returncode == 0 and "ok" in r.stdout
    r = cosim("show", "quickstart", "--set", "cluster.tcdm.mode=word")
    assert r.returncode == 0
    assert "cluster.tcdm:" in r.stdout and "mode: word" in r.stdout
    r = cosim("list", "scenarios")
    assert r.returncode == 0 and "quickstart" in r.stdout
    r = cosim("list", "kernels")
    assert "add_requant" in r.stdout and "matmul" in r.stdout
    r = cosim("list", "components")
    assert "cluster.tcdm" in r.stdout and "TcdmParams" in r.stdout
    r = cosim("schema", "--out", str(tmp_path / "s.json"))
    assert r.returncode == 0 and json.loads((tmp_path / "s.json").read_text())["title"]
    # `cosim run --help`: test_run_help_has_examples_and_verbose_logs_the_phases


LIBRARY = {
    # scenario: checks that must appear (and pass) in its report
    "quickstart": {"network == numpy reference", "tasks"},
    "resnet20_cifar": {"network == numpy reference", "tasks", "no TLM errors"},
    "hyperram_stream": {"TCDM holds the HyperRAM data", "L2 holds the HyperRAM data"},
    "firmware_hello": {"firmware", "firmware exit code 0"},
    "firmware_rbe": {"firmware", "cluster.rbe.jobs"},
    "abb_phases": {"pmu.timing_errors", "pmu.abb.raises"},
    "dvfs_sweep": {"pmu.timing_errors", "tasks"},
    "rtl_peripherals": {"tasks", "no TLM errors"},
    "rtl_ext_dma": {"TCDM holds the L2 source", "L2 copy holds the source", "tasks"},
    "rtl_hwpe_mac": {"tasks", "no TLM errors"},
    "dma_copy": {"1D L2 -> TCDM", "2D round trip (rows and untouched gaps)", "tasks",
                 "no TLM errors"},
    "mini_rbe": {"output matches the golden model", "tasks", "no TLM errors"},
    "tensil_dense": {"dense + ReLU output matches the numpy fixed-point reference", "tasks",
                     "no TLM errors"},
    "tensil_resnet_small": {"logits match the numpy fixed-point reference", "tasks"},
    "tensil_resnet20v2": {"network == numpy reference", "tasks", "no TLM errors"},
    "tensil_resnet50v2": {"tasks", "no TLM errors"},
    "tensil_yolov4_tiny": {"tasks", "no TLM errors"},
    "onnx_tiny": {"network == numpy reference", "network == onnxruntime (bit for bit)", "tasks"},
    "marsellus_tensil": {"dense + ReLU output matches the numpy fixed-point reference", "tasks",
                         "no TLM errors"},
    "marsellus_tensil_fc": {"firmware exit code 0", "no TLM errors", "soc.tensil.jobs"},
    "marsellus_tensil_hyperram": {"dense + ReLU output in HyperRAM matches the numpy fixed-point reference",
                                  "tasks", "no TLM errors"},
    "marsellus_voyager": {"conv3x3 output matches numpy", "gemm + residual output matches numpy", "tasks",
                          "no TLM errors"},
    "marsellus_voyager_fc": {"firmware exit code 0", "conv3x3 output (vbuf is the first .l2_shared buffer, at L2's "
                             "start) matches numpy", "gemm + residual output matches numpy"},
    "voyager_mini": {"conv3x3 output matches numpy", "gemm + residual output matches numpy", "tasks"},
    "flexisaga_gemm": {"output equals numpy's W @ I", "tasks", "no TLM errors"},
    "onnx_voyager": {"network == numpy reference", "network == onnxruntime (bit for bit)", "tasks"},
    "onnx_flexisaga": {"network == numpy reference", "network == onnxruntime (bit for bit)", "tasks"},
    "marsellus_onnx_units": {"network == numpy reference", "network == onnxruntime (bit for bit)", "tasks",
                             "no TLM errors"},
    "marsellus_onnx_units_pruned": {"network == numpy reference", "network == onnxruntime (bit for bit)", "tasks",
                                    "no TLM errors"},
    "marsellus_flexisaga": {"RBE output matches the golden model", "tasks", "no TLM errors",
                            "FlexiSAGA's branch waited for banks the RBE held",
                            "the RBE's branch waited for banks FlexiSAGA held"},
    "flexisaga_gemm_int": {"output equals numpy's W @ I", "tasks", "no TLM errors"},
}


#: library scenarios that build RTL (Verilator, minutes cold) or run a full-size network: the slow
#: set (each still runs in-process in tests/test_golden_hashes.py or its own file's smaller case)
SLOW_SCENARIOS = {"rtl_ext_dma", "rtl_hwpe_mac", "rtl_peripherals", "tensil_resnet20v2", "tensil_resnet50v2",
                  "tensil_yolov4_tiny"}


#: library scenarios whose CLI run stays in the default set: the rest run in-process there, in
#: tests/test_golden_hashes.py, whose report hash covers every check's name and verdict (a
#: CLI run costs ~0.6 s of interpreter start on top); a network, an ONNX model and a Tensil program
#: run here, a firmware in test_firmware_output_is_shown_live_and_kept_in_the_report_and_a_log
CLI_DEFAULT = {"quickstart", "onnx_tiny", "tensil_dense"}


def _library_param(name: str) -> Any:
    if name in SLOW_SCENARIOS:
        return pytest.param(name, marks=pytest.mark.slow(reason="built RTL or a full network: the golden hash "
                                                               "or the file's smaller case in the default set"))
    if name not in CLI_DEFAULT:
        return pytest.param(name, marks=pytest.mark.slow(
            reason=f"test_golden_hashes.py::test_run_hash_and_report_match_the_golden_ones[{name}] runs it in the "
                   "default set; test_library_scenario_passes[quickstart] the CLI"))
    return name


@pytest.mark.parametrize("name", [_library_param(n) for n in sorted(LIBRARY)])
def test_library_scenario_passes(tmp_path, name):
    r, rep = run_report(tmp_path, f"scenarios/{name}.yaml", "--no-plots")
    assert r.returncode == 0, r.stdout + r.stderr
    checks = {c["name"]: c["passed"] for c in rep["checks"]}
    assert LIBRARY[name] <= set(checks), checks
    assert all(checks.values()), checks
    assert rep["sim_time_ps"] > 0 and rep["tlm_errors"] == []


def test_library_is_complete():
    assert {p.stem for p in (ROOT / "scenarios").glob("*.yaml")} == set(LIBRARY)


@pytest.fixture(scope="module")
def resnet20(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """One ``cosim run resnet20_cifar`` (its terminal summary and its report), read by the
    tests of its layer table."""
    out = tmp_path_factory.mktemp("resnet20") / "o"
    r = cosim("run", "resnet20_cifar", "--no-plots", "--out", str(out), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r, json.loads((out / "report.json").read_text())


def test_resnet20_reports_per_layer_latency_and_energy(resnet20):
    _, rep = resnet20
    rows = rep["extra"]["layers"]["rows"]
    names = [row["layer"] for row in rows]
    assert names[0] == "conv1" and names[-1] == "fc" and len(names) == 32
    for row in rows:
        assert {"l3_l2_ps", "l2_l1_ps", "compute_ps", "span_ps"} <= set(row)
    convs = [row for row in rows if row["layer"].endswith(("_c1", "_c2", "_sc")) or row["layer"] == "conv1"]
    assert all(row["l3_l2_ps"] > 0 and row["compute_ps"] > 0 for row in convs)
    assert rep["energy"]["total_j"] > 0 and rep["energy"]["operating_point"] == "nominal"
    # the trace shows DMA and compute overlapping in time (double buffering)
    trace = json.loads(Path(rep["outputs"]["trace"]).read_text())["traceEvents"]
    dma = [(e["ts"], e["ts"] + e["dur"]) for e in trace if e.get("ph") == "X"
           and e["name"].endswith(tuple(f".in{i}" for i in range(1, 9)))]
    rbe = [(e["ts"], e["ts"] + e["dur"]) for e in trace if e.get("ph") == "X" and ".rbe" in e["name"]]
    assert any(a0 < b1 and b0 < a1 for a0, a1 in dma for b0, b1 in rbe)


def test_dvfs_sweep_durations_follow_the_clock(tmp_path):
    r, rep = run_report(tmp_path, "scenarios/dvfs_sweep.yaml", "--no-plots")
    assert r.returncode == 0
    dur = {k.split("_")[0]: v["end_ps"] - v["start_ps"] for k, v in rep["tasks"].items() if k.endswith("_matmul")}
    # same work: cycles are equal, so duration * frequency is constant (within a few cycles
    # of the host's register accesses, which run on the SOC clock)
    work = {k: dur[k] * int(k[1:]) for k in dur}
    assert max(work.values()) / min(work.values()) < 1.05, dur
    assert dur["p100"] > 3.5 * dur["p420"]


def test_firmware_output_is_shown_live_and_kept_in_the_report_and_a_log(tmp_path):
    for extra in ((), ("--processes", "2")):
        out = tmp_path / f"out{len(extra)}"
        r = cosim("run", "firmware_hello", "--no-plots", "--out", str(out), *extra)
        assert r.returncode == 0, r.stdout + r.stderr
        shown = [ln for ln in r.stdout.splitlines() if ln.startswith("firmware [")]
        assert shown == ["firmware [1.93099 us] fc: Hello from the MARSELLUS fabric controller!",
                         "firmware [88.097 us] fc: fib(15) = 610"]
        rep = json.loads((out / "report.json").read_text())
        assert rep["extra"]["stdout"] == [
            {"time_ps": 1930991, "from": "fc", "text": "Hello from the MARSELLUS fabric controller!"},
            {"time_ps": 88097000, "from": "fc", "text": "fib(15) = 610"}]
        assert (out / "stdout.log").read_text().splitlines() == [ln.removeprefix("firmware ") for ln in shown]
        assert rep["outputs"]["stdout"] == str(out / "stdout.log")
    q = cosim("run", "firmware_hello", "--no-plots", "-q", "--out", str(tmp_path / "q"))
    assert "Hello" not in q.stdout         # -q prints the status only; the log still has it
    assert "Hello" in (tmp_path / "q" / "stdout.log").read_text()


def test_quiet_names_the_failed_checks(tmp_path):
    r = cosim("run", "quickstart", "-q", "--no-plots", "--out", str(tmp_path / "o"), "--set",
              "checks=[{deadline: 1 us}, {no_tlm_errors: true}]")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "quickstart: failed"
    # the last task's end, from the report (the RBE's timing sets it, not this test)
    from tlm.units import fmt_time
    tasks = json.loads((tmp_path / "o" / "report.json").read_text())["tasks"]
    last = max(t["end_ps"] for t in tasks.values())
    assert last > 1_000_000
    assert [ln for ln in lines if ln.startswith("FAIL")] == [f"FAIL deadline 1 us: work finished at {fmt_time(last)}"]


def test_component_rows_sort_numbers_by_value():
    from cosim.report import natural_key
    rows = ["cluster.core10", "cluster.core2", "soc.l2", "cluster.core1", "cluster.tcdm.bank11", "cluster.tcdm.bank3"]
    assert sorted(rows, key=natural_key) == ["cluster.core1", "cluster.core2", "cluster.core10",
                                             "cluster.tcdm.bank3", "cluster.tcdm.bank11", "soc.l2"]


def test_run_help_has_examples_and_verbose_logs_the_phases(tmp_path):
    h = cosim("run", "--help")
    assert h.returncode == 0 and "examples:" in h.stdout and "cosim run quickstart --set" in h.stdout
    assert "--set" in h.stdout.replace("cosim run quickstart --set", "")
    r = cosim("run", "quickstart", "-q", "--no-plots", "-v", "--out", str(tmp_path / "o"))
    assert r.returncode == 0
    phases = [ln.split(": ", 1)[1] for ln in r.stderr.splitlines() if ln.startswith("cosim.run: ")]
    assert phases[0::2] == ["building the platform", "simulating", "reporting"]
    assert all(p.endswith(" s") and "done in" in p for p in phases[1::2])
    # without -v: nothing on stderr (test_same_seed_same_report)


def test_the_trace_has_power_supply_bias_and_clock_counter_tracks(tmp_path):
    out = tmp_path / "o"
    r = cosim("run", "abb_phases", "-q", "--no-plots", "--trace", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    events = json.loads((out / "trace.json").read_text())["traceEvents"]
    rep = json.loads((out / "report.json").read_text())
    counters = [e for e in events if e["ph"] == "C"]
    assert {e["name"] for e in counters} == {"power (mW)", "VDD (V)", "body bias (V)", "clock (MHz)"}
    power = [e for e in counters if e["name"] == "power (mW)"]
    assert set(power[0]["args"]) == {"always_on", "soc", "cluster"} and all(v > 0 for v in power[0]["args"].values())
    assert [e["ts"] for e in power] == sorted(e["ts"] for e in power)
    bias = [e["args"]["cluster"] for e in counters if e["name"] == "body bias (V)"]
    assert max(bias) > 0                 # the ABB raised the cluster's forward bias at some point
    assert rep["outputs"]["trace"] == str(out / "trace.json")


def test_power_plot_has_one_look_per_domain_and_a_legend_on_every_panel(tmp_path, monkeypatch):
    import cosim.plots as plots
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    sc = load_scenario("abb_phases")
    _, _, outcome = run_here(sc, tmp_path)
    figs = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: figs.append(fig))
    assert plots.plot_power(sc, outcome, tmp_path / "power.png")
    axes = figs[0].axes
    # VDD and the clocks never move in abb_phases: a note, not panels (tests/test_plots.py)
    assert [ax.get_ylabel() for ax in axes] == ["power (mW)", "body bias (V)"]
    looks: dict[str, set] = {}
    for ax in axes:
        assert ax.get_legend() is not None
        for line in ax.get_lines():
            looks.setdefault(line.get_label(), set()).add((line.get_color(), line.get_linestyle()))
    assert all(len(v) == 1 for v in looks.values()), looks     # the same colour and style in every panel
    assert len({next(iter(v)) for v in looks.values()}) == len(looks)   # and different from the others
    title = axes[0].get_title()
    assert "bias steps" not in title and "body bias changed" in title


def test_the_layers_table_explains_why_its_columns_overlap(resnet20):
    r, rep = resnet20
    text = " ".join(r.stdout.split())
    assert "they overlap (double buffering)" in text and "so it can exceed the span" in text
    rows = rep["extra"]["layers"]["rows"]
    assert any(row["l3_l2_ps"] + row["compute_ps"] > row["span_ps"] for row in rows)   # the overlap it explains
