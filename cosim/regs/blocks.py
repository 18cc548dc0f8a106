"""Where the register maps live: every ``registers.yaml`` / ``<model>.registers.yaml`` under
``components/`` and ``accelerators/`` (a family's ``model/``), parsed with
:func:`tlm.regmap.parse_regmap`."""
from __future__ import annotations

from pathlib import Path

from tlm.files import read_text
from tlm.regmap import RegisterMap, parse_regmap

#: the repository root (the folder that holds components/, cosim/, firmware/, rtl/, docs/)
ROOT = Path(__file__).resolve().parents[2]


#: the folders that hold block models
MODEL_DIRS = ("components", "accelerators")


def yaml_files(root: Path = ROOT) -> list[Path]:
    """Every block's register-map YAML, in a stable order: by path inside its folder of
    :data:`MODEL_DIRS` (so a family's map keeps its place in the generated files when the
    family moves from ``components/`` into ``accelerators/``), then by full path."""
    found: dict[Path, str] = {}
    for folder in MODEL_DIRS:
        d = root / folder
        for p in [*d.rglob("registers.yaml"), *d.rglob("*.registers.yaml")]:
            found[p] = p.relative_to(d).as_posix()
    return sorted(found, key=lambda p: (found[p], p.relative_to(root).as_posix()))


def load_blocks(root: Path = ROOT) -> list[RegisterMap]:
    """The register maps of all blocks; two files naming the same block are refused."""
    maps: list[RegisterMap] = []
    seen: dict[str, str] = {}
    for path in yaml_files(root):
        m = parse_regmap(read_text(path, "package_data"), str(path))  # uncached: files may have changed
        if m.block in seen:
            raise ValueError(f"{path}: block {m.block!r} is already described by {seen[m.block]}")
        seen[m.block] = str(path)
        maps.append(m)
    return maps


def source_of(m: RegisterMap, root: Path = ROOT) -> str:
    """``m``'s YAML path relative to ``root`` (for banners and docs)."""
    try:
        return Path(m.source).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return m.source
