"""The Voyager family's declaration (entry points ``tlm_cosim.accelerators: voyager`` and
``tlm_cosim.platforms: voyager``, the standalone platform composed in YAML)."""
from __future__ import annotations

from components.plugins import AcceleratorFamily, PlatformEntry

FAMILY = AcceleratorFamily.declare(
    "voyager", "Voyager: generated DNN accelerator with ML datatypes, compiler and performance model",
    docs="docs/voyager.md",
    block_types={"voyager": "accelerators.voyager.blocks:VOYAGER"},
    deployers={"voyager": "accelerators.voyager.deployer:VOYAGER"},
    commands={"voyager": ("accelerators.voyager.cli:add_parser", "accelerators.voyager.cli:run")},
)

PLATFORM = PlatformEntry(doc="Voyager standalone: task host, crossbar, DRAM, one Voyager accelerator "
                             "(accelerators/voyager/platform.yaml)",
                         file="accelerators.voyager:platform.yaml", deployer="voyager")
