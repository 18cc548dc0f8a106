"""``cosim docs``: the tables of the docs that list what the registries hold.

A block between ``<!-- generated: cosim docs NAME -->`` and ``<!-- end generated -->`` in
one of :data:`FILES` is rendered by ``TABLES[NAME]`` from the registries (block types,
platforms, accelerator families, the scenario library), so a table cannot fall behind what
``cosim list`` prints. :func:`update` rewrites the stale files, or with ``check`` only
lists them (``tests/test_docs_generated.py`` runs the check), as ``cosim regs`` does for the
register maps.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Callable

from tlm.files import read_text

ROOT = Path(__file__).resolve().parents[1]
FILES = (Path("README.md"), Path("docs/platforms.md"), Path("docs/plugins.md"), Path("docs/scenarios.md"))
_BLOCK = re.compile(r"(<!-- generated: cosim docs (\S+) -->\n)(.*?)(<!-- end generated -->)", re.S)


class DocsGenError(ValueError):
    """A generated block names no known table."""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:      # a plug-in installed elsewhere: its own path
        return str(path)


def _shipped(group: str) -> set[str]:
    """The entry-point names tlm-cosim's own pyproject.toml declares in ``group``: a
    plug-in installed beside it (the example under examples/) must not make the docs stale."""
    import tomllib
    data = tomllib.loads(read_text(ROOT / "pyproject.toml", "package_data"))
    return set(data["project"]["entry-points"][group])


def block_types() -> str:
    """Every block type a platform file can compose, the shipped families' included."""
    from components.plugins import ACCELERATORS
    from components.plugins import block_types as plugin_types

    from .platforms.composed import BLOCK_TYPES
    shipped = _shipped(ACCELERATORS)
    foreign = {n for n, (fam, _) in plugin_types().items() if fam not in shipped}
    rows = ["| type | what | needs | parameters |", "|---|---|---|---|"]
    for name, bt in sorted(BLOCK_TYPES.items()):
        if name in foreign:
            continue
        needs = [f"`{k}`" + (f" (a `{bt.memory_type}`)" if k == "memory" and bt.memory_type else "")
                 for k in bt.needs]
        params = ", ".join(f"`{f.name}`" for f in dataclasses.fields(bt.params())) if bt.params else ""
        rows.append(f"| `{name}` | {_cell(bt.doc)} | {', '.join(needs)} | {params} |")
    return "\n".join(rows)


def platforms() -> str:
    """Every registered platform, with the file or module that composes it."""
    import inspect

    from components.plugins import PLATFORMS as GROUP

    from .platforms import PLATFORMS
    rows = ["| platform | what | defined in |", "|---|---|---|"]
    shipped = _shipped(GROUP)
    for name, entry in PLATFORMS.items():
        if name not in shipped:
            continue
        # a file composes it, or Python: the module of its builder
        path = entry.path() or Path(inspect.getsourcefile(entry.build) or "?")
        rows.append(f"| `{name}` | {_cell(entry.doc)} | `{_rel(path)}` |")
    return "\n".join(rows)


def accelerators() -> str:
    """Every installed accelerator family and the block types it brings."""
    from components.plugins import ACCELERATORS, families
    rows = ["| family | what | block types | docs |", "|---|---|---|---|"]
    shipped = _shipped(ACCELERATORS)
    for name, fam in families().items():
        if name not in shipped:
            continue
        types = ", ".join(f"`{t}`" for t in fam.block_types)
        docs = f"[{fam.docs}](../{fam.docs})" if fam.docs else ""
        rows.append(f"| `{name}` | {_cell(fam.doc)} | {types} | {docs} |")
    return "\n".join(rows)


def _library() -> list[tuple[str, str]]:
    from .scenario import load_scenario
    from .scenario.loader import SCENARIO_DIR
    return [(f.stem, load_scenario(f).description) for f in sorted(SCENARIO_DIR.glob("*.yaml"))]


_PATH = re.compile(r"\b(docs/[\w.-]+\.md|scenarios/[\w/.-]+\.yaml)")


def _linked(text: str) -> str:
    """``text`` with the docs pages and scenario files it names as links from docs/."""
    return _PATH.sub(lambda m: f"[`{m[1]}`](../{m[1]})", text)


def scenarios() -> str:
    """The scenario library, each with its file's description (for docs/scenarios.md)."""
    rows = ["| scenario | what it shows |", "|---|---|"]
    rows += [f"| [`{n}`](../scenarios/{n}.yaml) | {_linked(_cell(d))} |" for n, d in _library()]
    return "\n".join(rows)


def scenario_names() -> str:
    """One sentence naming every library scenario (README)."""
    lib = _library()
    return (f"{len(lib)} scenarios: " + ", ".join(f"`{n}`" for n, _ in lib)
            + " — each runs from the CLI and in the tests.")


#: block name -> its renderer
TABLES: dict[str, Callable[[], str]] = {
    "block-types": block_types, "platforms": platforms, "accelerators": accelerators,
    "scenarios": scenarios, "scenario-names": scenario_names,
}


def render(text: str, where: str, done: dict[str, str] | None = None) -> str:
    """``text`` with every generated block rendered afresh (``done``: tables already
    rendered, by name, shared across the files of one update)."""
    done = {} if done is None else done

    def one(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in TABLES:
            line = text.count("\n", 0, m.start()) + 1
            raise DocsGenError(f"{where}:{line}: no generated table {name!r} "
                               f"(known: {', '.join(TABLES)})")
        if name not in done:
            done[name] = TABLES[name]()
        return f"{m.group(1)}{done[name]}\n{m.group(4)}"
    return _BLOCK.sub(one, text)


def update(root: Path = ROOT, check: bool = False) -> list[Path]:
    """Rewrite every file of :data:`FILES` whose generated blocks differ (none with
    ``check``); returns those paths, relative to ``root``."""
    stale: list[Path] = []
    done: dict[str, str] = {}
    for rel in FILES:
        path = root / rel
        old = read_text(path, "package_data")
        new = render(old, str(rel), done)
        if new != old:
            stale.append(rel)
            if not check:
                path.write_text(new, encoding="utf-8")
    return stale
