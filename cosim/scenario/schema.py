"""The scenario schema (JSON Schema, draft 2020-12), one source of truth.

Tasks are validated in two steps so errors stay readable: the top-level schema checks that
each task has a known ``op``; then the task is checked against that op's own schema.
``cosim schema`` / ``export()`` write it as JSON (docs/scenario.schema.json).
"""
from __future__ import annotations

import copy
import json
from typing import Any

from components.rbe.regs import REGMAP as _RBE_REGS
from tlm.units import FREQ_MAX, FREQ_MIN, TIME_MAX

#: Sizes and counts: at most 1 GiB (the largest memory a platform may model, see
#: HyperRamParams.capacity); a task must also fit the region it names (checked against the
#: memory map before the run).
MAX_BYTES = 1 << 30
WORD32 = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}


def _int(lo: int, hi: int, doc: str = "") -> dict:
    out: dict[str, Any] = {"type": "integer", "minimum": lo, "maximum": hi}
    if doc:
        out["description"] = doc
    return out


def _rbe_field(register: str, name: str, lo: int) -> dict:
    """An RBE job field bounded by its register field's width (components/rbe/registers.yaml)."""
    reg = next(r for r in _RBE_REGS.job if r.name == register)
    return _int(lo, (1 << reg.field(name).width) - 1)

ADDRESS = {"type": ["integer", "string"], "minimum": 0, "maximum": 2**64 - 1,
           "description": "an integer, or a memory-map region name plus an optional offset: "
                          "'l2', 'tcdm+0x400', 'hyperram+4096'"}
TIME = {"type": ["integer", "string"], "minimum": 0, "maximum": TIME_MAX,
        "description": "ps as an integer, or '10 ns', '2.5 ms' (at most an hour)"}
FREQ = {"type": ["number", "string"], "minimum": FREQ_MIN, "maximum": FREQ_MAX,
        "description": "Hz as a number, or '420 MHz'"}
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

