"""The scenario schema (JSON Schema, draft 2020-12), one source of truth.

Tasks are validated in two steps so errors stay readable: the top-level schema checks that
each task has a known ``op``; then the task is checked against that op's own schema.
``cosim schema`` / ``export()`` write it as JSON (docs/scenario.schema.json).
"""
from __future__ import annotations

import copy
import json
from typing import Any

from components.plugins import families

from .schema_parts import ADDRESS, FREQ, MAX_BYTES, MAX_DIM, PATH, TASK_COMMON, TIME, WORD32, SchemaFragment
from .schema_parts import integer as _int
from .schema_parts import obj as _obj

DATA_SOURCE = {
    "description": "where the bytes come from: a file (.npy or raw .bin, relative to the "
                   "scenario), or seeded random data",
    "type": "object",
    "properties": {
        "file": {"type": "string"},
        "random": _obj({"count": _int(1, MAX_BYTES),
                        "dtype": {"enum": ["uint8", "int8", "uint16", "int16", "uint32", "int32"]},
                        "low": _int(-2**31, 2**32), "high": _int(-2**31, 2**32)},
                       ("count",), "count values of dtype uniformly in [low, high)"),
        "fill": _obj({"count": _int(1, MAX_BYTES),
                      "value": {"type": "integer", "minimum": 0, "maximum": 255}}, ("count",)),
    },
    "additionalProperties": False,
    "minProperties": 1, "maxProperties": 1,
}

#: a name in an mmio expression (a constant, or a read's 'as')
MMIO_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$", "maxLength": 64}

OPS: dict[str, dict] = {
    "load": _obj({**TASK_COMMON, "to": ADDRESS, "data": DATA_SOURCE}, ("op", "to", "data"),
                 "put bytes into a memory (debug access: takes no simulated time)"),
    "dma": _obj({**TASK_COMMON, "src": ADDRESS, "dst": ADDRESS,
                 "size": _int(1, MAX_BYTES, "bytes (1D), or bytes per row (2D)"),
                 "rows": _int(1, MAX_BYTES),
                 "src_stride": _int(-MAX_BYTES, MAX_BYTES), "dst_stride": _int(-MAX_BYTES, MAX_BYTES)},
                ("op", "src", "dst", "size"),
                "a cluster DMA transfer L2 <-> TCDM (1D, or 2D with rows and strides)"),
    "udma": _obj({**TASK_COMMON, "src": ADDRESS, "dst": ADDRESS,
                  "size": _int(1, MAX_BYTES)},
                 ("op", "src", "dst", "size"),
                 "an I/O DMA transfer between L2 and HyperRAM (one side is 'hyperram+...')"),
    "kernel": _obj({**TASK_COMMON,
                    "name": {"type": "string", "description": "a cluster kernel (see cosim list kernels)"},
                    "cores": {"type": "integer", "minimum": 1, "maximum": 16},
                    "args": {"type": "object"}},
                   ("op", "name"), "a kernel on the cluster cores"),
    "pmu": _obj({**TASK_COMMON,
                 "domain": {"enum": ["soc", "cluster", "periph"]},
                 "frequency": FREQ,
                 "voltage": {"type": "number", "minimum": 0.1, "maximum": 3.0,
                             "description": "supply voltage in V (the chip's operating points "
                                            "say which values it accepts)"},
                 "operating_point": {"type": "string"},
                 "abb": {"type": "boolean"},
                 "power": {"enum": ["on", "off", "clock_gated"]}},
                ("op", "domain"), "change a domain's frequency, voltage, ABB or power state"),
    "mmio": _obj({**TASK_COMMON,
                  "constants": {"type": "object", "maxProperties": 256,
                                "propertyNames": MMIO_NAME,
                                "additionalProperties": _int(-2**63, 2**64 - 1),
                                "description": "names for the expressions of this task's "
                                               "writes"},
                  "accesses": {"type": "array", "minItems": 1, "maxItems": 1 << 16, "items": {
                      "oneOf": [
                          _obj({"write": ADDRESS, "value": {"oneOf": [WORD32, _obj(
                              {"expr": {"type": "string", "minLength": 1, "maxLength": 512}},
                              ("expr",), "an integer expression: literals, constants, "
                              "earlier reads named with 'as', + - * // % << >> & | ^ ~ and "
                              "parentheses")]}},
                               ("write", "value"), "write a 32-bit word"),
                          _obj({"write": ADDRESS, "values": _obj(
                              {"file": {"type": "string", "maxLength": 4096},
                               "dtype": {"enum": ["uint8", "int8", "uint16", "int16",
                                                  "uint32", "int32"]}},
                              ("file",), "an image (.npy, or raw little-endian .bin of dtype, "
                              "default uint32), one element per register")},
                               ("write", "values"), "write an image to consecutive 32-bit "
                               "registers"),
                          _obj({"read": ADDRESS, "expect": WORD32, "until": WORD32, "mask": WORD32,
                                "as": MMIO_NAME},
                               ("read",), "read a 32-bit word (the task fails if it is not "
                               "'expect'; with 'until', poll every 100 ns until "
                               "value & mask == until; 'as' names the value for later "
                               "expressions)"),
                          _obj({"wait_irq": {"type": "string"}}, ("wait_irq",),
                               "wait for the next pulse of an interrupt bound to the host "
                               "(e.g. an RTL block's '<path>.<adapter>')")]}}},
                 ("op", "accesses"), "32-bit register reads/writes by the host, in order"),
    "wait": _obj({**TASK_COMMON, "time": TIME}, ("op", "time"), "let simulated time pass"),
    "barrier": _obj({**TASK_COMMON}, ("op",), "wait for the tasks in 'after' (joins branches)"),
}

