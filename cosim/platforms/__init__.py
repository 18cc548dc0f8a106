"""Platforms: build the platform a scenario names, list platforms, components and parameters.

A platform is data plus a builder (docs/platforms.md): a registered one (``PLATFORMS``,
``platform: marsellus``) or one composed in YAML (``platform: {file: ...}``,
:mod:`cosim.platforms.composed`).
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from tlm import Simulator
from tlm.params import ParameterError, resolve

from components.plugins import PlatformEntry, platforms

from ..scenario import Scenario, ScenarioError

__all__ = ["PLATFORMS", "PlatformEntry", "check_addresses", "check_fit", "check_models", "memory_map_of",
           "parameter_classes", "preset", "registered_spec", "resolved_parameters", "rtl_swappable"]


@lru_cache(maxsize=None)
def registered_spec(name: str) -> Any:
    """The validated platform file of registered composed platform ``name``."""
    from .composed import load_file
    path = PLATFORMS[name].path()
    assert path is not None
    return load_file(path)


def _composed_entry(name: str, entry: PlatformEntry) -> PlatformEntry:
    """A registered platform composed in YAML, with the callables its file gives."""

    def build(sim: Simulator, overrides: dict[str, Any], firmware: Path | None, echo=None):
        from .composed import ComposedPlatform
        if firmware is not None:
            raise ParameterError(f"the {name} platform has no core to run firmware on; use "
                                 "tasks", "workload.firmware")
        return ComposedPlatform(sim, registered_spec(name), overrides)

    def memory_map() -> Any:
        from tlm import MemoryMap
        return MemoryMap(registered_spec(name).regions, [])

    return dataclasses.replace(entry, build=build, params=lambda firmware: registered_spec(name).params_classes(),
                               memory_map=memory_map)


#: platform name -> entry (``platform: <name>`` in a scenario): the installed platforms
#: (entry points ``tlm_cosim.platforms``, components/plugins.py)
PLATFORMS: dict[str, PlatformEntry] = {
    name: _composed_entry(name, e) if e.file is not None else e for name, e in platforms().items()}


def preset(sc: Scenario) -> Callable[..., Any]:
    """The builder of ``sc``'s platform: ``builder(sim, overrides, firmware, echo)``."""
    if sc.composed is not None:
        from .composed import ComposedPlatform
        spec = sc.composed
        if sc.firmware is not None:
            raise sc.error("a composed platform has no core to run firmware on; use tasks",
                           ("workload", "firmware"))
        return lambda sim, overrides, firmware, echo=None: ComposedPlatform(sim, spec, overrides)
    if sc.preset not in PLATFORMS:
        from tlm.params import suggest
        raise sc.error(f"unknown platform {sc.preset!r}{suggest(sc.preset, PLATFORMS)}; "
                       f"known: {', '.join(PLATFORMS)} (cosim list platforms)", ("platform", "preset"))
    return PLATFORMS[sc.preset].build


def memory_map_of(sc: Scenario) -> Any:
    """The memory map of ``sc``'s platform (:class:`tlm.MemoryMap`), known before building."""
    if sc.composed is not None:
        from tlm import MemoryMap
        return MemoryMap(sc.composed.regions, [])
    preset(sc)
    return PLATFORMS[sc.preset].memory_map()


def parameter_classes(sc: Scenario) -> dict[str, type]:
    """Every parameter path of ``sc``'s platform and its dataclass."""
    if sc.composed is not None:
        return sc.composed.params_classes()
    preset(sc)   # an unknown name: a located error
    return PLATFORMS[sc.preset].params(sc.firmware is not None)


def rtl_swappable(sc: Scenario) -> dict[str, str]:
    """Component path pattern -> RTL kind, for the blocks of ``sc``'s platform that an RTL
    block can replace (``platform.models``)."""
    if sc.composed is not None:
        return sc.composed.rtl_swappable()
    preset(sc)
    return dict(PLATFORMS[sc.preset].rtl)


def check_models(sc: Scenario) -> None:
    """``models``: ``tlm`` anywhere; ``rtl``/``shadow`` only for the blocks of the platform
    that an RTL kind can replace (:func:`rtl_swappable`)."""
    swappable = rtl_swappable(sc)
    if all(m == "tlm" for m in sc.models.values()):
        return          # nothing to check: a TLM run need not load cosim.rtl (start-up time)
    from ..rtl.options import MODES
    from ..rtl.registry import describe, kind_of
    for path, model in sc.models.items():
        if model == "tlm":
            continue
        key = ("platform", "models", path)
        if model not in MODES:
            raise sc.error(f"model {model!r} for {path}: expected tlm, rtl or shadow", key)
        if kind_of(swappable, path) is None:
            avail = describe(swappable) or "no block of this platform"
            raise sc.error(f"model {model!r} for {path}: no RTL model of {path}; "
                           f"rtl/shadow are available for: {avail}", key)


def resolved_parameters(sc: Scenario) -> dict[str, dict[str, Any]]:
    """Every parameter of the platform with its value after the scenario's overrides."""
    from components.marsellus.memory_system import split_params
    known = parameter_classes(sc)
    given = {}
    if sc.composed is not None:
        given = {f"{sc.composed.top}.{b.name}": dict(b.params) for b in sc.composed.blocks.values()}
    try:
        groups = split_params(sc.overrides, known, strict=True)
        resolved = {path: resolve(cls, {**given.get(path, {}), **groups.get(path, {})}, path)
                    for path, cls in sorted(known.items())}
        complete = None if sc.composed is not None else PLATFORMS[sc.preset].complete
        if complete is not None:
            resolved = complete(resolved)
        return {path: dataclasses.asdict(obj) for path, obj in resolved.items()}
    except (ParameterError, ValueError) as e:  # name the scenario key (a bug or a limit is not one)
        raise _param_error(sc, e) from None