#: FlexiSAGA pruning (docs/flexisaga.md, "Tasks"): target sparsity, vector length, orientation
FLEXISAGA_PRUNING = {
    "sparsity": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMaximum": 1,
                 "description": "target weight sparsity in [0, 1): the fraction of pruning "
                                "vectors zeroed (smallest L2 norm first)"},
    "vector": _int(1, 1024, "pruning vector length n (1: unstructured; default: the grid's "
                            "rows for col, columns for row)"),
    "orientation": {"enum": ["col", "row"], "description": "pruning vectors are columns "
                    "(zero columns: sOS, csOS) or rows (zero rows: sWS, sIS) of the GEMM weights"},
}
FLEXISAGA_GROUPS = _obj({g: _obj(dict(FLEXISAGA_PRUNING), (), f"defaults of the {g.upper()} "
                                 "operator group") for g in ("conv", "fc")},
                        (), "FlexiSAGA pruning per operator group (conv, fc); a flexisaga task's "
                            "own keys win")

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
    "rbe": _obj({**TASK_COMMON,
                 "mode": {"enum": ["3x3", "1x1"]},
                 "w_bits": _int(2, 8), "i_bits": _int(2, 8), "o_bits": _int(2, 8),
                 "k_in": _rbe_field("CHANNELS", "k_in", 32), "k_out": _rbe_field("CHANNELS", "k_out", 32),
                 "h_out": _rbe_field("OUT_SIZE", "h_out", 1), "w_out": _rbe_field("OUT_SIZE", "w_out", 1),
                 "shift": _rbe_field("CONFIG", "shift", 0),
                 "relu": {"type": "boolean"},
                 "input": ADDRESS, "weights": ADDRESS, "normquant": ADDRESS, "output": ADDRESS,
                 **{k: {**_rbe_field(k.upper(), k, 0), "description": "byte stride (default: dense layout)"}
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
                 "frequency": FREQ,
                 "voltage": {"type": "number", "minimum": 0.1, "maximum": 3.0,
                             "description": "supply voltage in V (the chip's operating points "
                                            "say which values it accepts)"},
                 "operating_point": {"type": "string"},
                 "abb": {"type": "boolean"},
                 "power": {"enum": ["on", "off", "clock_gated"]}},
                ("op", "domain"), "change a domain's frequency, voltage, ABB or power state"),
    "flexisaga": _obj({**TASK_COMMON,
                       "kind": {"enum": ["conv", "fc"], "description": "operator group"},
                       "m": _int(1, 4096, "FC: outputs (GEMM rows M)"),
                       "k": _int(1, 1 << 16, "FC: inputs (GEMM reduction K)"),
                       "n": _int(1, 1 << 16, "FC: batch (GEMM columns N; default 1)"),
                       "conv": _obj({"c_in": _int(1, 4096), "c_out": _int(1, 4096),
                                     "kernel": _int(1, 11, "square kernel (default 3)"),
                                     "size": _int(1, 1024, "square input height = width"),
                                     "stride": _int(1, 8), "pad": _int(0, 5, "default kernel // 2")},
                                    ("c_in", "c_out", "size"),
                                    "a convolution, run as its im2col GEMM"),
                       "dataflow": {"enum": ["auto", "dOS", "dWS", "dIS", "sOS", "sWS", "sIS",
                                             "csOS"],
                                    "description": "auto: the fastest by the cycle model"},
                       **FLEXISAGA_PRUNING,
                       "at": ADDRESS,
                       "values": _int(1, 64, "operands are seeded integers in [-values, values] "
                                             "(default 3), so numpy's product is exact")},
                      ("op", "kind", "at"),
                      "one GEMM or im2col'ed conv on the platform's FlexiSAGA: seeded weights "
                      "pruned to the target sparsity, compressed, placed at 'at' with the "
                      "input, programmed through the job registers; the output must equal "
                      "numpy's bit for bit"),
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

#: Tensor dimensions: up to 4096 (the RBE's OUT_SIZE fields hold 16 bits; a 4096x4096
#: feature map is already far beyond what an edge SoC's memories hold); the memory budget
#: (limits.max_memory) and the platform's memories bound the network as a whole.
MAX_DIM = 4096
_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_\-]*$", "maxLength": 64}
NETWORK_LAYER = _obj({
    "name": _NAME,
    "type": {"enum": ["conv3x3", "conv1x1", "add", "avgpool", "fc",
                      # the Tensil TCU only (docs/tensil.md)
                      "conv", "maxpool", "concat", "split", "upsample", "bn"]},
    "inputs": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8,
               "description": "the layer's input tensors (default: the previous layer; a concat: 2 or more)"},
    "out": _int(1, MAX_DIM, "output channels (conv) or features (fc)"),
    "stride": _int(1, 8, "1 or 2 on the RBE; 1..8 for a Tensil conv / maxpool"),
    "w_bits": _int(2, 8), "o_bits": _int(2, 8),
    "relu": {"type": "boolean"},
    "kernel": _int(1, 15, "Tensil conv (odd) / maxpool window"),
    "alpha": {"type": "number", "minimum": 0, "maximum": 0.999, "description": "leaky ReLU slope (Tensil)"},
    "groups": _int(1, MAX_DIM, "split: channel groups (Tensil)"),
    "group": _int(0, MAX_DIM - 1, "split: the group kept (Tensil)"),
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
    "prune": {"type": "number", "minimum": 0, "maximum": 0.95,
              "description": "FlexiSAGA platforms: prune this fraction of the ONNX model's weight vectors "
                             "first (docs/onnx.md, On FlexiSAGA)"},
    "convs_on": {"enum": ["auto", "rbe", "cores"],
                 "description": "MARSELLUS: where an ONNX model's convolutions run: by the cycle models "
                                "(auto), on the RBE wherever it is exact (rbe), or on the cores (docs/onnx.md)"},
}, (), "a quantised network: a preset, an input and a list of layers, or an ONNX model (docs/scenarios.md)")

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
            "flexisaga": FLEXISAGA_GROUPS,
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
