"""RTL blocks inside a scenario: ``platform.models: {<path>: rtl | shadow}``.

:func:`attach_models` (called by ``cosim.runner.build`` right after the platform is built)
builds each swapped block (cached), starts its Verilated simulation under cocotb in a
child process (:mod:`cosim.rtl.serve`, own process group, killed with us) and hooks a
transactor into the TLM block. The two sides talk over ZeroMQ (``ipc://`` in a private
temporary directory, msgpack messages) with the window protocol of
:class:`cosim.rtl.adapters.driver.WindowDriver`; every receive has a wall-time deadline and
every job a cycle limit, so a dead or stuck child is an error naming the block, the
simulated time and (when the adapters know it) the stuck signal, never a hang.

* ``rtl``: the RTL does the work. For the RBE, at each job start (the TLM register file
  has validated a TRIGGERed context) the transactor takes a debug snapshot of the whole
  TCDM and sends the job's registers and the image; the child programs them through the
  HWPE port and runs the job against a memory loaded with the image, recording the bytes
  the RTL wrote; the TLM side then waits the RTL's cycle count on the cluster clock,
  writes back exactly those bytes (debug writes) and ends the job like the model (event,
  statistics, energy). Data are therefore the RTL's; time is the RTL's, measured without
  TCDM contention (the child's TCDM always grants).
* ``shadow``: the model stays in charge of data and time; the RTL receives the same jobs
  from the same snapshot; at each job end the bytes the RTL wrote are compared with the
  model's outputs and the first divergence (simulated time, address, expected, actual)
  is reported.

The report (``report["extra"]["rtl"]``) has one entry per block (RTL cycles vs the model's
estimate per job and in total, relative difference, divergence, wave file) and a summary
table. Options (timeouts, cycle limits, wave directory; test-only fault injection) come
from :class:`RtlOptions`, by default from the JSON in ``$TLM_COSIM_RTL_OPTIONS``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from tlm.units import fmt_time

from .options import MODES, RtlOptions, WAVES_DIR_ENV
from .registry import kind_of, transactor_class


class RtlModels:
    """The RTL blocks of one run (``run.rtl``): ``report()`` and ``close()``."""

    def __init__(self, blocks: dict[str, Any]):
        self.blocks = blocks

    def close(self) -> None:
        errors = []
        for b in self.blocks.values():
            try:
                b.close()
            except Exception as e:  # noqa: BLE001 - close every child regardless
                errors.append(e)
        if errors:
            raise errors[0]

    def report(self, owned: Any = None) -> dict:
        """``{"blocks": {path: entry}, "table": ...}`` of the blocks ``owned(path)`` accepts
        (all by default: in a split run each process reports the blocks it owns)."""
        blocks = {path: b.report() for path, b in self.blocks.items()
                  if owned is None or owned(path)}
        return {"blocks": blocks, "table": rtl_table(blocks)}


def rtl_table(blocks: dict[str, dict]) -> dict:
    """The summary table of the report's RTL block entries."""
    rows = []
    for path, r in sorted(blocks.items()):
        div = "-"
        if r["model"] == "shadow":
            d = r["divergence"]
            div = "none" if d is None else (
                f"{d['at']} at {d['time']}: {d.get('word_address', d['address'])} "
                f"expected {d['expected']} actual {d['actual']}")
        rows.append([path, r["model"], f"{r['count']} {r['unit']}", r["rtl_cycles"],
                     r["model_cycles"] or "-",
                     "-" if r["rel_diff"] is None else f"{100 * r['rel_diff']:+.2f} %",
                     div, r["waves"] or "-"])
    return {"columns": ["block", "model", "transactions", "RTL cycles", "model cycles", "diff",
                        "divergence", "waves"], "rows": rows,
            "caption": "\n".join(_model_column_note(path, r) for path, r in sorted(blocks.items()))}


