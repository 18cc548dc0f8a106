"""The utilisation-per-layer plot of a Voyager run (matplotlib imported only here, only
when a plot is written)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence


def plot_utilisation(names: Sequence[str], utilisation: Sequence[float], total: float, title: str,
                     path: Path) -> Path:
    """A bar per matrix operator (ideal / achieved cycles) and the whole-model line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    width = max(6.0, min(40.0, 0.12 * len(names) + 2))
    fig, ax = plt.subplots(figsize=(width, 3.6))
    ax.bar(range(len(names)), utilisation, color="#4477aa", width=0.8, label="per layer")
    ax.axhline(total, color="#cc3311", linestyle="--", linewidth=1.2, label=f"whole model {total:.1%}")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel("MAC utilisation")
    step = max(1, len(names) // 40)
    ax.set_xticks(range(0, len(names), step))
    ax.set_xticklabels([names[i] for i in range(0, len(names), step)], rotation=90, fontsize=6)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    from ..outdir import write_atomic         # atomically, never through a symbolic link
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path.parent, path.name, lambda f: fig.savefig(f, format="png", dpi=110))
    plt.close(fig)
    return path
