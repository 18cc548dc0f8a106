"""What the README promises per machine kind, for the few tests that cannot run everywhere:
on x86-64 Linux (the kind CI runs on) they must run, so a missing capability there fails the
test instead of skipping it; elsewhere they skip with the reason the README gives."""
from __future__ import annotations

import platform
import sys

import pytest

X86_64_LINUX = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def require_native_counter() -> None:
    """The native x86-64 instruction counter: skipped off x86-64 Linux, required on it."""
    from components.soc_core.counter import native_counter
    if not X86_64_LINUX:
        pytest.skip("native counter needs x86-64 Linux (the portable counter is tested everywhere)")
    if native_counter() is None:
        pytest.fail("x86-64 Linux, yet the native counter did not start (mmap/mprotect of its stub failed)")
