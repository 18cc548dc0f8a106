"""Test-only platforms with a bug, registered through the platform registry (the way a
Python platform is added, CONTRIBUTING.md): importing this module adds them.

* ``buggy_model``: MARSELLUS plus a model process that divides by zero at 1 us of
  simulated time (a bug in a model, caught by the kernel).
* ``buggy_build``: a builder that raises KeyError (a bug while building the platform).
* ``buggy_params``: its parameter table raises RuntimeError (a bug before any run).
* ``leaky_model``: MARSELLUS plus a model process that holds 1 MiB more (resident) every
  microsecond of simulated time, forever (a model that leaks: tests/test_unbounded.py).

``python tests/support/buggy_platforms.py ARGS...`` runs ``cosim ARGS...`` with them.
"""
from __future__ import annotations

import sys
from pathlib import Path

from cosim.platforms import PLATFORMS, PlatformEntry

_M = PLATFORMS["marsellus"]


def _buggy_model(sim, overrides, firmware, echo=None):
    plat = _M.build(sim, overrides, firmware, echo)

    async def faulty():
        await sim.wait(1_000_000)
        return 1 // 0

    sim.spawn(faulty(), "soc.faulty_model")
    return plat


def _leaky_model(sim, overrides, firmware, echo=None):
    plat = _M.build(sim, overrides, firmware, echo)
    held = []

    async def leak():
        while True:
            await sim.wait(1_000_000)
            held.append(bytearray(1 << 20))     # zero-filled: every page resident

    sim.spawn(leak(), "soc.leaky_model")
    return plat


def _buggy_build(sim, overrides, firmware, echo=None):
    return {}["missing_block"]


def _buggy_params(firmware):
    raise RuntimeError("parameters table is broken")


PLATFORMS["buggy_model"] = PlatformEntry(_buggy_model, _M.params, _M.memory_map, "test: a model bug",
                                         complete=_M.complete)
PLATFORMS["leaky_model"] = PlatformEntry(_leaky_model, _M.params, _M.memory_map, "test: a model that leaks",
                                         complete=_M.complete)
PLATFORMS["buggy_build"] = PlatformEntry(_buggy_build, _M.params, _M.memory_map, "test: a builder bug",
                                         complete=_M.complete)
PLATFORMS["buggy_params"] = PlatformEntry(_buggy_build, _buggy_params, _M.memory_map,
                                          "test: a parameter table bug")

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from cosim.cli import main
    sys.exit(main(sys.argv[1:]))
