"""Run results: per-partition collection, merging, the run hash and the manifest.

A result is a plain dict, identical in content whatever the partition::

    {"time": ps of the last activity, "stopped": "quiescence" | "max_time" | "stop",
     "stats": {path: {name: value}}, "errors": [TLM error records, canonical order],
     "memories": {path: sha256 hex}, "link_events": n, "hash": hex, "manifest": {...}}

``manifest`` describes the run (partition, lookahead, seed, versions, windows, wall time)
and is the only part that differs between partitions; :func:`comparable` drops it.

``hash`` combines an order-independent digest of every cross-link event (each event
``(time, key, channel, message)`` is SHA-256 hashed canonically and the digests are summed
mod 2**256, so the order in which processes saw them does not matter) with the digests
of the final memory contents.
"""
from __future__ import annotations

import dataclasses
import hashlib
import platform
import sys
from typing import Any, Callable, Iterable

import msgpack
import numpy as np

from tlm import Link, Simulator

MASK = (1 << 256) - 1


def _default(obj: Any) -> Any:
    """msgpack fallback for numpy scalars and byte-likes (models may use them)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"cannot encode {type(obj).__name__} in a link message: use ints, str, bytes, "
                    "None and lists")


_packer = msgpack.Packer(default=_default, use_bin_type=True)


class EventHasher:
    """Link observer (``link.observer``) summing SHA-256 digests of every event sent."""

    __slots__ = ("acc", "count")

    def __init__(self) -> None:
        self.acc = 0
        self.count = 0

    def __call__(self, link: Link, from_side: str, time: int, key: tuple, channel: int,
                 message: Any) -> None:
        d = hashlib.sha256(_packer.pack((time, key, channel, message))).digest()
        self.acc = (self.acc + int.from_bytes(d, "big")) & MASK
        self.count += 1

    def install(self, sim: Simulator) -> "EventHasher":
        for link in sim.links:
            link.observer = self
        return self


def state_digest(sim: Simulator, owned: Callable[[str], bool] | Iterable[str] | None = None
                 ) -> dict[str, str]:
    """SHA-256 of the contents of every numpy-backed memory (a module with an ``array``
    attribute, e.g. tlm.Memory) that ``owned`` selects: a predicate on paths, or component
    paths (a memory is selected when one of them is its path or a parent); None: all."""
    if owned is not None and not callable(owned):
        roots = tuple(owned)
        owned = lambda p: any(p == r or p.startswith(r + ".") for r in roots)  # noqa: E731
    out = {}
    for path in sorted(sim.modules):
        arr = getattr(sim.modules[path], "array", None)
        if isinstance(arr, np.ndarray) and (owned is None or owned(path)):
            h = hashlib.sha256(f"{arr.dtype.str}{arr.shape}".encode())
            h.update(np.ascontiguousarray(arr).data)
            out[path] = h.hexdigest()
    return out


def error_records(sim: Simulator) -> list[dict]:
    """``sim.errors`` as dicts in a canonical order (independent of which process saw them)."""
    recs = [dataclasses.asdict(e) if dataclasses.is_dataclass(e) else {"error": str(e)}
            for e in sim.errors]
    return sort_errors(recs)


def sort_errors(recs: Iterable[dict]) -> list[dict]:
    return sorted(recs, key=lambda r: (r.get("time", 0), _packer.pack(sorted(r.items()))))


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


def merge_stats(parts: Iterable[dict], split_links: set[str]) -> dict:
    """Union of per-partition statistics. A split link's counters come from both of its
    processes: each counts only what its own side sent (the other holds zeros), so equal
    values are kept and different ones added."""
    merged: dict[str, dict] = {}
    for part in parts:
        for path, vals in part.items():
            cur = merged.get(path)
            if cur is None:
                merged[path] = dict(vals)
            elif path in split_links:
                for k, v in vals.items():
                    if k not in cur:
                        cur[k] = v
                    elif cur[k] != v:
                        cur[k] = cur[k] + v
            else:
                raise RuntimeError(f"statistics of {path} reported by two partitions")
    return {p: dict(sorted(merged[p].items())) for p in sorted(merged)}


def run_hash(event_acc: int, memories: dict[str, str]) -> str:
    h = hashlib.sha256(b"tlm-cosim run v1")
    h.update(event_acc.to_bytes(32, "big"))
    for path in sorted(memories):
        h.update(path.encode() + b"\0" + memories[path].encode() + b"\0")
    return h.hexdigest()


def hash_record(run: str, link_events: int, memories: dict[str, str]) -> dict:
    """The report's ``hash`` block: the run hash, the cross-link event count, and the
    digest of every memory's final contents."""
    return {"run": run, "link_events": link_events, "memories": dict(sorted(memories.items()))}


def versions() -> dict[str, str]:
    import zmq

    try:
        from importlib.metadata import version
        cosim_v = version("tlm-cosim")
    except Exception:  # noqa: BLE001 - not installed: fall back to the source tree's version
        import tlm
        cosim_v = tlm.__version__
    return {"python": platform.python_version(), "numpy": np.__version__,
            "pyzmq": zmq.__version__, "libzmq": zmq.zmq_version(),
            "msgpack": ".".join(map(str, msgpack.version)), "tlm-cosim": cosim_v,
            "platform": f"{sys.platform}-{platform.machine()}"}


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
