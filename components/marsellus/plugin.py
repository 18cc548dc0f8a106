"""MARSELLUS's declaration (entry point ``tlm_cosim.platforms: marsellus``): its builder,
parameter classes, memory map, the blocks an RTL kind can replace, and the deployer its
networks use (the RBE and the cluster cores, accelerators/cores)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from components.plugins import PlatformEntry


def _build(sim: Any, overrides: dict[str, Any], firmware: Path | None, echo: Any = None) -> Any:
    from .platform import Marsellus
    return Marsellus(sim, overrides, firmware=firmware, stdout_echo=echo)


def _memory_map() -> Any:
    from .facts import MEMORY_MAP
    return MEMORY_MAP


def _complete(params: dict[str, Any]) -> dict[str, Any]:
    from .platform import complete_params
    return complete_params(params)


def _params(firmware: bool) -> dict[str, type]:
    from .platform import PARAMS, soc_core_params
    known = dict(PARAMS)
    if firmware:
        known["soc.fc"] = soc_core_params()
    return known


PLATFORM = PlatformEntry(
    _build, _params, _memory_map, "MARSELLUS: RISC-V SoC, 16-core cluster, RBE, PMU/ABB, HyperRAM",
    rtl={"cluster.rbe": "rbe", "cluster.dma": "cluster_dma", "cluster.tcdm.bank{n}": "tcdm_bank",
         "pmu.abb": "abb", "soc.tensil": "tensil", "cluster.flexisaga": "flexisaga"},
    complete=_complete, deployer="marsellus")
