"""The building blocks of the scenario schema (addresses, times, bounded integers, task
fields), shared by :mod:`cosim.scenario.schema` and the schema fragments accelerator
families declare (docs/plugins.md), so a fragment never imports the assembled schema."""
from __future__ import annotations

from typing import Any, TypedDict

from tlm.units import FREQ_MAX, FREQ_MIN, TIME_MAX

#: Sizes and counts: at most 1 GiB (the largest memory a platform may model, see
#: HyperRamParams.capacity); a task must also fit the region it names (checked against the
#: memory map before the run).
MAX_BYTES = 1 << 30
WORD32 = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}
#: Tensor dimensions: up to 4096 (the RBE's OUT_SIZE fields hold 16 bits; a 4096x4096
#: feature map is already far beyond what an edge SoC's memories hold); the memory budget
#: (limits.max_memory) and the platform's memories bound the network as a whole.
MAX_DIM = 4096


def integer(lo: int, hi: int, doc: str = "") -> dict:
    """An integer in ``[lo, hi]``."""
    out: dict[str, Any] = {"type": "integer", "minimum": lo, "maximum": hi}
    if doc:
        out["description"] = doc
    return out


def obj(props: dict, required: tuple = (), doc: str = "") -> dict:
    """A mapping with exactly these keys (``required`` among them)."""
    return {"type": "object", "properties": props, "required": list(required),
            "additionalProperties": False, "description": doc}


ADDRESS = {"type": ["integer", "string"], "minimum": 0, "maximum": 2**64 - 1,
           "description": "an integer, or a memory-map region name plus an optional offset: "
                          "'l2', 'tcdm+0x400', 'hyperram+4096'"}
TIME = {"type": ["integer", "string"], "minimum": 0, "maximum": TIME_MAX,
        "description": "ps as an integer, or '10 ns', '2.5 ms' (at most an hour)"}
FREQ = {"type": ["number", "string"], "minimum": FREQ_MIN, "maximum": FREQ_MAX,
        "description": "Hz as a number, or '420 MHz'"}
PATH = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_\[\]]*(\.[A-Za-z_][A-Za-z0-9_\[\]]*)*$",
        "description": "a hierarchical component path, e.g. cluster.rbe"}

TASK_COMMON = {
    "op": {"type": "string"},
    "id": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_\-]*$",
           "description": "unique task name (defaults to op + index)"},
    "after": {"type": "array", "items": {"type": "string"},
              "description": "ids of the tasks that must finish before this one starts"},
    "label": {"type": "string", "description": "free text shown in reports and traces"},
    "layer": {"type": "string", "description": "the network layer a task belongs to (reports)"},
    "category": {"enum": ["l3_l2", "l2_l1", "compute", "other"],
                 "description": "what the task's time counts as in per-layer reports"},
}


class SchemaFragment(TypedDict, total=False):
    """What an accelerator family adds to the scenario schema (docs/plugins.md): task
    operations, network layer types and their keys, network keys, workload keys."""

    ops: dict[str, dict]
    layer_types: list[str]
    layer: dict[str, dict]
    network: dict[str, dict]
    workload: dict[str, dict]
