"""Sweep plots (PNG): each metric against each parameter, and the Pareto front of two
metrics with the front's points labelled. Built on matplotlib's Figure, not pyplot, so
a notebook's backend is left alone."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .spec import SweepSpec

#: parameters with more distinct values than this are not labelled one by one
MAX_TICKS = 24


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values if v is not None)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


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
            ax.set_ylabel(m)
            ax.set_title(f"{spec.name}: {m} vs {p}", fontsize=9)
            ax.grid(alpha=0.3)
            fig.tight_layout()
            written[f"{m}_vs_{p}"] = _save(fig, out / f"{_slug(m)}_vs_{_slug(p)}.png")
    return written


def pareto_plot(df: Any, spec: SweepSpec, out: Path) -> dict[str, str]:
    """``pareto_<a>_<b>.png``: every point that ran, the front drawn and its points labelled
    with their parameters."""
    if not spec.pareto or "pareto" not in df:
        return {}
    from matplotlib.figure import Figure
    a, b = spec.pareto
    ok = df[df["status"].isin(["passed", "failed"])]
    if ok.empty or not _numeric(list(ok[a])) or not _numeric(list(ok[b])):
        return {}
    fig = Figure(figsize=(7, 5))
    ax = fig.add_subplot()
    ax.scatter(ok[a], ok[b], s=16, color="#9aa5b1", label="points")
    front = ok[ok["pareto"]].sort_values([a, b])
    ax.plot(front[a], front[b], "o-", color="#d1495b", label="Pareto front")
    for _, row in front.iterrows():
        label = ", ".join(f"{p.split('.')[-1]}={row[p]}" for p in spec.params)
        ax.annotate(label, (row[a], row[b]), textcoords="offset points", xytext=(4, 4), fontsize=6)
    ax.set_xlabel(a)
    ax.set_ylabel(b)
    ax.set_title(f"{spec.name}: Pareto front of {a} and {b} (both minimised)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return {"pareto": _save(fig, out / f"pareto_{_slug(a)}_{_slug(b)}.png")}


def write_plots(df: Any, spec: SweepSpec, out: Path) -> dict[str, str]:
    from ..outdir import subfolder
    out = subfolder(out.parent, out.name)      # never through a link planted in the sweep's folder
    return {**metric_vs_param(df, spec, out), **pareto_plot(df, spec, out)}
