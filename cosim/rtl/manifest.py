"""Source lists from package manifests: Bender (``Bender.yml``) and IPApproX
(``src_files.yml``), read with the limited YAML loader (cosim.scenario.yamlpos), files in
the manifest's order.

Bender: ``sources`` is a list of files and groups (``files``, ``include_dirs``,
``defines``, ``target``), nested; a group is taken when its ``target`` expression holds
for the active targets (``all(a, b)``, ``any(...)``, ``not(x)``, ``*``, a name), plus
``export_include_dirs``. ``src_files.yml``: one entry per IP with ``files``,
``incdirs`` and an optional ``targets`` list (taken when one of them is active). Paths
are relative to the manifest's folder; ``exclude`` globs (relative paths) drop files.
Dependencies are not fetched: list each package's manifest (vendored sources).
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

#: targets active when a scenario names none (what a Verilator simulation build uses)
DEFAULT_TARGETS = ("rtl", "simulation", "verilator")


class ManifestError(ValueError):
    """A manifest that cannot be read (the message names the file and the entry)."""


@dataclass
class SourceList:
    files: list[Path] = field(default_factory=list)
    include_dirs: list[Path] = field(default_factory=list)
    defines: dict[str, Any] = field(default_factory=dict)


_TOKEN = re.compile(r"\s*([A-Za-z0-9_\-*]+|\(|\)|,)")


def target_holds(expr: str, active: Iterable[str]) -> bool:
    """Bender target expression ``expr`` under the ``active`` targets."""
    act = {a.lower() for a in active}
    toks = []
    pos = 0
    text = str(expr)
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ManifestError(f"target expression {expr!r}: cannot read {text[pos:]!r}")
        toks.append(m[1])
        pos = m.end()

    def parse(i: int) -> tuple[bool, int]:
        if i >= len(toks):
            raise ManifestError(f"target expression {expr!r} ends early")
        t = toks[i]
        if t in ("all", "any", "not") and i + 1 < len(toks) and toks[i + 1] == "(":
            vals, i = [], i + 2
            while toks[i] != ")":
                v, i = parse(i)
                vals.append(v)
                if i < len(toks) and toks[i] == ",":
                    i += 1
                if i >= len(toks):
                    raise ManifestError(f"target expression {expr!r}: missing ')'")
            i += 1
            if t == "not":
                if len(vals) != 1:
                    raise ManifestError(f"target expression {expr!r}: not() takes one term")
                return not vals[0], i
            return (all(vals) if t == "all" else any(vals)), i
        if t in ("(", ")", ","):
            raise ManifestError(f"target expression {expr!r}: unexpected {t!r}")
        return (t == "*" or t.lower() in act), i + 1
    value, end = parse(0)
    if end != len(toks):
        raise ManifestError(f"target expression {expr!r}: unexpected {toks[end]!r}")
    return value


def _excluded(rel: str, exclude: Iterable[str]) -> bool:
    return any(fnmatch.fnmatch(rel, g) for g in exclude)


def read_manifest(path: Path, targets: Iterable[str] = DEFAULT_TARGETS,
                  exclude: Iterable[str] = ()) -> SourceList:
    """The ordered source list of the manifest at ``path`` (Bender.yml or src_files.yml)."""
    from ..scenario.errors import ScenarioError
    from ..scenario.yamlpos import load_file
    path = Path(path)
    try:        # a user's YAML: the bounded reader and the limited loader (aliases, depth, size)
        data, _ = load_file(path, "manifest")
    except ScenarioError as e:
        raise ManifestError(f"cannot read the manifest: {e}") from None
    targets, exclude = tuple(targets), tuple(exclude)
    out = SourceList()
    if isinstance(data, dict) and "sources" in data or (isinstance(data, dict) and "package" in data):
        _bender(path, data, targets, exclude, out)
    elif isinstance(data, dict):
        _src_files(path, data, targets, exclude, out)
    else:
        raise ManifestError(f"{path}: not a Bender.yml or src_files.yml manifest")
    return out


def _add_dir(out: SourceList, root: Path, d: Any, where: str) -> None:
    p = root / str(d)
    if not p.is_dir():
        raise ManifestError(f"{where}: include directory {d} does not exist")
    if p not in out.include_dirs:
        out.include_dirs.append(p)


def _add_file(out: SourceList, root: Path, f: str, exclude: tuple, where: str) -> None:
    if _excluded(f, exclude):
        return
    p = root / f
    if not p.is_file():
        raise ManifestError(f"{where}: source {f} does not exist")
    out.files.append(p)


def _bender(path: Path, data: dict, targets: tuple, exclude: tuple, out: SourceList) -> None:
    root = path.parent
    for d in data.get("export_include_dirs") or []:
        _add_dir(out, root, d, f"{path}: export_include_dirs")

    def group(items: Any, where: str) -> None:
        if isinstance(items, str):
            _add_file(out, root, items, exclude, where)
            return
        if isinstance(items, list):
            for k, it in enumerate(items):
                group(it, f"{where}[{k}]")
            return
        if not isinstance(items, dict):
            raise ManifestError(f"{where}: expected a file or a group, got {items!r}")
        if "target" in items:
            try:
                holds = target_holds(str(items["target"]), targets)
            except ManifestError as e:
                raise ManifestError(f"{where}: {e}") from None
            if not holds:
                return
        for d in items.get("include_dirs") or []:
            _add_dir(out, root, d, f"{where}.include_dirs")
        out.defines.update(items.get("defines") or {})
        group(items.get("files") or [], f"{where}.files")
    group(data.get("sources") or [], f"{path}: sources")


def _src_files(path: Path, data: dict, targets: tuple, exclude: tuple, out: SourceList) -> None:
    root = path.parent
    act = {t.lower() for t in targets}
    for ip, entry in data.items():
        where = f"{path}: {ip}"
        if not isinstance(entry, dict) or "files" not in entry:
            raise ManifestError(f"{where}: expected a mapping with 'files'")
        want = entry.get("targets")
        if want and not any(str(t).lower() in act for t in want):
            continue
        for d in entry.get("incdirs") or []:
            _add_dir(out, root, d, f"{where}.incdirs")
        for f in entry.get("files") or []:
            _add_file(out, root, str(f), exclude, f"{where}.files")