_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_\-]*$", "maxLength": 64}
NETWORK_LAYER = _obj({
    "name": _NAME,
    "type": {"enum": ["conv3x3", "conv1x1", "add", "avgpool", "fc"]},
    "inputs": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8,
               "description": "the layer's input tensors (default: the previous layer; a concat: 2 or more)"},
    "out": _int(1, MAX_DIM, "output channels (conv) or features (fc)"),
    "stride": _int(1, 8, "1 or 2 on the RBE; up to 8 where a unit's own layer types allow it"),
    "w_bits": _int(2, 8), "o_bits": _int(2, 8),
    "relu": {"type": "boolean"},
}, ("name", "type"), "one layer")
NETWORK = _obj({
    "name": _NAME,
    "preset": {"type": "string", "description": "a generated network (e.g. resnet20_cifar)"},
    "options": {"type": "object", "description": "the preset's options (docs/scenarios.md)"},
    "weights": {"type": "string", "description": "an .npz of arrays by key (relative to the scenario)"},
    "input": _obj({"h": _int(1, MAX_DIM), "w": _int(1, MAX_DIM), "c": _int(1, MAX_DIM),
                   "bits": _int(2, 8)}, ("h", "w", "c"), "the input tensor"),
    "layers": {"type": "array", "items": NETWORK_LAYER, "minItems": 1, "maxItems": 1024},
    "onnx": {"type": "string", "maxLength": 4096,
             "description": "an ONNX model (QDQ int8) to import and deploy, relative to the scenario (docs/onnx.md)"},
    "input_shape": {"type": "array", "items": _int(1, MAX_DIM), "minItems": 2, "maxItems": 4,
                    "description": "the ONNX model's input shape (NCHW) when the file leaves it dynamic"},
}, (), "a quantised network: a preset, an input and a list of layers, or an ONNX model (docs/scenarios.md)")
#: workload keys beside firmware, tasks and network (families add theirs)
WORKLOAD_EXTRA: dict[str, dict] = {}
#: the network keys accelerator families add (their deployers' own: ``prune``, ``convs_on``)
FAMILY_NETWORK_KEYS: set[str] = set()