def _model_column_note(path: str, r: dict) -> str:
    """What ``path``'s model cycles are and, with its clock known, what the difference
    costs in simulated time (so the table agrees with the run's simulated time)."""
    note = f"{path}: model cycles = {r.get('estimate') or 'none'}"
    period = r.get("period_ps")
    if period and r["model_cycles"] and r["rtl_cycles"] != r["model_cycles"]:
        d = r["rtl_cycles"] - r["model_cycles"]
        note += (f"; RTL - model = {d:+,} cycles = {'+' if d > 0 else '-'}"
                 f"{fmt_time(abs(d) * period)} at {1e6 / period:g} MHz")
    return note


def _waves_dir(run: Any, options: RtlOptions, out_dir: Path | None) -> Path:
    if options.waves_dir:
        return Path(options.waves_dir)
    if os.environ.get(WAVES_DIR_ENV):
        return Path(os.environ[WAVES_DIR_ENV])
    if out_dir is not None:          # the run's output folder, next to report.json
        return Path(out_dir)
    from ..outdir import scenario_out_dir      # outputs.dir or out/<safe name>-<stamp>
    return scenario_out_dir(run.sc)


def default_wave_format() -> str:
    """``fst`` when the C++ compiler finds the lz4 headers Verilator's FST writer needs
    (compressed: far smaller than VCD), else ``vcd``."""
    return "fst" if _have_lz4() else "vcd"


def _have_lz4() -> bool:
    """Can the C++ compiler find ``lz4.h`` (Verilator's FST writer needs it)?"""
    import subprocess
    cxx = os.environ.get("CXX", "c++")
    try:
        r = subprocess.run([cxx, "-E", "-x", "c++", "-"], input="#include <lz4.h>\n",
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return True   # let the build say what is wrong
    return r.returncode == 0


def attach_models(run: Any, swappable: Mapping[str, str], waves: str | None = None,
                  options: RtlOptions | None = None, out_dir: Path | None = None) -> RtlModels:
    """Swap in the RTL blocks ``run.sc.models`` names (``rtl``/``shadow``); ``swappable``
    maps the platform's path patterns to RTL kinds (:mod:`cosim.rtl.registry`). Builds and
    starts their child processes; schedules no simulator activity."""
    sc = run.sc
    options = options or RtlOptions.from_env()
    from .toolchain import ToolchainError, setup
    wanted = [(p, m) for p, m in sorted(sc.models.items()) if m != "tlm"]
    added = sorted(sc.rtl_blocks)
    try:
        setup()
    except ToolchainError as e:
        if not wanted:
            raise sc.error(f"RTL block {added[0]} needs the RTL toolchain: {e}",
                           ("platform", "rtl_blocks", added[0])) from None
        path = wanted[0][0]
        raise sc.error(f"model {sc.models.get(path)!r} for {path} needs the RTL toolchain: {e}",
                       ("platform", "models", path)) from None
    # the wave format is the user's choice (--waves): a wrong one is a usage error (exit 2)
    from ..scenario.errors import ScenarioError
    if waves not in (None, "vcd", "fst"):
        raise ScenarioError(f"waves must be 'vcd' or 'fst', not {waves!r}", key="--waves")
    if waves == "fst" and not _have_lz4():
        raise ScenarioError("FST waves need the lz4 headers to build the RTL with tracing "
                            "(Debian: apt-get install liblz4-dev); use --waves vcd", key="--waves")
    wdir = _waves_dir(run, options, out_dir) if waves else None
    blocks: dict[str, Any] = {}
    try:
        for path, mode in wanted:
            kind = kind_of(swappable, path)
            if kind is None or mode not in MODES:  # check_models refuses these first
                raise sc.error(f"model {mode!r} is not available for {path}",
                               ("platform", "models", path))
            blocks[path] = transactor_class(kind)(run, path, mode, waves=waves, options=options, waves_dir=wdir)
        if sc.rtl_blocks:
            from .transactors.portmapped import PortMappedBlock
            for path, spec in sorted(sc.rtl_blocks.items()):
                blocks[path] = PortMappedBlock(run, path, spec, waves=waves, options=options,
                                               waves_dir=wdir)
    except BaseException:
        for b in blocks.values():
            b.close()
        raise
    return RtlModels(blocks)
