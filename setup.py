"""Build hook: compile the kernel's hot module with mypyc when that is possible.

Everything about the package is in pyproject.toml; this file only adds the optional
extension modules. The compiled kernel is an accelerator, never a requirement: without
mypyc, without a working C compiler, or with ``TLM_COSIM_PURE_PYTHON=1`` set at install
time, the install goes on as pure Python (a warning says why) and runs the same sources
interpreted. ``tlm.kernel_info()`` and ``cosim --version`` say which kernel is active.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

# Keep this list short: compiled modules have restrictions (CONTRIBUTING.md, "Compiled
# modules"). tlm/_waiting.py must stay interpreted (its @types.coroutine waiters).
COMPILED = ["tlm/kernel.py"]
PURE_ENV = "TLM_COSIM_PURE_PYTHON"


def _warn(msg: str) -> None:
    # pip shows a build's stderr only with -v; the run-time check (tlm.kernel_info(),
    # cosim --version) is what tells a user which kernel they got
    print(f"WARNING: tlm-cosim: {msg}; installing the pure-Python kernel", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """build_ext that falls back to pure Python when the C build fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # noqa: BLE001 - any compiler/linker failure means: no extension
            _warn(f"compiling the kernel failed ({type(e).__name__}: {str(e)[:300]})")
            self._remove_outputs()

    def _remove_outputs(self) -> None:
        # a half-built pair (the kernel module without its kernel__mypyc library, or the
        # reverse) would not import: remove every extension file this build made
        for ext in self.extensions:
            rel = self.get_ext_filename(self.get_ext_fullname(ext.name))
            for root in (self.build_lib, "."):
                f = Path(root) / rel
                if f.exists():
                    f.unlink()


def _extensions() -> list:
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        _warn(f"{PURE_ENV} is set")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as e:
        _warn(f"mypyc is not available ({e})")
        return []
    try:
        # The isolated build environment has no numpy or yaml: their types are Any here, and
        # errors in the modules the kernel's package pulls in (not compiled) are not ours to
        # report (`mypy` in the test suite checks them). No cache: a .mypy_cache left by a
        # development environment could hide an error this environment would see.
        opts = ["--ignore-missing-imports", "--follow-imports=silent", "--cache-dir", os.devnull]
        return mypycify([*opts, *COMPILED], opt_level="3")
    except (Exception, SystemExit) as e:  # mypyc exits (SystemExit) on type errors
        _warn(f"mypyc could not translate the kernel ({type(e).__name__}: {e})")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
