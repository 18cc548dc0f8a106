"""Build and run the open RBE RTL (pulp-platform/rbe, vendored in rtl/third_party/rbe-rtl)
in its ideal-memory harness (tests/rtl/rbe_open_top.sv, tests/rtl/rbe_open_tb.py).

:func:`block` is the Verilated model (sources in elaboration order from the vendored
src_files.yml lists, Verilator flags the third-party RTL needs); :func:`measure` runs a list
of jobs on it (one simulator per worker, cases split round-robin) and returns the testbench's
rows (case + cycles + TCDM traffic). The build is cached by content hash (cosim.rtl.build).
"""
from __future__ import annotations

import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "rtl" / "third_party" / "rbe-rtl"
HARNESS = Path(__file__).resolve().parent / "rbe_open_top.sv"

# the files rbe_top_wrap elaborates, packages and interfaces first (as the packages'
# src_files.yml order them); hwpe_stream_tcdm_fifo_store.sv is not vendored (SOURCES.yaml)
SOURCES = [
    "tech_cells_generic/src/rtl/tc_clk.sv",
    "tech_cells_generic/src/deprecated/cluster_clk_cells.sv",
    "hwpe-stream/rtl/hwpe_stream_package.sv",
    "hwpe-stream/rtl/hwpe_stream_interfaces.sv",
    "hwpe-stream/rtl/basic/hwpe_stream_assign.sv",
    "hwpe-stream/rtl/basic/hwpe_stream_demux_static.sv",
    "hwpe-stream/rtl/basic/hwpe_stream_merge.sv",
    "hwpe-stream/rtl/basic/hwpe_stream_fence.sv",
    "hwpe-stream/rtl/basic/hwpe_stream_split.sv",
    "hwpe-stream/rtl/fifo/hwpe_stream_fifo_scm.sv",
    "hwpe-stream/rtl/fifo/hwpe_stream_fifo_scm_test_wrap.sv",
    "hwpe-stream/rtl/fifo/hwpe_stream_fifo.sv",
    "hwpe-stream/rtl/streamer/hwpe_stream_addressgen_v3.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_package.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_interfaces.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_regfile.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_regfile_latch.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_regfile_latch_test_wrap.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_slave.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_seq_mult.sv",
    "hwpe-ctrl/rtl/hwpe_ctrl_uloop.sv",
    "hci/rtl/common/hci_package.sv",
    "hci/rtl/common/hci_interfaces.sv",
    "hci/rtl/core/hci_core_fifo.sv",
    "hci/rtl/core/hci_core_assign.sv",
    "hci/rtl/core/hci_core_sink.sv",
    "hci/rtl/core/hci_core_source.sv",
    "hci/rtl/core/hci_core_mux_static.sv",
] + [f"rbe/rtl/rbe_{m}.sv" for m in (
    "package", "accumulators_scm", "accumulator_normquant", "normquant", "normquant_multiplier",
    "input_register", "binconv_sop", "binconv_scale", "binconv_block", "binconv_column",
    "binconv_array", "engine_core", "engine", "ctrl_fsm", "ctrl", "streamer", "top", "top_wrap")]

# third-party PULP RTL (docs/rtl.md): warnings are not errors, blocking and non-blocking
# writes to one struct, delays in interface tasks; -O1 builds in half the time of -O3 and the
# harness runs few cycles
BUILD_ARGS = ["-Wno-fatal", "-Wno-BLKANDNBLK", "--no-timing", "-Wno-lint", "-Wno-style",
              "-O1", "--x-assign", "0", "--x-initial", "0"]


def block():
    """The Verilated open RBE with its ideal-memory harness."""
    from cosim.rtl import RtlBlock
    return RtlBlock.make("rbe_open", [VENDOR / s for s in SOURCES] + [HARNESS], "rbe_open_top",
                         includes=[VENDOR / "hwpe-stream" / "rtl", VENDOR / "hwpe-ctrl" / "rtl"],
                         build_args=BUILD_ARGS)


def measure(cases: list[dict], workers: int = 1, timeout: float = 3600) -> list[dict]:
    """Run ``cases`` on the RTL; rows in the order of ``cases``."""
    from cosim.rtl import build, run_tests
    built = build(block())
    workers = max(1, min(workers, len(cases)))
    parts = [cases[k::workers] for k in range(workers)]

    def one(k: int) -> list[dict]:
        with tempfile.TemporaryDirectory(prefix="rbe_open_") as tmp:
            report = Path(tmp) / "report.json"
            run = run_tests(built, "tests.rtl.rbe_open_tb", test_dir=Path(tmp) / "run",
                            python_paths=[ROOT], timeout=timeout,
                            extra_env={"RBE_OPEN_CASES": json.dumps(parts[k]),
                                       "RBE_OPEN_REPORT": str(report)})
            if not run.passed:
                raise RuntimeError(f"open RBE testbench failed:\n{run.failures()}")
            return json.loads(report.read_text())

    with ThreadPoolExecutor(workers) as ex:
        results = list(ex.map(one, range(workers)))
    rows: list[dict] = [{}] * len(cases)
    for k, part in enumerate(results):
        for j, row in enumerate(part):
            rows[k + j * workers] = row
    return rows


if __name__ == "__main__":
    import sys
    case = dict(mode=sys.argv[1] if len(sys.argv) > 1 else "3x3", h_out=3, w_out=3, k_in=32,
                k_out=32, w=2, i=4, o=4)
    print(json.dumps(measure([case], workers=int(os.environ.get("WORKERS", "1")))))
