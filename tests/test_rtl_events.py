"""RTL blocks on the cluster peripheral bus and their events bound into the cluster Event
Unit and the fabric controller's interrupt lines (issue 22), with rtl/gaps/evt_timer.sv:
a countdown that pulses ``evt_o`` N + 1 cycles after its COUNT register is written."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rtl_scenario_support import _isolated  # noqa: F401
from components.cluster.event_unit import CORE_REG
from components.marsellus.facts import IRQ_LINES, MEMORY_MAP

ROOT = Path(__file__).resolve().parents[1]
EU = MEMORY_MAP["event_unit"].base
WINDOW = 0x10201400          # the free 1 KiB between the RBE's and the cluster DMA's windows
PERIOD_NS = 2.5
LINE = 20


def scenario(bind: str, *, path: str = "cluster.evt", window: str = f"0x{WINDOW:08X}+0x400",
             tasks: list | None = None, firmware: bool = False):
    from cosim.scenario import load_scenario_text
    data = {
        "name": "rtl_events_test", "seed": 1,
        "platform": {"preset": "marsellus", "rtl_blocks": {path: {
            "sources": ["../rtl/gaps/evt_timer.sv"], "top": "evt_timer",
            "clock": {"port": "clk_i", "period_ns": PERIOD_NS},
            "reset": {"port": "rst_ni", "active_low": True, "cycles": 4},
            "busy": "busy_o", "quantum_ns": 200,
            "adapters": {"cfg": {"kind": "hwpe_periph", "prefix": "periph_", "bind": window},
                         "evt": {"kind": "irq_out", "port": "evt_o", "bind": bind}}}}},
        "workload": {"tasks": tasks or [{"op": "wait", "time": "10 ns"}]},
    }
    if firmware:
        data["workload"]["firmware"] = "firmware/build/hello.elf"
    return load_scenario_text(yaml.safe_dump(data, sort_keys=False),
                              ROOT / "scenarios" / "rtl_events_test.yaml")


def test_cluster_block_event_wakes_a_core_waiting_on_the_event_unit(tmp_path):
    """The host programs the block through the cluster peripheral bus and then reads core 0's
    EVT_WAIT, which sleeps until a line in its mask fires: the read returns exactly the
    block's line, and ends after the RTL's pulse."""
    from cosim.runner import build, execute
    n = 300
    tasks = [{"op": "mmio", "id": "prog", "accesses": [
        {"write": EU + CORE_REG["EVT_MASK"], "value": 1 << LINE},
        {"read": WINDOW + 8, "expect": 0x5EB70001},                    # ID through the bus
        {"write": WINDOW, "value": n},
        {"read": EU + CORE_REG["EVT_WAIT"], "expect": 1 << LINE},      # sleeps until the event
        {"read": WINDOW + 4, "expect": 1}]}]                            # EVENTS
    run = build(scenario(f"cluster.event_unit.{LINE}", tasks=tasks), out_dir=tmp_path)
    try:
        execute(run)
        assert run.error is None, run.error
        blk = run.rtl.blocks["cluster.evt"]
        assert blk.module.path == "cluster.evt" and blk.bus == "cluster"
        assert blk.report_extra()["interrupts"]["evt"]["bound"] == f"cluster.event_unit.{LINE}"
        pulses = blk.irq_times["evt"]
        assert len(pulses) == 1
        assert run.platform.cluster.event_unit.line_counts[LINE] == 1
        assert sum(run.platform.cluster.event_unit.line_counts) == 1
        # the pulse comes n + 1 cycles after the cycle that takes the COUNT write
        write = next(a for a in blk.items if a["write"] and a["address"] == f"0x{WINDOW:08x}")
        cycle = round(PERIOD_NS * 1000)
        assert (n + 1) * cycle <= pulses[0] - write["start_ps"] <= \
            (n + 2 + write["rtl_cycles"]) * cycle
        rec = run.host.records["prog"]
        assert rec.end > pulses[0]
    finally:
        run.close()


def test_block_event_reaches_the_fabric_controller_line(tmp_path):
    """Bound to fc.gpio, the pulse latches the FC's gpio line (hello.elf never enables it,
    so it stays pending in mip); no other line is touched by it."""
    from cosim.runner import build, execute
    line = IRQ_LINES["gpio"][0]
    tasks = [{"op": "mmio", "accesses": [{"write": WINDOW, "value": 40},
                                         {"read": WINDOW + 4, "until": 1}]}]
    run = build(scenario("fc.gpio", tasks=tasks, firmware=True), out_dir=tmp_path)
    try:
        before = run.platform.fc.mip
        execute(run)
        assert run.error is None, run.error
        assert not before >> line & 1 and run.platform.fc.mip >> line & 1
        assert run.rtl.blocks["cluster.evt"].irq_times["evt"] and \
            len(run.rtl.blocks["cluster.evt"].irq_times["evt"]) == 1
    finally:
        run.close()


@pytest.mark.parametrize("path, window, bind, message", [
    ("cluster.evt", "0x10201400+0x400", "cluster.event_unit.32",
     "'cluster.event_unit.32' names no Event Unit line; give 0..31 or one of sw0"),
    ("cluster.evt", "0x10201400+0x400", "cluster.event_unit.rbee",
     "names no Event Unit line"),
    ("cluster.evt", "0x10201400+0x400", "fc.gpoi",
     "the fabric controller has no interrupt line 'gpoi' (did you mean 'gpio'?)"),
    ("cluster.evt", "0x10201400+0x400", "fc.5", "the fabric controller has no interrupt line 5"),
    ("cluster.evt", "0x10201400+0x400", "fc.gpio",
     "'fc.gpio' needs the fabric controller, which runs only with 'workload.firmware'"),
    ("cluster.evt", "0x10201400+0x400", "cluster.eu.3", "bind it to 'host'"),
    ("cluster.evt", "0x1A120000+0x400", "host",
     "window [0x1a120000, 0x1a120400) is not on the cluster peripheral bus (the cluster "
     "peripheral bus spans [0x10200000, 0x10202000)"),
    ("cluster.evt", "0x10201000+0x400", "host",
     "window [0x10201000, 0x10201400) overlaps rbe [0x10201000"),
    ("fc.evt", "0x10201400+0x400", "host", "must be named soc.<name>"),
])
def test_bad_placements_and_bindings_are_located_errors(path, window, bind, message):
    from cosim.rtl.spec import block_spec
    from cosim.scenario import ScenarioError
    with pytest.raises(ScenarioError) as e:
        sc = scenario(bind, path=path, window=window)
        block_spec(sc, path, sc.rtl_blocks[path])
    text = str(e.value)
    assert message in text, text
    assert "rtl_events_test.yaml" in text and f"platform.rtl_blocks.{path}" in text
