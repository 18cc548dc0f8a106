"""Platforms composed in YAML from library blocks, without Python (docs/platforms.md).

    clocks: {main: 250 MHz}
    regions:
      - {name: sram, base: 0x1C000000, size: 0x40000}
      - {name: tcdm, base: 0x10000000, size: 0x10000}
      - {name: rbe,  base: 0x10201000, size: 0x400}
    blocks:
      bus:  {type: crossbar, clock: main}
      sram: {type: sram, clock: main, region: sram, bus: bus}
      tcdm: {type: tcdm, clock: main, region: tcdm, bus: bus, params: {banks: 16}}
      rbe:  {type: rbe, clock: main, region: rbe, bus: bus, memory: tcdm, irq: rbe_eoj}
    host: {bus: bus}

Every block is a child of one top-level module (``top``, default ``soc``), so its path is
``soc.<name>`` for overrides (``--set soc.tcdm.mode=word``), statistics and traces. The
composition root hands each block its region, clock and interrupt line; no block looks up
an address of its own. Mistakes (overlapping regions, a block without the region its type
needs, an interrupt bound twice, an unknown type, clock or bus) are scenario errors naming
the file, line and key, raised before anything is built.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import jsonschema

from tlm import Clock, Event, Module, Simulator
from tlm.address_map import MemoryMap, Region
from tlm.params import ParameterError, resolve, suggest
from tlm.units import FREQ_MAX, FREQ_MIN, parse_frequency

from ..scenario.errors import ScenarioError
from ..scenario.validate import raise_first, refuse_non_finite
from ..scenario.yamlpos import dotted, line_of, load as load_yaml, read_text
from .blocks import BlockSpec, BlockType, plugin_blocks

_INT = {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 2**64 - 1},
                  {"type": "string", "pattern": r"^\s*(0[xX][0-9a-fA-F_]+|[0-9_]+)\s*$"}]}
_NAME = {"type": "string", "pattern": r"^[a-z][a-z0-9_]*$", "description": "name (a-z, 0-9, _)"}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["clocks", "regions", "blocks", "host"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "top": _NAME,
        "clocks": {"type": "object", "minProperties": 1,
                   "additionalProperties": {"type": ["string", "number"], "minimum": FREQ_MIN,
                                            "maximum": FREQ_MAX}},
        "regions": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "base", "size"],
            "properties": {"name": _NAME, "base": _INT, "size": _INT,
                           "description": {"type": "string"}}}},
        "blocks": {"type": "object", "minProperties": 1, "additionalProperties": {
            "type": "object", "additionalProperties": False, "required": ["type"],
            "properties": {"type": {"type": "string"}, "clock": {"type": "string"},
                           "region": {"type": "string"}, "bus": {"type": "string"},
                           "memory": {"type": "string"}, "irq": _NAME,
                           "params": {"type": "object"}}}},
        "host": {"type": "object", "additionalProperties": False, "required": ["bus"],
                 "properties": {"bus": {"type": "string"}}},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _banked_params() -> type:
    from components.l2 import BankedMemoryParams
    return BankedMemoryParams


def _tcdm_params() -> type:
    from components.tcdm import TcdmParams
    return TcdmParams


def _crossbar_params() -> type:
    from components.l2 import SocXbarParams
    return SocXbarParams


def _build_crossbar(p: "ComposedPlatform", path: str, b: BlockSpec) -> Module:
    from components.l2 import Crossbar
    prm = p.params[path]
    return Crossbar(p.top, b.name, clock=p.clock_of(b), latency=prm.latency, width=prm.width,
                    contention=prm.contention)


def _build_sram(p: "ComposedPlatform", path: str, b: BlockSpec, read_only: bool = False) -> Module:
    from components.l2 import BankedMemory
    mem = BankedMemory(p.top, b.name, p.region_of(b), p.clock_of(b), p.params[path],
                       read_only=read_only)
    p.attach(b, mem.socket, translate=False)
    return mem


def _build_tcdm(p: "ComposedPlatform", path: str, b: BlockSpec) -> Module:
    from components.tcdm import Tcdm
    tcdm = Tcdm(p.top, b.name, p.clock_of(b), p.params[path], region=p.region_of(b))
    p.attach(b, tcdm.soc_port, translate=False)
    return tcdm


#: The library blocks a platform file can compose, by type name: the shared ones here, each
#: accelerator family's from its declaration (components/plugins.py)
BLOCK_TYPES: dict[str, BlockType] = {
    "crossbar": BlockType("AXI-like crossbar: address decode, hop latency, width, contention",
                          ("clock",), _build_crossbar, _crossbar_params, interconnect=True),
    "sram": BlockType("banked SRAM (word-interleaved or contiguous banks)",
                      ("clock", "region", "bus"), _build_sram, _banked_params, memory=True),
    "rom": BlockType("banked ROM (bus writes refused; loaders write it)",
                     ("clock", "region", "bus"),
                     lambda p, path, b: _build_sram(p, path, b, read_only=True), _banked_params,
                     memory=True),
    "tcdm": BlockType("multi-banked tightly-coupled data memory (burst or word-level)",
                      ("clock", "region", "bus"), _build_tcdm, _tcdm_params, memory=True),
}
BLOCK_TYPES.update(plugin_blocks())


@dataclass
class PlatformSpec:
    """A validated platform file."""

    file: str | None
    lines: dict
    prefix: tuple
    name: str
    description: str
    top: str
    clocks: dict[str, float]
    regions: list[Region]
    blocks: dict[str, BlockSpec]
    host_bus: str

    def error(self, message: str, key: tuple) -> ScenarioError:
        full = self.prefix + key
        return ScenarioError(message, self.file, line_of(self.lines, full), dotted(full) or None)

    def params_classes(self) -> dict[str, type]:
        """Parameter class of every block that has parameters, by path."""
        out = {}
        for b in self.blocks.values():
            t = BLOCK_TYPES[b.type]
            if t.params is not None:
                out[f"{self.top}.{b.name}"] = t.params()
        return out

    def deployer(self) -> str | None:
        """The network deployer of the platform: the one its blocks' types name (None: the
        platform deploys no networks); two different ones are a platform error."""
        names = sorted({BLOCK_TYPES[b.type].deployer for b in self.blocks.values()} - {None})  # type: ignore[type-var]
        if len(names) > 1:
            raise self.error(f"blocks of this platform deploy networks in two ways ({', '.join(names)}); "
                             "a platform deploys with one", ("blocks",))
        return names[0] if names else None

    def rtl_swappable(self) -> dict[str, str]:
        """Block path -> RTL kind, for the blocks whose type has an RTL stand-in."""
        return {f"{self.top}.{b.name}": BLOCK_TYPES[b.type].rtl for b in self.blocks.values()
                if BLOCK_TYPES[b.type].rtl is not None}  # type: ignore[misc]


def _int(v: Any) -> int:
    return int(v.replace("_", ""), 0) if isinstance(v, str) else int(v)


def parse(data: Any, lines: dict, file: str | None, prefix: tuple = ()) -> PlatformSpec:
    """Validate a platform mapping (``prefix``: its key path in the file, for errors)."""
    if not isinstance(data, dict):
        raise ScenarioError("a platform must be a mapping with clocks, regions, blocks and host",
                            file, line_of(lines, prefix), dotted(prefix) or None)
    refuse_non_finite(data, lines, file, prefix)
    errors = list(_VALIDATOR.iter_errors(data))
    if errors:
        raise_first(errors, prefix, lines, file)
    spec = PlatformSpec(file, lines, prefix, str(data.get("name", "composed")),
                        str(data.get("description", "")), data.get("top", "soc"), {}, [], {},
                        data["host"]["bus"])
    for name, v in data["clocks"].items():
        try:
            spec.clocks[name] = parse_frequency(v)
        except ValueError as e:
            raise spec.error(f"clock {name}: {e}", ("clocks", name)) from None
        if not FREQ_MIN <= spec.clocks[name] <= FREQ_MAX:
            raise spec.error(f"clock {name}: {v!r} is out of range [{FREQ_MIN:g} Hz, {FREQ_MAX:g} Hz]",
                             ("clocks", name))
    seen: dict[str, int] = {}
    for i, r in enumerate(data["regions"]):
        if r["name"] in seen:
            raise spec.error(f"region {r['name']!r} is defined twice (first at regions[{seen[r['name']]}])",
                             ("regions", i, "name"))
        seen[r["name"]] = i
        region = Region(r["name"], _int(r["base"]), _int(r["size"]), spec.top, "memory",
                        r.get("description", ""))
        if region.size == 0:
            raise spec.error(f"region {region.name!r} has size 0", ("regions", i, "size"))
        if region.end > 1 << 32:
            raise spec.error(f"region {region.name!r} ends at 0x{region.end:x}, beyond the "
                             "32-bit address space", ("regions", i, "size"))
        for j, other in enumerate(spec.regions):
            if region.base < other.end and other.base < region.end:
                raise spec.error(
                    f"region {region.name!r} [0x{region.base:x}, 0x{region.end:x}) overlaps "
                    f"region {other.name!r} [0x{other.base:x}, 0x{other.end:x}) (regions[{j}])",
                    ("regions", i, "base"))
        spec.regions.append(region)
    used_regions: dict[str, str] = {}
    irqs: dict[str, str] = {}
    for name, b in data["blocks"].items():
        key = ("blocks", name)
        if not isinstance(name, str) or not name.isidentifier() or not name.islower():
            raise spec.error(f"block name {name!r}: use lower-case letters, digits and _", key)
        t = BLOCK_TYPES.get(b["type"])
        if t is None:
            raise spec.error(f"unknown block type {b['type']!r}{suggest(b['type'], BLOCK_TYPES)}; "
                             f"known: {', '.join(sorted(BLOCK_TYPES))}", key + ("type",))
        bs = BlockSpec(name, b["type"], key, b.get("clock"), b.get("region"), b.get("bus"),
                       b.get("memory"), b.get("irq"), dict(b.get("params") or {}))
        for need in t.needs:
            if getattr(bs, need) is None:
                raise spec.error(f"a {bs.type} block needs '{need}'", key)
        for k in ("region", "bus", "memory"):
            if getattr(bs, k) is not None and k not in t.needs:
                raise spec.error(f"a {bs.type} block takes no '{k}'", key + (k,))
        if bs.clock is not None and bs.clock not in spec.clocks:
            raise spec.error(f"unknown clock {bs.clock!r}{suggest(bs.clock, spec.clocks)}; "
                             f"clocks: {', '.join(spec.clocks)}", key + ("clock",))
        if bs.region is not None:
            if bs.region not in seen:
                raise spec.error(f"unknown region {bs.region!r}{suggest(bs.region, seen)}; "
                                 f"regions: {', '.join(seen)}", key + ("region",))
            if bs.region in used_regions:
                raise spec.error(f"region {bs.region!r} is already taken by block "
                                 f"{used_regions[bs.region]!r}", key + ("region",))
            used_regions[bs.region] = name
        if bs.irq is not None:
            if t.done is None:
                raise spec.error(f"a {bs.type} block has no interrupt to bind", key + ("irq",))
            if bs.irq in irqs:
                raise spec.error(f"interrupt {bs.irq!r} is bound twice (also by block "
                                 f"{irqs[bs.irq]!r})", key + ("irq",))
            irqs[bs.irq] = name
        spec.blocks[name] = bs
    for bs in spec.blocks.values():
        for k, want in (("bus", "interconnect"), ("memory", BLOCK_TYPES[bs.type].memory_type)):
            target = getattr(bs, k)
            if target is None:
                continue
            other = spec.blocks.get(target)
            if other is None:
                raise spec.error(f"unknown block {target!r}{suggest(target, spec.blocks)}",
                                 bs.key + (k,))
            ok = (BLOCK_TYPES[other.type].interconnect if want == "interconnect"
                  else other.type == want)
            if not ok:
                raise spec.error(f"{k}: {target!r} is a {other.type}, expected "
                             f"{'an' if want[0] in 'aeiou' else 'a'} {want}",
                                 bs.key + (k,))
    host = spec.blocks.get(spec.host_bus)
    if host is None or not BLOCK_TYPES[host.type].interconnect:
        raise spec.error(f"host.bus must name a crossbar block, got {spec.host_bus!r}",
                         ("host", "bus"))
    return spec


def load_file(path: Path) -> PlatformSpec:
    """Read and validate a platform file."""
    data, lines = load_yaml(read_text(path, "platform"), str(path))
    return parse(data, lines, str(path))


class ComposedPlatform:
    """A platform built from a :class:`PlatformSpec`. Offers what the runner needs:
    ``top``/``soc`` (the parent of the task host), ``host_bus``, ``irq``, ``memory_map``,
    ``load``/``dump``/``memory_for``/``owner_of``; ``pmu`` and ``stdout`` are None."""

    pmu = None
    stdout = None
    fc = None

    def __init__(self, sim: Simulator, spec: PlatformSpec,
                 overrides: Mapping[str, Any] | None = None):
        from components.marsellus.memory_system import split_params  # generic grouping
        self.sim = sim
        self.spec = spec
        known = spec.params_classes()
        groups = split_params(overrides, known, strict=True)
        self.params: dict[str, Any] = {}
        for path, cls in known.items():
            given = dict(spec.blocks[path.split(".", 1)[1]].params)
            given.update(groups.get(path, {}))
            self.params[path] = resolve(cls, given, path)
        self.memory_map = MemoryMap(spec.regions, [])
        self.top = Module(sim, spec.top)
        self.soc = self.top
        self.clocks = {n: Clock(sim, f"{spec.top}.clock.{n}", f) for n, f in spec.clocks.items()}
        self.blocks: dict[str, Module] = {}
        # interconnects first, memories next, then everything that binds to them
        order = sorted(spec.blocks.values(), key=lambda b: (
            not BLOCK_TYPES[b.type].interconnect, not BLOCK_TYPES[b.type].memory))
        for b in order:
            self.blocks[b.name] = BLOCK_TYPES[b.type].build(self, f"{spec.top}.{b.name}", b)
        self.irq: dict[str, Event] = {}
        for b in spec.blocks.values():
            done = BLOCK_TYPES[b.type].done
            if b.irq is not None and done is not None:
                self.irq[b.irq] = done(self.blocks[b.name])
        self.host_bus = self.blocks[spec.host_bus].target_socket  # type: ignore[attr-defined]
        self.memories = [self.blocks[b.name] for b in spec.blocks.values()
                         if BLOCK_TYPES[b.type].memory]

    # ----- used by the block builders ----------------------------------------------------
    def clock_of(self, b: BlockSpec) -> Clock:
        return self.clocks[b.clock or ""]

    def region_of(self, b: BlockSpec) -> Region:
        return self.memory_map[b.region or ""]

    def attach(self, b: BlockSpec, socket: Any, *, translate: bool) -> None:
        """Map block ``b``'s region on its bus. Registers see offsets (``translate``);
        memories keep global addresses, as their DMI regions are global."""
        bus: Any = self.blocks[b.bus or ""]
        bus.map_region(self.region_of(b), socket, translate=translate)

    # ----- contents (no time): loaders and checks ---------------------------------------
    def memory_for(self, space: str, address: int, length: int) -> tuple[Any, int]:
        if space != "soc":
            raise ParameterError(f"this platform has no {space!r} address space", "address")
        for m in self.memories:
            if m.region.contains(address, length):  # type: ignore[attr-defined]
                return m, address
        raise ParameterError(f"[0x{address:x}, +{length}) is not inside one memory "
                             f"({', '.join(m.name for m in self.memories)})", "address")

    def load(self, space: str, address: int, data: Any) -> None:
        mem, a = self.memory_for(space, address, len(memoryview(data).cast("B")))
        mem.load(a, data)

    def dump(self, space: str, address: int, length: int) -> bytes:
        mem, a = self.memory_for(space, address, length)
        return bytes(mem.dump(a, length))

    def owner_of(self, space: str, address: int, length: int = 1) -> str:
        return self.spec.top


def describe_block_types() -> list[tuple[str, str]]:
    """(type, one line) of every block a platform file can name."""
    return [(n, t.doc) for n, t in sorted(BLOCK_TYPES.items())]
