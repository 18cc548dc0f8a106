"""Per-layer latency of a deployed network: L3->L2, L2->L1 and compute, from task records."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tlm.units import US

if TYPE_CHECKING:
    from ..host import TaskRecord

CATEGORIES = ("l3_l2", "l2_l1", "compute")
#: what the columns mean (printed under the table): they overlap, by design
CAPTION = ("span: from the layer's first L2->L1 or compute task to its last. The other columns are the "
           "time each kind of work was busy, and they overlap (double buffering): L2->L1 moves run beside "
           "compute, and L3->L2 is the prefetch of this layer's weights during the layer before, so it "
           "can exceed the span.")

#: the placement column's meaning; each row's ``reason`` (report.json) says why
PLACEMENT_CAPTION = (" placement: where the layer ran and in which RBE mode; report.json's rows give the "
                     "reason (the modelled cycles of every candidate, cosim/deploy/placement.py).")


def _union(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def layer_rows(records: "dict[str, TaskRecord] | None", deployment: Any) -> list[dict[str, Any]]:
    """One row per layer: its span (its L2->L1 and compute work; the L3->L2 prefetch of its
    weights happens during the previous layer) and the time each category was busy (ps;
    overlapping tasks of one category count once, so the columns can overlap each other:
    that overlap is the double buffering)."""
    recs = [r for r in (records or {}).values() if r.layer and r.start is not None and r.end is not None]
    layers: dict[str, list] = {}
    for r in recs:
        layers.setdefault(r.layer, []).append(r)
    order = [ly.name for ly in deployment.network.layers]
    rows = []
    for name in order:
        rs = layers.get(name)
        if not rs:
            continue
        # the span is the layer's own work; its weights' L3 prefetch overlaps the layer before
        own = [r for r in rs if r.category != "l3_l2"] or rs
        start, end = min(r.start for r in own), max(r.end for r in own)
        row = {"layer": name, "start_ps": start, "end_ps": end, "span_ps": end - start}
        for c in CATEGORIES:
            row[f"{c}_ps"] = _union([(r.start, r.end) for r in rs if r.category == c])
        ops = sum(r.detail.get("ops", 0) for r in rs)
        if ops:
            row["ops"] = ops
        info = deployment.layer_info.get(name, {})
        for key in ("placement", "reason", "candidates", "real_ops", "rbe_ops"):
            if key in info:
                row[key] = info[key]
        rows.append(row)
    return rows


def _onnx_columns(table: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """For an imported ONNX model: two more columns (its ONNX ops, where it ran) and every
    ONNX node's placement (kept apart so that the table's own columns can grow)."""
    def wrapped(records: "dict[str, TaskRecord] | None", deployment: Any) -> dict[str, Any]:
        out = table(records, deployment)
        onnx = getattr(deployment, "onnx", None)
        if onnx:
            out["placement"] = {"columns": ["ONNX node", "op", "layer", "where / why"], "rows": onnx["placement"]}
            out["table"]["columns"] += ["ONNX ops", "runs on"]
            for row, r in zip(out["table"]["rows"], out["rows"]):
                info = deployment.layer_info.get(r["layer"], {})
                row += [info.get("onnx_ops", ""), info.get("runs_on", "")]
        return out
    return wrapped


def _own_summary(table: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A deployment with a table of its own (``deployment.layer_table(records)``, e.g. a
    compiled program's summary) reports that instead."""

    def wrapped(records: "dict[str, TaskRecord] | None", deployment: Any) -> dict[str, Any]:
        own = getattr(deployment, "layer_table", None)
        if callable(own):
            got = own(records)
            if got is not None:
                return got
        return table(records, deployment)
    return wrapped


@_own_summary
@_onnx_columns
def layer_table(records: "dict[str, TaskRecord] | None", deployment: Any) -> dict[str, Any]:
    rows = layer_rows(records, deployment)
    us = lambda v: f"{v / US:.2f}"  # noqa: E731
    rbe = sum(r.get("rbe_ops", 0) for r in rows)
    real = sum(r.get("real_ops", 0) for r in rows if "rbe_ops" in r)
    out = {
        "rows": rows,
        "total_ps": (max(r["end_ps"] for r in rows) - min(r["start_ps"] for r in rows)) if rows else 0,
        "table": {"columns": ["layer", "span µs", "L3->L2 µs", "L2->L1 µs", "compute µs", "placement"],
                  "caption": CAPTION + PLACEMENT_CAPTION,
                  "rows": [[r["layer"], us(r["span_ps"]), us(r["l3_l2_ps"]), us(r["l2_l1_ps"]),
                            us(r["compute_ps"]), r.get("placement", "")] for r in rows]},
    }
    if real:
        # what the RBE executes (padded channels, stride-1 work) against the convolutions' own ops
        out["rbe_ops"], out["conv_real_ops"] = rbe, real
        out["rbe_ops_per_real_op"] = round(rbe / real, 4)
    return out
