"""FlexiSAGA's scenario schema: the ``flexisaga`` task, the per-operator-group pruning
defaults (``workload.flexisaga``) and the ONNX deployment's ``network.prune``."""
from __future__ import annotations

from cosim.scenario.schema_parts import ADDRESS, TASK_COMMON, SchemaFragment, integer, obj

#: FlexiSAGA pruning (docs/flexisaga.md, "Tasks"): target sparsity, vector length, orientation
PRUNING = {
    "sparsity": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMaximum": 1,
                 "description": "target weight sparsity in [0, 1): the fraction of pruning "
                                "vectors zeroed (smallest L2 norm first)"},
    "vector": integer(1, 1024, "pruning vector length n (1: unstructured; default: the grid's "
                               "rows for col, columns for row)"),
    "orientation": {"enum": ["col", "row"], "description": "pruning vectors are columns "
                    "(zero columns: sOS, csOS) or rows (zero rows: sWS, sIS) of the GEMM weights"},
}
GROUPS = obj({g: obj(dict(PRUNING), (), f"defaults of the {g.upper()} operator group") for g in ("conv", "fc")},
             (), "FlexiSAGA pruning per operator group (conv, fc); a flexisaga task's own keys win")

TASK = obj({**TASK_COMMON,
            "kind": {"enum": ["conv", "fc"], "description": "operator group"},
            "m": integer(1, 4096, "FC: outputs (GEMM rows M)"),
            "k": integer(1, 1 << 16, "FC: inputs (GEMM reduction K)"),
            "n": integer(1, 1 << 16, "FC: batch (GEMM columns N; default 1)"),
            "conv": obj({"c_in": integer(1, 4096), "c_out": integer(1, 4096),
                         "kernel": integer(1, 11, "square kernel (default 3)"),
                         "size": integer(1, 1024, "square input height = width"),
                         "stride": integer(1, 8), "pad": integer(0, 5, "default kernel // 2")},
                        ("c_in", "c_out", "size"),
                        "a convolution, run as its im2col GEMM"),
            "dataflow": {"enum": ["auto", "dOS", "dWS", "dIS", "sOS", "sWS", "sIS", "csOS"],
                         "description": "auto: the fastest by the cycle model"},
            **PRUNING,
            "at": ADDRESS,
            "values": integer(1, 64, "operands are seeded integers in [-values, values] "
                                     "(default 3), so numpy's product is exact")},
           ("op", "kind", "at"),
           "one GEMM or im2col'ed conv on the platform's FlexiSAGA: seeded weights "
           "pruned to the target sparsity, compressed, placed at 'at' with the "
           "input, programmed through the job registers; the output must equal "
           "numpy's bit for bit")

FRAGMENT: SchemaFragment = {
    "ops": {"flexisaga": TASK},
    "workload": {"flexisaga": GROUPS},
    "network": {"prune": {"type": "number", "minimum": 0, "maximum": 0.95,
                          "description": "FlexiSAGA platforms: prune this fraction of the ONNX model's weight "
                                         "vectors first (docs/onnx.md, On FlexiSAGA)"}},
}
