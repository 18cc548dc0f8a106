"""Long RTL work says so and has a deadline (issue 34 item 2, issue 29's RTL leftovers;
docs/rtl.md, "Build progress and limit").

A cold build prints a start line (block, top, source size, estimate), heartbeats and its
wall time on stderr whatever the stream (here: a pipe), a cached one prints nothing; a build
past its limit is killed with its whole process group and named; ``cosim run`` refuses a
scenario's RTL blocks before it creates its output folder. The steps here are fake (a
``sleep`` in place of Verilator and make) except in the run test, whose real build is cut
short by a tiny limit, and the slow test, which builds a small real block."""
from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from rtl_scenario_support import _isolated, gone  # noqa: F401
from cosim.rtl.build import RtlBlock, RtlBuildTimeout, RtlError, build
from cosim.rtl.progress import (HEARTBEAT_ENV, LIMIT_ENV, BuildWatch, SourceSize, estimate_s,
                                expected_objects)

ROOT = Path(__file__).resolve().parents[1]
APB = ROOT / "rtl" / "bus" / "apb_regs.sv"

#: a child process that builds a tiny block with a fake runner whose one step sleeps
#: (no compiler), twice; its stderr is the pipe the test reads
FAKE_BUILD = textwrap.dedent("""
    import importlib
    import sys
    b = importlib.import_module("cosim.rtl.build")     # the module (cosim.rtl.build is also a function)

    class Fake:
        def __init__(self, run):
            self.run = run

        def build(self, *, build_dir, hdl_toplevel, log_file, **_):
            with open(log_file, "ab") as log:
                code = self.run(["sh", "-c", f"sleep {sys.argv[2]} && touch {build_dir}/{hdl_toplevel}"],
                                cwd=build_dir, env=None, stdout=log)
            if code:
                raise RuntimeError(f"exit {code}")

    b.harness_runner = Fake
    block = b.RtlBlock.make("tiny", [sys.argv[1]], "tiny")
    first = b.build(block)
    print("--- second", file=sys.stderr, flush=True)
    second = b.build(block)
    print(first.cached, second.cached)
""")


def _tiny(tmp_path: Path) -> Path:
    sv = tmp_path / "tiny.sv"
    sv.write_text("module tiny(input logic clk_i);\n  logic q;\n  always_ff @(posedge clk_i) q <= ~q;\nendmodule\n")
    return sv


def _env(tmp_path: Path, **kw: str) -> dict[str, str]:
    """The environment of a child: a fresh build cache, no limit or heartbeat but ``kw``'s."""
    env = {k: v for k, v in os.environ.items() if k not in (LIMIT_ENV, HEARTBEAT_ENV)}
    return {**env, "TLM_COSIM_RTL_CACHE": str(tmp_path / "cache"), **kw}


def test_a_cold_build_says_so_on_a_pipe_and_a_cached_one_is_silent(tmp_path):
    r = subprocess.run([sys.executable, "-c", FAKE_BUILD, str(_tiny(tmp_path)), "2.2"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                       env=_env(tmp_path, **{HEARTBEAT_ENV: "0.5"}))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]
    cold, cached = r.stderr.split("--- second\n")
    lines = cold.splitlines()
    assert re.fullmatch(r"building RTL block 'tiny': top tiny, 1 source file, 4 lines, \d+ B; first build of "
                        r"these sources, about \d+ (s|min) \(estimated from their size.*\), cached afterwards; "
                        r"limit 1800 s \(\$TLM_COSIM_RTL_BUILD_LIMIT\)", lines[0]), lines[0]
    beats = [float(m[1]) for ln in lines[1:-1]
             if (m := re.fullmatch(r"building RTL block 'tiny': (\d+) s elapsed, Verilating \(HDL -> C\+\+\)", ln))]
    assert len(beats) == len(lines) - 2 >= 3, cold     # every 0.5 s of a 2.2 s step
    assert beats == sorted(beats)
    assert re.fullmatch(r"building RTL block 'tiny': done in 2\.\d s", lines[-1]), lines[-1]
    assert cached == ""


