"""What a composed platform's block type is (:class:`BlockType`) and what a platform file
says of one block (:class:`BlockSpec`). Shared by :mod:`cosim.platforms.composed` and the
block types accelerator families declare (docs/plugins.md), which import only this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from tlm import Event, Module


@dataclass
class BlockType:
    """A library block a platform file may name: how to build it from its spec."""

    doc: str
    #: which keys of a block spec it needs ('region', 'bus', 'memory', 'clock')
    needs: tuple[str, ...]
    #: ``build(platform, path, spec)``: the platform gives the block its clock
    #: (``clock_of``), region (``region_of``), other blocks (``blocks``) and parameters
    #: (``params[path]``); ``attach(spec, socket, translate=...)`` maps a target on the bus
    build: Callable[[Any, str, "BlockSpec"], Module]     # (cosim.platforms.composed.ComposedPlatform, ...)
    params: Callable[[], type] | None = None
    #: the type of block its 'memory' key must name, if it has one
    memory_type: str | None = None
    #: kind of region: 'memory' blocks hold contents (load/dump/checks)
    memory: bool = False
    interconnect: bool = False
    #: the event notified at the end of each job (accelerators), bound to ``irq``
    done: Callable[[Module], Event] | None = None
    #: the RTL kind that can replace a block of this type (cosim.rtl.registry), if any
    rtl: str | None = None
    #: the network deployer a platform holding this block uses (a registered name), if any
    deployer: str | None = None


@dataclass
class BlockSpec:
    name: str
    type: str
    key: tuple                      # the key path of this block in the platform file
    clock: str | None = None
    region: str | None = None
    bus: str | None = None
    memory: str | None = None
    irq: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


def plugin_blocks() -> dict[str, BlockType]:
    """The block types the installed accelerator families declare, by name."""
    from components.plugins import PluginError, block_types
    out: dict[str, BlockType] = {}
    for name, (family, ref) in block_types().items():
        bt = ref.load()
        if not isinstance(bt, BlockType):
            raise PluginError(f"block type {name!r} of family {family!r} ({ref.target}) is a "
                              f"{type(bt).__name__}, not a BlockType")
        out[name] = bt
    return out
