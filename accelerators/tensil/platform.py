"""The standalone ``tensil`` platform: a composition (``platform.yaml`` beside this module)
of library blocks, registered as ``platform: tensil``.

The file's ``dram0``/``dram1`` regions are address windows (256 MiB each); the banks built
in them hold what the TCU's architecture addresses: ``dram0_depth`` / ``dram1_depth``
vectors of ``array_size`` scalars (the board's published depths with ``soc.tcu.board``:
64 MiB each on the Ultra96-V2). A bank larger than its window is a ParameterError naming
the depth.

``soc.tcu.grow_dram: true`` lets a network larger than the TCU's banks run with banks grown
to the next power of two of its vectors (as ``bench/tensil.py`` compiles it; the
instruction's address fields widen): the deployment sets the grown ``soc.tcu.dram0_depth``
/ ``dram1_depth`` (the report's parameters show them), bounded by the 256 MiB windows."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tlm import MemoryMap, Simulator
from accelerators.tensil.model.params import TensilParams
from tlm.params import ParameterError, param, resolve

from cosim.platforms.composed import ComposedPlatform, PlatformSpec, load_file

SPEC_FILE = Path(__file__).with_name("platform.yaml")
#: the DRAM banks and the TCU's depth parameter that sizes each
BANKS = (("dram0", "dram0_depth"), ("dram1", "dram1_depth"))
#: the platform's own key of ``soc.tcu`` (not the TCU's: the deployment reads it)
GROW = "soc.tcu.grow_dram"


@dataclass(frozen=True)
class PlatformTcuParams(TensilParams):
    """``soc.tcu`` on the tensil platform: the TCU's parameters and how a network larger
    than its DRAM banks is deployed."""

    grow_dram: bool = param(False, "a network larger than the DRAM banks: grow the banks (and the "
                                   "TCU's depths) to the next power of two of its vectors, up to "
                                   "the 256 MiB windows, instead of an error")


@lru_cache(maxsize=1)
def spec() -> PlatformSpec:
    return load_file(SPEC_FILE)


def tcu_arch(overrides: dict[str, Any]) -> Any:
    """The architecture of the platform's TCU after ``overrides`` (``soc.tcu.*``)."""
    given = {k.removeprefix("soc.tcu."): v for k, v in overrides.items()
             if k.startswith("soc.tcu.") and k != GROW}
    return resolve(TensilParams, given, "soc.tcu").arch()


def bank_sizes(arch: Any) -> dict[str, int]:
    """Bytes of the DRAM0 and DRAM1 banks of a TCU with ``arch`` (depth x vector bytes)."""
    return {region: getattr(arch, key) * arch.vector_bytes for region, key in BANKS}


def sized_spec(overrides: dict[str, Any]) -> PlatformSpec:
    """The platform file with its DRAM banks sized for the TCU ``overrides`` give."""
    base = spec()
    sizes = bank_sizes(tcu_arch(overrides))
    regions = []
    for r in base.regions:
        if r.name in sizes:
            if sizes[r.name] > r.size:
                key = dict(BANKS)[r.name]
                raise ParameterError(f"{key} x {tcu_arch(overrides).vector_bytes} bytes per vector = "
                                     f"{sizes[r.name]} bytes, more than the platform's {r.name} window "
                                     f"({r.size} bytes)", f"soc.tcu.{key}")
            r = dataclasses.replace(r, size=sizes[r.name])
        regions.append(r)
    return dataclasses.replace(base, regions=regions)


def build(sim: Simulator, overrides: dict[str, Any], firmware: Path | None, echo: Any = None) -> Any:
    if firmware is not None:
        raise ValueError("the tensil platform has no core to run firmware on; use tasks")
    tcu = {k: v for k, v in overrides.items() if k != GROW}
    return ComposedPlatform(sim, sized_spec(tcu), tcu)


def params(firmware: bool) -> dict[str, type]:
    return {**spec().params_classes(), "soc.tcu": PlatformTcuParams}


def window(region: str) -> int:
    """Bytes of the address window of ``region`` (``dram0``/``dram1``)."""
    return next(r.size for r in spec().regions if r.name == region)


def memory_map() -> MemoryMap:
    """The address windows (the banks built in them may be smaller: :func:`sized_spec`)."""
    return MemoryMap(spec().regions, [])
