"""The docs' tables made from the registries (`cosim docs`, cosim/docsgen.py): fresh in the
checkout, a stale or hand-edited one detected and rewritten, an unknown table a located error."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cosim.cli import main
from cosim.docsgen import FILES, ROOT, DocsGenError, render, update
from cosim.platforms import PLATFORMS
from cosim.platforms.composed import BLOCK_TYPES


def _copy(tmp: Path) -> Path:
    for rel in [*FILES, Path("pyproject.toml")]:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp / rel)
    return tmp


def _block(text: str, name: str) -> str:
    m = re.search(rf"<!-- generated: cosim docs {name} -->\n(.*?)<!-- end generated -->", text, re.S)
    assert m, f"no generated block {name!r}"
    return m.group(1)


def test_the_generated_tables_are_fresh():
    stale = update(check=True)
    assert not stale, f"stale generated docs {[str(p) for p in stale]}: run `cosim docs`"


def test_every_registered_name_is_in_its_table():
    """What `cosim list` shows is what the docs list: every block type, platform and
    library scenario, README's sentence included."""
    platforms_md = (ROOT / "docs/platforms.md").read_text(encoding="utf-8")
    types = _block(platforms_md, "block-types")
    assert set(re.findall(r"^\| `(\w+)`", types, re.M)) == set(BLOCK_TYPES)
    assert set(re.findall(r"^\| `(\w+)`", _block(platforms_md, "platforms"), re.M)) == set(PLATFORMS)
    library = {p.stem for p in (ROOT / "scenarios").glob("*.yaml")}
    scenarios_md = (ROOT / "docs/scenarios.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| \[`(\w+)`\]", _block(scenarios_md, "scenarios"), re.M)) == library
    readme = _block((ROOT / "README.md").read_text(encoding="utf-8"), "scenario-names")
    assert readme.startswith(f"{len(library)} scenarios:")
    assert set(re.findall(r"`(\w+)`", readme)) == library


def test_a_stale_table_is_found_and_rewritten(tmp_path):
    root = _copy(tmp_path)     # fresh, as the test above shows of the checkout
    doc = root / "docs/platforms.md"
    doc.write_text(doc.read_text().replace("| `rom` |", "| `romx` |"))
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("`voyager_mini`", "`voyager_mini`, `gone`"))
    assert {str(p) for p in update(root, check=True)} == {"docs/platforms.md", "README.md"}
    assert {str(p) for p in update(root)} == {"docs/platforms.md", "README.md"}
    for rel in FILES:          # rewritten: equal to the checkout's fresh files again
        assert (root / rel).read_text() == (ROOT / rel).read_text(), rel


def test_an_unknown_table_names_file_and_line():
    with pytest.raises(DocsGenError, match=r"x\.md:3: no generated table 'nope'"):
        render("a\nb\n<!-- generated: cosim docs nope -->\nold\n<!-- end generated -->\n", "x.md")


def test_cli_check_says_fresh(capsys):
    assert main(["docs", "--check"]) == 0
    assert "fresh" in capsys.readouterr().out


def test_the_builder_shown_in_platforms_md_is_the_example_plugins():
    """docs/platforms.md "Adding a block type" quotes examples/minigemm's block type; the
    quote (its comments aside) must be the file's code."""
    def code(text: str) -> list[str]:
        start = text.index("from __future__ import annotations\n\nfrom typing import Any")
        end = text.index('deployer="units")', start) + len('deployer="units")')
        return [re.sub(r"\s*#.*", "", line).rstrip() for line in text[start:end].splitlines()]
    doc = (ROOT / "docs/platforms.md").read_text(encoding="utf-8")
    src = (ROOT / "examples/minigemm/minigemm/blocks.py").read_text(encoding="utf-8")
    assert code(doc) == code(src)