def _param_error(sc: Scenario, e: Exception) -> ScenarioError:
    if isinstance(e, ParameterError):
        key = e.path or ""
        # find the override the error is about (full key or its component path)
        for k in sc.overrides:
            if key == k or key.startswith(k + ".") or k.startswith(key):
                return sc.error(e.message, ("platform", "overrides", k))
        return sc.error(f"{key}: {e.message}" if key else e.message, ("platform", "overrides"))
    return sc.error(str(e), ("platform",))


def list_components() -> list[tuple[str, str, str]]:
    """(path, parameter class, first docstring line) of every parameterised block of the
    reference platform, from its declaration (importing its composition would import the
    models of the families it holds)."""
    out = []
    for path, cls in sorted(PLATFORMS["marsellus"].params(False).items()):
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        out.append((path, cls.__name__, doc))
    return out


def list_kernels() -> list[tuple[str, str]]:
    from components.cluster.kernels import KERNELS
    return [(k.name, k.doc.strip().splitlines()[0] if k.doc else "") for k in KERNELS.values()]


def _addresses(value: Any, schema: dict, key: tuple) -> Iterator[tuple[tuple, Any]]:
    """Every value of ``value`` that ``schema`` types as an address (``schema.ADDRESS``),
    with its key path; follows properties, array items and oneOf branches."""
    from ..scenario.schema import ADDRESS
    if schema is ADDRESS:
        yield key, value
    elif isinstance(value, dict):
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                yield from _addresses(v, props[k], key + (k,))
        for branch in schema.get("oneOf", ()):
            if set(value) <= set(branch.get("properties", {})):
                yield from _addresses(value, branch, key)
                break
    elif isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            yield from _addresses(v, schema["items"], key + (i,))


def check_addresses(sc: Scenario) -> None:
    """Every address a task or a check names (``'l2+0x400'``) is a region of the platform's
    memory map: a located ScenarioError before the run otherwise."""
    from ..host import resolve_address
    from ..scenario.schema import CHECK, OPS
    mm = memory_map_of(sc)
    found: list[tuple[tuple, Any]] = []
    for i, t in enumerate(sc.tasks):
        if t.get("op") in OPS:
            found += _addresses(t, OPS[t["op"]], ("workload", "tasks", i))
    for i, c in enumerate(sc.checks):
        found += _addresses(c, CHECK, ("checks", i))
    for key, spec in found:
        if isinstance(spec, str):
            try:
                resolve_address(spec, "address", mm)
            except ValueError as e:
                raise sc.error(str(e).removeprefix("address: "), key) from None


def usable_sizes(sc: Scenario, resolved: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Region name -> the bytes a model really holds there: the memory map's size, or less
    where the block's ``capacity`` parameter (its path ends in the region's name) says so."""
    mm = memory_map_of(sc)
    sizes = {r.name: r.size for r in mm.regions + mm.external}
    for path, params in resolved.items():
        cap, name = params.get("capacity"), path.rsplit(".", 1)[-1]
        if isinstance(cap, int) and name in sizes:
            sizes[name] = min(sizes[name], cap)
    return sizes


def check_fit(sc: Scenario, resolved: dict[str, dict[str, Any]], deployment: Any = None) -> None:
    """The data of every ``load`` task, every range a memory check reads, and everything a
    network ``deployment`` places lie inside one memory region and within what its model
    holds: a located ScenarioError naming the region and its usable size otherwise."""
    from tlm.units import fmt_bytes

    from ..host import resolve_address
    from ..scenario.data import load_bytes
    mm = memory_map_of(sc)
    sizes = usable_sizes(sc, resolved)
    items: list[tuple[tuple, str, int, int, str]] = []
    for i, t in enumerate(sc.tasks):
        if t.get("op") == "load":
            space, addr = resolve_address(t["to"], "address", mm)
            items.append((("workload", "tasks", i, "to"), space, addr, load_bytes(sc, t), "the data"))
    for i, c in enumerate(sc.checks):
        m = c.get("memory") or {}
        for k in ("at", "equals_memory"):
            if k in m and "size" in m:
                space, addr = resolve_address(m[k], "address", mm)
                items.append((("checks", i, "memory", k), space, addr, m["size"], "the checked range"))
    for space, addr, blob in (deployment.loads if deployment is not None else ()):
        items.append((("workload", "network"), space, addr, len(blob), "the deployed network's data"))
    for key, space, addr, n, what in items:
        regions = mm.external if space == "hyperram" else mm.regions
        region = next((r for r in regions if r.base <= addr < r.end), None)
        if region is None:
            raise sc.error(f"{what} at {addr:#x} is in no memory region of the platform", key)
        usable = sizes.get(region.name, region.size)
        if addr + n > region.base + usable:
            held = "" if usable == region.size else ", as its capacity parameter says"
            raise sc.error(f"{what} ({fmt_bytes(n)} at {region.name}+{addr - region.base:#x}) does not fit "
                           f"{region.name} ({fmt_bytes(usable)}{held})", key)
