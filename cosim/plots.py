"""PNG plots where a picture says it better than a table.

* ``layers.png`` — per-layer latency split into L3->L2, L2->L1 and compute (networks);
* ``power.png`` — power per domain, and the supply, frequency and body bias that change over
  time (PMU); what stays constant is a note under the panels;
* ``timeline.png`` — when each kind of task was busy (DMA, RBE, cores, I/O DMA);
* ``utilisation.png`` — MAC utilisation per layer of each accelerator that reports layers
  (those whose deployment reports per-layer utilisation), and its whole-run figure.

Figures are built with the object API (``matplotlib.figure.Figure``, no pyplot state) and
laid out once each; every text is at least :data:`MIN_FONT` points, legends sit beside the
axes so they cover no data.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from matplotlib.figure import Figure

from tlm.units import US

if TYPE_CHECKING:
    from .outcome import Outcome
    from .scenario import Scenario

PLOTS = ("layers", "power", "timeline", "utilisation")
#: smallest text on any plot (points, at the saved DPI)
MIN_FONT = 8
#: a category axis gets this much width per label (inches): an 8-point label rotated upright
_PER_LABEL_IN = 0.22
_MAX_WIDTH_IN = 40.0
#: legend beside the axes, top-aligned, so it never covers a bar or a line
_BESIDE = {"loc": "upper left", "bbox_to_anchor": (1.005, 1.0), "borderaxespad": 0.0, "fontsize": MIN_FONT}


def save_png(fig: Any, path: Path) -> None:
    """Save ``fig`` as PNG at ``path`` atomically, never through a symbolic link."""
    from .outdir import write_atomic
    write_atomic(path.parent, path.name, lambda f: fig.savefig(f, format="png", dpi=110))


def _save(fig: Figure | None, path: Path) -> bool:
    if fig is None:
        return False
    save_png(fig, path)
    return True


def category_width(n: int, fixed: float) -> float:
    """Figure width (inches) for ``n`` upright category labels plus ``fixed`` inches of margins."""
    return max(8.0, min(_MAX_WIDTH_IN, _PER_LABEL_IN * n + fixed))


def label_categories(ax: Any, names: list[str]) -> None:
    """Upright tick labels at :data:`MIN_FONT`; every k-th when more would not fit the width."""
    fit = int((_MAX_WIDTH_IN - 3) / _PER_LABEL_IN)
    step = -(-len(names) // fit) if len(names) > fit else 1
    ticks = list(range(0, len(names), step))
    ax.set_xticks(ticks, [names[i] for i in ticks], rotation=90, fontsize=MIN_FONT)


def layers_figure(name: str, rows: list[dict[str, Any]]) -> Figure | None:
    """Per-layer busy time of each category that was busy at all, and the layer's span."""
    if not rows:
        return None
    cats = [(k, label, color) for k, label, color in
            (("l3_l2_ps", "L3 -> L2 (I/O DMA)", "#8e6bbf"),
             ("l2_l1_ps", "L2 -> L1 (cluster DMA)", "#4c9be8"),
             ("compute_ps", "compute (accelerator / cores)", "#e8804c"))
            if any(r[k] for r in rows)]     # an idle category would be an empty legend entry
    fig = Figure(figsize=(category_width(len(rows), 4.0), 4.8))
    ax = fig.subplots()
    x = range(len(rows))
    width = 0.8 / max(1, len(cats))
    for i, (key, label, color) in enumerate(cats):
        off = (i - (len(cats) - 1) / 2) * width
        ax.bar([j + off for j in x], [r[key] / US for r in rows], width, label=label, color=color)
    ax.plot(list(x), [r["span_ps"] / US for r in rows], "k.", label="layer span")
    label_categories(ax, [r["layer"] for r in rows])
    ax.set_ylabel("latency (µs)")
    ax.set_title(f"{name}: per-layer latency")
    ax.legend(title="busy time per category\n(overlap = double buffering)", title_fontsize=MIN_FONT, **_BESIDE)
    fig.tight_layout()      # the figure's one layout pass
    return fig


def plot_layers(sc: "Scenario", out: "Outcome", deployment: Any, path: Path) -> bool:
    if deployment is None or out.records is None:
        return False
    from .deploy.report import layer_rows
    return _save(layers_figure(sc.name, layer_rows(out.records, deployment)), path)


