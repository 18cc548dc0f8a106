"""The SOC <-> CLUSTER crossing: the dual-clock AXI FIFOs, as a cuttable :class:`tlm.Link`.

Side ``a`` is ``soc``, side ``b`` is ``cluster``; a scenario may place the two sides in
different processes. Latency, the same in both directions:

    latency     = soc_cycles * T_soc + cluster_cycles * T_cluster         (current clocks)
    min_latency = soc_cycles * period(soc_fmax) + cluster_cycles * period(cluster_fmax)

``min_latency`` is the declared lookahead of the distributed simulation: it stays valid
under DVFS as long as neither clock runs faster than its ``*_fmax`` (a faster clock is a
clear error naming the parameter to raise).

Channels:

* ``to_soc`` (``c2s``): transport from cluster initiators (DMA, cores) to the SOC crossbar;
* ``to_cluster`` (``s2c``): transport from SOC initiators (SOC core, uDMA) to the cluster
  bus (TCDM SOC port, cluster peripherals);
* ``event(name, from_side)`` / ``signal(name, from_side)``: wires (end-of-job events,
  interrupts) with the same latency.

The transport channels (``tlm.LinkTransport``) carry the payload's ``bw_occupancy`` across
the crossing (the FIFOs are cut-through: a burst streams through them), so "latency adds
up, occupancy takes the max" holds from a cluster initiator to an SOC target.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tlm import Clock, Link, Module
from tlm.errors import SimulationError
from tlm.params import ParameterError, check_params, freq_field, param
from tlm.units import period_ps

if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["CdcParams", "Cdc"]


@dataclass
class CdcParams:
    """``cdc`` parameters: FIFO depth in cycles of each clock, and the fastest clocks."""

    #: Cycles of the SOC clock spent in the crossing (SOC-side FIFO stage + synchroniser).
    soc_cycles: int = param(2, "latency in SOC cycles", lo=0, hi=64)
    #: Cycles of the CLUSTER clock spent in the crossing.
    cluster_cycles: int = param(3, "latency in CLUSTER cycles", lo=0, hi=64)
    #: Highest SOC frequency any operating point may use (bounds the lookahead).
    soc_fmax: float = freq_field(600e6, "highest SOC clock frequency (Hz)")
    #: Highest CLUSTER frequency (420 MHz at 0.8 V; ABB allows about +30 %).
    cluster_fmax: float = freq_field(600e6, "highest CLUSTER clock frequency (Hz)")

    def validate(self) -> None:
        if self.soc_cycles + self.cluster_cycles < 1:
            raise ValueError("the crossing needs at least one cycle of latency")

    def min_latency(self) -> int:
        """The lookahead (ps): the latency at the highest allowed frequencies."""
        return (self.soc_cycles * period_ps(self.soc_fmax)
                + self.cluster_cycles * period_ps(self.cluster_fmax))


class Cdc(Link):
    """``cdc``: the dual-clock FIFOs between the SOC (side ``a``) and the CLUSTER (side
    ``b``) domains. Bind cluster initiators to ``to_soc.target_socket`` and
    ``to_soc.initiator_socket`` to the SOC crossbar; SOC initiators to
    ``to_cluster.target_socket`` and ``to_cluster.initiator_socket`` to the cluster bus."""

    def __init__(self, parent: "Module | Simulator", name: str, soc_clock: Clock,
                 cluster_clock: Clock, params: CdcParams | None = None, *,
                 max_initiators: int = 16, views: dict[str, tuple[Clock, Clock]] | None = None):
        self.params = params or CdcParams()
        check_params(self.params, name)
        self.soc_clock = soc_clock
        self.cluster_clock = cluster_clock
        # the (SOC, CLUSTER) clocks each sending side sees: in a platform whose clocks
        # reach the cluster through a link, the cluster side sees the mirrored ones, so
        # the latency of a message never depends on which process sends it
        self.views = views or {"a": (soc_clock, cluster_clock), "b": (soc_clock, cluster_clock)}
        super().__init__(parent, name, side_a="soc", side_b="cluster",
                         min_latency=self.params.min_latency(), latency=self.current_latency)
        for clk, fmax, key in ((soc_clock, self.params.soc_fmax, "soc_fmax"),
                               (cluster_clock, self.params.cluster_fmax, "cluster_fmax")):
            if clk.freq_hz > fmax:
                raise ParameterError(f"{clk.name} runs at {clk.freq_hz / 1e6:g} MHz, above "
                                     f"{key} = {fmax / 1e6:g} MHz (the lookahead would be "
                                     "wrong); raise it", f"{self.path}.{key}")
        self.to_soc = self.transport("c2s", "b", max_initiators)
        self.to_cluster = self.transport("s2c", "a", max_initiators)

    def latency(self, from_side: str | None = None) -> int:
        lat = self.current_latency(from_side or "a")
        if lat < self.min_latency:
            return super().latency(from_side)   # the same error as any link
        return lat

    def current_latency(self, from_side: str = "a") -> int:
        """The crossing latency now (ps), from the current periods of the clocks the
        sending side sees."""
        prm = self.params
        s, c = self.views[from_side]
        if s.freq_hz > prm.soc_fmax or c.freq_hz > prm.cluster_fmax:
            raise SimulationError(
                f"clock above its declared maximum ({s.name} {s.freq_hz / 1e6:g} MHz vs "
                f"soc_fmax {prm.soc_fmax / 1e6:g} MHz, {c.name} {c.freq_hz / 1e6:g} MHz vs "
                f"cluster_fmax {prm.cluster_fmax / 1e6:g} MHz): raise {self.path}.soc_fmax / "
                f"{self.path}.cluster_fmax", self.path, self.sim.now)
        return prm.soc_cycles * s.period + prm.cluster_cycles * c.period

    def _stat_values(self) -> dict:
        out = super()._stat_values()
        for ch in (getattr(self, "to_soc", None), getattr(self, "to_cluster", None)):
            if ch is not None:
                out[f"{ch.name}.transactions"] = ch.transactions
        return out

    def event_to_cluster(self, name: str):
        """An event notified on the SOC side, firing on the cluster side ``latency`` later."""
        return self.event(name, from_side="a")

    def event_to_soc(self, name: str):
        """An event notified on the cluster side (e.g. DMA/RBE end of job towards the SOC
        core's interrupt controller), firing on the SOC side ``latency`` later."""
        return self.event(name, from_side="b")

    def wire_to_soc(self, name: str, init: Any = 0):
        return self.signal(name, from_side="b", init=init)

    def wire_to_cluster(self, name: str, init: Any = 0):
        return self.signal(name, from_side="a", init=init)
