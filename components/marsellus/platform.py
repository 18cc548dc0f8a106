"""The MARSELLUS platform: every block, built from parameters keyed by path, and wired.

    plat = Marsellus(sim, {"cluster.tcdm.mode": "word", "pmu.operating_point": "abb_400"},
                     firmware="firmware/build/hello.elf")

Top-level components (the units a scenario may place in different processes):

* ``pmu`` — PMU, FLLs (the clocks), power domains, ABB, energy ledger (always-on domain);
* ``soc`` — L2, boot ROM, SOC crossbar, stdout, timer, uDMA, the fabric controller ``soc.fc``
  (when there is firmware) and the scenario's task driver (``soc.host``, added by cosim);
* ``cluster`` — cores, Event Unit, control registers, TCDM, cluster DMA, RBE (and, with
  ``cluster.flexisaga.enabled``, a FlexiSAGA on a second TCDM accelerator branch);
* ``hyperram`` — the off-chip HyperRAM;
* ``cdc`` — the SOC<->CLUSTER crossing (a link; its sides belong to soc and cluster).

Links between them: ``cdc`` (transports both ways, and the cluster -> SOC interrupt
lines ``cluster_eoj``, ``dma_irq``, ``rbe_eoj``), ``pmu_link`` (the PMU's control of the
cluster: its clocks and power state, and the cluster's activity reports to the energy
ledger; :class:`components.pmu.DomainLink`) and ``soc.udma.hyperbus_link``. Every other
connection is a zero-latency socket binding inside one component, so the PMU always sits
with the SOC (its registers are on the SOC crossbar).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from tlm import Module, Simulator
from tlm.params import ParameterError, resolve

from ..cluster import Cluster, ClusterParams
from ..cluster.event_unit import EventUnitParams
from accelerators.flexisaga.model.peripheral import SocFlexiSagaParams
from ..hyperram import HyperRam, HyperRamParams
from ..pmu import DomainLink, Pmu, PmuParams, power_of, report_activity
from ..pmu.meter import CounterMeter
from .energy_wiring import wire_energy
from ..rbe.peripheral import Rbe, RbeParams
from ..soc_timer import SocTimer, SocTimerParams
from ..stdout import Stdout, StdoutParams
from ..udma import Udma, UdmaParams
from .accel_dram import HyperBusPort, MarsellusTensilParams, MarsellusVoyagerParams
from .facts import IRQ_LINES, MEMORY_MAP, SOC_IRQS, operating_points
from .memory_system import PARAMS as MS_PARAMS, MemorySystem, build_memory_system, split_params

#: Every parameter path of the platform and its dataclass (docs: each block's docs page).
PARAMS: dict[str, type] = {
    **MS_PARAMS,
    "pmu": PmuParams,
    "cluster": ClusterParams,
    "cluster.event_unit": EventUnitParams,
    "cluster.rbe": RbeParams,
    "soc.udma": UdmaParams,
    "soc.timer": SocTimerParams,
    "soc.stdout": StdoutParams,
    "hyperram": HyperRamParams,
    "soc.tensil": MarsellusTensilParams,
    "soc.voyager": MarsellusVoyagerParams,
    "cluster.flexisaga": SocFlexiSagaParams,
}

#: The components a scenario may name in a partition (top-level modules).
COMPONENTS = ("pmu", "soc", "cluster", "hyperram")


def complete_params(params: dict[str, Any]) -> dict[str, Any]:
    """The resolved parameters by path with what defaults to the MARSELLUS facts filled in
    (the PMU's from the operating points; an unknown operating point is a ParameterError
    at ``pmu.operating_point``)."""
    out = dict(params)
    if "pmu" in out:
        out["pmu"] = out["pmu"].for_chip(operating_points(), "pmu")
    return out


def soc_core_params() -> type:
    from ..soc_core import SocCoreParams  # needs unicorn (the iss extra): import on demand
    return SocCoreParams


class Marsellus:
    """The built platform. Attributes: ``sim``, ``pmu``, ``soc`` and ``cluster`` (Modules),
    ``ms`` (the MemorySystem: l2, rom, soc_xbar, cdc, tcdm, dma, ...), ``cl`` (the Cluster),
    ``rbe``, ``udma``, ``hyperram``, ``timer``, ``stdout``, ``fc`` (or None), ``irq``
    (SOC-side end-of-job / interrupt events by name), ``params`` (resolved, by path),
    ``memory_map`` (the :class:`tlm.MemoryMap` every block got its region from).

    This class and memory_system.py are the composition: the only readers of the
    MARSELLUS facts (``components.marsellus.facts``), which they hand to the blocks."""

    def __init__(self, sim: Simulator, params: Mapping[str, Any] | None = None, *,
                 firmware: str | Path | None = None, stdout_echo=None):
        self.sim = sim
        self.memory_map = mm = MEMORY_MAP
        known = dict(PARAMS)
        if firmware is not None:
            known["soc.fc"] = soc_core_params()
        groups = split_params(params, known, strict=True)
        # the HyperRAM's capacity defaults to the memory map's hyperram space
        groups.setdefault("hyperram", {}).setdefault("capacity", mm["hyperram"].size)
        fs_on = resolve(SocFlexiSagaParams, groups.get("cluster.flexisaga"), "cluster.flexisaga")
        tcdm_extra = self._tcdm_branches(fs_on, groups.get("cluster.tcdm") or {})
        groups.setdefault("cluster.tcdm", {}).update(tcdm_extra)
        self.params = complete_params(
            {path: resolve(cls, groups.get(path), path) for path, cls in known.items()})
        p = self.params

        # always-on: the PMU and its FLLs provide the clocks. One knob per clock: the
        # operating point sets every FLL; soc.clock.freq / cluster.clock.freq, when given,
        # start that FLL elsewhere (and the report says so)
        self.pmu = Pmu(sim, "pmu", p["pmu"], chip=operating_points(), region=mm["pmu"],
                       fll_region=mm["fll"])
        for fll, path in (("soc", "soc.clock"), ("cluster", "cluster.clock")):
            if p[path].freq is not None:
                self.pmu.override_clock(fll, p[path].freq)
        self.pmu.mark_start()
        soc_clock = self.pmu.clocks["soc"]
        periph_clock = self.pmu.clocks["periph"]
        # the cluster sees the PMU through a link: mirrored clocks and power state
        self.pmu_link = DomainLink(sim, "pmu_link", self.pmu, component="cluster",
                                   domain="cluster", flls=("cluster", "soc"),
                                   latency=p["pmu"].link_latency)
        cluster_clock = self.pmu_link.clocks["cluster"]

        self.soc = Module(sim, "soc")
        self.cl = Cluster(sim, "cluster", clock=cluster_clock, params=p["cluster"],
                          eu_params=p["cluster.event_unit"], ctrl_region=mm["cluster_ctrl"],
                          event_unit_region=mm["event_unit"], tcdm_region=mm["tcdm"])
        self.cluster = self.cl
        cluster_power = self.pmu_link.attach(self.cl)
        ms_params = {k: v for k, v in (params or {}).items()
                     if not k.startswith(("soc.clock", "cluster.clock"))}
        ms_params.update({f"cluster.tcdm.{k}": v for k, v in tcdm_extra.items()})
        self.ms: MemorySystem = build_memory_system(
            sim, ms_params, soc=self.soc, cluster=self.cl, soc_clock=soc_clock,
            cluster_clock=cluster_clock, strict=False, cluster_domain=cluster_power,
            cdc_views={"a": (soc_clock, self.pmu.clocks["cluster"]),
                       "b": (self.pmu_link.clocks["soc"], cluster_clock)})
        ms = self.ms

        # SOC peripherals
        self.stdout = Stdout(self.soc, "stdout", region=mm["stdout"], params=p["soc.stdout"],
                             clock=periph_clock, echo=stdout_echo)
        self.timer = SocTimer(self.soc, "timer", clock=periph_clock, region=mm["timer"],
                              params=p["soc.timer"])
        self.hyperram = HyperRam(sim, "hyperram", p["hyperram"])
        self.udma = Udma(self.soc, "udma", clock=periph_clock, region=mm["udma"],
                         memory_map=mm, params=p["soc.udma"], hyperram=p["hyperram"])
        self.udma.connect(self.hyperram.socket)
        self.udma.l2_socket.bind(ms.soc_xbar.target_socket)
        for name, sock in (("stdout", self.stdout.target_socket), ("timer", self.timer.target_socket),
                           ("udma", self.udma.target_socket), ("pmu", self.pmu.regs.socket),
                           ("fll", self.pmu.fll.socket)):
            ms.soc_xbar.map_region(mm[name], sock)

        # cluster: cores + Event Unit + control on the peripheral bus, RBE on the TCDM
        self.cl.bind_tcdm(ms.tcdm)
        ms.cluster_periph.map_region(mm["event_unit"], self.cl.event_unit.regs.socket)
        ms.cluster_periph.map_region(mm["cluster_ctrl"], self.cl.ctrl.regs.socket)
        self.rbe = Rbe(self.cl, "rbe", clock=cluster_clock, params=p["cluster.rbe"],
                       region=mm["rbe"], tcdm_region=mm["tcdm"],
                       tcdm_word_mode=lambda: ms.tcdm.params.mode == "word")
        self.rbe.tcdm.bind(ms.tcdm.rbe_port)
        ms.cluster_periph.map_region(mm["rbe"], self.rbe.regs.socket)
        self.cl.connect_dma(ms.dma)
        self.cl.connect_rbe(self.rbe.done)
        self.cl.attach_power(cluster_power)

        # interrupt lines to the SOC through the crossing (latency of the FIFOs)
        links = {name: ms.cdc.event(name, from_side="b") for name in SOC_IRQS}
        self.cl.bind_soc(links["cluster_eoj"])
        ms.dma.irq.add_callback(lambda e: links["dma_irq"].notify())
        self.rbe.done.add_callback(lambda e: links["rbe_eoj"].notify())
        self.irq = {name: ln.event for name, ln in links.items()}
        self.irq["udma"] = self.udma.irq
        self.irq["timer"] = self.timer.irq
        self.irq_counts = {name: ln for name, ln in links.items()}
        # optional cluster accelerators on further TCDM branches (before the energy wiring,
        # which meters every branch's TCDM words)
        self.flexisaga = (self._add_flexisaga(p["cluster.flexisaga"], cluster_clock, links)
                          if p["cluster.flexisaga"].enabled else None)
        # energy of every activity the power model lists (components/marsellus/energy_wiring.py)
        wire_energy(sim, ms, self.rbe, self.udma, cluster_clock, self.irq, self.flexisaga)

        self.dram_meters: list[CounterMeter] = []
        self.tensil = self._add_tensil(p["soc.tensil"], soc_clock) if p["soc.tensil"].enabled else None
        self.voyager = self._add_voyager(p["soc.voyager"], soc_clock) if p["soc.voyager"].enabled else None

        # the fabric controller runs the firmware, if any
        self.fc = None
        if firmware is not None:
            from ..soc_core import SocCore
            self.fc = SocCore(self.soc, "fc", clock=soc_clock, elf=firmware, params=p["soc.fc"],
                              memory_map=mm, irq_lines=IRQ_LINES)
            self.fc.socket.bind(ms.soc_xbar.target_socket)
            for line, ev in (("timer", self.timer.irq), ("cluster_dma", links["dma_irq"]),
                             ("rbe", links["rbe_eoj"]), ("cluster", links["cluster_eoj"]),
                             ("udma", self.udma.irq)):
                self.fc.connect_irq(line, ev)
            # the optional SOC accelerators: their end-of-job events as edges (they sit on
            # the SOC AXI, so no crossing delays them)
            for line, ev in (("tensil", self.irq.get("tensil")), ("voyager", self.irq.get("voyager"))):
                if ev is not None:
                    self.fc.connect_irq(line, ev)
            if "flexisaga_eoj" in links:       # the cluster's FlexiSAGA, across the crossing
                self.fc.connect_irq("flexisaga", links["flexisaga_eoj"])
            self.fc.connect_exit(self.stdout)

    @staticmethod
    def _tcdm_branches(fs: SocFlexiSagaParams, given: Mapping[str, Any]) -> dict[str, Any]:
        """TCDM parameters an enabled FlexiSAGA needs: a second accelerator branch (at
        least), ``4 * mem_ports`` bytes wide unless the scenario sets the width."""
        if not fs.enabled:
            return {}
        out: dict[str, Any] = {"accel_ports": max(2, int(given.get("accel_ports", 1)))}
        if "accel_port_bytes" not in given:
            out["accel_port_bytes"] = 4 * fs.mem_ports
        return out

    def _add_flexisaga(self, prm: SocFlexiSagaParams, clock, links: dict):
        """The optional FlexiSAGA (docs/flexisaga.md, "On MARSELLUS"): job registers at the
        ``flexisaga`` region of the cluster peripheral bus, its DecU on TCDM branch
        ``accel1`` (beside the RBE's, arbitrated per bank, HCI-like), end of job across the
        crossing as ``irq['flexisaga']``."""
        from accelerators.flexisaga.model.peripheral import FlexiSaga
        mm = self.memory_map
        acc = FlexiSaga(self.cl, "flexisaga", clock=clock, region=mm["flexisaga"],
                        mem_region=mm["tcdm"], params=prm)
        acc.mem.bind(self.ms.tcdm.port("accel1"))
        self.ms.cluster_periph.map_region(mm["flexisaga"], acc.regs.socket)
        line = self.ms.cdc.event("flexisaga_eoj", from_side="b")
        acc.done.add_callback(lambda e: line.notify())
        links["flexisaga_eoj"] = line
        self.irq["flexisaga"] = line.event
        self.irq_counts["flexisaga_eoj"] = line
        acc.activity.append(lambda kind, n, over, **kw: book_array(self.pmu, acc, kind, n, over))
        return acc

    def _add_tensil(self, prm: MarsellusTensilParams, clock):
        """The optional Tensil TCU (docs/tensil.md): registers at the ``tensil`` region, its
        fetcher an AXI master on the SOC crossbar, DRAM0/DRAM1 too (``dram: l2``: the host
        names L2 ranges in DRAM0_BASE/DRAM1_BASE) or on the HyperBus port (``dram:
        hyperram``: HyperRAM device addresses), end of job as ``irq['tensil']``."""
        from accelerators.tensil.model.accelerator import TensilTcu
        tcu = TensilTcu(self.soc, "tensil", clock=clock, params=prm)
        tcu.fetch.bind(self.ms.soc_xbar.target_socket)
        dram = self._dram_target(prm.dram, "tensil")
        for port in tcu.dram_ports:
            port.bind(dram)
        self.ms.soc_xbar.map_region(self.memory_map["tensil"], tcu.regs.socket)
        tcu.activity.append(lambda kind, n, over: book_array(self.pmu, tcu, kind, n, over))
        self.irq["tensil"] = tcu.done
        return tcu

    def _add_voyager(self, prm: MarsellusVoyagerParams, clock):
        """The optional Voyager unit (docs/voyager.md): registers at the ``voyager`` region,
        its DRAM port an AXI master on the SOC crossbar (``dram: l2``: its tensors are L2
        addresses) or on the HyperBus port (``dram: hyperram``: HyperRAM device addresses),
        its interrupt (end of job, gated by IRQ_ENABLE) as ``irq['voyager']``."""
        from accelerators.voyager.model.accel import Voyager
        region = self.memory_map["voyager"]
        acc = Voyager(self.soc, "voyager", clock=clock, params=prm, region_size=region.size)
        acc.dram.bind(self._dram_target(prm.dram, "voyager"))
        self.ms.soc_xbar.map_region(region, acc.regs.socket)
        acc.activity.append(lambda kind, n, over: book_array(self.pmu, acc, kind, n, over))
        self.irq["voyager"] = acc.irq
        return acc

    def _dram_target(self, where: str, unit: str):
        """The target socket an accelerator's DRAM port binds to: the SOC crossbar, or the
        HyperBus port ``soc.<unit>_hyperbus`` on a channel of the uDMA's HyperBus link (its
        bytes booked as ``hyperram`` energy)."""
        if where == "l2":
            return self.ms.soc_xbar.target_socket
        chan = self.udma.link.transport(f"{unit}_dram", initiator_side="a")
        chan.initiator_socket.bind(self.hyperram.socket)
        port = HyperBusPort(self.soc, f"{unit}_hyperbus", chan.target_socket,
                            self.hyperram.params.max_burst_bytes())
        meter = CounterMeter(self.sim)
        meter.add(port.path, "hyperram", "byte", lambda: port.bytes_read + port.bytes_written,
                  lambda: port.busy_ps)
        self.dram_meters.append(meter)
        ledger = power_of(self.sim)
        if ledger is not None:
            ledger.add_meter(meter.poll)
        return port.socket

    @property
    def host_bus(self):
        """Where a scenario's task host is bound: the SOC crossbar (like the FC)."""
        return self.ms.soc_xbar.target_socket

    # ----- contents (no time): loaders and checks -------------------------------------------
    def memory_for(self, space: str, address: int, length: int):
        """(memory module, local-or-global address) for an address in ``space``
        ('soc' = the SOC address map, 'hyperram' = the HyperRAM's own space)."""
        if space == "hyperram":
            if address < 0 or address + length > self.hyperram.array.size:
                raise ParameterError(f"[0x{address:x}, +{length}) is outside the HyperRAM "
                                     f"({self.hyperram.array.size} B)", "hyperram")
            return self.hyperram, address
        try:
            return self.ms.memory_at(address, length), address
        except ValueError as e:
            raise ParameterError(str(e), "address") from None

    def load(self, space: str, address: int, data) -> None:
        mem, a = self.memory_for(space, address, len(memoryview(data).cast("B")))
        mem.load(a, data)

    def dump(self, space: str, address: int, length: int) -> bytes:
        mem, a = self.memory_for(space, address, length)
        return mem.dump(a, length)

    def owner_of(self, space: str, address: int, length: int = 1) -> str:
        """The top-level component holding that memory (for partitioned checks)."""
        mem, _ = self.memory_for(space, address, length)
        return mem.path.split(".")[0]


