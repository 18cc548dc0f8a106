"""PNG plots where a picture says it better than a table.

* ``layers.png`` — per-layer latency split into L3->L2, L2->L1 and compute (networks);
* ``power.png`` — power per domain, supply, frequency and body bias over time (PMU);
* ``timeline.png`` — when each kind of task was busy (DMA, RBE, cores, I/O DMA);
* ``utilisation.png`` — MAC utilisation per layer of each accelerator that reports layers
  (those whose deployment reports per-layer utilisation), and its whole-run figure.
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

PLOTS = ("layers", "power", "timeline", "utilisation")


def save_png(fig: Any, path: Path) -> None:
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
    save_png(fig, path)
    plt.close(fig)
    return True


#: one colour per power domain / clock in every panel (a name not listed gets the next free one)
DOMAIN_COLORS = {"soc": "#4c72b0", "cluster": "#dd8452", "always_on": "#55a868", "periph": "#8172b3"}
_SPARE_COLORS = ["#c44e52", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]
#: line styles by series order, so identical traces stay distinguishable where they overlap
_STYLES = [("-", 2.6), ("--", 2.0), (":", 1.8), ("-.", 1.6)]


def _domain_style(name: str, taken: dict[str, tuple[str, str, float]]) -> tuple[str, str, float]:
    """(colour, line style, width) of a domain or clock: the same in every panel."""
    if name not in taken:
        style, width = _STYLES[len(taken) % len(_STYLES)]
        taken[name] = (DOMAIN_COLORS.get(name) or _SPARE_COLORS[len(taken) % len(_SPARE_COLORS)], style, width)
    return taken[name]


def _changes(values: list[float]) -> int:
    return sum(1 for a, b in zip(values, values[1:]) if a != b)


def _shade_compute(out: "Outcome", axes: tuple) -> None:
    """Shade the compute phases (RBE jobs, core kernels) behind the power and bias panels:
    the ABB follows them (docs/power.md, "Load, not a timer")."""
    spans = sorted((r.start, r.end) for r in (out.records or {}).values()
                   if r.op in ("rbe", "kernel") and r.start is not None and r.end is not None)
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    for ax in axes:
        for i, (a, b) in enumerate(merged):
            ax.axvspan(a / US, b / US, color="#f2e6c9", alpha=0.6, zorder=0, linewidth=0,
                       label="compute (RBE, cores)" if i == 0 and ax is axes[0] else None)
        if merged and ax is axes[0]:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0)


def plot_power(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    samples = out.power_samples()
    if not samples:
        return False
    t = [s.time / US for s in samples]
    fig, axes = plt.subplots(4, 1, figsize=(10, 8.5), sharex=True)
    looks: dict[str, tuple[str, str, float]] = {}
    panels = [(axes[0], "power (mW)", lambda s: s.power_mw, 1.0),
              (axes[1], "VDD (V)", lambda s: s.vdd, 1.0),
              (axes[2], "clock (MHz)", lambda s: s.freq_hz, 1e-6),
              (axes[3], "body bias (V)", lambda s: s.vbb, 1.0)]
    bias_changes = 0
    for ax, label, series, scale in panels:
        for name in series(samples[0]):
            values = [series(s)[name] * scale for s in samples]
            color, style, width = _domain_style(name, looks)
            ax.step(t, values, where="post", label=name, color=color, linestyle=style, linewidth=width)
            if ax is axes[3]:
                bias_changes = max(bias_changes, _changes(values))   # one bias, several wells
        ax.set_ylabel(label)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0)
        ax.grid(alpha=0.3)
    _shade_compute(out, (axes[0], axes[3]))
    axes[3].set_xlabel("simulated time (µs)")
    note = f" (body bias changed {bias_changes} time{'s' if bias_changes != 1 else ''})" if bias_changes else ""
    axes[0].set_title(f"{sc.name}: power, supply, clocks and body bias{note}")
    fig.tight_layout()
    save_png(fig, path)
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
    save_png(fig, path)
    plt.close(fig)
    return True


def draw_utilisation(ax: Any, names: list[str], utilisation: list[float], total: float, title: str) -> None:
    """A bar per layer (ideal / achieved cycles) and the whole-run line, on ``ax``."""
    ax.bar(range(len(names)), utilisation, color="#4477aa", width=0.8, label="per layer")
    ax.axhline(total, color="#cc3311", linestyle="--", linewidth=1.2, label=f"whole run {total:.1%}")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel("MAC utilisation")
    step = max(1, len(names) // 40)
    ax.set_xticks(range(0, len(names), step))
    ax.set_xticklabels([names[i] for i in range(0, len(names), step)], rotation=90, fontsize=6)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)


def plot_utilisation(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    """One panel per accelerator whose report entry lists its layers."""
    entries = [(p, e) for p, e in out.accelerators.items() if e.get("layers")]
    if not entries:
        return False
    most = max(len(e["layers"]) for _, e in entries)
    fig, axes = plt.subplots(len(entries), 1, figsize=(max(8.0, min(40.0, 0.12 * most + 2)), 3.6 * len(entries)),
                             squeeze=False)
    for ax, (acc, e) in zip(axes[:, 0], entries):
        rows = e["layers"]
        draw_utilisation(ax, [f"{r['name']} {r.get('op', '')}".strip() for r in rows],
                         [r["utilisation"] for r in rows], e["totals"]["utilisation"],
                         f"{acc}: MAC utilisation per layer")
    fig.tight_layout()
    save_png(fig, path)
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
              "timeline": lambda: plot_timeline(sc, outcome, path),
              "utilisation": lambda: plot_utilisation(sc, outcome, path)}[name]()
        if ok:
            written[f"plot_{name}"] = str(path)
    return written
