"""The output folder (cosim/outdir.py): ``--out`` checked before simulating, atomic writes
that never follow a symbolic link nor leave the folder, an earlier report kept as
report.prev.json, and Ctrl-C in a single-process run: exit 130 with a partial report."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim.outdir import OutputError, keep_previous, prepare_out_dir, write_atomic

from support.scenario_files import long_dma_scenario

ROOT = Path(__file__).resolve().parents[1]


def cosim(*args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def _one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


# ---------------------------------------------------------------- bad --out, before the run

def test_empty_out_is_refused(tmp_path):
    r = cosim("run", "quickstart", "--out", "", "-q", cwd=tmp_path)
    assert "--out" in _one_error_line(r) and "empty" in r.stderr
    assert list(tmp_path.iterdir()) == []          # nothing written in the current directory


def test_out_is_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    line = _one_error_line(cosim("run", "scenarios/quickstart.yaml", "--out", str(f), "-q"))
    assert str(f) in line and "not a directory" in line
    assert f.read_text() == "x"


def test_a_file_in_the_way_of_the_out_folder(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    out = f / "run"
    line = _one_error_line(cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "-q"))
    assert str(out) in line and "cannot create the output folder" in line


def test_out_checked_before_simulating(tmp_path, monkeypatch):
    """A bad folder stops the run before anything is built or simulated."""
    import cosim.launch as launch
    from cosim.scenario import load_scenario

    def no_run(*a, **k):
        raise AssertionError("simulated despite a bad --out")
    monkeypatch.setattr(launch, "run_here", no_run)
    monkeypatch.setattr(launch, "run_partitioned", no_run)
    f = tmp_path / "afile"
    f.write_text("x")
    sc = load_scenario(str(ROOT / "scenarios" / "quickstart.yaml"))
    for bad in (f, f / "sub", ""):
        with pytest.raises(OutputError):
            launch.run_scenario(sc, out_dir=bad, plots=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_prepare_out_dir_creates_and_leaves_no_probe(tmp_path):
    out = prepare_out_dir(tmp_path / "a" / "b")
    assert out.is_dir() and list(out.iterdir()) == []
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputError, match="dangling"):
        prepare_out_dir(dangling)
    assert not (tmp_path / "nowhere").exists()


# ---------------------------------------------------------------- atomic, confined writes

@pytest.mark.parametrize("name", ["../escape.json", "/tmp/abs.json", "sub/x.json", "..", ".", "",
                                  "a\\b.json"])
def test_names_escaping_the_folder_are_refused(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(OutputError, match="plain file name"):
        write_atomic(out, name, b"x")
    assert list(out.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_atomic_write_leaves_no_temp_files(tmp_path):
    write_atomic(tmp_path, "a.json", "one")
    write_atomic(tmp_path, "a.json", b"two")
    write_atomic(tmp_path, "b.bin", lambda f: f.write(b"three"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin"]
    assert (tmp_path / "a.json").read_text() == "two"
    assert (tmp_path / "b.bin").read_bytes() == b"three"


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path):
    write_atomic(tmp_path, "a.json", "old")

    def boom(f):
        f.write(b"half")
        raise RuntimeError("writer failed")
    with pytest.raises(RuntimeError):
        write_atomic(tmp_path, "a.json", boom)
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
    assert (tmp_path / "a.json").read_text() == "old"


def test_symlink_target_is_refused_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").symlink_to(victim)
    with pytest.raises(OutputError, match="symbolic link"):
        write_atomic(out, "report.json", "{}")
    assert victim.read_text() == "precious" and (out / "report.json").is_symlink()


def test_cli_refuses_a_symlinked_report_before_the_run(tmp_path):
    victim = tmp_path / "victim"
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").symlink_to(victim)
    line = _one_error_line(cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "-q",
                                 "--no-plots"))
    assert str(out / "report.json") in line and "symbolic link" in line
    assert not victim.exists() and (out / "report.json").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]


# ---------------------------------------------------------------- report.prev.json

def test_keep_previous(tmp_path):
    assert keep_previous(tmp_path) is None
    (tmp_path / "report.json").write_text("first")
    assert keep_previous(tmp_path) == tmp_path / "report.prev.json"
    assert (tmp_path / "report.prev.json").read_text() == "first"
    assert not (tmp_path / "report.json").exists()


def test_rerun_keeps_the_previous_report(tmp_path):
    out = tmp_path / "out"
    r1 = cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "-q", "--no-plots")
    assert r1.returncode == 0, r1.stderr
    assert "report.prev.json" not in r1.stdout + r1.stderr
    first = (out / "report.json").read_text()
    r2 = cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "-q", "--no-plots")
    assert r2.returncode == 0, r2.stderr
    notes = [ln for ln in r2.stdout.splitlines() if "report.prev.json" in ln]
    assert notes == [f"note: kept the previous report as {out / 'report.prev.json'}"]
    assert (out / "report.prev.json").read_text() == first
    second = json.loads((out / "report.json").read_text())
    assert second["status"] == "passed" and second["outputs"]["report"] == str(out / "report.json")
    assert not [p for p in out.iterdir() if p.name.startswith(".")]   # no temp files left


def test_json_output_stays_one_document_with_a_note(tmp_path):
    out = tmp_path / "out"
    cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "-q", "--no-plots")
    r = cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "--json", "--no-plots")
    assert r.returncode == 0
    assert json.loads(r.stdout)["status"] == "passed"
    assert "report.prev.json" in r.stderr


# ---------------------------------------------------------------- Ctrl-C: partial report

@pytest.mark.slow(reason="the partial report of a signalled run: "
                         "test_run_failures.py::test_sigterm_single_process_writes_a_partial_report; SIGINT's exit "
                         "130: test_run_failures.py::test_signal_while_loading_exits_at_once_in_one_line[2-130]")
def test_sigint_single_process_writes_a_partial_report(tmp_path):
    scenario = long_dma_scenario(tmp_path / "long.yaml")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cosim.cli", "run", str(scenario), "--out", str(out), "-q",
         "--no-plots"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not out.exists():              # the folder is made after loading, before the build
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never created its output folder"
            time.sleep(0.05)
        time.sleep(3.0)                       # past the build, into the simulation
        assert proc.poll() is None, "the run ended before the signal: make the scenario longer"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < 30
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "interrupted" and rep["exit_code"] == 130
    assert "interrupted by SIGINT" in rep["error"]
    assert 0 < rep["sim_time_ps"]
    assert f"{rep['scenario']['name']}: interrupted" in stdout
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_force_replaces_the_previous_report(tmp_path):
    out = tmp_path / "out"
    (out).mkdir()
    (out / "report.json").write_text("earlier")
    r = cosim("run", "scenarios/quickstart.yaml", "--out", str(out), "-q", "--no-plots", "--force")
    assert r.returncode == 0, r.stderr
    assert "report.prev.json" not in r.stdout + r.stderr
    assert not (out / "report.prev.json").exists()
    assert json.loads((out / "report.json").read_text())["status"] == "passed"