def book_array(pmu: Pmu, acc: Any, kind: str, n: int, over: int) -> None:
    """An optional accelerator's activity to the energy ledger under its power-model class
    (``acc.energy_profile``, components/accel.py; nothing if the model has no such class;
    its DRAM bytes are booked by the memory serving them): a job's MAC report books MACs,
    their one-bit products (W^2 per MAC) and busy cycles x PEs."""
    prof = acc.energy_profile
    if prof.cls not in pmu.energy.model.tables.classes:
        return
    if kind == prof.macs_kind:
        width, pes = prof.shape(acc)
        book_macs(acc, prof.cls, n, over, width, pes)
    else:
        report_activity(acc, kind, n, over=over, cls=prof.cls)


def book_macs(unit: Module, cls: str, macs: int, over: int, width: int, pes: int) -> None:
    """One job of a MAC array: ``macs`` MACs of ``width``-bit operands over ``over`` ps on
    ``unit.clock`` (power.yaml's derivation: mac, bitop, pe_cycle)."""
    cycles = -(-over // unit.clock.period)
    report_activity(unit, "mac", macs, over=over, cls=cls)
    report_activity(unit, "bitop", macs * width * width, over=over, cls=cls)
    report_activity(unit, "pe_cycle", cycles * pes, over=over, cls=cls)
