"""The compiled (mypyc) kernel and its pure-Python fallback (setup.py, tlm/_compiled.py).

CI (.ci/run) sets TLM_COSIM_REQUIRE_COMPILED=1: on a machine with a C compiler the install
must have built the compiled kernel, and a silent fallback to pure Python fails here.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import weakref
from pathlib import Path

import pytest

import tlm
from tlm import Simulator
from tlm._compiled import PURE_ENV

ROOT = Path(__file__).resolve().parents[1]
TLM_DIR = Path(tlm.__file__).resolve().parent
COMPILED = sorted(TLM_DIR.glob("kernel.*.so")) + sorted(TLM_DIR.glob("kernel.*.pyd"))
#: what builds the kernel at install time (setup.py asks sysconfig's CC, like pip does)
HAVE_CC = shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is not None


@pytest.fixture
def compiled_kernel() -> Path:
    """The compiled kernel module: the README promises it wherever a C compiler is present, so
    only an install without one may skip (the pure-Python kernel is tested everywhere)."""
    if not COMPILED:
        if HAVE_CC:
            pytest.fail("a C compiler is present, yet the install built no compiled kernel "
                        "(pip install -v -e . shows why)")
        pytest.skip("no C compiler: the install could not compile the kernel")
    return COMPILED[0]


def _python(code: str, *, pure: bool, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    if path is not None:
        env["PYTHONPATH"] = str(path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=path or ROOT, timeout=120)


def test_the_active_kernel_is_the_one_this_install_and_environment_call_for():
    """Pure Python when forced; else the compiled build when the install made one (CI, with
    TLM_COSIM_REQUIRE_COMPILED=1, insists that it did); otherwise pure Python, saying why."""
    info = tlm.kernel_info()
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        assert not info.compiled and info.description == f"pure Python ({PURE_ENV} is set)"
        return
    if os.environ.get("TLM_COSIM_REQUIRE_COMPILED") == "1":
        assert info.compiled, f"the install did not build the compiled kernel: {info}"
    if info.compiled:
        assert COMPILED and not tlm.kernel.__file__.endswith(".py")
    else:       # no build (no C compiler), or a build older than the source
        assert tlm.kernel.__file__.endswith("kernel.py") and info.description.startswith("pure Python (")
        assert not COMPILED or "older than" in info.description


def test_pure_python_switch_runs_the_source_even_beside_a_compiled_module():
    out = _python("import tlm, tlm.kernel; print(tlm.kernel.__file__); print(tlm.kernel_info())", pure=True)
    assert out.returncode == 0, out.stderr
    path, info = out.stdout.splitlines()
    assert path.endswith("kernel.py")
    assert info == f"pure Python ({PURE_ENV} is set)"


def test_without_the_switch_the_compiled_kernel_runs_if_built():
    out = _python("import tlm; print(tlm.kernel_info().compiled)", pure=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(bool(COMPILED))


def test_cosim_version_names_the_active_kernel():
    for pure, expected in ((True, "kernel: pure Python"),
                           (False, "kernel: compiled (mypyc)" if COMPILED else "kernel: pure Python")):
        out = _python("from cosim.cli import main; main(['--version'])", pure=pure)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[0] == f"cosim {tlm.__version__}"
        assert lines[1].startswith(expected), lines


def test_a_stale_compiled_kernel_is_not_used(tmp_path, compiled_kernel):
    """An edit of tlm/kernel.py after the build must not be silently ignored."""
    shutil.copytree(TLM_DIR, tmp_path / "tlm", ignore=shutil.ignore_patterns("__pycache__"))
    src = tmp_path / "tlm" / "kernel.py"
    edited = compiled_kernel.stat().st_mtime + 60
    os.utime(src, (edited, edited))
    out = _python("import tlm; print(tlm.kernel_info())", pure=False, path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("pure Python (the compiled kernel is older than tlm/kernel.py")
    assert "running the pure-Python kernel" in out.stderr


def test_compiled_and_pure_kernels_give_the_same_run_hash(tmp_path, compiled_kernel):
    hashes = []
    for pure in (False, True):
        out_dir = str(tmp_path / ("pure" if pure else "compiled"))
        out = _python("from cosim.cli import main; import sys; "
                      f"sys.exit(main(['run', 'quickstart', '-q', '--no-plots', '--out', {out_dir!r}]))",
                      pure=pure)
        assert out.returncode == 0, out.stdout + out.stderr
        m = re.search(r"hash ([0-9a-f]{64})", out.stdout)
        assert m, out.stdout
        hashes.append(m.group(1))
    assert hashes[0] == hashes[1]


def test_a_simulator_can_be_weakly_referenced():
    """components/pmu keys its ledgers by simulator in a WeakKeyDictionary; a compiled class
    takes no weak references unless it has a Python base class (tlm/_waiting.py)."""
    sim = Simulator()
    ref = weakref.ref(sim)
    assert ref() is sim
    sim.extra_attribute = 1   # and, like any Python object, takes new attributes
    assert sim.extra_attribute == 1
