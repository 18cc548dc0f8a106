"""The README's main-job command runs end to end and reports what it should."""
import json
import subprocess
import sys


def test_demo_runs_and_reports(tmp_path):
    trace = tmp_path / "trace.json"
    r = subprocess.run([sys.executable, "-m", "cosim.demo", "--seed", "3", "--trace", str(trace)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "data check: passed" in r.stdout
    assert "ADDRESS_ERROR" in r.stdout and "demo.streamer" in r.stdout
    # the SRAM revoked its DMI region; only the ROM's (0x1a000000-0x1a001fff) remains
    assert "0x1a000000-0x1a001fff" in r.stdout and "0x1c000000" not in r.stdout.split("still holds")[1]
    events = json.loads(trace.read_text())["traceEvents"]
    tracks = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert tracks == {"demo.streamer", "demo.copier"}
    assert sum(1 for e in events if e.get("ph") == "X" and e["name"] == "write") == 2000


def test_demo_is_deterministic():
    outs = [subprocess.run([sys.executable, "-m", "cosim.demo", "--seed", "5"], capture_output=True,
                           text=True, timeout=120).stdout for _ in range(2)]
    assert outs[0] == outs[1]
