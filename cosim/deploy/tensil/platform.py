"""The standalone ``tensil`` platform: a composition (``platform.yaml`` beside this module)
of library blocks, registered as ``platform: tensil``."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from tlm import MemoryMap, Simulator

from ...platforms.composed import ComposedPlatform, PlatformSpec, load_file

SPEC_FILE = Path(__file__).with_name("platform.yaml")


@lru_cache(maxsize=1)
def spec() -> PlatformSpec:
    return load_file(SPEC_FILE)


def build(sim: Simulator, overrides: dict[str, Any], firmware: Path | None, echo: Any = None) -> Any:
    if firmware is not None:
        raise ValueError("the tensil platform has no core to run firmware on; use tasks")
    return ComposedPlatform(sim, spec(), overrides)


def params(firmware: bool) -> dict[str, type]:
    return spec().params_classes()


def memory_map() -> MemoryMap:
    return MemoryMap(spec().regions, [])
