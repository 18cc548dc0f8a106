"""The FlexiSAGA family's declaration (entry points ``tlm_cosim.accelerators: flexisaga``
and ``tlm_cosim.platforms: flexisaga``, the standalone platform composed in YAML)."""
from __future__ import annotations

from components.plugins import AcceleratorFamily, PlatformEntry, RtlKind

FAMILY = AcceleratorFamily.declare(
    "flexisaga", "FlexiSAGA: dense/sparse systolic GEMM array, seven dataflows, structured pruning",
    docs="docs/flexisaga.md",
    block_types={"flexisaga": "accelerators.flexisaga.blocks:FLEXISAGA"},
    rtl_kinds={"flexisaga": RtlKind("FlexiSAGA array (rtl/flexisaga, Amaranth-generated flexisaga_array: dOS, "
                                    "dWS, dIS and sOS, integer PEs) as a job-level transactor",
                                    "accelerators.flexisaga.rtl.transactor:FlexiSagaTransactor")},
    schema="accelerators.flexisaga.schema:FRAGMENT",
    task_ops={"flexisaga": "accelerators.flexisaga.task:run_task"},
    prepare={"flexisaga": "accelerators.flexisaga.prepare:prepare"},
    units={"flexisaga": "accelerators.flexisaga.unit:FlexiSagaUnit"},
    passes={"prune": "accelerators.flexisaga.unit:prune_pass"},
)

PLATFORM = PlatformEntry(doc="FlexiSAGA standalone: task host, crossbar, SRAM, TCDM, 4x4 FlexiSAGA on its "
                             "accelerator branch (docs/flexisaga.md)",
                         file="scenarios/platforms/flexisaga.yaml")
