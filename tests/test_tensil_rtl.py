"""The Tensil TCU's RTL swap path: ``soc.tcu`` of the ``tensil`` platform swapped for the
Verilog stand-in ``rtl/tensil/tensil_stub.sv`` (NoOp and Configure only) through the RTL
bridge (``platform.models: {soc.tcu: rtl | shadow}``), one Verilator build (cached)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rtl_scenario_support import _isolated, options  # noqa: F401

from accelerators.tensil.model.arch import TensilArch  # noqa: E402
from accelerators.tensil.model.isa import Configure, ConfigReg, MatMul, NoOp, assemble_binary  # noqa: E402
from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import load_scenario  # noqa: E402

ARCH = TensilArch()
#: the spec's configuration registers after PROGRAM: written values, and the program
#: counter register counting every instruction after its own Configure (spec §7)
PROGRAM = [Configure(ConfigReg.DRAM0_OFFSET, 0x12), NoOp(), Configure(ConfigReg.DRAM1_CACHE, 0xB),
           Configure(ConfigReg.PROGRAM_COUNTER, 100), NoOp(), NoOp(),
           Configure(ConfigReg.SAMPLE_INTERVAL, 0x1234), NoOp()]
EXPECTED = {ConfigReg.DRAM0_OFFSET: 0x12, ConfigReg.DRAM0_CACHE: 0, ConfigReg.DRAM1_OFFSET: 0,
            ConfigReg.DRAM1_CACHE: 0xB, ConfigReg.TIMEOUT: 0x64, ConfigReg.TRACEPOINT: 0xFFFFFFFF,
            ConfigReg.PROGRAM_COUNTER: 100 + 4, ConfigReg.SAMPLE_INTERVAL: 0x1234}


def scenario(tmp_path: Path, model: str, program: list) -> object:
    (tmp_path / "prog.tprog").write_bytes(assemble_binary(program, ARCH))
    n = len(program)
    sc = {"name": "tensil_stub", "seed": 1,
          "platform": {"preset": "tensil", "models": {"soc.tcu": model}},
          "workload": {"tasks": [
              {"id": "load", "op": "load", "to": "dram0", "data": {"file": "prog.tprog"}},
              {"id": "run", "op": "mmio", "accesses": [
                  {"write": "tcu+0x00", "value": 0x80000000}, {"write": "tcu+0x04", "value": n},
                  {"write": "tcu+0x08", "value": 0x80000000}, {"write": "tcu+0x0C", "value": 0x90000000},
                  {"write": "tcu+0x10", "value": 1}, {"wait_irq": "tcu_done"},
                  {"read": "tcu+0x14", "expect": 0}, {"read": "tcu+0x20", "expect": n}]}]},
          "checks": [{"no_tlm_errors": True}]}
    path = tmp_path / "tensil_stub.yaml"
    path.write_text(yaml.safe_dump(sc))
    return load_scenario(path)


@pytest.mark.parametrize("model", ["rtl", pytest.param("shadow", marks=pytest.mark.slow(
    reason="shadow after the rtl variant: [rtl] and test_shadow_names_the_first_divergent_register here"))])
def test_stub_runs_noop_and_configure(tmp_path: Path, model: str) -> None:
    from cosim.runner import run_here
    rep, run, _ = run_here(scenario(tmp_path, model, PROGRAM), tmp_path / "out")
    d = rep.as_dict()
    assert d["status"] == "passed", d["error"]
    blk = d["extra"]["rtl"]["blocks"]["soc.tcu"]
    assert blk["model"] == model and blk["block"] == "tensil_stub" and blk["count"] == 1
    job = blk["jobs"][0]
    # one cycle per NoOp/Configure, as the latency model says (spec: 1 each)
    assert job["instructions"] == len(PROGRAM) and job["rtl_cycles"] == job["model_cycles"] == len(PROGRAM)
    if model == "shadow":
        assert blk["divergence"] is None and blk["compared"] == 1 + len(EXPECTED)
    assert d["extra"]["accelerators"]["soc.tcu"]["jobs"] == 1
    # rtl: the configuration comes from the stand-in; shadow: from the model (compared equal)
    tcu = run.sim.modules["soc.tcu"]
    assert {ConfigReg(r): v for r, v in tcu.machine.config.items()} == EXPECTED


def test_shadow_names_the_first_divergent_register(monkeypatch, tmp_path: Path) -> None:
    options(monkeypatch, inject={"soc.tcu": {"flip": {"register": int(ConfigReg.DRAM1_OFFSET), "bit": 3}}})
    rep = run_scenario(scenario(tmp_path, "shadow", PROGRAM), out_dir=tmp_path / "out", plots=False)
    div = rep.as_dict()["extra"]["rtl"]["blocks"]["soc.tcu"]["divergence"]
    assert (div["address"], div["expected"], div["actual"], div["mismatched"]) == \
        ("DRAM1_OFFSET", "0x0", "0x8", ["DRAM1_OFFSET"])


def test_stub_rejects_matmul_with_a_located_error(tmp_path: Path) -> None:
    prog = [NoOp(), Configure(ConfigReg.TIMEOUT, 7), MatMul(0, 0, 1), NoOp()]
    rep = run_scenario(scenario(tmp_path, "rtl", prog), out_dir=tmp_path / "out", plots=False)
    d = rep.as_dict()
    assert d["status"] != "passed"
    msg = d["error"]
    assert "pc 2" in msg and "MatMul" in msg and "opcode" in msg and "NoOp and Configure" in msg


def test_marsellus_without_its_tcu_is_a_located_error() -> None:
    from cosim.runner import build
    from cosim.scenario import ScenarioError
    sc = load_scenario("quickstart")
    sc.models["soc.tensil"] = "rtl"
    with pytest.raises(ScenarioError, match=r"platform\.models\.soc\.tensil: .*soc\.tensil\.enabled"):
        build(sc)
