"""The published Tensil board configurations (``boards.yaml`` beside this module)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any


from tlm.params import resolve
from tlm.yamlfast import load_file

from .arch import TensilArch

BOARDS_FILE = Path(__file__).with_name("boards.yaml")


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return dict(load_file(BOARDS_FILE))


def board_names() -> list[str]:
    return sorted(_table())


def board(name: str) -> dict[str, Any]:
    """The table entry of board ``name`` (KeyError listing the known boards)."""
    table = _table()
    if name not in table:
        raise KeyError(f"unknown Tensil board {name!r}; known: {', '.join(sorted(table))}")
    return dict(table[name])


def board_arch(name: str, overrides: dict[str, Any] | None = None) -> TensilArch:
    """The architecture of board ``name`` with ``overrides`` applied (checked)."""
    params = {**board(name)["arch"], **(overrides or {})}
    return resolve(TensilArch, params, f"tensil.boards.{name}.arch")
