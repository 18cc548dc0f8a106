"""Sweep plots (PNG): each metric against each parameter, and the Pareto front of two
metrics with the front's points labelled. Built on matplotlib's Figure, not pyplot, so
a notebook's backend is left alone."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .spec import SweepSpec
from .units import axis_label

#: parameters with more distinct values than this are not labelled one by one
MAX_TICKS = 24


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values if v is not None)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


def _short(param: str) -> str:
    """A parameter by the last part of its path (``operating_point``)."""
    return param.split(".")[-1]


def _save(fig: Any, path: Path) -> str:
    from ..outdir import write_atomic
    write_atomic(path.parent, path.name, lambda f: fig.savefig(f, format="png", dpi=110))
    return str(path)


def metric_vs_param(df: Any, spec: SweepSpec, out: Path) -> dict[str, str]:
    """``<metric>_vs_<param>.png`` for every numeric metric and every parameter: a point per
    row that ran (passed or failed checks); categorical parameters in the space's order."""
    from matplotlib.figure import Figure
    written: dict[str, str] = {}
    ok = df[df["status"].isin(["passed", "failed"])]
    if ok.empty:
        return written
    for m in spec.metrics:
        ys = list(ok[m])
        if not ys or not _numeric(ys) or all(y is None for y in ys):
            continue
        for p in spec.params:
            xs = list(ok[p])
            fig = Figure(figsize=(6, 4))
            ax = fig.add_subplot()
            if _numeric(xs):
                ax.scatter(xs, ys, s=18)
            else:
                cats = list(dict.fromkeys(str(x) for x in df[p]))
                pos = {c: i for i, c in enumerate(cats)}
                ax.scatter([pos[str(x)] for x in xs], ys, s=18)
                if len(cats) <= MAX_TICKS:
                    ax.set_xticks(range(len(cats)), cats, rotation=30, fontsize=7, ha="right")
            ax.set_xlabel(p)
            ax.set_ylabel(axis_label(m, spec.metrics[m]))
            ax.set_title(f"{spec.name}: {m} vs {p}", fontsize=9)
            ax.grid(alpha=0.3)
            fig.tight_layout()
            written[f"{m}_vs_{p}"] = _save(fig, out / f"{_slug(m)}_vs_{_slug(p)}.png")
    return written


