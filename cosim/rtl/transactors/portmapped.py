"""An RTL block added to a scenario from its port map alone (``platform.rtl_blocks``).

A third-party block with standard ports needs no Python: the scenario names its sources,
top level, parameters and port map (docs/rtl.md, "Port maps"); the port map is checked
against the RTL's real ports before anything runs, and each *target* adapter (the RTL is
the bus slave: ``apb_slave``, ``obi_slave``, ``axi_lite_slave``, ``axi_slave``,
``hwpe_periph``, ``tcdm_slave``) is bound to an address window of the SOC interconnect
(``bind: "0x1A120000+0x1000"``). Every TLM transaction in that window becomes one access
in the child process (:mod:`cosim.rtl.handlers.portmapped`), driven through the adapter
the port map names; the initiator gets the RTL's data and response, and the access takes
the RTL's cycles on the block's clock (``clock.period_ns``). The block has its own time
line (accesses follow one another; idle time between them is not simulated), like the
job-level transactors.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tlm import GenericPayload, Module
from tlm.payload import READ, WRITE, Status
from tlm.sockets import TargetSocket

from ..scenario import RtlOptions, Transactor

#: adapter kinds where the RTL is the bus target, so TLM initiators can reach it
TARGET_KINDS = ("apb_slave", "obi_slave", "axi_lite_slave", "axi_slave", "hwpe_periph",
                "tcdm_slave")
#: adapter kinds that need nothing from the scenario (outputs nobody listens to yet)
PASSIVE_KINDS = ("irq_out",)
_NAME = re.compile(r"^soc\.[A-Za-z_][A-Za-z0-9_]*$")
_WINDOW = re.compile(r"^\s*(0x[0-9a-fA-F_]+|[0-9_]+)\s*\+\s*(0x[0-9a-fA-F_]+|[0-9_]+)\s*$")
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
        from ..build import RtlBlock, RtlError
        from ..portmap import PortMap, PortMapError, rtl_ports
        super().__init__(run, path, "rtl", waves=waves, options=options, waves_dir=waves_dir)
        sc = run.sc
        key = ("platform", "rtl_blocks", path)
        where = f"{sc.file}:{'.'.join(map(str, key))}" if sc.file else ".".join(key)
        if not _NAME.match(path):
            raise sc.error(f"an RTL block added from a port map must be named soc.<name> "
                           f"(it joins the SOC interconnect), not {path!r}", key)
        self.top = spec["top"]
        sources = [sc.resolve_file(s, key + ("sources", i))
                   for i, s in enumerate(spec["sources"])]
        includes = [sc.resolve_file(s, key + ("include_dirs", i))
                    for i, s in enumerate(spec.get("include_dirs") or [])]
        block = RtlBlock.make(path.replace(".", "_"), sources, self.top,
                              parameters=dict(spec.get("parameters") or {}), includes=includes)
        pm_dict = {"top": self.top, "clock": spec["clock"], "adapters": spec["adapters"]}
        if spec.get("reset"):
            pm_dict["reset"] = spec["reset"]
        try:
            pm = PortMap.from_dict(pm_dict, where=where)
            resolved = pm.resolve(rtl_ports(block))
        except PortMapError as e:
            raise sc.error(str(e).removeprefix(f"{where}: "), key + ("adapters",)) from None
        except RtlError as e:
            raise sc.error(f"the RTL of {path}: {e}", key + ("sources",)) from None
        self.period = round(pm.period_ns * 1000)
        self.windows: list[tuple[int, int, str]] = []
        for name, ra in resolved.adapters.items():
            akey = key + ("adapters", name)
            bind = ra.spec.bind
            if ra.kind in TARGET_KINDS:
                if bind is None:
                    raise sc.error(f"adapter {name!r} ({ra.kind}) needs 'bind: BASE+SIZE', the "
                                   "address window of the SOC interconnect it answers", akey)
                m = _WINDOW.match(str(bind))
                if not m:
                    raise sc.error(f"adapter {name!r}: bind {bind!r} is not BASE+SIZE "
                                   "(e.g. 0x1A120000+0x1000)", akey + ("bind",))
                self.windows.append((int(m[1], 0), int(m[2], 0), name))
            elif ra.kind in PASSIVE_KINDS:
                if bind is not None:
                    raise sc.error(f"adapter {name!r} ({ra.kind}): binding an output wire of an "
                                   "added RTL block is not available yet; remove 'bind'", akey)
            else:
                raise sc.error(f"adapter {name!r} ({ra.kind}): only target ports ("
                               f"{', '.join(TARGET_KINDS)}) and unbound {', '.join(PASSIVE_KINDS)} "
                               "can be used by a block added from its port map; an RTL "
                               "initiator port cannot be served from the scenario yet", akey)
        if not self.windows:
            raise sc.error("the port map has no target adapter bound to an address window, so "
                           "nothing could reach the block", key + ("adapters",))
        self.module = Module(run.platform.soc, path.split(".", 1)[1])
        self.socket = TargetSocket(self.module, "target", b_transport=self._b_transport,
                                   max_bindings=len(self.windows))
        xbar = run.platform.ms.soc_xbar
        for base, size, name in self.windows:
            from components.marsellus.memory_map import MEMORY_MAP
            hit = next((r for r in MEMORY_MAP.regions if base < r.end and r.base < base + size),
                       None)
            if hit is not None:
                raise sc.error(f"adapter {name!r}: window [0x{base:08x}, 0x{base + size:08x}) "
                               f"overlaps {hit.name} [0x{hit.base:08x}, 0x{hit.end:08x}) of the "
                               "memory map", key + ("adapters", name, "bind"))
            try:
                xbar.map(base, size, self.socket, name=f"{self.module.name}_{name}",
                         translate=False)
            except Exception as e:  # noqa: BLE001 - an overlap with a route of the platform
                raise sc.error(f"adapter {name!r}: {e}", key + ("adapters", name, "bind")) \
                    from None
        self.accesses = {"reads": 0, "writes": 0, "errors": 0}
        self.setup(block, {"portmap": pm_dict, "period_ps": self.period,
                           "windows": [[b, s, n] for b, s, n in self.windows]})

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
        done = self.run_job(during, ACCESS_ESTIMATE, self.period, ["access", {
            "adapter": win[2], "offset": word - win[0], "address": word, "write": write,
            "data": data, "be": be}])
        cycles = int(done["cycles"])
        self.accesses["writes" if write else "reads"] += 1
        self.items.append({"access": k, "start_ps": self.sim.now, "adapter": win[2],
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
        return cycles * self.period

    def report_extra(self) -> dict:
        return {"windows": [{"adapter": n, "base": f"0x{b:08x}", "size": f"0x{s:x}"}
                            for b, s, n in self.windows], **self.accesses}
