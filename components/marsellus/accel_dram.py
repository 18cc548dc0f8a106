"""Where MARSELLUS's SOC accelerators find their DRAM: L2 through the SOC crossbar (the
default) or the off-chip HyperRAM through a HyperBus port (``soc.tensil.dram`` /
``soc.voyager.dram: hyperram``), for networks whose tensors do not fit the 960 KiB of L2.

:class:`HyperBusPort` is that port: an AXI slave in front of the HyperRAM device, as a
HyperBus controller with an AXI front end would be. It splits each AXI burst into HyperBus
transactions of at most the device's :meth:`~components.hyperram.HyperRamParams.max_burst_bytes`
(so no transaction keeps CS# low longer than tCSM) and issues them one after the other, so
the HyperRAM's own timing (command/address phase, initial latency, 2 bytes per clock, bus
serialisation with the uDMA's transfers, refresh collisions) governs every DRAM burst of the
accelerator. The composition puts the transactions on a channel of the uDMA's HyperBus link
(``soc.udma.hyperbus_link``), so each also pays that link's PHY latency both ways, as the
uDMA's do. The accelerators' functional data path uses debug access, which a process cut
refuses (a located error): with ``dram: hyperram`` keep ``soc`` and ``hyperram`` in one
process. Addresses are the HyperRAM's own (0 .. capacity): the accelerator's DRAM base
registers hold device addresses. Statistics: ``bursts``, ``transactions``, ``bytes_read``,
``bytes_written``, ``busy_ps``, ``errors``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tlm import InitiatorSocket, Module
from tlm.params import param
from tlm.payload import READ, GenericPayload
from tlm.sockets import TargetSocket

from accelerators.tensil.model.params import SocTensilParams
from accelerators.voyager.model.config import SocVoyagerParams

__all__ = ["DRAM_DOC", "HyperBusPort", "MarsellusTensilParams", "MarsellusVoyagerParams"]

DRAM_DOC = ("where the unit's DRAM is: l2 (SOC addresses, through the SOC crossbar) or "
            "hyperram (HyperRAM device addresses, through a HyperBus port: the HyperRAM's "
            "timing governs its bursts)")


@dataclass(frozen=True)
class MarsellusTensilParams(SocTensilParams):
    """``soc.tensil``: a TCU inside MARSELLUS (off unless ``enabled``), DRAM0/DRAM1 in
    ``dram``."""

    dram: Literal["l2", "hyperram"] = param("l2", DRAM_DOC)


@dataclass(frozen=True)
class MarsellusVoyagerParams(SocVoyagerParams):
    """``soc.voyager``: a Voyager unit inside MARSELLUS (off unless ``enabled``), its DRAM
    port into ``dram``."""

    dram: Literal["l2", "hyperram"] = param("l2", DRAM_DOC)


class HyperBusPort(Module):
    """AXI slave -> HyperRAM transactions (see the module docstring). Bind initiators to
    ``socket``; ``hyperbus`` is bound here to ``device`` (the HyperRAM's socket, or the
    SOC side of a link channel to it), transactions of at most ``max_burst`` bytes."""

    def __init__(self, parent: Module, name: str, device: TargetSocket, max_burst: int):
        super().__init__(parent, name)
        self.max_burst = max_burst
        self.socket = TargetSocket(self, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.transport_dbg, max_bindings=4)
        self.hyperbus = InitiatorSocket(self, "hyperbus")
        self.hyperbus.bind(device)
        self.bursts = self.transactions = self.bytes_read = self.bytes_written = 0
        self.busy_ps = self.errors = 0
        self.sim.stats.add_provider(self.path, lambda: {
            "bursts": self.bursts, "transactions": self.transactions,
            "bytes_read": self.bytes_read, "bytes_written": self.bytes_written,
            "busy_ps": self.busy_ps, "errors": self.errors})

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        """Issue the burst as HyperBus transactions, in order; the time passes here (the
        returned delay is 0)."""
        if delay:
            await self.sim.wait(delay)
        t0 = self.sim.now
        self.bursts += 1
        view = memoryview(p.data).cast("B")
        done = 0
        while True:       # at least one transaction: the device refuses a zero-length one
            n = min(self.max_burst, p.length - done)
            sub = GenericPayload(p.command, p.address + done, bytearray(view[done:done + max(n, 0)]))
            d = await self.hyperbus.b_transport(sub, 0)
            if not sub.is_ok:
                self.errors += 1
                p.status = sub.status
                self.busy_ps += self.sim.now - t0
                return 0
            if d:
                await self.sim.wait(d)
            if p.command == READ:
                view[done:done + n] = sub.data
            self.transactions += 1
            done += n
            if done >= p.length:
                break
        if p.command == READ:
            self.bytes_read += p.length
        else:
            self.bytes_written += p.length
        self.busy_ps += self.sim.now - t0
        p.status = sub.status
        return 0

    def transport_dbg(self, p: GenericPayload) -> int:
        return self.hyperbus.transport_dbg(p)
