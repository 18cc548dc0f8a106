"""Shared fixtures for the kernel and TLM tests: a simulator, a root module, a minimal
initiator with a DMI cache, and a helper that runs one process to completion."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, Coroutine

import pytest

import cosim  # noqa: F401 - one BLAS thread in this process and its children (cosim/threads.py), before numpy loads
from tlm import DmiCache, GenericPayload, InitiatorSocket, Module, Simulator


# test-only code (tests/support: e.g. the distribution tests' platforms, named by builder
# strings such as "support.dist_platforms:ring") must import here and in every process a
# test starts (distributed workers, CLI runs): tests/ goes on sys.path and on PYTHONPATH
TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(
    [TESTS] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
# ... and distributed workers accept the test platforms' builders only because this lists
# them (the documented route for builders outside the package: docs/distributed.md)
os.environ["TLM_COSIM_BUILDERS"] = ",".join(dict.fromkeys(
    ["support.dist_platforms"] + [b for b in os.environ.get("TLM_COSIM_BUILDERS", "").split(",") if b]))


# --- the suite's shape: fast by default, parallel, slow set on request ----------------------
# `python -m pytest` runs on one worker per core (pytest-xdist, `-n auto` in pyproject.toml) and
# leaves out the tests marked `slow` (long fuzzing, cold builds of big RTL, full networks,
# sweeps of many points): `-m slow` runs those, `-m "slow or not slow"` everything, and a slow
# test named on the command line (`pytest tests/test_x.py::test_y`) runs. .ci/run runs both sets.
def _named(config: pytest.Config) -> list[str]:
    """The node ids named on the command line (``file::test``), relative to the root."""
    out = []
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        if sep:
            full = (Path(config.invocation_params.dir) / path).resolve()
            rel = full.relative_to(config.rootpath) if full.is_relative_to(config.rootpath) else full
            out.append(f"{rel.as_posix()}::{rest}")
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.option.markexpr:
        return
    named = _named(config)
    keep, slow = [], []
    for item in items:
        explicit = any(item.nodeid == n or item.nodeid.startswith((n + "[", n + "::")) for n in named)
        (slow if item.get_closest_marker("slow") and not explicit else keep).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = keep


class Initiator(Module):
    """A test initiator: one socket, a DMI cache fed by invalidations, an optional
    backward nb function, and a record of every invalidation it received."""

    def __init__(self, parent, name: str, *, nb_bw=None, optional: bool = False):
        super().__init__(parent, name)
        self.dmi = DmiCache()
        self.invalidations: list[tuple[int, int]] = []
        self.socket = InitiatorSocket(self, "socket", invalidate_direct_mem_ptr=self._inv,
                                      nb_transport_bw=nb_bw, optional=optional)

    def _inv(self, start: int, end: int) -> None:
        self.invalidations.append((start, end))
        self.dmi.invalidate(start, end)

    def payload(self, command, address: int, data=None, length: int | None = None,
                **kw) -> GenericPayload:
        return GenericPayload(command, address, data, length, initiator=self.path, **kw)

    async def access(self, command, address: int, data=None, length: int | None = None,
                     delay: int = 0, **kw) -> tuple[GenericPayload, int]:
        """One b_transport; returns the payload and the annotated delay."""
        p = self.payload(command, address, data, length, **kw)
        return p, await self.socket.b_transport(p, delay)


@pytest.fixture
def sim() -> Simulator:
    return Simulator(seed=1)


@pytest.fixture
def top(sim) -> Module:
    return Module(sim, "top")


@pytest.fixture
def make_initiator() -> Callable[..., Initiator]:
    """``make_initiator(parent, name, nb_bw=None, optional=False)``."""
    return Initiator


@pytest.fixture
def run_proc(sim) -> Callable[..., Any]:
    """``run_proc(coroutine_function, name='proc')``: spawn it, run the simulator to the
    end and return the process's result."""

    def run(fn: Callable[[], Coroutine], name: str = "proc", until: int | None = None) -> Any:
        proc = sim.spawn(fn(), name)
        sim.run(until)
        assert proc.done, f"{name} did not finish"
        return proc.result

    return run
