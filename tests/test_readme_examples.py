"""The README's "What you can do with it" commands run as written (outputs redirected into a
temporary folder, plots off): a pasted example never fails."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def examples() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## What you can do with it\n```bash\n(.*?)```", text, re.S)
    assert block, "README.md: the examples block moved"
    return [ln.split("  #", 1)[0].strip() for ln in block.group(1).splitlines() if ln.strip()]


def _redirected(cmd: str, out: Path) -> list[str]:
    """The example's words, writing into ``out`` instead of the checkout."""
    words = shlex.split(cmd)
    if "--out" in words:
        i = words.index("--out")
        del words[i:i + 2]
    # `cosim run ...` or `python -m cosim.cli run ...`
    sub = words[3] if words[:3] == ["python", "-m", "cosim.cli"] and len(words) > 3 else words[1]
    if sub in ("run", "sweep"):
        words += ["--out", str(out), "--no-plots"]
    return words


#: the deadline of one pasted command (a cold Verilator build of a large block included)
COMMAND_S = 600


#: what makes a pasted command long: a sweep, a full-size network (the whole library holds three
#: Tensil ones, compiled to validate them), an RTL build, a benchmark; a test running one is in the
#: slow set (`-m slow`), the others run by default
LONG_COMMAND = re.compile(r"\bsweep\b|resnet|yolo|mobilenet|\brtl_(ext_dma|hwpe_mac|peripherals)\b"
                          r"|\.model=(rtl|shadow)\b|\bbench/|\btensil compile\b|scenarios/\*")


def slow_if_long(*commands: str) -> list[pytest.MarkDecorator]:
    """The marks of a test running ``commands``: ``slow`` if one of them is long."""
    reason = ("a long command; the default set keeps the page's short commands and runs each library "
              "scenario in tests/test_golden_hashes.py")
    return [pytest.mark.slow(reason=reason)] if any(LONG_COMMAND.search(c) for c in commands) else []


def deadline_for(commands: int) -> int:
    """The timeout of a test running ``commands`` pasted commands: all their deadlines and a
    minute more, so that a command's own deadline, which names it, is what fails first."""
    return commands * COMMAND_S + 60


def run_pasted(cmd: str, out: Path, stand_ins: dict[str, Path] | None = None,
               scratch: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` as pasted from the checkout's root (through a shell: ``scenarios/*.yaml`` is
    a glob; ``cosim`` is the installed script), writing into ``out``. Words in ``stand_ins``
    become the files standing in for the reader's, and paths under ``/tmp/`` land in
    ``scratch``, so that parallel runs share no file."""
    ours = {str(p) for p in (stand_ins or {}).values()}
    words = [str((stand_ins or {}).get(w, w)) for w in _redirected(cmd, out)]
    if scratch is not None:     # the command's own /tmp paths, not the files this test made there
        words = [str(scratch / w[len("/tmp/"):]) if w.startswith("/tmp/") and w not in ours
                 and not w.startswith((str(out), str(scratch))) else w for w in words]
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    return subprocess.run(" ".join(shlex.quote(w) if "*" not in w else w for w in words), shell=True, cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=COMMAND_S)


def test_the_readme_has_its_examples():
    cmds = examples()
    assert len(cmds) >= 8 and all(c.startswith("cosim ") for c in cmds)


@pytest.mark.timeout(deadline_for(1))
@pytest.mark.parametrize("cmd", [pytest.param(c, marks=slow_if_long(c)) for c in examples()])
def test_readme_example_runs(cmd, tmp_path):
    r = run_pasted(cmd, tmp_path / "out")
    assert r.returncode == 0, (cmd, r.stdout[-2000:], r.stderr[-2000:])
