"""Build the MARSELLUS memory subsystem from parameters keyed by hierarchical path.

    ms = build_memory_system(sim, {"cluster.tcdm": {"mode": "word"},
                                   "cluster.clock.freq": "300 MHz"})

Parameter paths (each maps to a params dataclass; see docs/memory.md for the fields):

=================  ======================  ===============================================
path               class                   block
=================  ======================  ===============================================
soc.clock          ClockParams             SOC clock (``freq``)
cluster.clock      ClockParams             CLUSTER clock (``freq``)
soc.l2             L2Params                L2 shared, 960 KiB, 4 word-interleaved banks
soc.l2_private     L2PrivateParams         L2 private, 64 KiB, 2 contiguous banks
soc.rom            RomParams               boot ROM, 8 KiB
soc.xbar           SocXbarParams           64-bit AXI crossbar (SOC clock)
cdc                CdcParams               dual-clock FIFOs SOC <-> CLUSTER (a Link)
cluster.xbar       ClusterBusParams        cluster AXI bus (CLUSTER clock)
cluster.periph     PeriphBusParams         32-bit cluster peripheral interconnect
cluster.tcdm       TcdmParams              TCDM, 128 KiB, 32 banks, burst|word mode
cluster.dma        DmaParams               cluster DMA
=================  ======================  ===============================================

Both forms are accepted: ``{"cluster.tcdm": {"mode": "word"}}`` and
``{"cluster.tcdm.mode": "word"}``. Unknown paths are errors (with a suggestion) unless
``strict=False`` (the full platform builder passes every component's parameters).

Topology (addresses from facts/memory_map.yaml, never repeated here; this module and
platform.py are the only readers of the facts, and hand every block its region)::

    SOC initiators --> soc.xbar --+--> soc.l2 / soc.l2_private / soc.rom / (SOC peripherals)
                                  +--> [cluster window] --> cdc.to_cluster ----+
                                                                                v
    cluster initiators --> cluster.xbar --+--> [tcdm] --> cluster.tcdm.soc_port
    (cluster.dma.axi, cores' AXI)         +--> [cluster peripherals] --> cluster.periph
                                          +--> [SOC window] --> cdc.to_soc --> soc.xbar
    cluster.dma.tcdm --> cluster.tcdm.dma0;  cores --> tcdm.core_ports[i];  RBE --> tcdm.rbe_port
    cluster.periph --> cluster.dma.regs (+ Event Unit, RBE, ... mapped by their builders)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from tlm import Clock, Module, Simulator
from tlm.address_map import MemoryMap, Region
from tlm.params import ParameterError, freq_field, param, resolve, suggest

from ..cdc import Cdc, CdcParams
from ..cluster_dma import ClusterDma, DmaParams
from ..l2 import (BankedMemory, Crossbar, L2Params, L2PrivateParams, RomParams, SocXbar,
                  SocXbarParams)
from ..tcdm import Tcdm, TcdmParams
from .facts import MEMORY_MAP

__all__ = ["ClockParams", "ClusterBusParams", "PeriphBusParams", "PARAMS", "MemorySystem",
           "build_memory_system", "split_params", "domain_window", "memory_map_table"]


@dataclass
class ClockParams:
    """``soc.clock`` / ``cluster.clock``: the FLL output at start (DVFS changes it later)."""

    freq: float | None = freq_field(None, "frequency at start (Hz); default: the operating "
                                          "point's (pmu.operating_point)")

    def validate(self) -> None:
        if self.freq is not None and not self.freq > 0:
            raise ValueError(f"freq must be > 0, got {self.freq}")


@dataclass
class ClusterBusParams:
    """``cluster.xbar``: the cluster AXI bus (64 bit, CLUSTER clock)."""

    latency: int = param(1, "hop latency (CLUSTER cycles)", lo=0, hi=1000)
    width: int = param(8, "data width (bytes/cycle)", lo=1, hi=512)
    contention: Literal["per_target", "shared", "none"] = field(
        default="per_target", metadata={"doc": "contention model"})

    def validate(self) -> None:
        if self.latency < 0 or self.width < 1:
            raise ValueError("latency must be >= 0 and width >= 1")


@dataclass
class PeriphBusParams:
    """``cluster.periph``: the 32-bit peripheral interconnect (one bus, CLUSTER clock)."""

    latency: int = param(1, "hop latency (CLUSTER cycles)", lo=0, hi=1000)
    width: int = param(4, "data width (bytes/cycle)", lo=1, hi=512)
    contention: Literal["per_target", "shared", "none"] = field(
        default="shared", metadata={"doc": "contention model"})

    def validate(self) -> None:
        if self.latency < 0 or self.width < 1:
            raise ValueError("latency must be >= 0 and width >= 1")


#: Every parameter path of the memory subsystem and its dataclass.
PARAMS: dict[str, type] = {
    "soc.clock": ClockParams, "cluster.clock": ClockParams,
    "soc.l2": L2Params, "soc.l2_private": L2PrivateParams, "soc.rom": RomParams,
    "soc.xbar": SocXbarParams, "cdc": CdcParams, "cluster.xbar": ClusterBusParams,
    "cluster.periph": PeriphBusParams, "cluster.tcdm": TcdmParams, "cluster.dma": DmaParams,
}


def split_params(params: Mapping[str, Any] | None, known: Mapping[str, type] = PARAMS,
                 strict: bool = True) -> dict[str, dict[str, Any]]:
    """Group ``params`` by component path; accepts ``{path: {field: v}}`` and
    ``{"path.field": v}``. Unknown paths raise :class:`ParameterError` when ``strict``."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in (params or {}).items():
        if key in known:
            if not isinstance(value, Mapping):
                raise ParameterError(f"expected a mapping of parameters, got {value!r}", key)
            out.setdefault(key, {}).update(value)
            continue
        head, _, fld = key.rpartition(".")
        if head in known:
            out.setdefault(head, {})[fld] = value
        elif strict:
            raise ParameterError(f"unknown parameter path {key!r}{suggest(key, known)}; "
                                 f"known paths: {', '.join(known)}", key)
    return out


