"""``cosim regs``: every file generated from the blocks' register maps.

From each ``registers.yaml`` under ``components/`` and ``accelerators/`` (schema: :mod:`tlm.regmap`,
docs/registers.md): the firmware header section (:mod:`.firmware`, with the linker
script), an SV package under ``rtl/regs/`` (:mod:`.sv_package`) and the tables of
``docs/registers.md`` (:mod:`.docs`). :func:`outputs` renders them all in memory;
:func:`update` writes the ones that differ, or with ``check`` only lists them.
"""
from __future__ import annotations

from pathlib import Path

from tlm.files import read_text

from . import docs, firmware, sv_package
from .blocks import ROOT, load_blocks, source_of, yaml_files

__all__ = ["ROOT", "outputs", "update", "load_blocks", "yaml_files"]

HEADER = Path("firmware/include/marsellus_map.h")
LINKER = Path("firmware/memory.ld")
SV_DIR = Path("rtl/regs")
DOC = Path("docs/registers.md")


def outputs(root: Path = ROOT) -> dict[Path, str]:
    """Generated path (relative to ``root``) -> its text."""
    maps = load_blocks(root)
    out: dict[Path, str] = {
        HEADER: firmware.render_header(maps, root),
        LINKER: firmware.render_linker(),
    }
    for m in maps:
        out[SV_DIR / f"{sv_package.package_name(m)}.sv"] = \
            sv_package.render_package(m, source_of(m, root))
    section: list[str] = []
    for m in maps:
        section += docs.render_block(m, source_of(m, root))
    doc = root / DOC
    out[DOC] = docs.splice(read_text(doc, "package_data") if doc.exists() else "", section, str(doc))
    return out


def update(root: Path = ROOT, check: bool = False,
           only: tuple[Path, ...] | None = None) -> list[Path]:
    """Write every generated file that differs (none with ``check``); returns those paths.
    ``only`` restricts it to some outputs (firmware/gen_headers.py: its two files)."""
    stale = []
    gen = outputs(root)
    if only is None:  # a package of a block that is gone is stale too
        for old in sorted((root / SV_DIR).glob("*_regs_pkg.sv")):
            rel = old.relative_to(root)
            if rel not in gen:
                stale.append(rel)
                if not check:
                    old.unlink()
    for rel, text in gen.items():
        if only is not None and rel not in only:
            continue
        path = root / rel
        if not path.exists() or read_text(path, "package_data") != text:
            stale.append(rel)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    return stale
