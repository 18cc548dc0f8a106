"""RTL blocks added to a scenario from their port maps alone (``platform.rtl_blocks``,
cosim/rtl/transactors/portmapped.py): scenarios/rtl_peripherals.yaml puts an APB register
file and an OBI SRAM (rtl/bus) on the SOC interconnect; the host's register accesses reach
the Verilated blocks through the cocotbext-apb/-obi based adapters, with no block-specific
Python. Errors: a port map naming a missing port, a window overlapping the memory map, a
missing source, a bus error answer, a block that never answers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rtl_scenario_support import _isolated  # noqa: F401
from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "rtl_peripherals.yaml"


def variant(edit) -> object:
    """rtl_peripherals.yaml with ``edit(data)`` applied, loaded from the scenarios folder
    (so its relative source paths resolve)."""
    data = yaml.safe_load(SCENARIO.read_text())
    edit(data)
    return load_scenario_text(yaml.safe_dump(data, sort_keys=False),
                              SCENARIO.with_name("rtl_peripherals_variant.yaml"))


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def peripherals(tmp_path_factory):
    """One run of rtl_peripherals.yaml as it is, for the tests that read it or compare with it."""
    return run_scenario(load_scenario(SCENARIO), out_dir=tmp_path_factory.mktemp("peripherals"), plots=False)


def test_blocks_from_port_maps_answer_the_host(peripherals):
    rep = peripherals
    assert rep.status == "passed", (rep.error, rep.checks)
    # the values the host read came from the RTL (the ID parameter, registers, SRAM)
    assert rep.tasks["apb_program"]["reads"] == ["0xa9b00001", "0x12345678", "0xcafef00d"]
    assert rep.tasks["sram_fill"]["reads"] == ["0x00000002", "0xdeadbeef"]
    blocks = rep.extra["rtl"]["blocks"]
    apb, obi = blocks["soc.apb_regs"], blocks["soc.obi_sram"]
    assert apb["block"] == "apb_regs" and obi["block"] == "obi_mem"
    assert (apb["reads"], apb["writes"], apb["errors"]) == (3, 3, 0)
    assert (obi["reads"], obi["writes"], obi["errors"]) == (2, 3, 0)
    assert apb["round_trips"] == 6 and obi["round_trips"] == 5
    assert [a["address"] for a in apb["accesses"]][:2] == ["0x1a120020", "0x1a120000"]
    # WAIT = 3 makes the later APB reads longer in RTL cycles, and the TLM side waits them
    before, after = apb["accesses"][0]["rtl_cycles"], apb["accesses"][4]["rtl_cycles"]
    assert after > before - 1 and after >= 3
    assert apb["rtl_cycles"] == sum(a["rtl_cycles"] for a in apb["accesses"])
    assert not alive(apb["pid"]) and not alive(obi["pid"])
    rows = {r[0]: r for r in rep.extra["rtl"]["table"]["rows"]}
    assert rows["soc.apb_regs"][2] == "6 accesses" and rows["soc.apb_regs"][4] == "-"
    json.dumps(rep.extra["rtl"])     # the report stays plain JSON


@pytest.mark.slow
def test_same_results_split_over_processes(tmp_path):
    one = run_scenario(load_scenario(SCENARIO), out_dir=tmp_path / "one", plots=False)
    two = run_scenario(load_scenario(SCENARIO), out_dir=tmp_path / "two", plots=False,
                       processes=2)
    assert two.status == "passed", two.error
    assert two.tasks == one.tasks and two.sim_time_ps == one.sim_time_ps
    assert set(two.extra["rtl"]["blocks"]) == {"soc.apb_regs", "soc.obi_sram"}


def test_port_map_naming_a_missing_port():
    def edit(d):
        d["platform"]["rtl_blocks"]["soc.apb_regs"]["adapters"]["cfg"]["prefix"] = "s_apbx_"
    with pytest.raises(ScenarioError) as e:
        run_scenario(variant(edit), plots=False)
    msg = str(e.value)
    assert "rtl_peripherals_variant.yaml" in msg
    assert "platform.rtl_blocks.soc.apb_regs.adapters" in msg
    assert "no RTL port s_apbx_psel" in msg and "did you mean 's_apb_psel'" in msg


def test_window_overlapping_the_memory_map():
    def edit(d):
        d["platform"]["rtl_blocks"]["soc.obi_sram"]["adapters"]["mem"]["bind"] = \
            "0x1A10F000+0x400"
    with pytest.raises(ScenarioError, match=r"overlaps stdout \[0x1a10f000"):
        run_scenario(variant(edit), plots=False)


def test_missing_source():
    def edit(d):
        d["platform"]["rtl_blocks"]["soc.apb_regs"]["sources"] = ["../rtl/bus/nope.sv"]
    with pytest.raises(ScenarioError) as e:
        run_scenario(variant(edit), plots=False)
    assert "file not found: ../rtl/bus/nope.sv" in str(e.value)
    assert "platform.rtl_blocks.soc.apb_regs.sources[0]" in str(e.value)


def test_bus_error_answer_fails_the_task(tmp_path):
    def edit(d):
        d["workload"]["tasks"] = [{"op": "mmio", "id": "bad",
                                   "accesses": [{"read": 0x1A120028}]}]   # unmapped: PSLVERR
        del d["platform"]["rtl_blocks"]["soc.obi_sram"]
    rep = run_scenario(variant(edit), out_dir=tmp_path, plots=False)
    assert rep.status == "failed"
    assert "read 0x1a120028 answered GENERIC_ERROR" in rep.tasks["bad"]["error"]
    assert rep.extra["rtl"]["blocks"]["soc.apb_regs"]["errors"] == 1


@pytest.mark.slow(reason="an adapter's timeout on a block that never answers: "
                         "test_rtl_scenarios_tcdm.py::test_never_grants_adapter_timeout")
def test_block_that_never_answers(tmp_path):
    def edit(d):
        blk = d["platform"]["rtl_blocks"]["soc.apb_regs"]
        blk["adapters"]["cfg"].update(bind="0x1A120000+0x1000", timeout_cycles=40)
        # >= 0x800 is forwarded to the block's APB initiator port, which nothing serves
        d["workload"]["tasks"] = [{"op": "mmio", "id": "stuck",
                                   "accesses": [{"read": 0x1A120800}]}]
        del d["platform"]["rtl_blocks"]["soc.obi_sram"]
    rep = run_scenario(variant(edit), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "soc.apb_regs" in rep.error and "s_apb_pready stayed 0 for 40 cycles" in rep.error
    assert "never answers" in rep.error
    assert not alive(rep.extra["rtl"]["blocks"]["soc.apb_regs"]["pid"])


# ------------------------------------------------ initiators, interrupts, busy (rtl_ext_dma)
EXT_DMA = ROOT / "scenarios" / "rtl_ext_dma.yaml"


def ext_dma(edit=None):
    data = yaml.safe_load(EXT_DMA.read_text())
    if edit is not None:
        edit(data)
    return load_scenario_text(yaml.safe_dump(data, sort_keys=False),
                              EXT_DMA.with_name("rtl_ext_dma_variant.yaml"))


def test_block_with_initiators_and_interrupt_from_its_port_map(tmp_path):
    rep = run_scenario(load_scenario(EXT_DMA), out_dir=tmp_path, plots=False)
    assert rep.status == "passed", (rep.error, rep.checks)
    assert all(c.passed for c in rep.checks) and len(rep.checks) >= 3
    b = rep.extra["rtl"]["blocks"]["soc.ext_dma"]
    # the RTL's AXI master read the L2 source and wrote the copy through the SOC
    # interconnect; its TCDM master wrote, then read, the 4 KiB in the TCDM
    assert b["initiators"]["axi"]["bind"] == "soc" and b["initiators"]["axi"]["bytes"] == 8192
    assert b["initiators"]["tcdm"]["bytes"] == 8192
    # one completion interrupt (copy_in asked for it), delivered to the host while
    # copy_in waited: it ends after the pulse; copy_out polled STATUS instead
    irq = b["interrupts"]["irq"]
    assert irq["bound"] == "host" and irq["pulses"] == 1
    t_irq = irq["first_ps"][0]
    copy_in, copy_out = rep.tasks["copy_in"], rep.tasks["copy_out"]
    assert copy_in["start_ps"] < t_irq <= copy_in["end_ps"] <= copy_out["start_ps"]
    # 4 KiB at ~2 cycles per 8 bytes of the 2.5 ns clock: the copy takes its RTL time
    assert 512 * 2 * 2500 <= t_irq - copy_in["start_ps"] < 3 * 512 * 2 * 2500
    assert b["syncs"] > 0 and b["quantum_ps"] == 500_000
    assert b["exit_code"] == 0 and not alive(b["pid"])


def test_initiator_bound_to_the_wrong_target_fails_with_the_address(tmp_path):
    def edit(d):   # the TCDM cannot answer the AXI master's L2 reads
        d["platform"]["rtl_blocks"]["soc.ext_dma"]["adapters"]["axi"]["bind"] = "cluster.tcdm"
    rep = run_scenario(ext_dma(edit), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "soc.ext_dma" in rep.error and "initiator port 'axi' (cluster.tcdm) read" in rep.error
    assert "at 0x1c020000, which no target of cluster.tcdm answers" in rep.error
    assert not alive(rep.extra["rtl"]["blocks"]["soc.ext_dma"]["pid"])


@pytest.mark.parametrize("key, value, message", [
    (("adapters", "axi", "bind"), "l2", "is an initiator: bind it to the target that serves "
                                        "it, one of soc, cluster, cluster.tcdm (got 'l2')"),
    (("adapters", "irq", "bind"), "cluster.event_unit", "bind it to 'host'"),
    (("busy",), "evt_o_x", "busy: 'evt_o_x' must be a 1-bit output of cluster_dma"),
])
def test_bad_bindings_are_scenario_errors(key, value, message):
    def edit(d):
        node = d["platform"]["rtl_blocks"]["soc.ext_dma"]
        for k in key[:-1]:
            node = node[k]
        node[key[-1]] = value
    with pytest.raises(ScenarioError) as e:
        run_scenario(ext_dma(edit), plots=False)
    assert message in str(e.value) and "rtl_ext_dma_variant.yaml:" in str(e.value)


@pytest.mark.slow(reason="an unknown interrupt name fails its task: test_voyager_marsellus.py; the RTL block's "
                         "interrupt by its name: test_block_with_initiators_and_interrupt_from_its_port_map")
def test_waiting_for_an_unknown_interrupt_fails_the_task(tmp_path):
    def edit(d):
        d["workload"]["tasks"][1]["accesses"][4] = {"wait_irq": "soc.ext_dma.irqq"}
    rep = run_scenario(ext_dma(edit), out_dir=tmp_path, plots=False)
    assert rep.status == "failed"
    assert "unknown interrupt 'soc.ext_dma.irqq'" in rep.tasks["copy_in"]["error"]
    assert "soc.ext_dma.irq" in rep.tasks["copy_in"]["error"]


def test_input_wire_init_drives_the_block(peripherals, tmp_path):
    """wire_in with init 1: obi_mem's random grant stalls and response delays are on; the
    SRAM answers the same data, and its accesses take more RTL cycles."""
    base = peripherals

    def edit(d):
        d["platform"]["rtl_blocks"]["soc.obi_sram"]["adapters"]["bp"]["init"] = 1
    rep = run_scenario(variant(edit), out_dir=tmp_path / "b", plots=False)
    assert rep.status == "passed", rep.error
    assert rep.tasks["sram_fill"]["reads"] == base.tasks["sram_fill"]["reads"]
    slow = rep.extra["rtl"]["blocks"]["soc.obi_sram"]["rtl_cycles"]
    assert slow > base.extra["rtl"]["blocks"]["soc.obi_sram"]["rtl_cycles"]