def test_a_build_past_its_limit_is_killed_with_everything_it_started(tmp_path, monkeypatch):
    monkeypatch.setenv("TLM_COSIM_RTL_CACHE", str(tmp_path / "cache"))
    pidfile = tmp_path / "grandchild.pid"

    class Stuck:      # a step that starts a grandchild and waits for it (make -> g++)
        def __init__(self, run):
            self.run = run

        def build(self, *, build_dir, log_file, **_):
            self.run(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], cwd=build_dir, env=None, stdout=None)

    monkeypatch.setattr(importlib.import_module("cosim.rtl.build"), "harness_runner", Stuck)
    t = time.monotonic()
    with pytest.raises(RtlBuildTimeout) as e:
        build(RtlBlock.make("stuck", [_tiny(tmp_path)], "tiny"), limit_s=1.5)
    assert time.monotonic() - t < 10
    assert "building RTL block 'stuck' did not finish within 1.5 s of wall time ($TLM_COSIM_RTL_BUILD_LIMIT)" \
        in str(e.value)
    pid = int(pidfile.read_text())
    end = time.monotonic() + 5
    while not (gone(pid) or _zombie(pid)) and time.monotonic() < end:
        time.sleep(0.05)
    assert gone(pid) or _zombie(pid), "the step's grandchild outlived the deadline"
    assert not (e.value.build_dir / "build.json").exists()     # never taken for a finished build


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_limit_and_heartbeat_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(LIMIT_ENV, "12.5")
    monkeypatch.setenv(HEARTBEAT_ENV, "7")
    w = BuildWatch("x")
    assert (w.limit_s, w.heartbeat_s) == (12.5, 7.0)
    monkeypatch.setenv(LIMIT_ENV, "soon")
    with pytest.raises(ValueError, match=r"TLM_COSIM_RTL_BUILD_LIMIT='soon': expected a number of seconds > 0"):
        BuildWatch("x")
    monkeypatch.setenv("TLM_COSIM_RTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(LIMIT_ENV, "60")
    monkeypatch.setenv(HEARTBEAT_ENV, "-1")      # build() says so as an RtlError, before any tool runs
    with pytest.raises(RtlError, match=r"TLM_COSIM_RTL_HEARTBEAT='-1': expected a number of seconds > 0"):
        build(RtlBlock.make("tiny", [_tiny(tmp_path)], "tiny"))


def test_the_estimate_grows_with_the_source_size_and_the_load():
    small, big = SourceSize(1, 50, 2_000), SourceSize(1, 45_000, 1_140_000)
    assert estimate_s(small) < estimate_s(big)
    assert estimate_s(big, load=2.0) == pytest.approx(2 * estimate_s(big))
    assert str(small) == "1 source file, 50 lines, 1.95 KiB"


def test_expected_objects_reads_verilators_makefiles(tmp_path):
    """The format of Verilator 5's Vtop_classes.mk and Vtop.mk (a parallel build: one object
    per class and support file, plus the runtime and our main)."""
    assert expected_objects(tmp_path) is None          # before Verilator wrote them
    (tmp_path / "Vtop_classes.mk").write_text(
        "VM_PARALLEL_BUILDS = 1\nVM_CLASSES_FAST += \\\n  Vtop \\\n  Vtop___024root__0 \\\n\n"
        "VM_CLASSES_SLOW += \\\n  Vtop___024root__Slow \\\n\nVM_SUPPORT_FAST += \\\n  Vtop__Dpi \\\n\n"
        "VM_SUPPORT_SLOW += \\\n  Vtop__Syms__Slow \\\n\nVM_GLOBAL_FAST += \\\n  verilated \\\n  verilated_dpi \\\n"
        "  verilated_vpi \\\n  verilated_threads \\\n\nVM_GLOBAL_SLOW += \\\n\n")
    (tmp_path / "Vtop.mk").write_text("VM_USER_CLASSES = \\\n  verilator_main \\\n\nVM_USER_DIR = \\\n  . \\\n")
    assert expected_objects(tmp_path) == 5 + 4 + 1
    text = (tmp_path / "Vtop_classes.mk").read_text().replace("VM_PARALLEL_BUILDS = 1", "VM_PARALLEL_BUILDS = 0")
    (tmp_path / "Vtop_classes.mk").write_text(text)
    assert expected_objects(tmp_path) == 1 + 4 + 1     # the classes compile as one Vtop__ALL


def _scenario(folder: Path, verilator_args: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "apb_regs.sv").write_text(APB.read_text())
    block = {"sources": ["apb_regs.sv"], "top": "apb_regs", "clock": {"port": "clk_i", "period_ns": 10},
             "reset": {"port": "rst_ni", "active_low": True, "cycles": 4},
             "adapters": {"cfg": {"kind": "apb_slave", "prefix": "s_apb_", "bind": "0x1A120000+0x800"}}}
    if verilator_args:
        block["verilator_args"] = verilator_args
    data = {"name": "progress", "platform": {"preset": "marsellus", "rtl_blocks": {"soc.regs": block}},
            "workload": {"tasks": [{"id": "m", "op": "mmio", "accesses": [{"read": 0x1A120000}]}]}}
    path = folder / "s.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_run_whose_build_passes_the_limit_ends_naming_the_block_and_the_limit(tmp_path):
    """A real cold build of a small block, stopped by a 2 s limit (it takes 10-30 s)."""
    s = _scenario(tmp_path / "sc")
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", str(s), "-q", "--no-plots", "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env=_env(tmp_path, **{LIMIT_ENV: "2"}))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert re.search(r"error: .*soc\.regs.*building RTL block 'soc_regs' did not finish within 2 s of wall time "
                     r"\(\$TLM_COSIM_RTL_BUILD_LIMIT\); its processes were killed", r.stdout), r.stdout
    assert "building RTL block 'soc_regs': top apb_regs" in r.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["status"] == "error" and "did not finish within 2 s" in report["error"]


