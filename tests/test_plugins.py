"""Accelerator families and platforms as plug-ins (components/plugins.py, docs/plugins.md):
what pyproject.toml declares is what loads; a broken or clashing declaration is an error
naming it; the core (cosim/) names no family outside the modules still to move into their
family's package."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from components import plugins
from components.plugins import AcceleratorFamily, PlatformEntry, PluginError, Ref

ROOT = Path(__file__).resolve().parents[1]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]


def test_what_pyproject_declares_is_what_loads() -> None:
    fams = plugins.families()
    assert list(fams) == sorted(DECLARED[plugins.ACCELERATORS])
    assert all(isinstance(f, AcceleratorFamily) and f.name == n for n, f in fams.items())
    plats = plugins.platforms()
    assert list(plats) == sorted(DECLARED[plugins.PLATFORMS])
    assert all(isinstance(p, PlatformEntry) for p in plats.values())


def test_every_declared_hook_resolves() -> None:
    """Every lazy reference of every family imports (a typo fails here, not in a run)."""
    for fam in plugins.families().values():
        refs = [*fam.block_types.values(), *fam.task_ops.values(), *fam.prepare.values(),
                *fam.deployers.values(), *(c.add_parser for c in fam.commands), *(c.run for c in fam.commands)]
        refs += [r for r in (fam.schema, fam.layer_types, fam.presets) if r is not None]
        for ref in refs:
            assert ref.load() is not None, (fam.name, ref.target)
        for kind in fam.rtl_kinds.values():
            assert callable(Ref(kind.transactor).load()), (fam.name, kind.transactor)


def test_the_registries_are_built_from_the_families() -> None:
    from cosim.platforms.composed import BLOCK_TYPES
    from cosim.rtl.registry import RTL_KINDS
    from cosim.scenario.schema import OPS
    for fam in plugins.families().values():
        assert set(fam.block_types) <= set(BLOCK_TYPES)
        assert set(fam.rtl_kinds) <= set(RTL_KINDS)
        assert set(fam.task_ops) <= set(OPS), "a task operation without a schema"


def test_ref_needs_module_and_attribute() -> None:
    with pytest.raises(PluginError, match="not a 'module:attribute'"):
        Ref("no_colon_here")
    assert Ref("os.path:join").load() is __import__("os").path.join


def _declare(monkeypatch: pytest.MonkeyPatch, group: str, table: dict[str, str]) -> None:
    real = plugins._declared
    monkeypatch.setattr(plugins, "_declared",
                        lambda g: {k: (v, "test") for k, v in table.items()} if g == group else real(g))
    plugins.refresh()


def test_a_broken_declaration_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        _declare(monkeypatch, plugins.ACCELERATORS, {"ghost": "no_such_module.plugin:FAMILY"})
        with pytest.raises(PluginError, match=r"cannot load 'ghost' \(no_such_module.plugin:FAMILY"):
            plugins.families()
        _declare(monkeypatch, plugins.ACCELERATORS, {"odd": "os:sep"})
        with pytest.raises(PluginError, match="'odd' .* is a str, not a AcceleratorFamily"):
            plugins.families()
        _declare(monkeypatch, plugins.ACCELERATORS, {"alias": "accelerators.rbe.plugin:FAMILY"})
        with pytest.raises(PluginError, match="declares family 'rbe' under the entry-point name 'alias'"):
            plugins.families()
    finally:
        monkeypatch.undo()
        plugins.refresh()


def test_two_families_claiming_one_name_clash(monkeypatch: pytest.MonkeyPatch) -> None:
    twin = AcceleratorFamily.declare("twin", "a second RBE block type", block_types={"rbe": "x:y"})
    try:
        monkeypatch.setattr(plugins, "families", lambda: {**plugins._load(plugins.ACCELERATORS, AcceleratorFamily),
                                                           "twin": twin})
        plugins._merged.cache_clear()
        with pytest.raises(PluginError, match="block type 'rbe' is declared by two families: rbe and twin"):
            plugins.block_types()
    finally:
        monkeypatch.undo()
        plugins.refresh()


def test_cosim_lists_the_families() -> None:
    out = subprocess.run([sys.executable, "-m", "cosim.cli", "list", "accelerators"], capture_output=True,
                         text=True, cwd=ROOT, env={"COLUMNS": "200", "PATH": ""}, timeout=120)
    assert out.returncode == 0, out.stderr
    for name, fam in plugins.families().items():
        assert re.search(rf"^{name}\s+{re.escape(fam.doc[:30])}", out.stdout, re.M), out.stdout


def test_the_core_names_no_family() -> None:
    """cosim/ and tlm/ name no accelerator family (the RBE and the cluster cores, MARSELLUS's
    own, aside until they move too): what a family brings comes from its declaration."""
    names = [n for n in plugins.families() if n not in ("rbe", "cores")]
    rx = re.compile("|".join(names), re.I)
    naming = sorted(str(p.relative_to(ROOT)) for d in ("cosim", "tlm") for p in (ROOT / d).rglob("*.py")
                    if rx.search(p.read_text(encoding="utf-8")))
    assert naming == [], "these core files name a family"


@pytest.mark.parametrize("group", [plugins.ACCELERATORS, plugins.PLATFORMS, "console_scripts", "pytest11"])
def test_entry_points_read_without_importlib_metadata_agree_with_it(group: str) -> None:
    """The registry reads the entry points from the .dist-info folders itself (start-up
    time); in this environment it must find what importlib.metadata finds, or defer to it.
    Checked in a fresh interpreter of this environment, as `cosim` starts: a test process may
    carry finders or path entries other tests added, where the registry rightly defers."""
    code = (
        "import json, sys\n"
        "from components import plugins\n"
        f"g = {group!r}\n"
        "scanned = plugins._scan_entry_points(g)\n"
        "installed, found = plugins._metadata_entry_points(g)\n"
        "pairs = lambda eps: sorted([n, v] for n, v, _ in eps)\n"
        "print(json.dumps({'scanned': None if scanned is None else [scanned[0], pairs(scanned[1])],"
        " 'metadata': [installed, pairs(found)]}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["scanned"] is not None, "the plain sys.path layout of a venv is read directly"
    assert got["scanned"] == got["metadata"]
    assert group not in (plugins.ACCELERATORS, plugins.PLATFORMS) or got["metadata"][1]


def test_entry_points_first_folder_on_the_path_wins(tmp_path: Path) -> None:
    """Two copies of one distribution in two sys.path folders: the first one's entry points,
    as importlib.metadata does; two in one folder: not clear-cut, importlib.metadata decides.
    In a fresh interpreter with those folders first on its path (importlib.metadata in a test
    process may see finders and caches other tests left)."""
    for folder, value in (("a", "first.plugin:FAMILY"), ("b", "second.plugin:FAMILY")):
        info = tmp_path / folder / "demo_pkg-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[other]\nx = y:z\n\n[demo.group]\n# a comment\ndemo = {value}\n")
    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(tmp_path / 'a')!r}, {str(tmp_path / 'b')!r}]\n"
        "from components import plugins\n"
        "scanned = plugins._scan_entry_points('demo.group')\n"
        "found = plugins._metadata_entry_points('demo.group')[1]\n"
        "print(json.dumps({'scanned': scanned and scanned[1], 'metadata': [[n, v] for n, v, _ in found]}))\n")

    def run() -> dict:
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    got = run()
    assert got["scanned"] == [["demo", "first.plugin:FAMILY", "demo_pkg"]]
    assert got["metadata"] == [["demo", "first.plugin:FAMILY"]]
    (tmp_path / "a" / "demo_pkg-2.0.dist-info").mkdir()
    assert run()["scanned"] is None