def pareto_figure(df: Any, spec: SweepSpec) -> Any:
    """The Pareto figure (a matplotlib Figure with an Agg canvas), or None when there is
    nothing to draw: every point that ran, the front drawn, its points labelled with their
    parameters where the labels overlap neither each other nor a point."""
    if not spec.pareto or "pareto" not in df:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    a, b = spec.pareto
    ok = df[df["status"].isin(["passed", "failed"])]
    if ok.empty or not _numeric(list(ok[a])) or not _numeric(list(ok[b])):
        return None
    fig = Figure(figsize=(7, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.scatter(ok[a], ok[b], s=16, color="#9aa5b1", label="points")
    front = ok[ok["pareto"]].sort_values([a, b])
    ax.plot(front[a], front[b], "o-", color="#d1495b", label="Pareto front")
    ax.set_xlabel(axis_label(a, spec.metrics[a]))
    ax.set_ylabel(axis_label(b, spec.metrics[b]))
    # a label names what differs between the front's points; what they share, the title says once
    varying = [p for p in spec.params if front[p].astype(str).nunique() > 1] or list(spec.params)
    shared = [p for p in spec.params if p not in varying]
    title = f"{spec.name}: Pareto front of {a} and {b} (both minimised)"
    if shared:
        title += "\nevery front point: " + ", ".join(f"{_short(p)}={front[p].iloc[0]}" for p in shared)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.margins(x=0.2, y=0.12)       # room for the labels inside the axes
    fig.tight_layout()
    labels = ["\n".join(f"{_short(p)}={row[p]}" for p in varying) for _, row in front.iterrows()]
    anchors = [(float(x), float(y)) for x, y in zip(front[a], front[b])]
    place_labels(ax, anchors, labels, [(float(x), float(y)) for x, y in zip(ok[a], ok[b])])
    return fig


#: where a label may go around its point (offset points), nearest first; below and left
#: first: no point lies below-left of the front (it would dominate a front point)
_OFFSETS = [(dx * r, dy * r) for r in (5, 14, 26, 40, 56, 74, 94)
            for dx, dy in ((-1, -1), (-1.4, 0), (0, -1.2), (1, -1), (-1, 1), (1, 1), (0, 1.2), (1.4, 0))]


def place_labels(ax: Any, anchors: list[tuple[float, float]], labels: list[str],
                 others: list[tuple[float, float]], fontsize: float = 6.5) -> None:
    """Annotate each anchor with its label at the nearest offset where the label's box
    stays inside the axes, overlaps no label placed before nor any point and is nearest
    its own point (greedy, measured with the figure's renderer; where no place is clear,
    the least bad one); a label moved off its point gets a thin line."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    screen = ax.bbox.padded(-2)      # inside the axes: clear of ticks, axis labels and title
    dots = [ax.transData.transform(xy) for xy in others + anchors]
    # the front's line too: points along each segment between two anchors, in pixels
    for (x0, y0), (x1, y1) in zip(dots[len(others):], dots[len(others) + 1:]):
        n = max(2, int(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 // 4))
        dots += [(x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n) for i in range(1, n)]
    placed: list[Any] = [ax.get_legend().get_window_extent(renderer)] if ax.get_legend() else []

    marks = dots[len(others):len(others) + len(anchors)]

    def clash(box: Any, own: int) -> int:
        """How badly a label's box sits: outside the axes or on another label (worst), on
        a point or the front's line, nearer another front point than its own (so that it
        would read as that point's); 0 when it is clear of all of these."""
        big = box.padded(2)
        near = _distance(box, marks[own])
        return (1000 * (not (screen.contains(box.x0, box.y0) and screen.contains(box.x1, box.y1)))
                + 1000 * sum(big.overlaps(p) for p in placed)
                + 10 * sum(big.contains(x, y) for x, y in dots)
                + sum(_distance(box, m) <= near for i, m in enumerate(marks) if i != own))
    for own, (xy, text) in enumerate(zip(anchors, labels)):
        best: tuple[int, float, float] | None = None
        for dx, dy in _OFFSETS:
            ann = _annotate(ax, text, xy, dx, dy, fontsize)
            score = clash(_text_box(ann, renderer), own)
            ann.remove()
            if best is None or score < best[0]:
                best = (score, dx, dy)
            if score == 0:
                break
        assert best is not None
        # the first clear place, or else the least bad one (a label is never dropped)
        ann = _annotate(ax, text, xy, best[1], best[2], fontsize)
        placed.append(_text_box(ann, renderer))


def _distance(box: Any, point: Any) -> float:
    """Pixels from ``point`` to the nearest edge of ``box`` (0 inside)."""
    x, y = point
    dx = max(box.x0 - x, 0.0, x - box.x1)
    dy = max(box.y0 - y, 0.0, y - box.y1)
    return float((dx * dx + dy * dy) ** 0.5)


def _annotate(ax: Any, text: str, xy: tuple[float, float], dx: float, dy: float, fontsize: float) -> Any:
    """``text`` at (dx, dy) points from ``xy``, aligned away from it; a thin line back to
    ``xy`` when it stands off."""
    far = abs(dx) + abs(dy) > 12
    return ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                       ha="left" if dx > 0 else "right" if dx < 0 else "center",
                       va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                       arrowprops={"arrowstyle": "-", "lw": 0.6, "color": "#444444", "shrinkA": 0,
                                   "shrinkB": 3} if far else None)


def _text_box(ann: Any, renderer: Any) -> Any:
    """The box of an annotation's text alone, in pixels (its line to the point left out)."""
    from matplotlib.text import Text
    ann.update_positions(renderer)
    return Text.get_window_extent(ann, renderer)


def pareto_plot(df: Any, spec: SweepSpec, out: Path) -> dict[str, str]:
    """``pareto_<a>_<b>.png`` (:func:`pareto_figure`), or nothing to draw."""
    fig = pareto_figure(df, spec)
    if fig is None:
        return {}
    a, b = spec.pareto or ("", "")
    return {"pareto": _save(fig, out / f"pareto_{_slug(a)}_{_slug(b)}.png")}


def write_plots(df: Any, spec: SweepSpec, out: Path) -> dict[str, str]:
    from ..outdir import subfolder
    out = subfolder(out.parent, out.name)      # never through a link planted in the sweep's folder
    return {**metric_vs_param(df, spec, out), **pareto_plot(df, spec, out)}
