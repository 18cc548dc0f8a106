"""Output that agrees with itself (issue 34 item 4): exit codes as documented, tables
readable when piped, one definition of each figure on the terminal and in report.json,
units where a number needs one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


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


@pytest.fixture(scope="module")
def quickstart_piped(tmp_path_factory) -> tuple[str, dict]:
    """quickstart's terminal summary (stdout a pipe) and its report.json."""
    out = tmp_path_factory.mktemp("quickstart")
    r = _piped("run", "quickstart", "--out", str(out), "--no-plots")
    assert r.returncode == 0, r.stderr
    return r.stdout, json.loads((out / "report.json").read_text())


def _cells(stdout: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is ``first``."""
    for ln in stdout.splitlines():
        cells = [c.strip() for c in ln.split("│")]
        if cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in:\n{stdout}")


def test_piped_run_summary_cuts_no_name(quickstart_piped) -> None:
    """Piped, rich would assume 80 columns and cut cells ("transac…", "placem…"): every
    table is printed whole, each component path and column name intact on its row."""
    stdout, rep = quickstart_piped
    assert "…" not in stdout
    lines = stdout.splitlines()
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


# ------------------------------------------------------------------------ one definition per figure
def test_busy_and_mac_utilisation_are_two_named_figures(quickstart_piped) -> None:
    """The components table's ``busy`` is report.json's ``utilisation`` (share of the run
    busy); the accelerators table's ``MAC utilisation`` is ``extra.accelerators.<path>
    .utilisation`` (ideal / achieved cycles). Each printed figure is its JSON value."""
    stdout, rep = quickstart_piped
    headers = [[c.strip() for c in ln.split("┃")] for ln in stdout.splitlines() if "┃" in ln]
    assert ["path", "busy", "bytes moved"] in headers
    assert ["path", "jobs", "cycles", "ideal cycles", "MAC utilisation"] in headers
    busy = rep["utilisation"]["cluster.rbe"]
    assert _cells(stdout, "cluster.rbe")[1] == f"{100 * busy:.1f} %"
    acc = rep["extra"]["accelerators"]["cluster.rbe"]
    assert acc["utilisation"] == acc["ideal_cycles"] / acc["cycles"]
    row = [ln for ln in stdout.splitlines() if ln.startswith(" cluster.rbe") and ln.count("│") == 4]
    assert len(row) == 1
    assert [c.strip() for c in row[0].split("│")][1:] == [
        f"{acc['jobs']:,}", f"{acc['cycles']:,}", f"{acc['ideal_cycles']:,}", f"{100 * acc['utilisation']:.1f} %"]
    assert abs(busy - acc["utilisation"]) > 0.1     # two meanings, visibly different here


# ------------------------------------------------------------------------ units
def test_show_writes_times_and_frequencies_with_units_that_set_takes_back(tmp_path: Path) -> None:
    """`cosim show` prints ``sample_period: 1 us`` (not 1000000) and ``600 MHz``; every such
    value, passed back through ``--set``, resolves to the same parameters."""
    import yaml

    from cosim.platforms import resolved_parameters
    from cosim.scenario import load_scenario
    r = _piped("show", "quickstart")
    assert r.returncode == 0, r.stderr
    shown = yaml.safe_load(r.stdout)["parameters"]
    assert shown["pmu"]["sample_period"] == "1 us" and shown["cdc"]["soc_fmax"] == "600 MHz"
    with_units = [f"{path}.{k}={v}" for path, vals in shown.items() for k, v in vals.items()
                  if isinstance(v, str) and v.endswith((" ps", " ns", " us", " ms", " s", " Hz", " MHz"))]
    assert len(with_units) > 10
    back = resolved_parameters(load_scenario("quickstart", with_units))
    assert back == resolved_parameters(load_scenario("quickstart"))


def test_regs_check_says_one_line_on_success() -> None:
    r = _piped("regs", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["every file generated from the register maps is fresh"]
