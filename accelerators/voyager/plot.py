"""The utilisation-per-layer plot of a Voyager run (matplotlib imported only here, only
when a plot is written)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence


def plot_utilisation(names: Sequence[str], utilisation: Sequence[float], total: float, title: str,
                     path: Path) -> Path:
    """A bar per matrix operator (ideal / achieved cycles) and the whole-model line."""
    from cosim.plots import draw_utilisation, plt, save_png    # Agg backend, atomic writes
    fig, ax = plt.subplots(figsize=(max(6.0, min(40.0, 0.12 * len(names) + 2)), 3.6))
    draw_utilisation(ax, list(names), list(utilisation), total, title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path)
    plt.close(fig)
    return path