#: one colour per power domain / clock in every panel (a name not listed gets the next free one)
DOMAIN_COLORS = {"soc": "#4c72b0", "cluster": "#dd8452", "always_on": "#55a868", "periph": "#8172b3"}
_SPARE_COLORS = ["#c44e52", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]
#: line styles by series order, so traces stay distinguishable where they cross
_STYLES = [("-", 2.6), ("--", 2.0), (":", 1.8), ("-.", 1.6)]


def _domain_style(name: str, taken: dict[str, tuple[str, str, float]]) -> tuple[str, str, float]:
    """(colour, line style, width) of a domain or clock: the same in every panel."""
    if name not in taken:
        style, width = _STYLES[len(taken) % len(_STYLES)]
        taken[name] = (DOMAIN_COLORS.get(name) or _SPARE_COLORS[len(taken) % len(_SPARE_COLORS)], style, width)
    return taken[name]


def _changes(values: list[float]) -> int:
    return sum(1 for a, b in zip(values, values[1:]) if a != b)


def _shade_compute(out: "Outcome", axes: list) -> None:
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
            ax.legend(**_BESIDE)


def _group_same(series: dict[str, list[float]]) -> list[tuple[list[str], list[float]]]:
    """Domains whose trace is identical over the whole run, as one group each (in order):
    drawn as one line named after all of them, not as lines hiding each other."""
    groups: list[tuple[list[str], list[float]]] = []
    for name, values in series.items():
        for names, same in groups:
            if same == values:
                names.append(name)
                break
        else:
            groups.append(([name], values))
    return groups


def _fmt(value: float, unit: str) -> str:
    return f"{value:.3g} {unit}" if unit != "V" else f"{value:.2f} V"


#: (panel label, sample field, scale, unit of the note) of the state panels under the power one
_STATE_PANELS = (("VDD (V)", "vdd", 1.0, "V"), ("clock (MHz)", "freq_hz", 1e-6, "MHz"),
                 ("body bias (V)", "vbb", 1.0, "V"))


