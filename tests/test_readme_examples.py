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
    if words[1] in ("run", "sweep"):
        words += ["--out", str(out), "--no-plots"]
    return words


@pytest.mark.slow
def test_every_readme_example_runs(tmp_path):
    cmds = examples()
    assert len(cmds) >= 8 and all(c.startswith("cosim ") for c in cmds)
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    for i, cmd in enumerate(cmds):
        words = _redirected(cmd, tmp_path / f"ex{i}")
        # through a shell, as pasted (scenarios/*.yaml is a glob); `cosim` is the installed script
        r = subprocess.run(" ".join(shlex.quote(w) if "*" not in w else w for w in words), shell=True, cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (cmd, r.stdout[-2000:], r.stderr[-2000:])
