"""PNG plots where a picture says it better than a table.

* ``layers.png`` — per-layer latency split into L3->L2, L2->L1 and compute (networks);
* ``power.png`` — power per domain, supply, frequency and body bias over time (PMU);
* ``timeline.png`` — when each kind of task was busy (DMA, RBE, cores, I/O DMA).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from tlm.units import US  # noqa: E402

if TYPE_CHECKING:
    from .outcome import Outcome
    from .scenario import Scenario

PLOTS = ("layers", "power", "timeline")


def _save(fig: Any, path: Path) -> None:
    """Save ``fig`` as PNG at ``path`` atomically, never through a symbolic link."""
    from .outdir import write_atomic
    write_atomic(path.parent, path.name, lambda f: fig.savefig(f, format="png", dpi=110))


def plot_layers(sc: "Scenario", out: "Outcome", deployment: Any, path: Path) -> bool:
    if deployment is None or out.records is None:
        return False
    from .deploy.report import layer_rows
    rows = layer_rows(out.records, deployment)
    if not rows:
        return False
    names = [r["layer"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.35 * len(rows)), 4.5))
    x = range(len(rows))
    width = 0.27
    for i, (key, label, color) in enumerate((("l3_l2_ps", "L3 -> L2 (I/O DMA)", "#8e6bbf"),
                                             ("l2_l1_ps", "L2 -> L1 (cluster DMA)", "#4c9be8"),
                                             ("compute_ps", "compute (RBE / cores)", "#e8804c"))):
        ax.bar([j + (i - 1) * width for j in x], [r[key] / US for r in rows], width, label=label, color=color)
    ax.plot(list(x), [r["span_ps"] / US for r in rows], "k.", label="layer span")
    ax.set_xticks(list(x), names, rotation=70, fontsize=7)
    ax.set_ylabel("µs")
    ax.set_title(f"{sc.name}: per-layer latency (busy time per category; overlap = double buffering)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def plot_power(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    samples = out.power_samples()
    if not samples:
        return False
    t = [s.time / US for s in samples]
    fig, axes = plt.subplots(4, 1, figsize=(9, 8), sharex=True)
    for dom in samples[0].power_mw:
        axes[0].step(t, [s.power_mw[dom] for s in samples], where="post", label=dom)
    axes[0].set_ylabel("power (mW)")
    axes[0].legend(fontsize=8)
    for dom in samples[0].vdd:
        axes[1].step(t, [s.vdd[dom] for s in samples], where="post", label=dom)
    axes[1].set_ylabel("VDD (V)")
    for fll in samples[0].freq_hz:
        axes[2].step(t, [s.freq_hz[fll] / 1e6 for s in samples], where="post", label=fll)
    axes[2].set_ylabel("f (MHz)")
    axes[2].legend(fontsize=8)
    for dom in samples[0].vbb:
        axes[3].step(t, [s.vbb[dom] for s in samples], where="post", label=dom)
    steps = out.pmu.get("abb_steps", 0)
    axes[3].set_ylabel("body bias (V)")
    axes[3].set_xlabel("simulated time (µs)")
    axes[0].set_title(f"{sc.name}: power, supply, frequency and body bias"
                      + (f" ({steps} bias steps)" if steps else ""))
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def plot_timeline(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    if out.records is None:
        return False
    recs = [r for r in out.records.values() if r.start is not None and r.end is not None
            and r.op in ("dma", "rbe", "kernel", "udma")]
    if not recs:
        return False
    lanes = {"udma": 0, "dma": 1, "rbe": 2, "kernel": 3}
    labels = ["I/O DMA (L3<->L2)", "cluster DMA (L2<->L1)", "RBE", "cluster cores"]
    colors = ["#8e6bbf", "#4c9be8", "#e8804c", "#55a868"]
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for lane in range(4):
        spans = [(r.start / US, max((r.end - r.start) / US, 1e-4)) for r in recs if lanes[r.op] == lane]
        if spans:
            ax.broken_barh(spans, (lane - 0.4, 0.8), color=colors[lane])
    ax.set_yticks(range(4), labels)
    ax.set_xlabel("simulated time (µs)")
    ax.set_title(f"{sc.name}: activity timeline (task spans as the host sees them)")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def write_plots(sc: "Scenario", outcome: "Outcome", deployment: Any, out: Path,
                names: list[str] | None = None) -> dict[str, str]:
    """Write the plots that apply to this run; returns {name: file}."""
    written: dict[str, str] = {}
    for name in names or PLOTS:
        if name not in PLOTS:
            continue
        path = out / f"{name}.png"
        ok = {"layers": lambda: plot_layers(sc, outcome, deployment, path),
              "power": lambda: plot_power(sc, outcome, path),
              "timeline": lambda: plot_timeline(sc, outcome, path)}[name]()
        if ok:
            written[f"plot_{name}"] = str(path)
    return written
