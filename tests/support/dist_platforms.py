"""Small deterministic platforms for the distribution tests and benchmark (test-only:
not part of the shipped package; builders are named ``support.dist_platforms:<name>``
with ``tests/`` on the path).

Real models from tlm blocks (memories, routers, links, initiators), built by builders with
the ``(sim, config)`` signature, so any of them runs in one process or split:

* :func:`ring` -- N nodes (router + memory + log memory + traffic generator) in a ring of
  links. Each round a node writes locally, writes and reads back a burst in the next node's
  memory over a link transport (bursts >= 64 B travel as raw frames), rings an interrupt
  forward and an acknowledge backward and drives a level signal. With equal latencies the
  interrupt from the left neighbour and the acknowledge from the right one arrive at the
  same picosecond: each node logs arrivals into its log memory, so the order of those
  same-time ties is part of the memory digest. Two deliberate access errors per node
  (unmapped address locally, past the end of the remote memory) exercise error merging.
  Fault injection for tests: ``fail`` (a generator raises), ``early`` (a send with a
  negative delay, a causality violation across processes), ``work`` (CPU per round).
* :func:`idle` -- N tickers, one event per window and no messages (sync overhead).
* :func:`stream` -- a producer sending ``batch`` link events per tick to a consumer.
* :func:`compute_pair` -- two nodes of :func:`ring` with a pure-Python FIR filter per round
  (balanced CPU work, for the speed-up measurement).
"""
from __future__ import annotations

import struct

from tlm import (READ, WRITE, Clock, GenericPayload, InitiatorSocket, Link, Memory, Module,
                 Router, Simulator)
from tlm.units import NS

REMOTE = 0x1000_0000
UNMAPPED = 0x3000_0000
LOG = 0x2000_0000


