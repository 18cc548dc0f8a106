"""The cluster cores' declaration (entry point ``tlm_cosim.accelerators: cores``): the
MARSELLUS network deployer, which places each layer on the RBE or the cores."""
from components.plugins import AcceleratorFamily

FAMILY = AcceleratorFamily.declare(
    "cores", "the cluster's RISC-V cores: the always-present unit every layer can run on",
    docs="docs/cluster.md",
    schema="accelerators.cores.schema:FRAGMENT",
    deployers={"marsellus": "accelerators.cores.deployer:MARSELLUS"},
)
