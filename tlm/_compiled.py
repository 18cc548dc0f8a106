"""Which kernel runs: the mypyc-compiled ``tlm.kernel`` or its pure-Python source.

Importing this module (``tlm/__init__.py`` does it first) decides, before anything imports
``tlm.kernel``. Python prefers an extension module to the ``.py`` beside it, so the
compiled kernel runs whenever the install built it, except when

- ``TLM_COSIM_PURE_PYTHON`` is set (to anything but ``0``): the source runs, even with the
  compiled module present (to compare the two, or to debug the kernel with pdb);
- the compiled module is older than ``tlm/kernel.py`` (edited since the last
  ``pip install -e .``): running stale compiled code would silently ignore the edit, so the
  source runs and a warning says to reinstall;
- the compiled module fails to import: the source runs, with a warning.

:func:`kernel_info` reports the choice (``cosim --version`` prints it).
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from typing import NamedTuple

__all__ = ["PURE_ENV", "KernelInfo", "kernel_info"]

PURE_ENV = "TLM_COSIM_PURE_PYTHON"
_MODULE = "tlm.kernel"
_HERE = Path(__file__).resolve().parent
_SOURCE = _HERE / "kernel.py"
# a wheel install writes the source and the compiled module moments apart, in either order
_MTIME_SLACK = 2.0


class KernelInfo(NamedTuple):
    """The active kernel: ``compiled`` and a one-line description (why, when pure Python)."""

    compiled: bool
    description: str

    def __str__(self) -> str:
        return self.description


def _compiled_file() -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        f = _HERE / f"kernel{suffix}"
        if f.exists():
            return f
    return None


def _load_source() -> None:
    """Import ``tlm.kernel`` from its ``.py`` file, whatever lies beside it."""
    spec = importlib.util.spec_from_file_location(_MODULE, _SOURCE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[_MODULE]
        raise
    setattr(sys.modules["tlm"], "kernel", mod)  # what the import system does for a submodule


def _select() -> str:
    """Import ``tlm.kernel`` (compiled or source) and say why, when it is the source."""
    compiled = _compiled_file()
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        _load_source()
        return f"{PURE_ENV} is set"
    if compiled is None:
        return "not compiled at install time: no C compiler or no mypyc"
    if _SOURCE.stat().st_mtime > compiled.stat().st_mtime + _MTIME_SLACK:
        why = "the compiled kernel is older than tlm/kernel.py; rebuild: pip install -e ."
        warnings.warn(f"tlm: {why}; running the pure-Python kernel", RuntimeWarning, stacklevel=2)
        _load_source()
        return why
    try:
        importlib.import_module(_MODULE)
    except ImportError as e:
        why = f"the compiled kernel failed to import: {e}"
        warnings.warn(f"tlm: {why}; running the pure-Python kernel", RuntimeWarning, stacklevel=2)
        _load_source()
        return why
    return ""


_WHY_PURE = _select()


def kernel_info() -> KernelInfo:
    """Which kernel this process runs: ``compiled (mypyc)`` or ``pure Python (why)``."""
    path = getattr(sys.modules[_MODULE], "__file__", None) or ""
    if not path.endswith(".py"):
        return KernelInfo(True, "compiled (mypyc)")
    return KernelInfo(False, f"pure Python ({_WHY_PURE or 'source module'})")
