"""What every run records, in one process or many: the run hash (cross-link events and
final memory contents), statistics merged over parts, TLM error records in a canonical
order, and the manifest (how the run was made).

``hash`` combines an order-independent digest of every cross-link event (each event
``(time, key, channel, message)`` is SHA-256 hashed in the canonical encoding of
:mod:`cosim.canon` and the digests are summed mod 2**256, so the order in which processes
saw them does not matter) with the digests of the final memory contents. Nothing here
imports ZeroMQ: a single-process run does not load it.
"""
from __future__ import annotations

import ctypes
import dataclasses
import glob
import hashlib
import importlib.util
import os
import platform
import re
import sys
from typing import Any, Callable, Iterable

import numpy as np

from tlm import Link, Simulator

from .canon import pack, packer

MASK = (1 << 256) - 1
_sha256 = hashlib.sha256
_from_bytes = int.from_bytes


class EventHasher:
    """Link observer (``link.observer``) summing SHA-256 digests of every event sent."""

    __slots__ = ("_sum", "count", "_pack")

    def __init__(self) -> None:
        self._sum = 0
        self.count = 0
        self._pack = packer()

    @property
    def acc(self) -> int:
        """The sum of the digests mod 2**256 (reduced here, not at each of the run's events)."""
        return self._sum & MASK

    def __call__(self, link: Link, from_side: str, time: int, key: tuple, channel: int,
                 message: Any) -> None:
        self._sum += _from_bytes(_sha256(self._pack((time, key, channel, message))).digest(), "big")
        self.count += 1

    def install(self, sim: Simulator) -> "EventHasher":
        pack = self._pack

        def observe(link: Link, from_side: str, time: int, key: tuple, channel: int,
                    message: Any) -> None:
            # :meth:`__call__` as a plain function (called for every event: an instance's
            # ``__call__`` costs a slot lookup more per call)
            self._sum += _from_bytes(_sha256(pack((time, key, channel, message))).digest(), "big")
            self.count += 1

        for link in sim.links:
            link.observer = observe
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
    return sorted(recs, key=lambda r: (r.get("time", 0), pack(sorted(r.items()))))


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


def _dist_version(name: str) -> str:
    """``importlib.metadata.version(name)``, or "not installed"."""
    fast = _wheel_version(name)
    if fast is not None:
        return fast
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _wheel_version(name: str) -> str | None:
    """The version of ``name`` read the way importlib.metadata finds it for a wheel install
    or from a source checkout (the first ``sys.path`` folder holding its ``.dist-info`` or
    ``.egg-info``, ``Version:`` in its headers), without importing importlib.metadata:
    with its email parser that cost ~30 ms of every run's start-up. None when that is not
    clear-cut (two candidates in one folder, no version header): importlib.metadata
    answers then."""
    want = _normalize(name)
    for entry in sys.path:
        try:
            listing = os.listdir(entry or ".")
        except OSError:
            continue
        hits = [f for f in listing if f.endswith((".dist-info", ".egg-info"))
                and _normalize(f.rsplit(".", 1)[0].split("-")[0]) == want]
        if not hits:
            continue
        if len(hits) != 1:
            return None
        meta = os.path.join(entry or ".", hits[0])
        if os.path.isdir(meta):      # a source checkout's egg-info (pip install -e) has PKG-INFO
            meta = os.path.join(meta, "METADATA" if meta.endswith(".dist-info") else "PKG-INFO")
        from tlm.files import FileAccessError, read_text
        try:
            text = read_text(meta, "package_data")
        except FileAccessError:
            return None
        for line in text.splitlines():
            if line.startswith("Version:"):
                return line[len("Version:"):].strip()
            if not line.strip():
                return None        # end of the headers without a version
        return None
    return None


def _libzmq_version() -> str:
    """The version of the libzmq that pyzmq bundles, read from the shared library (no
    ``import zmq``); 'unknown' when pyzmq links a system libzmq we do not look for."""
    spec = importlib.util.find_spec("zmq")
    if spec is None or spec.origin is None:
        return "not installed"
    site = os.path.dirname(os.path.dirname(spec.origin))
    libs = sorted(glob.glob(os.path.join(site, "pyzmq.libs", "libzmq*"))
                  + glob.glob(os.path.join(os.path.dirname(spec.origin), ".dylibs", "libzmq*")))
    for lib in libs:
        try:
            zmq_version = ctypes.CDLL(lib).zmq_version
        except (OSError, AttributeError):
            continue
        parts = [ctypes.c_int() for _ in range(3)]
        zmq_version(*(ctypes.byref(p) for p in parts))
        return ".".join(str(p.value) for p in parts)
    return "unknown"


def versions() -> dict[str, str]:
    """Versions of what a run depends on (read from package metadata: nothing imported)."""
    cosim_v = _dist_version("tlm-cosim")
    if cosim_v == "not installed":  # fall back to the source tree's version
        import tlm
        cosim_v = tlm.__version__
    return {"python": platform.python_version(), "numpy": np.__version__,
            "pyzmq": _dist_version("pyzmq"), "libzmq": _libzmq_version(),
            "msgpack": _dist_version("msgpack"), "tlm-cosim": cosim_v,
            "platform": f"{sys.platform}-{platform.machine()}"}


def run_manifest(builder: str, config: dict, plan: Any, max_time: int | None,
                 facts: dict) -> dict:
    """How a run was made: builder (``module:function``), seed, partition (``plan``: a
    cosim.dist PartitionPlan, None in one process), lookahead, cut links, versions, facts."""
    return {"builder": builder, "seed": int(config.get("seed", 0)),
            "max_time": max_time,
            "partition": plan.groups if plan else None,
            "processes": plan.processes if plan else 1,
            "lookahead": plan.lookahead if plan else None,
            "cut_links": plan.cut_links if plan else [],
            "versions": versions(), **facts}
