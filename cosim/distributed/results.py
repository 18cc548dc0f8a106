"""Split-run results: per-partition statistics and the result dict.

A result is a plain dict, identical in content whatever the partition::

    {"time": ps of the last activity, "stopped": "quiescence" | "max_time" | "stop",
     "stats": {path: {name: value}}, "errors": [TLM error records, canonical order],
     "memories": {path: sha256 hex}, "link_events": n, "hash": hex, "manifest": {...}}

``manifest`` describes the run (partition, lookahead, seed, versions, windows, wall time)
and is the only part that differs between partitions; :func:`comparable` drops it.

The run hash, statistics merging, error order and manifest are :mod:`cosim.results`
(shared with single-process runs); this module adds what only a split run needs.
"""
from __future__ import annotations

from typing import Callable

from tlm import Link, Simulator

from ..results import run_hash


def split_link_paths(sim: Simulator, owner: Callable[[str], int | None]) -> set[str]:
    return {lk.path for lk in sim.links if owner(lk.side_of["a"]) != owner(lk.side_of["b"])}


def partition_stats(sim: Simulator, owner: Callable[[str], int | None], index: int,
                    split_links: set[str]) -> dict:
    """The statistics this partition is the authority for: paths it owns, split links (each
    side counts what it sent), and paths owned by nobody (partition 0 only)."""
    out = {}
    for path, vals in sim.stats.as_dict().items():
        if path in split_links:
            out[path] = vals
            continue
        lk = _link_path(sim, path)
        o = owner(lk.side_of["a"]) if lk is not None else owner(path)
        if o == index or (o is None and index == 0):
            out[path] = vals
    return out


def _link_path(sim: Simulator, path: str) -> Link | None:
    m = sim.modules.get(path)
    return m if isinstance(m, Link) else None


def make_result(*, time: int, stopped: str, stats: dict, errors: list[dict],
                memories: dict[str, str], event_acc: int, event_count: int,
                manifest: dict) -> dict:
    return {"time": time, "stopped": stopped, "stats": stats, "errors": errors,
            "memories": dict(sorted(memories.items())), "link_events": event_count,
            "hash": run_hash(event_acc, memories), "manifest": manifest}


def comparable(result: dict) -> dict:
    """The result without its manifest and per-process parts: what must be identical
    across partitions."""
    return {k: v for k, v in result.items() if k not in ("manifest", "collected")}
