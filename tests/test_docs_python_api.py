"""docs/python-api.md runs as written: its Python blocks, in order, in one namespace."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"


def test_every_python_block_of_the_api_page_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)          # the page writes under ./out/api
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC}:block{i}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "passed 0" in out and "Marsellus 0" in out and "None True" in out
    assert (tmp_path / "out" / "api" / "low" / "report.json").is_file()
