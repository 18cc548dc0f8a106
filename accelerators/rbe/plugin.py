"""The RBE family's declaration (entry point ``tlm_cosim.accelerators: rbe``)."""
from components.plugins import AcceleratorFamily, RtlKind

FAMILY = AcceleratorFamily.declare(
    "rbe", "RBE: reconfigurable binary engine, 2-8 bit 3x3/1x1 convolutions on a TCDM (MARSELLUS)",
    docs="docs/rbe.md",
    block_types={"rbe": "accelerators.rbe.blocks:RBE"},
    rtl_kinds={"rbe": RtlKind("RBE (rtl/rbe, rbe_top) as a job-level transactor",
                              "accelerators.rbe.rtl.transactor:RbeTransactor")},
    schema="accelerators.rbe.schema:FRAGMENT",
    task_ops={"rbe": "accelerators.rbe.host:run_job"},
)
