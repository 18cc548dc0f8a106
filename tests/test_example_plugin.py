"""The example plug-in (examples/minigemm; issue 30, item 3): a package outside tlm-cosim,
installed into a folder of its own (``pip install --target``) and found only through its entry
points, joins a YAML-composed platform, runs a register-programmed job, and takes an ONNX
model's layers through the unit pipeline beside FlexiSAGA, bit-exact against onnxruntime —
with no file of tlm-cosim naming it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "minigemm"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example installed the way a user installs a plug-in, into a private folder."""
    target = tmp_path_factory.mktemp("minigemm-site")
    got = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--target", str(target), str(EXAMPLE)], capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stdout + got.stderr
    assert list(target.glob("tlm_cosim_minigemm-*.dist-info/entry_points.txt"))
    return target


def cosim(args: list[str], cwd: Path, site: Path | None) -> subprocess.CompletedProcess:
    path = [str(site)] if site is not None else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)]), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env)


def test_the_plugin_is_listed(site: Path) -> None:
    out = cosim(["list", "accelerators"], ROOT, site)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^minigemm\s+MiniGEMM", out.stdout, re.M), out.stdout
    assert re.search(r"^minigemm\s+MiniGEMM standalone", cosim(["list", "platforms"], ROOT, site).stdout, re.M)


def test_its_own_subcommand_runs_its_cycle_model(site: Path) -> None:
    out = cosim(["minigemm", "16", "72", "64", "--rows", "4", "--cols", "4"], ROOT, site)
    assert out.returncode == 0, out.stderr
    # setup + ceil(M/R) * ceil(N/C) output tiles x (K + R + C - 2): written from the docstring
    assert f"{4 + 4 * 16 * (72 + 4 + 4 - 2)} cycles" in out.stdout
    bad = cosim(["minigemm", "16", "0", "64"], ROOT, site)
    assert bad.returncode == 2 and "M, K, N must be >= 1" in bad.stdout


def test_a_job_programmed_through_its_registers(site: Path, tmp_path: Path) -> None:
    out = cosim(["run", str(EXAMPLE / "scenarios" / "gemm_registers.yaml"), "--out", str(tmp_path / "o"),
                 "--no-plots", "-q"], tmp_path, site)
    assert out.returncode == 0, out.stdout + out.stderr
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    assert all(c["passed"] for c in rep["checks"]), rep["checks"]
    acc = rep["extra"]["accelerators"]["soc.minigemm"]
    assert acc["jobs"] == 1 and acc["cycles"] == 4 + 2 * 3 * (20 + 4 + 4 - 2)    # 6x20 @ 20x9 on 4x4
    assert subprocess.run([sys.executable, str(EXAMPLE / "scenarios" / "data" / "make_gemm.py"), "--check"],
                          capture_output=True, timeout=60).returncode == 0


def test_onnx_layers_go_to_the_unit_that_wins(site: Path, tmp_path: Path) -> None:
    out = cosim(["run", str(EXAMPLE / "scenarios" / "mixed_onnx.yaml"), "--out", str(tmp_path / "o"),
                 "--no-plots", "-q"], tmp_path, site)
    assert out.returncode == 0, out.stdout + out.stderr
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    checks = {c["name"]: c["passed"] for c in rep["checks"]}
    assert checks["network == onnxruntime (bit for bit)"] and checks["network == numpy reference"], checks
    rows = rep["extra"]["layers"]["rows"]
    placed = {r["layer"]: r["placement"] for r in rows}
    assert set(placed.values()) == {"flexisaga", "minigemm"}, placed       # each unit wins somewhere
    for r in rows:                       # the chosen unit is the first (fastest) of the figures
        assert r["reason"].startswith(f"fastest of: {r['placement']} "), r["reason"]
        assert "flexisaga" in r["reason"] and "minigemm" in r["reason"]
    jobs = {a["kind"]: a["jobs"] for a in rep["extra"]["accelerators"].values()}
    assert jobs == {"flexisaga": sum(p == "flexisaga" for p in placed.values()),
                    "minigemm": sum(p == "minigemm" for p in placed.values())}


def test_without_the_plugin_its_block_type_is_unknown(tmp_path: Path) -> None:
    out = cosim(["validate", str(EXAMPLE / "scenarios" / "gemm_registers.yaml")], tmp_path, None)
    assert out.returncode == 2
    assert "unknown platform 'minigemm'" in out.stdout + out.stderr


def test_no_file_of_tlm_cosim_names_the_plugin() -> None:
    naming = [p for d in ("tlm", "components", "cosim", "accelerators") for p in (ROOT / d).rglob("*.py")
              if "minigemm" in p.read_text(encoding="utf-8").lower()]
    assert naming == [] and "minigemm" not in (ROOT / "pyproject.toml").read_text().lower()