def domain_window(mm: MemoryMap, domains: tuple[str, ...], kind: str | None = None) -> tuple[int, int]:
    """``(base, end)`` spanning the regions of ``domains`` (and ``kind``); checks that no
    other region falls inside, so the window can be routed as one range."""
    sel = [r for r in mm.regions if r.domain in domains and (kind is None or r.kind == kind)]
    if not sel:
        raise ValueError(f"memory map has no region in {domains}")
    lo, hi = min(r.base for r in sel), max(r.end for r in sel)
    for r in mm.regions:
        if r not in sel and r.base < hi and lo < r.end:
            raise ValueError(f"memory map: {r.name} lies inside the {'/'.join(domains)} window "
                             f"[0x{lo:x}, 0x{hi:x})")
    return lo, hi


class MemorySystem:
    """The built memory subsystem. Attributes: ``soc``/``cluster`` (parent modules),
    ``soc_clock``/``cluster_clock``, ``l2``, ``l2_private``, ``rom``, ``soc_xbar``, ``cdc``,
    ``cluster_xbar``, ``cluster_periph``, ``tcdm``, ``dma``, ``params`` (resolved, by path),
    ``memory_map`` (the platform's :class:`tlm.MemoryMap`).

    Where other blocks attach: SOC initiators bind to ``soc_xbar.target_socket``, SOC
    peripherals are mapped with ``soc_xbar.map_region(memory_map[name], socket)``; cluster
    initiators reach L2 and peripherals through ``cluster_xbar.target_socket``, cluster
    peripherals map on ``cluster_periph``; cores bind ``tcdm.core_ports[i]``, the RBE
    ``tcdm.rbe_port``."""

    def __init__(self, sim: Simulator, params: dict[str, Any], soc: Module, cluster: Module,
                 soc_clock: Clock, cluster_clock: Clock, cluster_domain: Any = None,
                 cdc_views: dict[str, tuple[Clock, Clock]] | None = None):
        self.sim = sim
        self.params = params
        self.soc = soc
        self.cluster = cluster
        self.soc_clock = soc_clock
        self.cluster_clock = cluster_clock
        self.memory_map = mm = MEMORY_MAP
        self.l2 = BankedMemory(soc, "l2", mm["l2"], soc_clock, params["soc.l2"])
        self.l2_private = BankedMemory(soc, "l2_private", mm["l2_private"], soc_clock,
                                       params["soc.l2_private"])
        self.rom = BankedMemory(soc, "rom", mm["boot_rom"], soc_clock, params["soc.rom"],
                                read_only=True)
        self.soc_xbar = SocXbar(soc, "xbar", soc_clock, params["soc.xbar"])
        self.cdc = Cdc(sim, "cdc", soc_clock, cluster_clock, params["cdc"], views=cdc_views)
        cb = params["cluster.xbar"]
        self.cluster_xbar = Crossbar(cluster, "xbar", clock=cluster_clock, latency=cb.latency,
                                   width=cb.width, contention=cb.contention)
        pb = params["cluster.periph"]
        self.cluster_periph = Crossbar(cluster, "periph", clock=cluster_clock, latency=pb.latency,
                                     width=pb.width, contention=pb.contention)
        # the memories keep global addressing (L2 banks, TCDM): the cores, the DMA and
        # the RBE address them with SOC addresses, so they receive their Region
        self.tcdm = Tcdm(cluster, "tcdm", cluster_clock, params["cluster.tcdm"],
                         region=mm["tcdm"])
        self.dma = ClusterDma(cluster, "dma", cluster_clock, params["cluster.dma"],
                              l2_regions=(mm["l2_private"], mm["l2"]), tcdm_region=mm["tcdm"],
                              region=mm["cluster_dma"])

        # SOC crossbar: memories, and the cluster window through the crossing
        for mem in (self.l2_private, self.l2, self.rom):
            self.soc_xbar.map_region(mem.region, mem.socket)
        lo, hi = domain_window(mm, ("cluster",))
        self.soc_xbar.map(lo, hi - lo, self.cdc.to_cluster.target_socket, name="cluster",
                          translate=False)
        if cluster_domain is not None:
            # the cluster power domain: OFF answers SOC accesses with an error, and the
            # TCDM loses its contents (an SRAM that was off holds garbage)
            from ..pmu import DomainGate
            self.cluster_gate = DomainGate(cluster, "power_gate", cluster_domain)
            self.cdc.to_cluster.initiator_socket.bind(self.cluster_gate.target_socket)
            self.cluster_gate.initiator_socket.bind(self.cluster_xbar.target_socket)
        else:
            self.cdc.to_cluster.initiator_socket.bind(self.cluster_xbar.target_socket)
        # cluster bus: TCDM (SOC port), peripherals, and the SOC window through the crossing
        self.cluster_xbar.map(mm["tcdm"].base, mm["tcdm"].size, self.tcdm.soc_port, name="tcdm")
        lo, hi = domain_window(mm, ("cluster",), "peripheral")
        self.cluster_xbar.map(lo, hi - lo, self.cluster_periph.target_socket, name="periph",
                              translate=False)
        lo, hi = domain_window(mm, ("soc", "always_on"))
        self.cluster_xbar.map(lo, hi - lo, self.cdc.to_soc.target_socket, name="soc",
                              translate=False)
        self.cdc.to_soc.initiator_socket.bind(self.soc_xbar.target_socket)
        # cluster DMA
        dr = mm["cluster_dma"]
        self.cluster_periph.map(dr.base, dr.size, self.dma.regs.socket, name="cluster_dma")
        self.dma.axi.bind(self.cluster_xbar.target_socket)
        self.dma.tcdm.bind(self.tcdm.dma_ports[0])
        if cluster_domain is not None:
            cluster_domain.lose_contents(self.tcdm.array)

    # ----- convenience for loaders, checks and tests (no simulated time) ----------------------------
    def memory_at(self, address: int, length: int = 1) -> BankedMemory | Tcdm:
        """The memory holding ``[address, address+length)`` (global addresses)."""
        for m in (self.l2, self.l2_private, self.rom, self.tcdm):
            r: Region = m.region
            if r.contains(address, length):
                return m
        raise ValueError(f"[0x{address:x}, +{length}) is not inside one memory")

    def load(self, address: int, data) -> None:
        """Write bytes at a global address (debug write: reaches the ROM too)."""
        self.memory_at(address, len(memoryview(data).cast("B"))).load(address, data)

    def dump(self, address: int, length: int) -> bytes:
        return self.memory_at(address, length).dump(address, length)


