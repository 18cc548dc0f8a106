"""Layering: the MARSELLUS facts (memory map, interrupt lines, operating points) are read by
the composition only. Block models under ``components/`` (and a family's model,
``accelerators/<family>/model/``) receive their regions, lines, clocks and chip description
from whoever composes them; only
``components/marsellus/platform.py``, ``components/marsellus/memory_system.py``, the
MARSELLUS calibration report ``components/marsellus/calibrate.py`` (it composes a PMU with
the MARSELLUS operating points) and the facts package itself may import
``components.marsellus.facts`` (or the old ``components.marsellus.memory_map``)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = ROOT / "components"
FACTS = "components.marsellus.facts"
OLD = "components.marsellus.memory_map"
ALLOWED = {"components/marsellus/platform.py", "components/marsellus/memory_system.py",
           "components/marsellus/calibrate.py",
           # the declaration hands the memory map to the core (platform: marsellus)
           "components/marsellus/plugin.py"}


def _package(rel: str) -> list[str]:
    """The package a file (path relative to the root) belongs to, as name parts."""
    parts = rel[:-len(".py")].split("/")
    return parts[:-1]          # a module's package; for __init__.py, the package itself


def imports_of(text: str, rel: str) -> set[str]:
    """Every module the imports in ``text`` (the source of file ``rel``) name: relative
    imports resolved; ``from pkg import name`` counts as ``pkg`` and ``pkg.name``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(text, rel)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(rel)
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def forbidden(mods: set[str]) -> set[str]:
    return {m for m in mods for f in (FACTS, OLD) if m == f or m.startswith(f + ".")}


def test_only_the_composition_reads_the_facts():
    offenders = {}
    # a family's model (accelerators/<family>/model/) is a component like any other
    for path in sorted([*COMPONENTS.rglob("*.py"), *ROOT.glob("accelerators/*/model/**/*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED or rel.startswith("components/marsellus/facts/"):
            continue
        bad = forbidden(imports_of(path.read_text(), rel))
        if bad:
            offenders[rel] = sorted(bad)
    assert not offenders, ("block models get their regions, lines and clocks from the "
                           f"composer, not from the facts: {offenders}")


def test_the_check_sees_every_import_form():
    rel = "components/cluster/x.py"
    text = ("from ..marsellus.facts import MEMORY_MAP\n"
            "from ..marsellus import facts\n"
            "import components.marsellus.memory_map\n"
            "def f():\n    from components.marsellus.facts import irqs\n")
    assert forbidden(imports_of(text, rel)) == {
        FACTS, f"{FACTS}.MEMORY_MAP", f"{FACTS}.irqs", OLD, "components.marsellus.facts"}
    assert "components.marsellus.facts" in imports_of("from . import facts\n",
                                                      "components/marsellus/__init__.py")
    assert not forbidden(imports_of("from ..marsellus import platform\nfrom .facts_x import y\n",
                                    rel))
    assert not forbidden(imports_of("from tlm.address_map import Region\n", rel))
