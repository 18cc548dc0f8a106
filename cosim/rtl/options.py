"""What every RTL swap shares: the modes, the options of the child processes, the error."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from tlm.errors import SimulationError

#: models other than ``tlm``
MODES = ("rtl", "shadow")
OPTIONS_ENV = "TLM_COSIM_RTL_OPTIONS"
WAVES_DIR_ENV = "TLM_COSIM_RTL_WAVES_DIR"
#: environment variable holding a child's JSON configuration (read by cosim.rtl.serve)
CONFIG_ENV = "TLM_COSIM_RTL_SERVE"


class RtlModelError(SimulationError):
    """An RTL block swapped into a scenario failed (build, child process, protocol)."""


@dataclass
class RtlOptions:
    """How the RTL children are run (none of it changes results)."""

    #: wall seconds to wait for any reply of a running child
    timeout_s: float = 120.0
    #: wall seconds for a child to start (simulator load, Python imports, reset)
    startup_timeout_s: float = 120.0
    #: a job may take at most factor * model estimate + extra RTL cycles
    max_cycles_factor: float = 4.0
    max_cycles_extra: int = 10_000
    #: cycles the HWPE port waits for gnt / r_valid before AdapterTimeout
    adapter_timeout_cycles: int = 1000
    #: where wave files go (default: $TLM_COSIM_RTL_WAVES_DIR, the run's output folder,
    #: the scenario's outputs.dir, else out/<scenario>-rtl-<time stamp>)
    waves_dir: str | None = None
    #: test-only fault injection, per block path (see accelerators/rbe/rtl/handler.py)
    inject: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> "RtlOptions":
        text = os.environ.get(OPTIONS_ENV)
        if not text:
            return cls()
        try:
            data = json.loads(text)
            return cls(**data)
        except (ValueError, TypeError) as e:   # the user's setting: a usage error (exit 2)
            from ..scenario.errors import ScenarioError
            raise ScenarioError(f"not valid: {e}", key=f"${OPTIONS_ENV}") from None
