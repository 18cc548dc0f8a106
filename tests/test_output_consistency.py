"""Output that agrees with itself (issue 34 item 4): exit codes as documented, tables
readable when piped, one definition of each figure on the terminal and in report.json,
units where a number needs one."""
from __future__ import annotations

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
