"""The standalone ``voyager`` platform: a composed platform (cosim/voyager/platform.yaml)
registered under a name (``PlatformEntry`` fields in :data:`ENTRY`)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from tlm.params import ParameterError

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def spec() -> Any:
    from ..platforms.composed import load_file
    return load_file(HERE / "platform.yaml")


def build(sim: Any, overrides: dict[str, Any], firmware: Path | None, echo: Any = None) -> Any:
    from ..platforms.composed import ComposedPlatform
    if firmware is not None:
        raise ParameterError("the voyager platform has no core to run firmware on; use tasks", "workload.firmware")
    return ComposedPlatform(sim, spec(), overrides)


def params(firmware: bool) -> dict[str, type]:
    return spec().params_classes()


def memory_map() -> Any:
    from tlm import MemoryMap
    return MemoryMap(spec().regions, [])


#: PlatformEntry(build, params, memory_map, doc, rtl)
ENTRY = (build, params, memory_map, "Voyager standalone: task host, crossbar, DRAM, one Voyager accelerator "
                                    "(cosim/voyager/platform.yaml)", {})
