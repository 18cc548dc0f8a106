"""Energy booking for every activity MARSELLUS's power model lists (docs/power.md,
"What books energy"): the blocks that know when their work happens report it themselves
(cores, RBE); the rest is booked here, by the composition, from what the blocks expose
(the cluster DMA's end-of-transfer watch, the counters of the L2, the uDMA and the TCDM's
SOC port) without changing them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..pmu import power_of
from ..pmu.meter import CounterMeter

if TYPE_CHECKING:
    from tlm import Clock, Event, Simulator

    from ..accel import Accelerator
    from ..rbe.peripheral import Rbe
    from ..udma import Udma
    from .memory_system import MemorySystem


def wire_energy(sim: Simulator, ms: MemorySystem, rbe: Rbe, udma: Udma, cluster_clock: Clock,
                irq: Mapping[str, Event], flexisaga: Accelerator | None = None) -> None:
    """Install the energy hooks and meters of a built platform: its memory system ``ms``,
    RBE, uDMA, cluster clock, interrupt lines to the SOC and optional FlexiSAGA (passed in,
    not read from the platform, which builds on this module)."""

    def rbe_activity(kind: str, n: float, over: int, start: int | None = None,
                     unit: str | None = None) -> None:
        ledger = power_of(sim)
        if ledger is not None:
            # the RBE's own datapath, or the memory it uses on its behalf (class = unit)
            path = rbe.path if unit is None else f"{rbe.path}.{unit}"
            ledger.activity(path, kind, n, over, cls=unit, start=start)

    rbe.activity.append(rbe_activity)

    # cluster DMA: each transfer as it starts, over the time it takes at the DMA's 64 bit
    # per cycle (marsellus.md; contention may stretch it a little): the engine, the
    # crossing (AXI + dual-clock FIFOs) and the TCDM side of its bytes. Booked at the start
    # so that the ABB sees the cluster working while it runs. When the model's start watch
    # is not in use (an RTL executor or shadow took the DMA over), at the push instead.
    dma = ms.dma
    previous = dma.watch
    clock = cluster_clock

    def book_dma(n: int) -> None:
        ledger = power_of(sim)
        if ledger is None:
            return
        over = -(-n // 8) * clock.period
        ledger.activity(dma.path, "byte", n, over, cls="cluster_dma")
        ledger.activity(f"{dma.path}.axi", "byte", n, over, cls="interconnect")
        ledger.activity(f"{ms.tcdm.path}.dma", "byte", n, over, cls="tcdm")

    def dma_watch(what: str, x: Any) -> None:
        if previous is not None:
            previous(what, x)
        if what == "start" and dma.executor is None:
            book_dma(x.command.length)

    dma.watch = dma_watch
    submit = dma.submit

    def submit_and_book(cmd: Any) -> Any:
        x = submit(cmd)
        if (dma.watch is not dma_watch or dma.executor is not None) and not x.error:
            book_dma(cmd.length)
        return x

    dma.submit = submit_and_book  # type: ignore[method-assign]

    # cluster side: TCDM words through the SOC port (FC / host accesses), looked at after
    # every DMA transfer, RBE job and core chunk
    tcdm = ms.tcdm
    soc_port = tcdm.ports["soc"]
    cl_meter = CounterMeter(sim)
    cl_meter.add(f"{tcdm.path}.soc", "tcdm", "access", lambda: soc_port.word_count)
    dma.irq.add_callback(lambda _e: cl_meter.poll())
    rbe.done.add_callback(lambda _e: cl_meter.poll())
    # further accelerator branches (e.g. FlexiSAGA's DecU): their TCDM words, looked at
    # when their accelerator ends a job
    for name, port in tcdm.ports.items():
        if name.startswith("accel"):
            cl_meter.add(f"{tcdm.path}.{name}", "tcdm", "access",
                         lambda port=port: port.word_count)
    if flexisaga is not None:
        flexisaga.done.add_callback(lambda _e: cl_meter.poll())

    # SOC side: the L2 (every initiator), the uDMA and the HyperBus controller; looked at
    # whenever a report reaches the ledger, at every uDMA transfer end, before results
    l2 = ms.l2
    soc_meter = CounterMeter(sim)
    soc_meter.add(l2.path, "l2", "byte", lambda: l2.bytes_read + l2.bytes_written,
                  lambda: l2.busy_ps)
    chans = list(udma._ch.values())

    def udma_bytes() -> int:    # read at every report: a loop, not a generator
        n = 0
        for c in chans:
            n += c.bytes
        return n

    soc_meter.add(udma.path, "udma", "byte", udma_bytes, lambda: sum(c.busy_ps for c in chans))
    soc_meter.add(f"{udma.path}.hyperbus", "hyperram", "byte", udma_bytes,
                  lambda: sum(c.busy_ps for c in chans))
    for c in chans:
        c.done.add_callback(lambda _e: soc_meter.poll())
    for ev in irq.values():
        ev.add_callback(lambda _e: soc_meter.poll())
    ledger = power_of(sim)
    if ledger is not None:
        ledger.add_meter(soc_meter.poll)
