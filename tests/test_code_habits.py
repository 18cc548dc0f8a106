"""Code habits the test suite enforces: lint (ruff), types (mypy, strict on tlm/) and the
layering contracts (import-linter: tlm <- components <- cosim, components free of
transports and of any platform's facts, no import cycle inside any package). Each tool reads its configuration from
pyproject.toml; a failure prints the tool's own report. A text scan adds what imports do
not show: no component outside the MARSELLUS composition reads the MARSELLUS facts by path."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _exe(tool: str) -> str:
    exe = shutil.which(tool, path=str(Path(sys.executable).parent)) or shutil.which(tool)
    assert exe, f"{tool} is not installed: `pip install -e '.[test]'` installs it"
    return exe


def _run(tool: str, *args: str) -> None:
    r = subprocess.run([_exe(tool), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{tool} {' '.join(args)} failed:\n{r.stdout[-6000:]}\n{r.stderr[-2000:]}"


def test_ruff_is_clean() -> None:
    _run("ruff", "check", ".")


def test_layering_contracts_hold() -> None:
    _run("lint-imports")


def test_the_cycle_contract_covers_every_package_folder() -> None:
    """The acyclic-siblings contract starts at every root package (it then descends into
    every package folder below)."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    acyclic = [c for c in cfg["contracts"] if c["type"] == "acyclic_siblings"]
    assert len(acyclic) == 1
    assert sorted(acyclic[0]["ancestors"]) == sorted(cfg["root_packages"])
    assert "depth" not in acyclic[0] and "skip_descendants" not in acyclic[0]


def test_the_cycle_contract_counts_deferred_and_type_only_imports(tmp_path: Path) -> None:
    """A cycle closed by an import inside a function, or under TYPE_CHECKING, breaks the
    contract (hiding an import does not remove a cycle); one-way imports keep it."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {"__init__.py": "", "sub/__init__.py": "",
             "a.py": "from . import b\n",
             "b.py": "def f():\n    from . import a\n",
             "sub/c.py": "from . import d\n",
             "sub/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n",
             "e.py": "from .sub import c\n"}
    for name, text in files.items():
        (pkg / name).write_text(text)
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = pkg\n\n[importlinter:contract:cycles]\n"
        "name = cycles\ntype = acyclic_siblings\nancestors = pkg\n")
    r = subprocess.run([_exe("lint-imports"), "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1, r.stdout
    assert "No cycles are allowed in pkg." in r.stdout
    assert "No cycles are allowed in pkg.sub." in r.stdout
    (pkg / "b.py").write_text("def f():\n    return 1\n")
    (pkg / "sub" / "d.py").write_text("X = 1\n")
    r = subprocess.run([_exe("lint-imports"), "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    _run("mypy")


#: a path into the MARSELLUS facts (``marsellus/facts``, ``"marsellus" / "facts"``)
_FACTS_PATH = re.compile(r"""marsellus[/\\]+facts|["']marsellus["']\s*[/,]\s*["']facts["']""")
#: a file name or path literal naming operating_points.yaml (what a reader would open)
_OPS_LITERAL = re.compile(r"""["'][\w./\\-]*operating_points\.yaml["']""")


def facts_reads(text: str, python: bool) -> list[str]:
    """What in ``text`` reaches into the MARSELLUS facts by path: a path into
    ``marsellus/facts`` (any file), or a literal naming operating_points.yaml (Python)."""
    found = [m.group(0) for m in _FACTS_PATH.finditer(text)]
    if python:
        found += [m.group(0) for m in _OPS_LITERAL.finditer(text)]
    return found


def test_facts_scan_detects_reads() -> None:
    assert facts_reads('p = ROOT / "components/marsellus/facts/memory_map.yaml"', True)
    assert facts_reads('p = HERE.parent / "marsellus" / "facts" / "irqs.yaml"', True)
    assert facts_reads('open(Path(x).with_name("operating_points.yaml"))', True)
    assert facts_reads("yaml.safe_load(open('data/operating_points.yaml'))", True)
    assert not facts_reads('"""The chip description (its operating_points.yaml), parsed."""', True)
    assert not facts_reads("# given at reference_vdd (operating_points.yaml)", False)
    assert not facts_reads("from .data import power_spec", True)


def test_only_the_marsellus_composition_reads_its_facts_by_path() -> None:
    """No file under components/ outside components/marsellus/, nor in a family's model
    (accelerators/<family>/model/), names a path into marsellus/facts or opens
    operating_points.yaml: the composition passes the facts."""
    comp = ROOT / "components"
    bad = []
    for f in sorted([*comp.rglob("*"), *ROOT.glob("accelerators/*/model/**/*")]):
        rel = f.relative_to(ROOT)
        if not f.is_file() or rel.parts[:2] == ("components", "marsellus") or "__pycache__" in rel.parts:
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue                       # binaries (ELFs, compiled objects)
        bad += [f"{rel.as_posix()}: {hit}" for hit in facts_reads(text, f.suffix == ".py")]
    assert not bad, "components read the MARSELLUS facts by path:\n" + "\n".join(bad)
