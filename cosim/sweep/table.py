"""The sweep's table: one row per point in the space's order (never completion order), with
its parameters, metrics, status, error, scenario hash, run hash and wall time; written as
CSV and Parquet (pyarrow). pandas is imported only here, when a sweep runs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import units
from .spec import Point, SweepSpec, report_value

#: columns that vary between two runs of the same sweep (left out of determinism checks)
VOLATILE = ("wall_s",)


def _cell(v: Any) -> Any:
    """A value a table column can hold: scalars as they are, lists and mappings as JSON text."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return json.dumps(v, sort_keys=True, default=str)


def _metric(report: dict[str, Any], path: str) -> Any:
    """A metric's cell: the report value in the column's unit (cosim/sweep/units.py)."""
    if not report:
        return None
    unit = units.unit_of(path)
    value = report_value(report, path)
    return _cell(unit(value) if unit else value)


def rows(spec: SweepSpec, points: list[Point], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for p, e in zip(points, entries):
        rep = e.get("report") or {}
        row: dict[str, Any] = {"point": p.index}
        row.update({k: _cell(p.params.get(k)) for k in spec.params})
        row.update({m: _metric(rep, path) for m, path in spec.metrics.items()})
        row["status"] = e.get("status")
        row["error"] = e.get("error")
        row["scenario_hash"] = p.key
        row["run_hash"] = ((rep.get("hash") or {}).get("run")) if rep else None
        row["wall_s"] = round(float(e.get("wall_s") or 0.0), 6)
        out.append(row)
    return out


def frame(spec: SweepSpec, points: list[Point], entries: list[dict[str, Any]]) -> Any:
    """The table as a pandas DataFrame; a column of mixed kinds (numbers and texts) becomes text
    so that Parquet can store it."""
    import pandas as pd
    df = pd.DataFrame(rows(spec, points, entries))
    for col in df.columns:
        kinds = {type(v).__name__ for v in df[col] if v is not None and not (isinstance(v, float) and v != v)}
        if len(kinds) > 1 and not kinds <= {"int", "float"}:
            df[col] = [None if v is None else str(v) for v in df[col]]
    if spec.pareto:
        df["pareto"] = pareto_mask(df, *spec.pareto)
    return df


def pareto_mask(df: Any, a: str, b: str) -> list[bool]:
    """True for the points no other point beats on both metrics (both minimised; points
    without both values are never on the front)."""
    vals = []
    for x, y in zip(df[a], df[b]):
        ok = isinstance(x, (int, float)) and isinstance(y, (int, float)) and x == x and y == y
        vals.append((float(x), float(y)) if ok else None)
    # sorted by (a, b), a point is on the front when its b is below every earlier one (or it
    # equals the last front point: duplicates do not dominate each other)
    order = sorted((i for i, v in enumerate(vals) if v is not None), key=lambda i: vals[i])
    mask = [False] * len(vals)
    best, last = float("inf"), None
    for i in order:
        v = vals[i]
        if v[1] < best or v == last:
            mask[i], last = True, v
        best = min(best, v[1])
    return mask


def write(df: Any, out: Path, name: str = "results") -> dict[str, str]:
    """``results.csv`` and ``results.parquet`` in ``out``; their paths."""
    from ..outdir import write_atomic
    csv = write_atomic(out, f"{name}.csv", df.to_csv(index=False))
    pq = write_atomic(out, f"{name}.parquet", lambda f: df.to_parquet(f, index=False, engine="pyarrow"))
    return {"csv": str(csv), "parquet": str(pq)}
