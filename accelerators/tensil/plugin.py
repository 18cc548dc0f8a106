"""The Tensil family's declaration (entry points ``tlm_cosim.accelerators: tensil`` and
``tlm_cosim.platforms: tensil``, the standalone board platform)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from components.plugins import AcceleratorFamily, PlatformEntry, RtlKind

FAMILY = AcceleratorFamily.declare(
    "tensil", "Tensil TCU: instruction-driven tensor compute unit, its compiler and boards",
    docs="docs/tensil.md",
    block_types={"tensil": "accelerators.tensil.blocks:TENSIL"},
    rtl_kinds={"tensil": RtlKind("Tensil TCU stand-in (rtl/tensil, tensil_stub: NoOp and Configure only) "
                                 "as a job-level transactor",
                                 "accelerators.tensil.rtl.transactor:TensilStubTransactor")},
    schema="accelerators.tensil.schema:FRAGMENT",
    deployers={"tensil": "accelerators.tensil.deployer:TENSIL"},
    layer_types="accelerators.tensil.deploy.layers:LAYER_TYPES",
    presets="accelerators.tensil.deploy.nets:PRESETS",
    commands={"tensil": ("accelerators.tensil.cli:add_parser", "accelerators.tensil.cli:run")},
)


def _build(sim: Any, overrides: dict[str, Any], firmware: Path | None, echo: Any = None) -> Any:
    from accelerators.tensil.platform import build
    return build(sim, overrides, firmware, echo)


def _params(firmware: bool) -> dict[str, type]:
    from accelerators.tensil.platform import params
    return params(firmware)


def _memory_map() -> Any:
    from accelerators.tensil.platform import memory_map
    return memory_map()


PLATFORM = PlatformEntry(_build, _params, _memory_map,
                         "Tensil TCU standalone: task host, AXI crossbar, DRAM0/DRAM1, TCU (docs/tensil.md)",
                         rtl={"soc.tcu": "tensil"}, deployer="tensil")
