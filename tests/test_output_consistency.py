"""Output that agrees with itself (issue 34 item 4): exit codes as documented, tables
readable when piped, one definition of each figure on the terminal and in report.json,
units where a number needs one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


from cosim.cli import main

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------ exit codes
def test_parameters_that_do_not_suit_the_rtl_are_a_user_mistake(tmp_path: Path, capsys) -> None:
    """A block whose parameters its RTL cannot take is refused before the build with a
    located error and exit code 2 (docs/scenarios.md, "Exit codes"), not a simulation
    error's 3; no report is written."""
    rc = main(["run", "quickstart", "--set", "cluster.dma.model=rtl", "--set", "cluster.dma.beat_bytes=4",
               "--out", str(tmp_path / "o"), "--no-plots", "-q"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "quickstart.yaml" in err and "platform.models.cluster.dma" in err
    assert "beat_bytes = 4 is not 8" in err and "simulation error" not in err
    assert not (tmp_path / "o" / "report.json").exists()


# ------------------------------------------------------------------------ piped output
def _piped(*args: str, columns: str | None = None) -> subprocess.CompletedProcess:
    """``cosim ARGS`` with stdout a pipe (not a terminal), as in a CI log or `| less`."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)


def test_piped_run_summary_cuts_no_name(tmp_path: Path) -> None:
    """Piped, rich would assume 80 columns and cut cells ("transac…", "placem…"): every
    table is printed whole, each component path and column name intact on its row."""
    r = _piped("run", "quickstart", "--out", str(tmp_path), "--no-plots")
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    rep = json.loads((tmp_path / "report.json").read_text())
    lines = r.stdout.splitlines()
    for path in rep["utilisation"]:
        assert any(ln.split("│")[0].strip() == path for ln in lines), path
    header = next(ln for ln in lines if "span µs" in ln)
    assert [c.strip() for c in header.split("┃")] == rep["extra"]["layers"]["table"]["columns"]


def test_narrow_console_folds_instead_of_cutting(tmp_path: Path) -> None:
    """With COLUMNS too narrow for a table, its cells fold onto more lines, never an ellipsis."""
    r = _piped("run", "quickstart", "--out", str(tmp_path), "--no-plots", columns="40")
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    rows = [ln for ln in r.stdout.splitlines() if "│" in ln]
    assert rows and max(len(ln) for ln in rows) <= 40


def test_piped_voyager_layers_one_row_per_layer() -> None:
    """`cosim voyager --layers` is a table: piped, one line per operator, names whole."""
    r = _piped("voyager", "resnet18", "--array", "16x16", "--layers")
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    from accelerators.voyager.model import config as C
    from accelerators.voyager.model import zoo
    from accelerators.voyager.model.perf import network_perf
    names = [lp.name for lp in network_perf(zoo.model("resnet18"), C.array_config("16x16")).layers]
    rows = [ln.split("│") for ln in r.stdout.splitlines() if ln.count("│") == 4]
    assert [row[0].strip() for row in rows] == names