def _add_fragment(family: str, frag: SchemaFragment) -> None:
    """Merge one family's fragment; a name two families claim is a plug-in error."""
    from components.plugins import PluginError
    for table, given in ((OPS, frag.get("ops", {})), (NETWORK_LAYER["properties"], frag.get("layer", {})),
                         (NETWORK["properties"], frag.get("network", {})), (WORKLOAD_EXTRA, frag.get("workload", {}))):
        for name, schema in given.items():
            if name in table:
                raise PluginError(f"family {family!r} adds schema key {name!r}, which is already taken")
            table[name] = schema
    FAMILY_NETWORK_KEYS.update(frag.get("network", {}))
    NETWORK_LAYER["properties"]["type"]["enum"] += [t for t in frag.get("layer_types", [])
                                                    if t not in NETWORK_LAYER["properties"]["type"]["enum"]]


for _fam in families().values():
    if _fam.schema is not None:
        _add_fragment(_fam.name, _fam.schema.load())

CHECK = {
    "type": "object",
    "description": "one check; a failed check makes `cosim run` exit with code 1",
    "properties": {
        "name": {"type": "string"},
        "memory": _obj({"name": {"type": "string"}, "at": ADDRESS, "size": _int(1, MAX_BYTES),
                        "equals_file": {"type": "string"},
                        "equals_memory": ADDRESS,
                        "golden": {"type": "string",
                                   "description": "a deployed network's tensor by layer name "
                                                  "(or 'input'): its expected L2 image"}},
                       (), "memory contents against a file, another region or a network's "
                       "golden tensor ('at' is needed except with golden)"),
        "stat": _obj({"path": PATH, "name": {"type": "string", "description": "the statistic"},
                      "min": {"type": "number", "minimum": -1e300, "maximum": 1e300},
                      "max": {"type": "number", "minimum": -1e300, "maximum": 1e300},
                      "equals": {"type": ["number", "string"], "minimum": -1e300, "maximum": 1e300}},
                     ("path", "name"), "a statistic within bounds"),
        "no_tlm_errors": {"type": "boolean"},
        "deadline": TIME,
        "firmware_exit": _int(-2**31, 2**32 - 1),
        "stdout_contains": {"type": "string"},
    },
    "additionalProperties": False,
    "minProperties": 1,
}

#: a hierarchical signal path below an RTL block's top (``i_ctrl.i_fsm.busy_q``)
HIER = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
#: Verilog parameters / defines of an RTL block: NAME -> integer or text (a define: or null,
#: defined without a value)
RTL_VALUES = {"type": "object", "maxProperties": 256,
              "propertyNames": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$",
                                "maxLength": 128},
              "additionalProperties": {"type": ["integer", "string"], "minimum": -2**63,
                                       "maximum": 2**64 - 1, "maxLength": 1024}}
RTL_DEFINES = {**RTL_VALUES, "additionalProperties": {
    **RTL_VALUES["additionalProperties"], "type": ["integer", "string", "null"]}}

