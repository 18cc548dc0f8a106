"""What an RTL block's waveform holds: a time window and a signal scope.

cocotb's Verilator main dumps every signal at every time step from the start. Ours
(``cpp/verilator_main.cpp``, cocotb's file plus two options) dumps only time steps inside
``--trace-start``/``--trace-stop`` and only signals under ``--trace-scope`` (``$dumpvars``
semantics, ``--trace-depth`` levels). :func:`harness_runner` builds models with it; a
scenario asks for a window and a scope in ``outputs.waves`` (``cosim run --waves-window``,
``--waves-scope``; docs/rtl.md, "Waveforms").

Times are the RTL block's own time line (the simulator's ps, which starts at 0 when the
block's process starts), which is what a waveform viewer shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from tlm.units import parse_time

#: our Verilator main, compiled into every model this package builds
HARNESS = Path(__file__).resolve().parent / "cpp" / "verilator_main.cpp"


def harness_runner(run: Callable[..., int] | None = None) -> Any:
    """cocotb's Verilator runner, building with :data:`HARNESS` instead of cocotb's main;
    ``run(cmd, cwd=, env=, stdout=) -> exit code`` runs each build step when given (a
    :class:`cosim.rtl.progress.BuildWatch`: heartbeats and a deadline)."""
    import cocotb_tools.config
    from cocotb_tools.runner import Verilator
    stock = str(cocotb_tools.config.share_dir / "lib" / "verilator" / "verilator.cpp")

    class _Harnessed(Verilator):
        def _execute_cmds(self, cmds, cwd, stdout=None):  # type: ignore[override]
            if run is None:
                return super()._execute_cmds(cmds, cwd, stdout)
            for cmd in cmds:
                code = run(cmd, cwd=cwd, env=self.env, stdout=stdout)
                if code != 0:
                    raise RuntimeError(f"Command failed with return code: {code}")

        def _build_command(self):  # type: ignore[override]
            cmds = super()._build_command()
            swapped = [[str(HARNESS) if arg == stock else arg for arg in cmd] for cmd in cmds]
            if swapped == cmds:   # cocotb moved its main: say so instead of losing the window
                raise RuntimeError(f"cocotb's Verilator build no longer compiles {stock}; "
                                   "cosim/rtl/waves.py must learn its new main")
            return swapped
    return _Harnessed()


@dataclass(frozen=True)
class WaveSelection:
    """The part of a run a waveform records: ``[start_ps, stop_ps]`` and the signals under
    ``scope`` (a dotted path below the top module), ``depth`` levels deep."""

    start_ps: int = 0
    stop_ps: int | None = None
    scope: str | None = None
    depth: int = 99

    @classmethod
    def from_outputs(cls, outputs: Mapping[str, Any], toplevel: str) -> "WaveSelection":
        """From a scenario's ``outputs`` (``waves: {window: [a, b], scope: s, depth: n}``,
        checked by the schema and the validator before any build)."""
        spec = outputs.get("waves") or {}
        window = spec.get("window")
        start, stop = (parse_time(window[0]), parse_time(window[1])) if window else (0, None)
        scope = spec.get("scope")
        return cls(start, stop, f"{toplevel}.{scope}" if scope else None, int(spec.get("depth", 99)))

    def args(self) -> list[str]:
        """The simulator's command-line options (ps = the builds' time precision)."""
        out: list[str] = []
        if self.start_ps:
            out += ["--trace-start", str(self.start_ps)]
        if self.stop_ps is not None:
            out += ["--trace-stop", str(self.stop_ps)]
        if self.scope:
            out += ["--trace-scope", self.scope, "--trace-depth", str(self.depth)]
        return out