def test_a_refused_rtl_block_leaves_no_output_folder(tmp_path):
    """The security policy's refusal (docs/security.md) comes before ``--out`` is created."""
    s = _scenario(tmp_path / "sc", ["-CFLAGS", "-O0"])
    out = tmp_path / "o" / "deeper"
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", str(s), "-q", "--out", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "s.yaml:22: platform.rtl_blocks.soc.regs.verilator_args[0]:" in r.stderr
    assert "'-CFLAGS' is not allowed" in r.stderr
    assert not (tmp_path / "o").exists()
    assert not (tmp_path / "out").exists()


@pytest.mark.slow(reason="a real cold Verilator build (10-40 s); "
                         "test_a_cold_build_says_so_on_a_pipe_and_a_cached_one_is_silent covers the lines "
                         "with a fake step")
@pytest.mark.timeout(600)
def test_a_real_cold_build_reports_its_objects(tmp_path):
    code = ("import sys; from cosim.rtl import blocks; from cosim.rtl.build import build; "
            "from cosim.rtl.progress import expected_objects; r = build(blocks.tcdm_bank()); "
            "print(expected_objects(r.build_dir), len(list(r.build_dir.glob('*.o'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=500,
                       env=_env(tmp_path, **{HEARTBEAT_ENV: "1"}))
    assert r.returncode == 0, r.stderr
    expected, built = map(int, r.stdout.split())
    assert expected == built > 0
    counts = [int(m[1]) for m in re.finditer(rf"compiling C\+\+: (\d+) of {expected} objects", r.stderr)]
    assert counts and counts == sorted(counts), r.stderr
    assert "building RTL block 'tcdm_bank': top tcdm_bank, 1 source file" in r.stderr
    assert re.search(r"building RTL block 'tcdm_bank': done in \d+\.\d s", r.stderr)