def power_figure(name: str, out: "Outcome") -> Figure | None:
    """Power per domain, then one panel per state (supply, clocks, body bias) that changes:
    domains with identical traces share a line ("soc = cluster"), constant ones go to a note."""
    samples = out.power_samples()
    if not samples:
        return None
    t = [s.time / US for s in samples]
    power = {k: [s.power_mw[k] for s in samples] for k in samples[0].power_mw}
    panels: list[tuple[str, list[tuple[list[str], list[float]]]]] = []
    constant: list[str] = []
    bias_changes = 0
    for label, field, scale, unit in _STATE_PANELS:
        series = {k: [getattr(s, field)[k] * scale for s in samples] for k in getattr(samples[0], field)}
        if field == "vbb":
            bias_changes = max((_changes(v) for v in series.values()), default=0)   # one bias, several wells
        moving = [(names, v) for names, v in _group_same(series) if _changes(v)]
        still = [(names, v) for names, v in _group_same(series) if not _changes(v)]
        if moving:
            panels.append((label, moving))
        if still:
            constant.append(f"{label.split(' (')[0]} " + ", ".join(
                f"{' = '.join(names)} {_fmt(v[0], unit)}" for names, v in still))
    fig = Figure(figsize=(10, 2.6 + 1.9 * len(panels) + 0.3 * bool(constant)))
    axes = list(fig.subplots(1 + len(panels), 1, sharex=True, squeeze=False)[:, 0])
    looks: dict[str, tuple[str, str, float]] = {}
    for ax, (label, groups) in zip(axes, [("power (mW)", [([k], v) for k, v in power.items()])] + panels):
        for names, values in groups:
            color, style, width = _domain_style(" = ".join(names), looks)   # a shared line: a look of its own
            ax.step(t, values, where="post", label=" = ".join(names), color=color, linestyle=style, linewidth=width)
        ax.set_ylabel(label)
        ax.legend(**_BESIDE)
        ax.grid(alpha=0.3)
    bias_axes = [ax for ax in axes[1:] if ax.get_ylabel() == "body bias (V)"]
    _shade_compute(out, [axes[0]] + bias_axes)
    axes[-1].set_xlabel("simulated time (µs)")
    note = f" (body bias changed {bias_changes} time{'s' if bias_changes != 1 else ''})" if bias_changes else ""
    axes[0].set_title(f"{name}: power, supply, clocks and body bias{note}")
    room = 0.0
    if constant:
        text = "constant over the run: " + "; ".join(constant)
        fig.text(0.01, 0.01, text, fontsize=MIN_FONT + 1, va="bottom", wrap=True)
        room = (0.08 + 0.18 * -(-len(text) // 140)) / fig.get_figheight()     # ~140 characters a line
    fig.tight_layout(rect=(0, room, 1, 1))      # the note below the panels, not under the time axis
    return fig


def plot_power(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    return _save(power_figure(sc.name, out), path)


#: timeline lanes, bottom to top: (task op, label, colour)
_LANES = (("udma", "I/O DMA (L3<->L2)", "#8e6bbf"), ("dma", "cluster DMA (L2<->L1)", "#4c9be8"),
          ("rbe", "RBE", "#e8804c"), ("kernel", "cluster cores", "#55a868"))


def timeline_figure(name: str, out: "Outcome") -> Figure | None:
    """A lane per kind of task that ran (an idle kind gets no lane)."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for r in (out.records or {}).values():
        if r.start is not None and r.end is not None:
            spans.setdefault(r.op, []).append((r.start / US, max((r.end - r.start) / US, 1e-4)))
    lanes = [(spans[op], label, color) for op, label, color in _LANES if op in spans]
    if not lanes:
        return None
    fig = Figure(figsize=(10, 1.4 + 0.5 * len(lanes)))
    ax = fig.subplots()
    for i, (bars, _, color) in enumerate(lanes):
        ax.broken_barh(bars, (i - 0.4, 0.8), color=color)
    ax.set_yticks(range(len(lanes)), [label for _, label, _ in lanes])
    ax.set_ylim(-0.6, len(lanes) - 0.4)
    ax.set_xlabel("simulated time (µs)")
    ax.set_title(f"{name}: activity timeline (task spans as the host sees them)")
    fig.tight_layout()
    return fig


def plot_timeline(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    return _save(timeline_figure(sc.name, out), path)


def draw_utilisation(ax: Any, names: list[str], utilisation: list[float], total: float, title: str) -> None:
    """A bar per layer (ideal / achieved cycles) and the whole-run line, on ``ax``; the
    legend beside the axes."""
    ax.bar(range(len(names)), utilisation, color="#4477aa", width=0.8, label="per layer")
    ax.axhline(total, color="#cc3311", linestyle="--", linewidth=1.2, label=f"whole run {total:.1%}")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel("MAC utilisation")
    label_categories(ax, names)
    ax.set_title(title)
    ax.legend(**_BESIDE)


def utilisation_figure(panels: list[tuple[str, list[str], list[float], float]]) -> Figure:
    """One panel per (title, layer names, utilisation per layer, whole run)."""
    most = max(len(names) for _, names, _, _ in panels)
    longest = max((len(n) for _, names, _, _ in panels for n in names), default=0)
    # an upright label needs its length in height below the axes (~0.55 em a character)
    fig = Figure(figsize=(category_width(most, 4.0), (3.0 + longest * MIN_FONT * 0.55 / 72) * len(panels)))
    for ax, (title, names, util, total) in zip(fig.subplots(len(panels), 1, squeeze=False)[:, 0], panels):
        draw_utilisation(ax, names, util, total, title)
    fig.tight_layout()
    return fig


def plot_utilisation(sc: "Scenario", out: "Outcome", path: Path) -> bool:
    """One panel per accelerator whose report entry lists its layers."""
    panels = [(f"{acc}: MAC utilisation per layer", [f"{r['name']} {r.get('op', '')}".strip() for r in e["layers"]],
               [r["utilisation"] for r in e["layers"]], e["totals"]["utilisation"])
              for acc, e in out.accelerators.items() if e.get("layers")]
    return _save(utilisation_figure(panels), path) if panels else False


def write_plots(sc: "Scenario", outcome: "Outcome", deployment: Any, out: Path,
                names: list[str] | None = None) -> dict[str, str]:
    """Write the plots that apply to this run; returns {name: file}."""
    written: dict[str, str] = {}
    makers: dict[str, Callable[[Path], bool]] = {
        "layers": lambda p: plot_layers(sc, outcome, deployment, p),
        "power": lambda p: plot_power(sc, outcome, p),
        "timeline": lambda p: plot_timeline(sc, outcome, p),
        "utilisation": lambda p: plot_utilisation(sc, outcome, p)}
    for name in names or PLOTS:
        if name in makers and makers[name](out / f"{name}.png"):
            written[f"plot_{name}"] = str(out / f"{name}.png")
    return written
