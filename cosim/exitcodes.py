"""The ``cosim`` exit codes (the CLI's docstring says when each applies).

A module of its own, importing nothing, so the CLI and its early signal handlers know them
without loading the report (rich, tlm, numpy)."""
from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_SCENARIO_ERROR = 2
EXIT_SIMULATION_ERROR = 3
#: an internal error (a bug: any exception that is not a user mistake) shares code 3
EXIT_INTERNAL_ERROR = EXIT_SIMULATION_ERROR
EXIT_DISTRIBUTED_ERROR = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
