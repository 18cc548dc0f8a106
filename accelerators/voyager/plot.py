"""The utilisation-per-layer plot of a Voyager run (matplotlib imported only here, only
when a plot is written)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence


def plot_utilisation(names: Sequence[str], utilisation: Sequence[float], total: float, title: str,
                     path: Path) -> Path:
    """A bar per matrix operator (ideal / achieved cycles) and the whole-model line."""
    from cosim.plots import save_png, utilisation_figure    # Agg rendering, atomic writes
    fig = utilisation_figure([(title, list(names), list(utilisation), total)])
    path.parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path)
    return path