SCENARIO: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://tlm-cosim.invalid/scenario.schema.json",
    "title": "tlm-cosim scenario",
    "type": "object",
    "additionalProperties": False,
    "required": ["platform", "workload"],
    "properties": {
        "name": {"type": "string", "maxLength": 128},
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
                           "description": "RTL blocks added from a port map: 'soc.<name>' or "
                                          "'cluster.<name>' -> sources, top, port map "
                                          "(docs/rtl.md)",
                           "additionalProperties": _obj({
                               "sources": {"type": "array", "minItems": 1, "maxItems": 4096,
                                           "items": {"type": "string"}},
                               "manifests": {"type": "array", "minItems": 1, "maxItems": 64,
                                             "description": "Bender.yml / src_files.yml, in "
                                                            "order; their files come first",
                                             "items": _obj({
                                                 "file": {"type": "string"},
                                                 "targets": {"type": "array", "maxItems": 32,
                                                             "items": {"type": "string",
                                                                       "maxLength": 64}},
                                                 "exclude": {"type": "array", "maxItems": 1024,
                                                             "items": {"type": "string"}},
                                             }, ("file",))},
                               "top": {"type": "string"},
                               "parameters": RTL_VALUES,
                               "defines": RTL_DEFINES,
                               "verilator_args": {"type": "array", "maxItems": 64,
                                                  "items": {"type": "string", "maxLength": 256},
                                                  "description": "extra Verilator options, "
                                                  "e.g. --no-timing, -Wno-BLKANDNBLK"},
                               "include_dirs": {"type": "array", "maxItems": 256,
                                                "items": {"type": "string"}},
                               "clock": {"type": "object"},
                               "reset": {"type": "object"},
                               "adapters": {"type": "object", "minProperties": 1},
                               "busy": {"type": ["string", "object"],
                                        "description": "a 1-bit output: 1 while the block "
                                        "works on its own; or {signal: a.b.c, or a list: any "
                                        "of them}, or "
                                        "{from_write: ADDRESS, until: IRQ_ADAPTER}",
                                        "properties": {
                                            "port": {"type": "string"},
                                            "signal": {"type": ["string", "array"],
                                                       "pattern": HIER, "maxItems": 16,
                                                       "items": {"type": "string",
                                                                 "pattern": HIER}},
                                            "from_write": {"type": ["integer", "string"],
                                                           "minimum": 0, "maximum": 2**32 - 1,
                                                           "pattern": "^(0x[0-9a-fA-F_]+|"
                                                                      "[0-9_]+)$"},
                                            "until": {"type": "string"}},
                                        "additionalProperties": False,
                                        "minProperties": 1, "maxProperties": 2},
                               "quantum_ns": {"type": "number", "exclusiveMinimum": 0,
                                              "maximum": 1e9},
                           }, ("top", "clock", "adapters"))},
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
            "network": NETWORK,
            **WORKLOAD_EXTRA,
        }, (), "what runs: firmware, a task list, a network (any combination)"),
        "checks": {"type": "array", "items": CHECK},
        "outputs": _obj({
            "dir": {"type": "string", "minLength": 1},
            "report": {"type": "boolean"},
            "trace": {"type": "boolean"},
            "plots": {"type": ["boolean", "array"], "items": {"enum": ["layers", "power", "timeline", "utilisation"]}},
            "waves": _obj({
                "window": {"type": "array", "items": TIME, "minItems": 2, "maxItems": 2,
                           "description": "[start, stop] of the RTL blocks' waveforms, in their "
                                          "own time line (cosim run --waves-window)"},
                "scope": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$",
                          "maxLength": 1024,
                          "description": "instance path below the top module whose signals are "
                                         "recorded (cosim run --waves-scope)"},
                "depth": _int(1, 64, "levels recorded below the scope (1: its own signals)"),
            }, doc="what the RTL waveforms (cosim run --waves) record; docs/rtl.md, 'Waveforms'"),
        }),
        "limits": _obj({"max_time": TIME,
                        "max_wall": {"type": "number", "exclusiveMinimum": 0, "maximum": 7 * 86400,
                                     "description": "seconds of wall time (every phase: "
                                                    "deployment, simulation, reporting)"},
                        "max_memory": {"type": ["integer", "string"], "minimum": 1 << 20, "maximum": 1 << 40,
                                       "description": "memory budget of the run: bytes, or "
                                                      "'2 GiB', '512 MiB' (default 4 GiB)"}}),
    },
}


#: the longest text any scenario string may hold (names 128): a label, a path, a check's
#: expected output; longer is a mistake that would cost time in every report and terminal
MAX_TEXT = 4096


def _bound_strings(node: Any) -> None:
    if isinstance(node, dict):
        types = node.get("type")
        if (types == "string" or (isinstance(types, list) and "string" in types)) and "maxLength" not in node:
            node["maxLength"] = MAX_TEXT
        for v in node.values():
            _bound_strings(v)
    elif isinstance(node, list):
        for v in node:
            _bound_strings(v)


_bound_strings(SCENARIO)
_bound_strings(OPS)


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
