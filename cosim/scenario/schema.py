"""The scenario schema (JSON Schema, draft 2020-12), one source of truth.

Tasks are validated in two steps so errors stay readable: the top-level schema checks that
each task has a known ``op``; then the task is checked against that op's own schema.
``cosim schema`` / ``export()`` write it as JSON (docs/scenario.schema.json).
"""
from __future__ import annotations

import copy
import json
from typing import Any

INT_OR_STR = {"type": ["integer", "string"]}
ADDRESS = {"type": ["integer", "string"],
           "description": "an integer, or a memory-map region name plus an optional offset: "
                          "'l2', 'tcdm+0x400', 'hyperram+4096'"}
TIME = {"type": ["integer", "string"], "description": "ps as an integer, or '10 ns', '2.5 ms'"}
FREQ = {"type": ["number", "string"], "description": "Hz as a number, or '420 MHz'"}
PATH = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_\[\]]*(\.[A-Za-z_][A-Za-z0-9_\[\]]*)*$",
        "description": "a hierarchical component path, e.g. cluster.rbe"}


def _obj(props: dict, required: tuple = (), doc: str = "") -> dict:
    return {"type": "object", "properties": props, "required": list(required),
            "additionalProperties": False, "description": doc}


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

DATA_SOURCE = {
    "description": "where the bytes come from: a file (.npy or raw .bin, relative to the "
                   "scenario), or seeded random data",
    "type": "object",
    "properties": {
        "file": {"type": "string"},
        "random": _obj({"count": {"type": "integer", "minimum": 1},
                        "dtype": {"enum": ["uint8", "int8", "uint16", "int16", "uint32", "int32"]},
                        "low": {"type": "integer"}, "high": {"type": "integer"}},
                       ("count",), "count values of dtype uniformly in [low, high)"),
        "fill": _obj({"count": {"type": "integer", "minimum": 1},
                      "value": {"type": "integer", "minimum": 0, "maximum": 255}}, ("count",)),
    },
    "additionalProperties": False,
    "minProperties": 1, "maxProperties": 1,
}

OPS: dict[str, dict] = {
    "load": _obj({**TASK_COMMON, "to": ADDRESS, "data": DATA_SOURCE}, ("op", "to", "data"),
                 "put bytes into a memory (debug access: takes no simulated time)"),
    "dma": _obj({**TASK_COMMON, "src": ADDRESS, "dst": ADDRESS,
                 "size": {"type": "integer", "minimum": 1,
                          "description": "bytes (1D), or bytes per row (2D)"},
                 "rows": {"type": "integer", "minimum": 1},
                 "src_stride": {"type": "integer"}, "dst_stride": {"type": "integer"}},
                ("op", "src", "dst", "size"),
                "a cluster DMA transfer L2 <-> TCDM (1D, or 2D with rows and strides)"),
    "udma": _obj({**TASK_COMMON, "src": ADDRESS, "dst": ADDRESS,
                  "size": {"type": "integer", "minimum": 1}},
                 ("op", "src", "dst", "size"),
                 "an I/O DMA transfer between L2 and HyperRAM (one side is 'hyperram+...')"),
    "rbe": _obj({**TASK_COMMON,
                 "mode": {"enum": ["3x3", "1x1"]},
                 "w_bits": {"type": "integer", "minimum": 2, "maximum": 8},
                 "i_bits": {"type": "integer", "minimum": 2, "maximum": 8},
                 "o_bits": {"type": "integer", "minimum": 2, "maximum": 8},
                 "k_in": {"type": "integer", "minimum": 32}, "k_out": {"type": "integer", "minimum": 32},
                 "h_out": {"type": "integer", "minimum": 1}, "w_out": {"type": "integer", "minimum": 1},
                 "shift": {"type": "integer", "minimum": 0, "maximum": 31},
                 "relu": {"type": "boolean"},
                 "input": ADDRESS, "weights": ADDRESS, "normquant": ADDRESS, "output": ADDRESS,
                 **{k: {"type": "integer", "minimum": 0,
                        "description": "byte stride (default: dense layout)"}
                    for k in ("x_row_stride", "x_pix_stride", "y_row_stride", "y_pix_stride")}},
                ("op", "mode", "w_bits", "i_bits", "o_bits", "k_in", "k_out", "h_out", "w_out",
                 "input", "weights", "normquant", "output"),
                "one RBE job programmed through its registers"),
    "kernel": _obj({**TASK_COMMON,
                    "name": {"type": "string", "description": "a cluster kernel (see cosim list kernels)"},
                    "cores": {"type": "integer", "minimum": 1, "maximum": 16},
                    "args": {"type": "object"}},
                   ("op", "name"), "a kernel on the cluster cores"),
    "pmu": _obj({**TASK_COMMON,
                 "domain": {"enum": ["soc", "cluster", "periph"]},
                 "frequency": FREQ, "voltage": {"type": "number"},
                 "operating_point": {"type": "string"},
                 "abb": {"type": "boolean"},
                 "power": {"enum": ["on", "off", "clock_gated"]}},
                ("op", "domain"), "change a domain's frequency, voltage, ABB or power state"),
    "mmio": _obj({**TASK_COMMON,
                  "accesses": {"type": "array", "minItems": 1, "items": {
                      "oneOf": [
                          _obj({"write": ADDRESS, "value": {"type": "integer", "minimum": 0,
                                                            "maximum": 2**32 - 1}},
                               ("write", "value"), "write a 32-bit word"),
                          _obj({"read": ADDRESS, "expect": {"type": "integer", "minimum": 0,
                                                            "maximum": 2**32 - 1},
                                "until": {"type": "integer", "minimum": 0, "maximum": 2**32 - 1},
                                "mask": {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}},
                               ("read",), "read a 32-bit word (the task fails if it is not "
                               "'expect'; with 'until', poll every 100 ns until "
                               "value & mask == until)"),
                          _obj({"wait_irq": {"type": "string"}}, ("wait_irq",),
                               "wait for the next pulse of an interrupt bound to the host "
                               "(e.g. an RTL block's '<path>.<adapter>')")]}}},
                 ("op", "accesses"), "32-bit register reads/writes by the host, in order"),
    "wait": _obj({**TASK_COMMON, "time": TIME}, ("op", "time"), "let simulated time pass"),
    "barrier": _obj({**TASK_COMMON}, ("op",), "wait for the tasks in 'after' (joins branches)"),
}

