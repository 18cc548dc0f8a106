"""Which RTL blocks can replace a TLM block (``platform.models: {<path>: rtl | shadow}``).

An RTL *kind* names a Verilated block with a transactor; a platform says which of its
component paths each kind can replace (:func:`cosim.platforms.rtl_swappable`: MARSELLUS
lists its own paths, a composed platform every block whose type has an RTL kind). A
pattern is a component path where ``{n}`` stands for a decimal index.
"""
from __future__ import annotations

import importlib
import re
from typing import Mapping

from components.plugins import PluginError, RtlKind, rtl_kinds


#: RTL kind -> what it is and its transactor: the platform blocks' here, each accelerator
#: family's from its declaration (components/plugins.py). Accelerators name their kind in
#: :attr:`components.accel.Accelerator.rtl_block`.
RTL_KINDS: dict[str, RtlKind] = {
    "cluster_dma": RtlKind("cluster DMA (rtl/cluster_dma) as a transfer-level transactor",
                           "cosim.rtl.transactors.cluster_dma:DmaTransactor"),
    "tcdm_bank": RtlKind("one TCDM bank (rtl/tcdm_bank) in word mode, access by access",
                         "cosim.rtl.transactors.tcdm_bank:TcdmBankTransactor"),
    "abb": RtlKind("ABB controller FSM (rtl/abb, abb_ctrl) in lock-step with the reference "
                   "clock", "cosim.rtl.transactors.abb:AbbTransactor"),
}
for _kind, (_family, _decl) in rtl_kinds().items():
    if _kind in RTL_KINDS:
        raise PluginError(f"RTL kind {_kind!r} of family {_family!r} is already taken")
    RTL_KINDS[_kind] = _decl


def _match(pattern: str, path: str) -> bool:
    rx = "^" + re.escape(pattern).replace(re.escape("{n}"), "(0|[1-9][0-9]*)") + "$"
    return re.match(rx, path) is not None


def kind_of(swappable: Mapping[str, str], path: str) -> str | None:
    """The RTL kind that can replace ``path`` (``swappable``: pattern -> kind), or None."""
    for pattern, kind in swappable.items():
        if _match(pattern, path):
            return kind
    return None


def describe(swappable: Mapping[str, str]) -> str:
    """``"cluster.rbe (RBE ...), ..."`` for messages."""
    return ", ".join(f"{p} ({RTL_KINDS[k].doc})" for p, k in swappable.items())


def transactor_class(kind: str) -> type:
    """The transactor class of RTL kind ``kind``."""
    mod, _, name = RTL_KINDS[kind].transactor.partition(":")
    return getattr(importlib.import_module(mod), name)
