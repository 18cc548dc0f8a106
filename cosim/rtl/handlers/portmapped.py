"""A block added from its port map alone: the cocotb side (:mod:`cosim.rtl.transactors.portmapped`).

The adapters come from the port map (:func:`cosim.rtl.adapters.factory.build_adapters`,
resolved against the DUT's own ports); nothing here knows the block. Inbound channels:

* ``access`` ``{"adapter", "offset", "address", "write", "data", "be"}``: one 32-bit
  access through the named target adapter at ``offset`` in its window; emits ``done``
  ``{"data", "error", "cycles"}`` (``error``: the bus answered an error: PSLVERR, OBI
  ``err``, an AXI SLVERR/DECERR). A stuck block (the adapter's cycle timeout) is emitted
  as ``error`` ``{"kind", "message"}`` naming the signal;
* ``status``: what the handler waits for.

Initiator ports of the RTL (``*_master``, ``tcdm_master``) are served by
:class:`cosim.rtl.adapters.memory.RemoteMemory`: each access goes to the scenario process,
which answers it from the TLM target the port is bound to. Every ``irq_out`` pulse is
emitted as ``irq`` ``adapter-name`` at its time. The block's time line follows the
scenario's: an access ends its window when it is done (``WindowDriver.end_window``), and
``busy()`` is the port named by ``busy`` in the scenario (0 without one).
"""
from __future__ import annotations

from typing import Any

from ..adapters import AdapterError, IrqMonitor, RemoteMemory, now_ps
from ..adapters.factory import bring_up, build_adapters
from ..adapters.pins import AdapterTimeout
from ..portmap import PortMap, ports_from_dut

#: kinds whose RTL port is an initiator served from the scenario
MASTER_KINDS = ("tcdm_master", "axi_master", "axi_lite_master", "apb_master", "obi_master")


class PortMappedHandler:
    def __init__(self, dut: Any, cfg: dict):
        self.dut = dut
        self.name = cfg["name"]
        self.period = int(cfg["period_ps"])
        pm = PortMap.from_dict(cfg["portmap"], where=f"{self.name} port map")
        self.rpm = pm.resolve(ports_from_dut(dut))
        mems = {name: RemoteMemory(lambda: self.driver.channel, name)
                for name, ra in self.rpm.adapters.items() if ra.kind in MASTER_KINDS}
        self.memories = mems
        self.adapters = build_adapters(dut, self.rpm, memories=mems)
        for name, ad in self.adapters.items():
            if isinstance(ad, IrqMonitor):
                ad.callbacks.append(lambda t, n=name: self.driver.emit(t, "irq", n))
        self._busy, self._armed = self._busy_rule(cfg.get("busy"))
        self.driver = None
        self.waiting = "nothing (idle)"
        self.t_wait = 0
        self.count = 0

    async def start(self) -> None:
        await bring_up(self.dut, self.rpm)

    def info(self) -> dict:
        return {"period_ps": self.period, "top": self.rpm.top}

    def _busy_rule(self, rule: Any) -> tuple[Any, dict | None]:
        """The busy signal's handle, or the trigger rule (armed by a write to its
        address, disarmed by a pulse of its irq_out adapter)."""
        if not rule:
            return None, None
        if isinstance(rule, str):
            rule = {"port": rule}
        if "port" in rule:
            return getattr(self.dut, rule["port"]), None
        if "signal" in rule:
            paths = rule["signal"] if isinstance(rule["signal"], list) else [rule["signal"]]
            return [self._inner(path) for path in paths], None
        state = {**rule, "on": False}
        self.adapters[rule["until"]].callbacks.append(lambda _t: state.update(on=False))
        return None, state

    def _inner(self, path: str) -> Any:
        """The 1-bit signal at hierarchical ``path`` below the top."""
        h = self.dut
        for part in path.split("."):
            try:
                h = getattr(h, part)
            except AttributeError:
                raise AdapterError(f"{self.name}: busy.signal {path!r}: the design has no "
                                   f"{part!r} there") from None
        if len(h) != 1:
            raise AdapterError(f"{self.name}: busy.signal {path!r} is {len(h)} bits wide, "
                               "expected 1")
        return h

    def busy(self) -> int:
        """1 while the block works on its own (its busy rule; several signals: any of them)."""
        if self._armed is not None:
            return int(self._armed["on"])
        if isinstance(self._busy, list):
            return int(any(int(h.value) for h in self._busy))
        return int(self._busy.value) if self._busy is not None else 0

    def handlers(self) -> dict:
        return {"access": self._access, "status": self._status}

    def stats(self) -> dict:
        return {"accesses": self.count,
                **{f"{n}.reads": m.reads for n, m in self.memories.items()},
                **{f"{n}.writes": m.writes for n, m in self.memories.items()}}

    async def _status(self, _payload: Any) -> None:
        self.driver.emit(now_ps(), "status", {
            "waiting": self.waiting, "for_cycles": (now_ps() - self.t_wait) // self.period})

    async def _access(self, p: dict) -> None:
        name = p["adapter"]
        ad = self.adapters[name]
        kind = self.rpm.adapters[name].kind
        off, write, data, be = int(p["offset"]), bool(p["write"]), int(p["data"]), int(p["be"])
        self.count += 1
        arm = self._armed
        if arm is not None and write and name == arm["adapter"] and off == arm["offset"]:
            arm["on"] = True      # the trigger write: busy until the event
        self.waiting = (f"the {'write' if write else 'read'} of 0x{int(p['address']):08x} "
                        f"through adapter {name!r} ({kind})")
        t0 = self.t_wait = now_ps()
        value, error = 0, None
        try:
            value, error = await self._xfer(ad, kind, off, write, data, be)
        except AdapterTimeout as e:
            self.driver.emit(now_ps(), "error", {"kind": type(e).__name__, "message": str(e)})
            return
        except AdapterError as e:     # an error response of the bus (PSLVERR, OBI err)
            error = str(e)
        finally:
            self.waiting = "nothing (idle)"
        self.driver.emit(now_ps(), "done", {"data": value, "error": error,
                                            "cycles": -(-(now_ps() - t0) // self.period)})
        self.driver.end_window()

    @staticmethod
    async def _xfer(ad: Any, kind: str, off: int, write: bool, data: int,
                    be: int) -> tuple[int, str | None]:
        if kind in ("axi_lite_slave", "axi_slave"):
            lane = [i for i in range(4) if be >> i & 1]
            lo, hi = (lane[0], lane[-1] + 1) if lane else (0, 4)
            if write:
                chunk = (data >> 8 * lo).to_bytes(4, "little")[:hi - lo]
                r = await ad.master.write(off + lo, chunk)
                return 0, None if int(r.resp) == 0 else f"AXI write response {r.resp!r}"
            r = await ad.master.read(off, 4)
            return (int.from_bytes(bytes(r.data), "little"),
                    None if int(r.resp) == 0 else f"AXI read response {r.resp!r}")
        if write:
            await ad.write(off, data, be)
            return 0, None
        return int(await ad.read(off)), None