def build_memory_system(sim: Simulator, params: Mapping[str, Any] | None = None, *,
                        soc: Module | None = None, cluster: Module | None = None,
                        soc_clock: Clock | None = None, cluster_clock: Clock | None = None,
                        strict: bool = True, cluster_domain: Any = None,
                        cdc_views: dict[str, tuple[Clock, Clock]] | None = None) -> MemorySystem:
    """Build the memory subsystem under ``soc``/``cluster`` (created when not given).

    Clocks: pass the FLL-driven clocks of a full platform, or let this make them from
    ``soc.clock.freq`` / ``cluster.clock.freq``. ``cluster_domain`` (a PMU power domain)
    gates the SOC's accesses into the cluster and scrambles the TCDM at power-off.
    ``cdc_views``: the (SOC, CLUSTER) clocks each side of the crossing sees (see ``Cdc``)."""
    groups = split_params(params, PARAMS, strict)
    resolved = {path: resolve(cls, groups.get(path), path) for path, cls in PARAMS.items()}
    for path, given in (("soc.clock", soc_clock), ("cluster.clock", cluster_clock)):
        if given is not None and path in groups:
            raise ParameterError("this clock was passed in by the platform; set its frequency "
                                 "there, not here", path)
    soc = soc if soc is not None else Module(sim, "soc")
    cluster = cluster if cluster is not None else Module(sim, "cluster")
    soc_clock = soc_clock or Clock(sim, "soc.clock", _start_freq(resolved, "soc"))
    cluster_clock = cluster_clock or Clock(sim, "cluster.clock", _start_freq(resolved, "cluster"))
    return MemorySystem(sim, resolved, soc, cluster, soc_clock, cluster_clock, cluster_domain,
                        cdc_views)


