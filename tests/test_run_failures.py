"""How a run ends when something goes wrong (issue 16): internal errors (exit 3, one line,
the traceback in report.json), SIGINT/SIGTERM before and during the simulation (130/143),
results rescued when the output folder fails after the run, YAML tags on collections.
Real processes and signals; every wait has a deadline."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim.launch import run_scenario
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text

from support.scenario_files import long_dma_scenario

ROOT = Path(__file__).resolve().parents[1]
BUGGY = ROOT / "tests" / "support" / "buggy_platforms.py"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}


def _stderr_lines(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.strip()]


def _buggy(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """``cosim ARGS`` with the test-only buggy platforms registered."""
    return subprocess.run([sys.executable, str(BUGGY), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=ENV)


def _scenario(tmp_path: Path, preset: str) -> Path:
    f = tmp_path / f"{preset}.yaml"
    f.write_text(f"name: {preset}\ndescription: a bug\nseed: 1\nplatform:\n  preset: {preset}\n"
                 "workload:\n  tasks:\n    - {op: dma, id: d0, src: l2+0x0, dst: tcdm+0x0, size: 6000}\n"
                 "limits: {max_time: 1 ms}\n")
    return f


# ---------------------------------------------------------------- internal errors: exit 3

@pytest.mark.parametrize("preset, headline, frame", [
    ("buggy_model", "soc.faulty_model at 1 us: process raised ZeroDivisionError: integer division "
     "or modulo by zero", "faulty"),
    ("buggy_build", "internal error (KeyError) while building the platform: 'missing_block'",
     "_buggy_build"),
])
def test_internal_error_exit_3_one_line_traceback_in_report(tmp_path, preset, headline, frame):
    out = tmp_path / "out"
    r = _buggy("run", str(_scenario(tmp_path, preset)), "--out", str(out), "-q", "--no-plots")
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    assert _stderr_lines(r) == [f"error: {headline} (traceback in {out / 'report.json'})"]
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "error" and rep["exit_code"] == 3
    assert rep["error"].startswith(headline)
    assert rep["error_traceback"].startswith("Traceback") and frame in rep["error_traceback"]


def test_a_modelled_error_has_no_traceback(tmp_path):
    """A time limit, a firmware fault, a protocol rule: errors of the model, not bugs."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "run", "quickstart", "--out", str(out), "-q",
                        "--no-plots", "--set", "limits.max_wall=0.000001"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 3, (r.stdout, r.stderr)
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "error" and "max_wall" in rep["error"] and rep["error_traceback"] is None
    assert r.stderr == ""


def test_internal_error_without_a_run(tmp_path):
    """No output folder yet: one line naming the file, the traceback in a temporary file."""
    f = _scenario(tmp_path, "buggy_params")
    r = _buggy("validate", str(f), "quickstart")
    assert r.returncode == 3, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"internal error: {f}: RuntimeError: parameters table is broken "
                               "(traceback: ")
    assert lines[1].startswith("ok ") and "quickstart" in lines[1]       # the next file is checked
    trace = Path(lines[0].rsplit("(traceback: ", 1)[1].rstrip(")"))
    try:
        assert "_buggy_params" in trace.read_text()
    finally:
        trace.unlink()
    r = _buggy("show", str(f))
    assert r.returncode == 3 and "Traceback" not in r.stderr
    [line] = _stderr_lines(r)
    assert line.startswith("internal error: RuntimeError: parameters table is broken (traceback: ")
    Path(line.rsplit("(traceback: ", 1)[1].rstrip(")")).unlink()


# ---------------------------------------------------------------- signals

