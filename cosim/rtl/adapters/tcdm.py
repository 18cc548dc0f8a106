"""PULP TCDM/HCI slave responder: serves an RTL master's ports from a memory back-end.

Protocol (per port): the master raises ``req`` with ``add``/``wen`` (1 = read)/``be``/
``data`` and keeps them until it sees ``gnt``; ``r_valid``/``r_data`` follow exactly one
cycle after the grant (reads and writes; ``r_data`` carries read data). Multi-port
masters use packed vectors: port i is ``add[32*i +: 32]``, ``be[4*i +: 4]``, ``req[i]``.

Grants are "ready" style: the responder decides each port's ``gnt`` for the next cycle
at a clock edge (a ``policy(cycle) -> mask`` gives back-pressure; default: always
ready); a transfer happens on a port when ``req & gnt`` is sampled at an edge.

Python runs only while the master is active: with no request and no response pending
the responder sleeps on a value change of ``req`` (no per-cycle Python when idle).
``contiguous=True`` declares the ports as one wide access (port i at base + 4*i, shared
request, as the RBE streamer): a fully granted access is then one memory slice.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import cocotb
from cocotb.triggers import RisingEdge

from .pins import Pin

_M32 = 0xFFFFFFFF


class TcdmResponder:
    def __init__(self, clk: Any, signals: Mapping[str, Any], mem: Any, *, n_ports: int = 1,
                 contiguous: bool = False, policy: Callable[[int], int] | None = None,
                 name: str = "tcdm", trace: bool = False):
        self.clk = clk
        self.mem = mem
        self.n = n_ports
        self.name = name
        self.contiguous = contiguous
        self.policy = policy
        self.p = {role: Pin(h) for role, h in signals.items()}
        self._req_handle = signals["req"]
        self.all = (1 << n_ports) - 1
        self.trace: list[tuple[int, int]] | None = [] if trace else None  # (is_read, port-0 addr)
        self.accesses = self.transfers = self.stall_cycles = self.active_cycles = 0
        self.oob_reads = 0
        self.errors: list[tuple[str, int, int]] = []
        self._task = None
        self._cycle = 0

    def start(self) -> "TcdmResponder":
        self._task = cocotb.start_soon(self._run())
        return self

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    # ------------------------------------------------------------------ main loop
    async def _run(self) -> None:
        p = self.p
        req_p, gnt_p, add_p, wen_p = p["req"], p["gnt"], p["add"], p["wen"]
        be_p, data_p, rdata_p, rvalid_p = p["be"], p["data"], p["r_data"], p["r_valid"]
        edge = RisingEdge(self.clk)
        wake = self._req_handle.value_change
        policy = self.policy
        allm = self.all
        gnt = policy(0) & allm if policy else allm
        gnt_p.set(gnt)
        rvalid_p.set(0)
        rvalid = 0
        part = 0
        mem = self.mem
        contiguous = self.contiguous
        nbytes = 4 * self.n
        trace = self.trace
        while True:
            if not rvalid and not req_p.get():
                await wake                      # sleep: the master is idle
            await edge
            self._cycle += 1
            self.active_cycles += 1
            req = req_p.get()
            hs = req & gnt
            if req & ~gnt:
                self.stall_cycles += 1
            if hs:
                wen = wen_p.get()
                add = add_p.get()
                self.transfers += bin(hs).count("1")
                base = add & _M32
                if contiguous:
                    part = part | hs
                    if part == allm:        # the wide access is complete
                        part = 0
                        self.accesses += 1
                        if trace is not None:
                            trace.append((wen & 1, base))
                    if hs == allm and (wen == allm or wen == 0) and mem.contains(base, nbytes):
                        if wen:
                            rdata_p.set(int.from_bytes(mem.read(base, nbytes), "little"))
                        else:
                            self._write_ports(hs, add, data_p.get(), be_p.get())
                        served = True
                    else:
                        served = False
                else:
                    served = False
                    self.accesses += 1
                    if trace is not None:
                        trace.append((wen & hs and 1, add))
                if not served:
                    rd = self._read_ports(hs & wen, add)
                    if hs & ~wen:
                        self._write_ports(hs & ~wen, add, data_p.get(), be_p.get())
                    if hs & wen:
                        rdata_p.set(rd)
                rvalid_p.set(hs)
                rvalid = hs
            elif rvalid:
                rvalid_p.set(0)
                rvalid = 0
            if policy is not None:
                g = policy(self._cycle) & allm
                if g != gnt:
                    gnt = g
                    gnt_p.set(g)

    # ------------------------------------------------------------------ data movement
    def _read_ports(self, mask: int, add: int) -> int:
        out = 0
        mem = self.mem
        for i in range(self.n):
            if mask >> i & 1:
                a = (add >> (32 * i)) & _M32
                if mem.contains(a, 4):
                    out |= int.from_bytes(mem.read(a, 4), "little") << (32 * i)
                else:
                    self.oob_reads += 1  # idle ports of a wide access may point past the end
        return out

    def _write_ports(self, mask: int, add: int, data: int, be: int) -> None:
        mem = self.mem
        for i in range(self.n):
            if not mask >> i & 1:
                continue
            b = (be >> (4 * i)) & 0xF
            if not b:
                continue
            a = (add >> (32 * i)) & _M32
            word = ((data >> (32 * i)) & _M32).to_bytes(4, "little")
            if not mem.contains(a, 4):
                self.errors.append(("write", a, 4))
                continue
            if b == 0xF:
                mem.write(a, word)
            else:
                mem.write(a, word, bytes((b >> k) & 1 for k in range(4)))

    def stats(self) -> dict[str, int]:
        return {"accesses": self.accesses, "transfers": self.transfers,
                "stall_cycles": self.stall_cycles, "active_cycles": self.active_cycles,
                "oob_reads": self.oob_reads, "errors": len(self.errors)}


def master_signals(dut: Any, prefix: str = "tcdm_") -> dict[str, Any]:
    """The TCDM master ports ``<prefix>req_o`` ... ``<prefix>r_valid_i`` of ``dut`` by role,
    as :class:`TcdmResponder` takes them."""
    g = lambda n: getattr(dut, prefix + n)  # noqa: E731
    return {"req": g("req_o"), "gnt": g("gnt_i"), "add": g("add_o"), "wen": g("wen_o"),
            "be": g("be_o"), "data": g("data_o"), "r_data": g("r_data_i"),
            "r_valid": g("r_valid_i")}
