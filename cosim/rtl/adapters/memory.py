"""Memory back-ends the bus responders serve an RTL master from.

* :class:`ByteMemory` — a numpy byte array at a base address (fast path: slices).
* :class:`TlmMemory` — any TLM target reached through ``transport_dbg`` (a
  ``tlm.Memory``, a router...), so an RTL master can read and write the TLM model's data.
* :class:`RemoteMemory` — the same, from the child process of a scenario: each access goes
  over the block's channel to the parent, which serves it with a :class:`TlmMemory`.

Both answer ``read(addr, n) -> bytes`` and ``write(addr, data, be_mask=None)``; an access
outside the memory is recorded in ``errors`` (address, length, time) instead of raising
inside the simulator, reads of it return zeros.
"""
from __future__ import annotations

from typing import Any

import numpy as np


class ByteMemory:
    def __init__(self, size: int, base: int = 0, data: np.ndarray | None = None):
        self.base = base
        self.data = data if data is not None else np.zeros(size, dtype=np.uint8)
        self.size = int(self.data.size)
        self._buf = memoryview(self.data)  # zero-copy byte slices
        self.errors: list[tuple[str, int, int]] = []

    def contains(self, addr: int, n: int) -> bool:
        off = addr - self.base
        return 0 <= off and off + n <= self.size

    def read(self, addr: int, n: int) -> bytes:
        off = addr - self.base
        if off < 0 or off + n > self.size:
            self.errors.append(("read", addr, n))
            return bytes(n)
        return self._buf[off:off + n].tobytes()

    def write(self, addr: int, data: bytes, be_mask: bytes | None = None) -> None:
        n = len(data)
        off = addr - self.base
        if off < 0 or off + n > self.size:
            if be_mask is None or any(be_mask):
                self.errors.append(("write", addr, n))
            return
        if be_mask is None:
            self._buf[off:off + n] = data
        else:
            dst = self.data[off:off + n]
            m = np.frombuffer(be_mask, dtype=np.uint8).astype(bool)
            dst[m] = np.frombuffer(data, dtype=np.uint8)[m]

    # async flavour for cocotbext targets (AxiSlave/AxiLiteSlave ``target=``)
    async def aread(self, addr: int, n: int) -> bytes:
        return self.read(addr, n)

    async def awrite(self, addr: int, data: bytes) -> None:
        self.write(addr, bytes(data))


class TlmMemory:
    """A TLM target socket (or an initiator socket bound to one) used through debug
    transport: no simulated time passes on the TLM side, the RTL owns the timing."""

    def __init__(self, socket: Any, name: str = "rtl"):
        from tlm import GenericPayload  # local: keep adapters importable without tlm
        self._gp = GenericPayload
        self.socket = socket
        self.name = name
        self.errors: list[tuple[str, int, int]] = []
        self._dbg = getattr(socket, "transport_dbg", None) or socket._dbg

    def read(self, addr: int, n: int) -> bytes:
        from tlm import READ
        buf = bytearray(n)
        p = self._gp(READ, addr, buf, n, initiator=self.name)
        self._dbg(p)
        if not p.is_ok:
            self.errors.append(("read", addr, n))
            return bytes(n)
        return bytes(buf)

    def write(self, addr: int, data: bytes, be_mask: bytes | None = None) -> None:
        from tlm import WRITE
        if be_mask is not None and not all(be_mask):
            if not any(be_mask):
                return
            old = bytearray(self.read(addr, len(data)))
            for i, m in enumerate(be_mask):
                if m:
                    old[i] = data[i]
            data = bytes(old)
        p = self._gp(WRITE, addr, bytearray(data), len(data), initiator=self.name)
        self._dbg(p)
        if not p.is_ok:
            self.errors.append(("write", addr, len(data)))

    async def aread(self, addr: int, n: int) -> bytes:
        return self.read(addr, n)

    async def awrite(self, addr: int, data: bytes) -> None:
        self.write(addr, bytes(data))


class RemoteMemory:
    """A back-end served by the scenario process (see ``ChildProcess.serve_mem``): while
    the simulator waits, a read is one round trip over the block's channel; writes are
    posted (the channel keeps their order). ``channel_of()`` returns the channel (it
    exists only once the window driver runs)."""

    def __init__(self, channel_of: Any, port: str):
        self._channel_of = channel_of
        self.port = port
        self.errors: list[tuple[str, int, int]] = []
        self.reads = self.writes = 0

    def contains(self, addr: int, n: int) -> bool:
        return True        # the scenario side decides (and reports what no target answers)

    def read(self, addr: int, n: int) -> bytes:
        ch = self._channel_of()
        ch.send({"mem": "read", "port": self.port, "addr": int(addr), "n": int(n)})
        reply = ch.recv()
        if reply is None:
            raise RuntimeError(f"{self.port}: the scenario process is gone")
        self.reads += 1
        if not reply.get("ok"):
            self.errors.append(("read", addr, n))
            return bytes(n)
        return bytes(reply["data"])

    def write(self, addr: int, data: bytes, be_mask: bytes | None = None) -> None:
        if be_mask is not None and not any(be_mask):
            return
        self._channel_of().send({"mem": "write", "port": self.port, "addr": int(addr),
                                 "data": bytes(data),
                                 "be": None if be_mask is None else bytes(be_mask)})
        self.writes += 1

    async def aread(self, addr: int, n: int) -> bytes:
        return self.read(addr, n)

    async def awrite(self, addr: int, data: bytes) -> None:
        self.write(addr, bytes(data))


class AsyncTarget:
    """Adapter from a back-end to the ``target`` interface of cocotbext-axi slaves."""

    def __init__(self, mem: Any):
        self.mem = mem

    async def read(self, address: int, length: int) -> bytes:
        return self.mem.read(address, length)

    async def write(self, address: int, data: bytes) -> None:
        self.mem.write(address, bytes(data))