def _start(scenario: Path, out: Path, *extra: str) -> subprocess.Popen:
    # FORCE_COLOR: rich draws the progress bar into the pipe; it starts with the simulation
    return subprocess.Popen([sys.executable, "-m", "cosim.cli", "run", str(scenario), "--out", str(out),
                             "--no-plots", *extra], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**ENV, "FORCE_COLOR": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


#: the progress bar's simulated time ('28.6799 ms'): drawn after the first slice simulated
SIMULATING = re.compile(rb"long_dma.*?\d (?:ns|us|ms) ")


def _wait_for_simulation(proc: subprocess.Popen, deadline_s: float = 120) -> None:
    """Read stdout until the progress bar shows a simulated time (the simulation runs)."""
    os.set_blocking(proc.stdout.fileno(), False)
    seen, deadline = b"", time.monotonic() + deadline_s
    while not SIMULATING.search(seen):
        assert proc.poll() is None, "the run ended before the simulation started"
        assert time.monotonic() < deadline, "the simulation never started"
        chunk = proc.stdout.read()
        if chunk:
            seen += chunk
        else:
            time.sleep(0.05)
    os.set_blocking(proc.stdout.fileno(), True)


def _finish(proc: subprocess.Popen, sig: int, timeout: float = 60) -> tuple[str, str]:
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert time.monotonic() - t0 < timeout
    return _plain(stdout), _plain(stderr)


def _plain(b: bytes) -> str:
    """Without the terminal's colour codes (FORCE_COLOR)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b.decode(errors="replace"))


def _simulating(tmp_path: Path, out: Path) -> subprocess.Popen:
    """A long run started and seen simulating (killed if it is not)."""
    proc = _start(long_dma_scenario(tmp_path / "long.yaml", 4000), out)
    try:
        _wait_for_simulation(proc)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


def test_sigterm_single_process_writes_a_partial_report(tmp_path):
    out = tmp_path / "out"
    proc = _simulating(tmp_path, out)
    stdout, stderr = _finish(proc, signal.SIGTERM)
    assert proc.returncode == 143, (stdout, stderr)
    assert "Traceback" not in stderr and stderr == ""
    rep = json.loads((out / "report.json").read_text())
    assert rep["status"] == "interrupted" and rep["exit_code"] == 143
    assert rep["error"].startswith("interrupted by SIGTERM at simulated time ")
    assert rep["sim_time_ps"] > 0
    assert "INTERRUPTED" in stdout and "exit code 143" in stdout


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow(
    reason="the same handler as [2-130]; SIGTERM's exit 143: test_sigterm_single_process_writes_a_partial_report"))])
def test_signal_while_loading_exits_at_once_in_one_line(tmp_path, sig, code):
    """A large scenario takes seconds to load: a signal then stops everything, one line."""
    scenario = long_dma_scenario(tmp_path / "big.yaml", 20000)
    out = tmp_path / "out"
    proc = _start(scenario, out)
    time.sleep(2.0)        # the imports are done (about 0.5 s), the loading is not (> 5 s)
    assert not out.exists() and proc.poll() is None, "loading ended before the signal: make it longer"
    stdout, stderr = _finish(proc, sig)
    assert proc.returncode == code, (stdout, stderr)
    assert stderr.splitlines() == [f"interrupted by {signal.Signals(sig).name}"]
    assert not out.exists()


# ---------------------------------------------------------------- the output folder fails after the run

def _rescued(report_path: str) -> dict:
    p = Path(report_path)
    assert p.parent.name.startswith("cosim-rescue-") and p.parent.parent == Path(
        __import__("tempfile").gettempdir())
    try:
        return json.loads(p.read_text())
    finally:
        shutil.rmtree(p.parent)


def test_out_dir_replaced_during_the_run_rescues_the_report(tmp_path):
    """The firmware's first printed line replaces the folder by a file (works as root,
    unlike chmod): the report goes to a rescue folder, the status and exit code stand."""
    out = tmp_path / "out"

    def sabotage(_line):
        if out.is_dir():
            shutil.rmtree(out)
            out.write_text("in the way")
    sc = load_scenario("firmware_hello")
    report = run_scenario(sc, out_dir=out, trace=True, plots=True, echo=sabotage)
    assert report.status == "passed" and report.exit_code == 0
    assert out.read_text() == "in the way"
    assert report.output_error.startswith(f"cannot write into {out}: ")
    assert report.warnings == [f"{report.output_error}; the report was written to "
                               f"{report.outputs['report']}"]
    rep = _rescued(report.outputs["report"])
    assert rep["status"] == "passed" and rep["output_error"] == report.output_error
    assert rep["outputs"] == {"report": report.outputs["report"]}


@pytest.mark.slow(reason="the rescued report: test_out_dir_replaced_during_the_run_rescues_the_report; a partial "
                         "report on SIGTERM: test_sigterm_single_process_writes_a_partial_report")
def test_cli_out_dir_removed_then_sigterm_rescues_the_partial_report(tmp_path):
    out = tmp_path / "out"
    proc = _simulating(tmp_path, out)
    shutil.rmtree(out)                  # removed mid-run: nothing to write into
    stdout, stderr = _finish(proc, signal.SIGTERM)
    assert proc.returncode == 143, (stdout, stderr)
    [line] = [ln for ln in stderr.splitlines() if ln.strip()]
    prefix = f"warning: cannot write into {out}: No such file or directory; the report was written to "
    assert line.startswith(prefix), line
    rep = _rescued(line[len(prefix):])
    assert rep["status"] == "interrupted" and rep["exit_code"] == 143
    assert not out.exists()


# ---------------------------------------------------------------- YAML tags on collections

@pytest.mark.parametrize("value, tag", [("!foo [1, 2]", "!foo"), ("!bar {a: 1}", "!bar"),
                                        ("!!set {a}", "tag:yaml.org,2002:set"),
                                        ("!!omap [{a: 1}]", "tag:yaml.org,2002:omap"),
                                        ("!!python/tuple [1]", "tag:yaml.org,2002:python/tuple")])
def test_tags_on_collections_are_refused_with_a_line(value, tag):
    text = f"name: t\nplatform: marsellus\nworkload:\n  tasks: []\nchecks:\n  - {value}\n"
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(text, Path("s.yaml"))
    assert e.value.message == f"unsupported YAML tag {tag!r}"
    assert e.value.file == "s.yaml" and e.value.line == 6 and e.value.key == "checks[0]"


def test_plain_collection_tags_are_accepted():
    text = ("name: t\nplatform: !!map {preset: marsellus}\nworkload:\n  tasks: !!seq\n"
            "    - {op: wait, time: 1 us}\n")
    assert load_scenario_text(text, Path("s.yaml")).preset == "marsellus"


# ---------------------------------------------------------------- fuzzer findings, fixed

@pytest.mark.parametrize("text, message", [
    ("name: !!float platform\n", "cannot read 'platform' as a YAML float"),
    ("name: !!timestamp x\n", "cannot read 'x' as a YAML timestamp"),
    ("name: 2001-01-01\n", "'2001-01-01' reads as a YAML date, which no scenario value is"),
    ("name: !!binary aGVsbG8=\n", "'aGVsbG8=' reads as a YAML bytes"),
])
def test_odd_scalars_are_located_errors(text, message):
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(text, Path("s.yaml"))
    assert e.value.message.startswith(message) and e.value.line == 1


def test_a_file_name_too_long_is_a_located_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "validate", "firmware_hello", "--set",
                        "workload.firmware=" + "x" * 300], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env={**ENV, "COLUMNS": "400"})
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "workload.firmware: unusable file name 'xxxx" in r.stdout and "(300 characters)" in r.stdout
    assert "File name too long" in r.stdout


def test_a_checked_range_beyond_its_memory_is_a_located_error(tmp_path):
    """Found before the run (validate and run): exit 2 with the check's key, not an internal error."""
    f = tmp_path / "range.yaml"
    f.write_text("name: r\ndescription: r\nplatform: marsellus\nworkload:\n  tasks: [{op: wait, time: 1 us}]\n"
                 "checks:\n  - memory: {at: tcdm+0x0, size: 100000000, equals_memory: l2+0x0}\n")
    for cmd in (["validate", str(f)], ["run", str(f), "-q", "--no-plots", "--out", str(tmp_path / "out")]):
        r = subprocess.run([sys.executable, "-m", "cosim.cli", *cmd], cwd=ROOT, capture_output=True, text=True,
                           timeout=120, env={**ENV, "COLUMNS": "400"})
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert f"error: {f}:7: checks[0].memory.at: the checked range (95.4 MiB at tcdm+0x0) does not fit tcdm" \
            in r.stdout + r.stderr
        assert not (tmp_path / "out" / "report.json").exists()
