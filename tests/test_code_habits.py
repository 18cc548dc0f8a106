"""Code habits the test suite enforces: lint (ruff), types (mypy, strict on tlm/) and the
layering contract (import-linter: tlm <- components <- cosim, components free of
transports and of any platform's facts). Each tool reads its configuration from
pyproject.toml; a failure prints the tool's own report."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(tool: str, *args: str) -> None:
    exe = shutil.which(tool, path=str(Path(sys.executable).parent)) or shutil.which(tool)
    assert exe, f"{tool} is not installed: `pip install -e '.[test]'` installs it"
    r = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{tool} {' '.join(args)} failed:\n{r.stdout[-6000:]}\n{r.stderr[-2000:]}"


def test_ruff_is_clean() -> None:
    _run("ruff", "check", ".")


def test_layering_contracts_hold() -> None:
    _run("lint-imports")


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    _run("mypy")