class TrafficGen(Module):
    """The initiator of a ring node; see the module docstring for one round."""

    def __init__(self, parent: Module, name: str, *, index: int, cfg: dict, log: Memory,
                 mem_size: int):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")
        self.index = index
        self.cfg = cfg
        self.log = log
        self.mem_size = mem_size
        self.log_pos = 0
        self.fwd = self.back = self.level = None     # set by ring() once the links exist
        self.rounds_done = self.mismatches = self.irqs = self.acks = self.levels = 0
        self.checksum = 0
        self.sim.stats.add_provider(self.path, lambda: {
            "rounds": self.rounds_done, "mismatches": self.mismatches, "irqs": self.irqs,
            "acks": self.acks, "levels": self.levels, "checksum": self.checksum})
        self.spawn(self.run())

    # arrivals: logged in arrival order (this is where same-time ties become visible)
    def _record(self, source: int, value: int) -> None:
        rec = struct.pack("<QBxxxI", self.sim.now, source, value & 0xFFFF_FFFF)
        pos = self.log_pos % (self.log.size // 16)
        self.log.load(pos * 16, rec)
        self.log_pos += 1

    def on_irq(self, _ev) -> None:
        self.irqs += 1
        self._record(1, self.irqs)

    def on_ack(self, _ev) -> None:
        self.acks += 1
        self._record(2, self.acks)

    def on_level(self, _ev) -> None:
        self.levels += 1
        self._record(3, self.level_in.read())

    async def _access(self, cmd, addr: int, data: bytearray) -> GenericPayload:
        p = GenericPayload(cmd, addr, data, initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        if d:
            await self.sim.wait(d)
        return p

    def _fir(self, block: bytes) -> bytes:
        """A 4-tap integer FIR over the block, ``work`` passes (pure Python: CPU-bound)."""
        x = list(block)
        for _ in range(self.cfg.get("work", 0)):
            x = [(3 * x[i] + 5 * x[i - 1] + 7 * x[i - 2] + 11 * x[i - 3]) & 0xFF
                 for i in range(len(x))]
        return bytes(x)

    async def run(self) -> None:
        cfg = self.cfg
        sim = self.sim
        burst = cfg.get("burst", 128)
        period = cfg.get("period_ns", 20) * NS
        fail = cfg.get("fail") or {}
        early = cfg.get("early") or {}
        block = bytes(burst)
        for k in range(cfg.get("rounds", 20)):
            # every round starts on the period grid: all nodes notify (ties at the
            # neighbours) and compute at the same picosecond, hence in the same window
            await sim.wait(period - sim.now % period)
            if fail.get("node") == self.index and sim.now >= fail.get("at_ns", 0) * NS:
                raise RuntimeError(f"injected fault in {self.path} at round {k}")
            if early.get("node") == self.index and early.get("round") == k:
                self.fwd.notify(-(early.get("by_ps", 1000)))
            else:
                self.fwd.notify()
            self.back.notify()
            self.level.write(k + 1)
            off = (k * burst) % (self.mem_size - burst)
            if cfg.get("work", 0):
                out = self._fir(block)
                self.checksum = (self.checksum * 31 + sum(out)) & 0xFFFF_FFFF
                await self._access(WRITE, off, bytearray(out))
            data = bytearray(self.rng.integers(0, 256, burst, dtype="uint8").tobytes())
            await self._access(WRITE, off, bytearray(data))
            if cfg.get("work", 0):   # next round filters what this one wrote
                block = bytes((await self._access(READ, off, bytearray(burst))).data)
            if cfg.get("remote", True):
                await self._access(WRITE, REMOTE + off, bytearray(data))
                back = await self._access(READ, REMOTE + off, bytearray(burst))
                if bytes(back.data) != bytes(data):
                    self.mismatches += 1
            if k == 3:
                await self._access(READ, UNMAPPED, bytearray(4))          # router error
            if k == 5 and cfg.get("remote", True):
                await self._access(READ, REMOTE + self.mem_size + 16, bytearray(8))  # remote error
            self.rounds_done += 1
        if cfg.get("stale_tail"):
            # a notification cancelled at once leaves a stale entry after the last activity:
            # it is not activity, so it must not move the end time (in any partition)
            tail = self.event("tail")
            tail.notify(1000 * NS)
            tail.cancel()


def ring(sim: Simulator, config: dict) -> None:
    """``nodes`` (3), ``rounds`` (20), ``period_ns`` (20), ``latency_ns`` (5, or a list per
    link), ``burst`` (128), ``mem_kib`` (16), ``work`` (0), ``remote`` (True), ``fail``,
    ``early``, ``stale_tail``."""
    n = config.get("nodes", 3)
    lat = config.get("latency_ns", 5)
    lats = lat if isinstance(lat, list) else [lat] * n
    mem_size = config.get("mem_kib", 16) * 1024
    nodes = []
    for i in range(n):
        node = Module(sim, f"node{i}")
        clk = Clock(sim, f"node{i}.clk", 500e6)
        xbar = Router(node, "xbar", clock=clk, latency=1, width=8)
        mem = Memory(node, "mem", mem_size, clock=clk, latency=2, width=8)
        log = Memory(node, "log", 4096)
        gen = TrafficGen(node, "gen", index=i, cfg=config, log=log, mem_size=mem_size)
        gen.socket.bind(xbar.target_socket)
        xbar.map(0, mem_size, mem.socket)
        xbar.map(LOG, log.size, log.socket)
        nodes.append((node, xbar, mem, gen))
    for i in range(n):
        j = (i + 1) % n
        link = Link(sim, f"link{i}", side_a=f"node{i}", side_b=f"node{j}",
                    min_latency=int(lats[i] * NS))
        bus = link.transport("bus", initiator_side="a")
        nodes[i][1].map(REMOTE, 2 * mem_size, bus.target_socket, name="remote")
        bus.initiator_socket.bind(nodes[j][2].socket)
        irq = link.event("irq", from_side="a")
        ack = link.event("ack", from_side="b")
        level = link.signal("level", from_side="a")
        gi, gj = nodes[i][3], nodes[j][3]
        gi.fwd, gi.level = irq, level
        gj.back = ack
        irq.event.add_callback(gj.on_irq)
        ack.event.add_callback(gi.on_ack)
        gj.level_in = level.signal
        level.signal.changed.add_callback(gj.on_level)


class Ticker(Module):
    """Wakes up every ``period`` ps, ``rounds`` times; nothing else."""

    def __init__(self, parent, name: str, period: int, rounds: int):
        super().__init__(parent, name)
        self.period, self.rounds, self.ticks = period, rounds, 0
        self.sim.stats.add_provider(self.path, lambda: {"ticks": self.ticks})
        self.spawn(self.run())

    async def run(self) -> None:
        for _ in range(self.rounds):
            await self.sim.wait(self.period)
            self.ticks += 1


def idle(sim: Simulator, config: dict) -> None:
    """``nodes`` tickers (``rounds``, ``period_ns``) chained by links of latency = period."""
    n = config.get("nodes", 2)
    period = int(config.get("period_ns", 10) * NS)
    for i in range(n):
        Ticker(Module(sim, f"node{i}"), "tick", period, config.get("rounds", 1000))
    for i in range(n - 1):
        link = Link(sim, f"link{i}", side_a=f"node{i}", side_b=f"node{i + 1}", min_latency=period)
        link.event("irq")


class Producer(Module):
    """Every ``period_ns``: ``batch`` interrupt events and one value (optionally carrying
    ``payload`` bytes, which travel as a raw frame when >= 64 B)."""

    def __init__(self, parent, name: str, cfg: dict):
        super().__init__(parent, name)
        self.cfg = cfg
        self.events = self.values = None
        self.spawn(self.run())

    async def run(self) -> None:
        cfg = self.cfg
        period = int(cfg.get("period_ns", 10) * NS)
        batch = cfg.get("batch", 100)
        payload = bytes(i & 0xFF for i in range(cfg.get("payload", 0)))
        for k in range(cfg.get("ticks", 100)):
            await self.sim.wait(period)
            for _ in range(batch):
                self.events.notify()
            self.values.write([k, payload] if payload else k)


class Consumer(Module):
    """Counts the events and sums the values it receives."""

    def __init__(self, parent, name: str):
        super().__init__(parent, name)
        self.events = self.values = None
        self.total = 0
        self.sim.stats.add_provider(self.path, lambda: {"events": self.events.count,
                                                          "total": self.total})

    def on_value(self, _ev) -> None:
        v = self.values.read()
        self.total = (self.total + (v if isinstance(v, int) else v[0] + len(v[1]))) & 0xFFFF_FFFF


def stream(sim: Simulator, config: dict) -> None:
    """A producer sending ``batch`` events per tick (``ticks``, ``period_ns``) to a consumer."""
    prod = Producer(Module(sim, "src"), "prod", config)
    cons = Consumer(Module(sim, "dst"), "cons")
    period = int(config.get("period_ns", 10) * NS)
    link = Link(sim, "pipe", side_a="src", side_b="dst", min_latency=period)
    prod.events = cons.events = link.event("ev")
    prod.values = link.signal("val", init=None)
    cons.values = prod.values.signal
    cons.values.changed.add_callback(cons.on_value)


def compute_pair(sim: Simulator, config: dict) -> None:
    """Two ring nodes with CPU-heavy FIR rounds (``work`` passes over ``burst`` bytes)."""
    cfg = {"nodes": 2, "rounds": 40, "work": 24, "burst": 512, "period_ns": 200,
           "latency_ns": 50, **config}
    ring(sim, cfg)
