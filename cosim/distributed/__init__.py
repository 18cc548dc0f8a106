"""Distributed simulation over ZeroMQ: conservative windows (YAWNS) between a coordinator
and one worker process per partition, with results identical to a single process.

Entry points (see docs/distributed.md):

* :func:`run_local` / :func:`run_distributed` -- same result dict either way;
* :func:`parse_partition`, :func:`auto_partition`, :func:`prepare` -- partitions, checked
  before anything starts (:class:`PartitionError`);
* :func:`worker_main` (``cosim worker``), :func:`keys_main` (``cosim keys``);
* :class:`DistOptions` (endpoints, keys, deadlines, ``on_abort``), :class:`DistributedError`.

Names are imported lazily, so ``python -m cosim.distributed.worker`` loads only what a worker needs.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Coordinator": "coordinator", "DistOptions": "coordinator", "WorkerInfo": "coordinator",
    "coordinator_main": "coordinator", "prepare": "coordinator",
    "run_distributed": "coordinator", "run_local": "coordinator",
    "generate_keys": "keys", "keys_main": "keys",
    "Assignment": "partition", "PartitionError": "partition", "PartitionPlan": "partition",
    "auto_partition": "partition", "build_platform": "partition",
    "normalize_partition": "partition", "parse_partition": "partition", "plan": "partition",
    "units": "partition",
    "DistributedError": "protocol",
    "comparable": "results", "state_digest": "results",
    "worker_main": "worker",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'cosim.distributed' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
