"""The data a ``load`` task puts into memory: a file (.npy or raw bytes), a fill pattern or
seeded random values (one place for both the bytes and their size before reading them)."""
from __future__ import annotations

import numpy as np

from tlm.files import file_size

from .errors import ScenarioError
from .loader import Scenario

_DTYPE_BYTES = {"uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "uint32": 4, "int32": 4}


def load_bytes(sc: Scenario, task: dict) -> int:
    """How many bytes ``task`` loads, without generating or reading them (a file's size as
    it stands; 0 for a missing file, which :func:`load_data` reports with its key)."""
    src = task.get("data") or {}
    if "fill" in src:
        return int(src["fill"]["count"])
    if "random" in src:
        return int(src["random"]["count"]) * _DTYPE_BYTES[src["random"].get("dtype", "uint8")]
    try:
        return file_size(sc.resolve_file(src["file"], ()))
    except (ScenarioError, KeyError):
        return 0


def load_data(sc: Scenario, task: dict, i: int) -> bytes:
    """The bytes ``task`` (``workload.tasks[i]``) loads; random values are seeded by the
    scenario's seed and the task's id."""
    src = task["data"]
    key = ("workload", "tasks", i, "data")
    if "file" in src:
        return sc.read_data(src["file"], key + ("file",))
    if "fill" in src:
        return bytes([src["fill"].get("value", 0)]) * src["fill"]["count"]
    r = src["random"]
    dtype = np.dtype(r.get("dtype", "uint8"))
    info = np.iinfo(dtype)
    lo, hi = r.get("low", int(info.min)), r.get("high", int(info.max) + 1)
    if not int(info.min) <= lo < hi <= int(info.max) + 1:
        raise sc.error(f"random {dtype.name} values need {int(info.min)} <= low < high <= {int(info.max) + 1}, "
                       f"got low {lo}, high {hi}", key + ("random",))
    rng = np.random.default_rng(np.random.SeedSequence([sc.seed, *task["id"].encode()]))
    return rng.integers(lo, hi, size=r["count"], dtype=np.int64).astype(dtype).tobytes()
