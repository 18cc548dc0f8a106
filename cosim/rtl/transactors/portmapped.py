"""An RTL block added to a scenario from its port map alone (``platform.rtl_blocks``).

A third-party block with standard ports needs no Python: the scenario names its sources,
top level, parameters and port map (docs/rtl.md, "Port maps"); the port map is checked
against the RTL's real ports before anything runs, and each *target* adapter (the RTL is
the bus slave: ``apb_slave``, ``obi_slave``, ``axi_lite_slave``, ``axi_slave``,
``hwpe_periph``, ``tcdm_slave``) is bound to an address window of the SOC interconnect
(``soc.<name>``) or of the cluster peripheral bus (``cluster.<name>``)
(``bind: "0x1A120000+0x1000"``). Every TLM transaction in that window becomes one access
in the child process (:mod:`cosim.rtl.handlers.portmapped`), driven through the adapter
the port map names; the initiator gets the RTL's data and response, and the access takes
the RTL's cycles on the block's clock (``clock.period_ns``).

The block's time follows the scenario's (RTL time = scenario time + the reset's length).
Its *initiator* ports (``tcdm_master``, ``axi_master``, ``axi_lite_master``,
``apb_master``, ``obi_master``) are bound to a TLM target (``bind: soc`` — the SOC
interconnect, global addresses; ``cluster`` — the cluster interconnect; ``cluster.tcdm``)
and served from it by debug transport while the block runs (no TLM time, no contention);
``irq_out`` pulses bound to ``host`` become interrupts the host's ``mmio`` tasks can wait
for (``wait_irq: <path>.<adapter>``), bound to ``cluster.event_unit.<line>`` or
``fc.<line>`` they drive that Event Unit line or fabric-controller interrupt. A block that works on its own after being
programmed names its activity output (``busy: busy_o``): while it is 1 the block runs in
windows of ``quantum_ns`` ahead of the scenario (loosely timed, like a TLM-2.0 quantum),
so what it reads sees the memories as of the window's start, its interrupts arrive at
their exact times, and an access of the scenario waits for the RTL's present time.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tlm import GenericPayload, Module
from tlm.payload import READ, WRITE, Status
from tlm.sockets import TargetSocket

from tlm.units import fmt_time

from ..options import RtlOptions
from ..transactor import Transactor

from ..spec import MASTER_BINDS, MASTER_KINDS, TARGET_KINDS  # noqa: F401 - re-exported

#: default quantum of a busy block (ns)
QUANTUM_NS = 1000.0
#: the first window covers this many cycles; an access may take at most
#: factor * this + extra (RtlOptions) before the block counts as stuck
ACCESS_ESTIMATE = 16


class PortMappedBlock(Transactor):
    """``platform.rtl_blocks[path]``: a Verilated block reached through its port map."""

    handler = "cosim.rtl.handlers.portmapped:PortMappedHandler"
    unit = "accesses"
    estimate = {"rtl": "no model (a block added from its port map)"}

    def __init__(self, run: Any, path: str, spec: dict, *, waves: str | None,
                 options: RtlOptions, waves_dir: Path | None):
        from ..spec import block_spec
        super().__init__(run, path, "rtl", waves=waves, options=options, waves_dir=waves_dir)
        sc = run.sc
        key = ("platform", "rtl_blocks", path)
        bs = block_spec(sc, path, spec)
        block, pm_dict = bs.block, bs.portmap
        self.top = spec["top"]
        self.period = bs.period_ps
        self.windows: list[tuple[int, int, str]] = bs.windows
        self.masters: dict[str, str] = bs.masters       # adapter -> bind target
        self.irqs: dict[str, Any] = dict(bs.irqs)       # adapter -> event (bound to host) or None
        #: the busy rule (a port, an inner signal, or from a trigger write until an event)
        self.busy_rule = bs.busy
        self.quantum = round(float(spec.get("quantum_ns", QUANTUM_NS)) * 1000)
        plat = run.platform
        self.bus = bs.bus
        parent = plat.soc if self.bus == "soc" else plat.cluster
        self.module = Module(parent, path.split(".", 1)[1])
        self.socket = TargetSocket(self.module, "target", b_transport=self._b_transport,
                                   max_bindings=len(self.windows))
        xbar = plat.ms.soc_xbar if self.bus == "soc" else plat.ms.cluster_periph
        for base, size, name in self.windows:
            try:
                xbar.map(base, size, self.socket, name=f"{self.module.name}_{name}",
                         translate=False)
            except Exception as e:  # noqa: BLE001 - an overlap with a route of the platform
                raise sc.error(f"adapter {name!r}: {e}", key + ("adapters", name, "bind")) \
                    from None
        self.accesses = {"reads": 0, "writes": 0, "errors": 0}
        from ..adapters.memory import TlmMemory
        targets = {"soc": plat.ms.soc_xbar.target_socket,
                   "cluster": run.platform.ms.cluster_xbar.target_socket,
                   "cluster.tcdm": run.platform.ms.tcdm}
        self.mems = {n: TlmMemory(targets[b], name=f"{path}.{n}") for n, b in self.masters.items()}
        self.mem_stats = {n: {"reads": 0, "writes": 0, "bytes": 0} for n in self.masters}
        self.mem_error: str | None = None
        self.irq_times: dict[str, list[int]] = {n: [] for n in self.irqs}
        for n, b in self.irqs.items():
            if b == "host":
                ev = self.module.event(n)
                run.platform.irq[f"{path}.{n}"] = ev
                self.irqs[n] = ev
        #: irq_out adapters bound into the platform: adapter -> (target, line)
        self.lines = dict(bs.lines)
        for n, (target, line) in self.lines.items():
            ev = self.module.event(n)
            self.irqs[n] = ev
            if target == "event_unit":
                plat.cluster.event_unit.connect(line, ev)
            else:
                if getattr(plat, "fc", None) is None:
                    raise sc.error(f"adapter {n!r} (irq_out): fc.{line} needs the fabric "
                                   "controller, which runs only with 'workload.firmware'",
                                   key + ("adapters", n, "bind"))
                plat.fc.connect_irq(line, ev)
        self.offset: int | None = None      # RTL time - scenario time
        self.syncs = 0
        self._kick = self.module.event("kick")
        if self.busy_rule is not None:
            self.module.spawn(self._sync_loop(), "sync")
        self.setup(block, {"portmap": pm_dict, "period_ps": self.period, "busy": self.busy_rule,
                           "windows": [[b, s, n] for b, s, n in self.windows]})
        self.child.serve_mem = self._serve_mem

    def _window(self, addr: int) -> tuple[int, int, str] | None:
        for base, size, name in self.windows:
            if base <= addr < base + size:
                return base, size, name
        return None

    async def _b_transport(self, p: GenericPayload, delay: int) -> int:
        if delay:
            await self.sim.wait(delay)
        n = p.length
        addr = p.address
        win = self._window(addr)
        if p.command not in (READ, WRITE):
            p.status = Status.COMMAND_ERROR
            return 0
        if win is None or n < 1 or n > 4 or (addr & 3) + n > 4:
            # one 32-bit bus word per access: the adapters' unit
            p.status = Status.BURST_ERROR if win is not None else Status.ADDRESS_ERROR
            return 0
        be = 0
        if p.byte_enable is not None:
            for i in range(n):
                if p.byte_enable[i % len(p.byte_enable)]:
                    be |= 1 << (addr & 3) + i
        else:
            be = ((1 << n) - 1) << (addr & 3)
        word = addr & ~3
        write = p.command == WRITE
        data = 0
        if write:
            data = int.from_bytes(bytes(p.data[:n]), "little") << 8 * (addr & 3)
        k = len(self.items)
        during = f"access {k} ({'write' if write else 'read'} 0x{word:08x})"
        self._start(during)
        rtl_start = max(self.child.rtl_now, self.sim.now + self.offset)
        done = self.run_job(during, ACCESS_ESTIMATE, self.period, ["access", {
            "adapter": win[2], "offset": word - win[0], "address": word, "write": write,
            "data": data, "be": be}], at=self.sim.now + self.offset)
        self._check_mem()
        end = self.child.rtl_now - self.offset      # the window ended with the access
        cycles = int(done["cycles"])
        self.accesses["writes" if write else "reads"] += 1
        self.items.append({"access": k, "start_ps": self.sim.now, "rtl_start_ps": rtl_start,
                           "adapter": win[2],
                           "address": f"0x{word:08x}", "write": write,
                           "rtl_cycles": cycles, "model_cycles": 0,
                           **({} if write else {"data": f"0x{int(done['data']):08x}"}),
                           **({"error": done["error"]} if done.get("error") else {})})
        if done.get("error"):
            self.accesses["errors"] += 1
            p.status = Status.GENERIC_ERROR
        else:
            if not write:
                value = int(done["data"]) >> 8 * (addr & 3)
                p.data[:n] = (value & ((1 << 8 * n) - 1)).to_bytes(n, "little")
            p.status = Status.OK
        if self.busy_rule is not None:
            self._kick.notify(0)      # the access may have started work: sync while busy
        return max(end - self.sim.now, 0)

    # ----- time line, initiators, interrupts ---------------------------------------------
    def _start(self, during: str) -> None:
        """Start the child; an idle block's time line is re-anchored to the scenario's."""
        self.exchange(None, "hello", during)
        if self.offset is None:
            self.offset = self.child.rtl_now - self.sim.now
        elif self.child.rtl_next is None and self.child.rtl_now > self.sim.now + self.offset:
            # the block went idle inside its last window, which ran on past that: nothing
            # happened there, so its time line may slide; a later access must not wait
            # for RTL time that only an idle clock spent
            self.offset = self.child.rtl_now - self.sim.now

    async def _sync_loop(self) -> None:
        """While the block is busy, run it in windows of one quantum ahead of the scenario."""
        sim = self.sim
        while True:
            await self._kick
            if self.child.rtl_next is None:
                continue          # the access left the block idle: nothing to run ahead
            while True:
                self._start(f"sync {self.syncs}")
                until = sim.now + self.quantum + self.offset
                if self.child.rtl_now < until:
                    self.syncs += 1
                    reply = self.exchange({"until": until, "events": []},
                                          f"window reply (sync {self.syncs})", f"sync {self.syncs}")
                    for t, ch, payload in reply["events"]:
                        if ch == "error":
                            self.child.failed = payload.get("message")
                            raise self._error(f"{self.where} failed at simulated time "
                                              f"{fmt_time(sim.now)}: {payload.get('kind')}: "
                                              f"{payload.get('message')}")
                        self.on_event(int(t), ch, payload)
                    self._check_mem()
                    if reply["next"] is None:
                        break
                await sim.wait(self.quantum)

    def on_event(self, t: int, channel: str, payload: Any) -> None:
        if channel != "irq":
            return
        when = t - self.offset
        self.irq_times[payload].append(when)
        ev = self.irqs.get(payload)
        if ev is not None:
            self.sim.schedule(max(when - self.sim.now, 0), ev.notify)

    def _serve_mem(self, msg: dict) -> dict | None:
        port, addr = msg["port"], int(msg["addr"])
        mem, st = self.mems[port], self.mem_stats[port]
        before = len(mem.errors)
        if msg["mem"] == "read":
            data = mem.read(addr, int(msg["n"]))
            st["reads"] += 1
            st["bytes"] += len(data)
            ok = len(mem.errors) == before
            if not ok:
                self._mem_failed(port, "read", addr, int(msg["n"]))
            return {"ok": ok, "data": data}
        data = bytes(msg["data"])
        mem.write(addr, data, msg.get("be"))
        st["writes"] += 1
        st["bytes"] += len(data)
        if len(mem.errors) != before:
            self._mem_failed(port, "write", addr, len(data))
        return None

    def _mem_failed(self, port: str, what: str, addr: int, n: int) -> None:
        if self.mem_error is None:
            self.mem_error = (f"{self.where}: its initiator port {port!r} "
                              f"({self.masters[port]}) {what} {n} B at 0x{addr:08x}, which no "
                              f"target of {self.masters[port]} answers")

    def _check_mem(self) -> None:
        if self.mem_error is not None:
            raise self._error(self.mem_error)

    def _bound(self, n: str) -> str | None:
        if n in self.lines:
            target, line = self.lines[n]
            return f"cluster.event_unit.{line}" if target == "event_unit" else f"fc.{line}"
        return "host" if self.irqs[n] is not None else None

    def report_extra(self) -> dict:
        c = self.child
        return {"windows": [{"adapter": n, "base": f"0x{b:08x}", "size": f"0x{s:x}"}
                            for b, s, n in self.windows], **self.accesses,
                "initiators": {n: {"bind": self.masters[n], **st}
                               for n, st in self.mem_stats.items()},
                "interrupts": {n: {"bound": self._bound(n),
                                   "pulses": len(ts), "first_ps": ts[:8]}
                               for n, ts in self.irq_times.items()},
                "syncs": self.syncs, "quantum_ps": self.quantum if self.busy_rule else None,
                "mem_round_trips": c.mem_round_trips if c else 0}