def _start_freq(resolved: Mapping[str, Any], fll: str) -> float:
    """``<fll>.clock.freq``, by default the frequency of the PMU's default operating point
    (the same default a full platform starts at)."""
    freq = resolved[f"{fll}.clock"].freq
    if freq is None:
        from ..pmu import PmuParams
        from .facts import operating_points
        freq = operating_points().operating_points[PmuParams.operating_point].freq[fll]
    return float(freq)


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def memory_map_table(mm: MemoryMap = MEMORY_MAP) -> str:
    """The memory map as the Markdown tables of docs/memory_map.md (generated, not edited:
    ``python -m components.marsellus.memory_system`` prints them)."""
    lines = ["| region | base | end (excl.) | size | domain | kind | description |",
             "|---|---|---|---|---|---|---|"]
    for r in mm.regions:
        lines.append(f"| `{r.name}` | `0x{r.base:08X}` | `0x{r.end:08X}` | {_size(r.size)} | "
                     f"{r.domain} | {r.kind} | {r.description} |")
    lines += ["", "Off-chip address spaces (reached through the uDMA, not the SOC crossbar):", "",
              "| region | base | size | description |", "|---|---|---|---|"]
    for r in mm.external:
        lines.append(f"| `{r.name}` | `0x{r.base:08X}` | {_size(r.size)} | {r.description} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(memory_map_table(), end="")