CHECK = {
    "type": "object",
    "description": "one check; a failed check makes `cosim run` exit with code 1",
    "properties": {
        "name": {"type": "string"},
        "memory": _obj({"name": {"type": "string"}, "at": ADDRESS, "size": {"type": "integer", "minimum": 1},
                        "equals_file": {"type": "string"},
                        "equals_memory": ADDRESS,
                        "golden": {"type": "string",
                                   "description": "a deployed network's tensor by layer name "
                                                  "(or 'input'): its expected L2 image"}},
                       (), "memory contents against a file, another region or a network's "
                       "golden tensor ('at' is needed except with golden)"),
        "stat": _obj({"path": PATH, "name": {"type": "string", "description": "the statistic"},
                      "min": {"type": "number"}, "max": {"type": "number"},
                      "equals": {"type": ["number", "string"]}},
                     ("path", "name"), "a statistic within bounds"),
        "no_tlm_errors": {"type": "boolean"},
        "deadline": TIME,
        "firmware_exit": {"type": "integer"},
        "stdout_contains": {"type": "string"},
    },
    "additionalProperties": False,
    "minProperties": 1,
}

SCENARIO: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://tlm-cosim.invalid/scenario.schema.json",
    "title": "tlm-cosim scenario",
    "type": "object",
    "additionalProperties": False,
    "required": ["platform", "workload"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "seed": {"type": "integer", "minimum": 0, "maximum": 2**32 - 1},
        "platform": _obj({
            "preset": {"type": "string", "description": "a platform by name (cosim list "
                       "platforms); `platform: marsellus` is short for `platform: {preset: "
                       "marsellus}`"},
            "file": {"type": "string", "description": "a platform composed in YAML "
                     "(docs/platforms.md), relative to the scenario"},
            "compose": {"type": "object", "description": "a platform composed in YAML, "
                        "inline (docs/platforms.md)"},
            "overrides": {"type": "object", "description": "parameter path -> value, e.g. "
                          "cluster.tcdm.mode: word", "propertyNames": PATH},
            "models": {"type": "object", "propertyNames": PATH,
                       "additionalProperties": {"enum": ["tlm", "rtl", "shadow"]},
                       "description": "component path -> tlm | rtl | shadow"},
            "rtl_blocks": {"type": "object", "propertyNames": PATH,
                           "description": "RTL blocks added from a port map: 'soc.<name>' -> "
                                          "sources, top, port map (docs/rtl.md)",
                           "additionalProperties": _obj({
                               "sources": {"type": "array", "minItems": 1,
                                           "items": {"type": "string"}},
                               "top": {"type": "string"},
                               "parameters": {"type": "object"},
                               "include_dirs": {"type": "array", "items": {"type": "string"}},
                               "clock": {"type": "object"},
                               "reset": {"type": "object"},
                               "adapters": {"type": "object", "minProperties": 1},
                               "busy": {"type": "string", "description": "a 1-bit output: "
                                        "1 while the block works on its own"},
                               "quantum_ns": {"type": "number", "exclusiveMinimum": 0},
                           }, ("sources", "top", "clock", "adapters"))},
        }, (), "the platform: a name, a platform file or an inline composition, with "
           "overrides"),
        "partition": {"description": "groups of component paths, one per process: "
                      "'soc,hyperram|cluster' or a list of lists",
                      "type": ["string", "array"],
                      "items": {"type": "array", "items": PATH}},
        "workload": _obj({
            "firmware": {"type": "string", "description": "an ELF for the SOC core"},
            "tasks": {"type": "array", "items": {
                "type": "object", "required": ["op"],
                "properties": {"op": {"enum": sorted(OPS)}}}},
            "network": {"type": "object", "description": "a quantised network to deploy "
                        "(see docs/scenarios.md)"},
        }, (), "what runs: firmware, a task list, a network (any combination)"),
        "checks": {"type": "array", "items": CHECK},
        "outputs": _obj({
            "dir": {"type": "string", "minLength": 1},
            "report": {"type": "boolean"},
            "trace": {"type": "boolean"},
            "plots": {"type": ["boolean", "array"], "items": {"enum": ["layers", "power", "timeline"]}},
        }),
        "limits": _obj({"max_time": TIME,
                        "max_wall": {"type": "number", "exclusiveMinimum": 0,
                                     "description": "seconds of wall time"}}),
    },
}


def scenario_schema() -> dict:
    """The full schema with the per-op task schemas under ``$defs``."""
    s = copy.deepcopy(SCENARIO)
    s["$defs"] = {"task_" + k: v for k, v in OPS.items()}
    return s


def export(path: str | None = None) -> str:
    text = json.dumps(scenario_schema(), indent=2, sort_keys=True) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    return text
