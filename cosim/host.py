"""``soc.host``: runs a scenario's tasks as register programs on the SOC bus.

The host is a bus master in the SOC domain, like the fabric controller's firmware: a
``dma`` task programs the cluster DMA's registers through the SOC<->CLUSTER crossing, an
``rbe`` task acquires an RBE context and writes its job registers, a ``kernel`` task writes
an args block into the TCDM and starts the cluster, an ``udma`` task programs the I/O DMA.
Completion comes back as the interrupt lines the platform routes to the SOC (over the
crossing's latency), counted here so that an event that arrives while a task is busy
reading a register is never lost. Because tasks only use registers and link-borne
interrupts, they behave the same whether the cluster runs in this process or another.
(``pmu`` tasks are the exception: they call the PMU model, which sits in the always-on
domain next to the SOC; an ``operating_point`` applies to the whole chip at once.)

Each task is a process that starts when the tasks in its ``after`` list have finished;
tasks without dependencies start at time 0 in the order of the scenario.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from components.cluster.ctrl import MAP as CTRL_MAP
from components.cluster.kernels import KERNELS
from components.cluster_dma import MAP as DMA_MAP
from components.marsellus.facts import MEMORY_MAP
from components.udma import MAP as UDMA_MAP
from tlm import READ, WRITE, Event, GenericPayload, InitiatorSocket, MemoryMap, Module, Region
from tlm.errors import SimulationError
from tlm.units import NS, US, parse_frequency

#: the last 256 bytes of the TCDM hold the host's kernel args blocks
ARGS_BYTES = 256
#: an mmio read with 'until' polls this often, at most this many times
MMIO_POLL = 100 * NS
MMIO_MAX_POLLS = 100_000

# register offsets and bits come from the blocks' register maps (docs/registers.md)
DMA_CMD, DMA_STATUS, DMA_FREE, DMA_TCDM, DMA_L2, DMA_ROW, DMA_L2_STRIDE, DMA_TCDM_STRIDE, \
    DMA_ERROR, DMA_ERR_ID, DMA_LAST_ID, DMA_DONE = (DMA_MAP.offset(n) for n in (
        "CMD", "STATUS", "FREE", "TCDM_ADDR", "L2_ADDR", "ROW_LEN", "L2_STRIDE", "TCDM_STRIDE",
        "ERROR", "ERR_ID", "LAST_ID", "DONE"))
DMA_ID_FULL = DMA_MAP.constant("ID_FULL")
DMA_L2_TO_TCDM, DMA_L2_2D, DMA_EVT, DMA_IRQ, DMA_TCDM_2D = (
    DMA_MAP.mask("CMD", n) for n in ("L2_TO_TCDM", "L2_2D", "EVT_EN", "IRQ_EN", "TCDM_2D"))
# uDMA HyperRAM channel (docs/hyperram_udma.md): one register set per direction
U_IRQ_STATUS, U_STATUS, U_ERROR = (UDMA_MAP.offset(n) for n in
                                   ("IRQ_STATUS", "HYPER_STATUS", "HYPER_ERROR"))
U_RX, U_TX = ({n: UDMA_MAP.offset(f"HYPER_{d}_{n}") for n in ("SADDR", "SIZE", "CFG", "EXT_ADDR")}
              for d in ("RX", "TX"))
U_CFG_EN = UDMA_MAP.mask("HYPER_RX_CFG", "EN")
#: per direction: the HYPER_STATUS bits that mean busy, the HYPER_ERROR bits and their lsb
U_BITS = {d: (UDMA_MAP.mask("HYPER_STATUS", f"{d}_BUSY")
              | UDMA_MAP.mask("HYPER_STATUS", f"{d}_PENDING"),
              sum(f.mask for f in UDMA_MAP.register("HYPER_ERROR").fields if f.name.startswith(d)),
              UDMA_MAP.shift("HYPER_ERROR", f"{d}_L2_RANGE"))
          for d in ("RX", "TX")}
U_IRQ_ALL = sum(f.mask for f in UDMA_MAP.register("IRQ_STATUS").fields)
# cluster control (docs/cluster.md)
C_KERNEL, C_ARGS, C_CORES, C_START, C_STATUS, C_JOBS = (
    CTRL_MAP.offset(n) for n in ("KERNEL", "ARGS", "CORES", "START", "STATUS", "JOBS"))
C_BUSY, C_ERROR = CTRL_MAP.mask("STATUS", "BUSY"), CTRL_MAP.mask("STATUS", "ERROR")
C_ERROR_CODE = CTRL_MAP.field("STATUS", "ERROR_CODE")

class TaskError(SimulationError):
    """A task that the hardware answered with an error (status bits, error responses)."""


def resolve_address(spec: int | str, where: str = "address",
                    memory_map: MemoryMap | None = None) -> tuple[str, int]:
    """``0x1c010000`` / ``'l2'`` / ``'tcdm+0x400'`` / ``'hyperram+4096'`` -> (space, address);
    space is 'soc' (the SOC address map) or 'hyperram' (the device's own space). Names are
    regions of ``memory_map`` (default: the MARSELLUS facts)."""
    mm = MEMORY_MAP if memory_map is None else memory_map
    if isinstance(spec, int) and not isinstance(spec, bool):
        return "soc", spec
    text = str(spec).replace(" ", "")
    name, _, off = text.partition("+")
    if name not in mm:
        from tlm.params import suggest
        names = [r.name for r in mm.regions + mm.external]
        raise ValueError(f"{where}: unknown region {name!r}{suggest(name, names)}; use an "
                         f"integer or one of {', '.join(names)} (+offset)")
    try:
        offset = int(off, 0) if off else 0
    except ValueError:
        raise ValueError(f"{where}: bad offset {off!r} in {spec!r}") from None
    region = mm[name]
    space = "hyperram" if region in mm.external else "soc"
    return space, region.base + offset


@dataclass
class TaskRecord:
    id: str
    op: str
    layer: str | None
    category: str | None
    start: int | None = None
    end: int | None = None
    error: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = {"op": self.op, "start_ps": self.start, "end_ps": self.end, "ok": self.error is None}
        if self.layer:
            d["layer"] = self.layer
        if self.category:
            d["category"] = self.category
        if self.error:
            d["error"] = self.error
        d.update(self.detail)
        return d


class _Mutex:
    """A lock for one peripheral's programming sequence (waiters retry in wake order)."""

    def __init__(self, host: Module, name: str):
        self.locked = False
        self.free = host.event(f"{name}_free")

    async def acquire(self) -> None:
        while self.locked:
            await self.free
        self.locked = True

    def release(self) -> None:
        self.locked = False
        self.free.notify()


class Host(Module):
    """The scenario's task driver. ``irq``: SOC-side events by name ('dma_irq', 'rbe_eoj',
    'cluster_eoj', 'udma'); ``pmu``: the PMU (same partition as the SOC); ``memory_map``:
    the platform's (where the registers it programs are; default: the MARSELLUS facts)."""

    def __init__(self, parent: Module, name: str, *, tasks: list[dict[str, Any]],
                 irq: dict[str, Event], pmu: Any = None, memory_map: MemoryMap | None = None):
        super().__init__(parent, name)
        self.memory_map = MEMORY_MAP if memory_map is None else memory_map
        self.socket = InitiatorSocket(self, "socket")
        self.tasks = tasks
        self.pmu = pmu
        self.records: dict[str, TaskRecord] = {}
        #: values of mmio reads named with 'as' (for later write expressions)
        self.mmio_names: dict[str, int] = {}
        self._done: dict[str, Event] = {}
        self._count = {n: 0 for n in irq}
        self._irq = irq
        for n, ev in irq.items():
            ev.add_callback(lambda _e, n=n: self._bump(n))
        self._locks = {n: _Mutex(self, n) for n in ("dma", "rbe", "cluster", "udma_rx", "udma_tx")}
        self._tickets: dict[str, int] = {}
        from components.plugins import loaded, task_ops
        self._family_ops: dict[str, Callable] = loaded(task_ops())
        self.all_done = self.event("all_done")
        self._pending = len(tasks)
        for t in tasks:
            self.records[t["id"]] = TaskRecord(t["id"], t["op"], t.get("layer"), t.get("category"))
            self._done[t["id"]] = self.event(f"{t['id']}.done")
        for t in tasks:
            self.spawn(self._run_task(t), f"task.{t['id']}")

    # ----- where the blocks a task programs are (a platform may lack some) ------------------
    def region(self, name: str) -> Region:
        """The memory-map region ``name`` (a located ValueError if the platform lacks it)."""
        return self._region(name)

    def _region(self, name: str) -> Region:
        if name not in self.memory_map:
            raise ValueError(f"this platform has no {name!r} region, which this task programs; "
                             f"regions: {', '.join(r.name for r in self.memory_map.regions)}")
        return self.memory_map[name]

    @property
    def dma_base(self) -> int:
        return self._region("cluster_dma").base

    @property
    def ctrl_base(self) -> int:
        return self._region("cluster_ctrl").base

    @property
    def udma_base(self) -> int:
        return self._region("udma").base

    @property
    def tcdm(self) -> Region:
        return self._region("tcdm")

    @property
    def args_addr(self) -> int:
        return self.tcdm.end - ARGS_BYTES

    def _bump(self, name: str) -> None:
        self._count[name] += 1

    def lock(self, name: str) -> _Mutex:
        """The programming lock of peripheral ``name`` (made on first use)."""
        if name not in self._locks:
            self._locks[name] = _Mutex(self, name)
        return self._locks[name]

    def next_ticket(self, name: str) -> int:
        """0, 1, 2, ...: the order of the jobs handed to peripheral ``name`` (a job queue's
        tickets, compared with its FINISHED counter)."""
        n = self._tickets.get(name, 0)
        self._tickets[name] = n + 1
        return n

    def irq_count(self, name: str) -> int | None:
        """How often interrupt ``name`` fired so far (None: the platform has no such line)."""
        return self._count.get(name)

    async def wait_irq(self, name: str, seen: int) -> None:
        """Wait until interrupt ``name`` has fired more than ``seen`` times."""
        await self._wait_irq(name, seen)

    async def _wait_irq(self, name: str, seen: int) -> None:
        """Wait until interrupt ``name`` has fired more than ``seen`` times."""
        while self._count[name] == seen:
            await self._irq[name]

    # ----- bus access (each access synchronises: the host is an in-order core) -------------
    async def rd(self, addr: int) -> int:
        p = GenericPayload(READ, addr, bytearray(4), initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        if d:
            await self.sim.wait(d)
        if not p.is_ok:
            raise TaskError(f"read 0x{addr:08x} answered {p.status.name}", self.path, self.sim.now)
        return int.from_bytes(p.data, "little")

    async def wr(self, addr: int, value: int) -> None:
        p = GenericPayload(WRITE, addr, bytearray((value & 0xFFFFFFFF).to_bytes(4, "little")),
                           initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        if d:
            await self.sim.wait(d)
        if not p.is_ok:
            raise TaskError(f"write 0x{addr:08x} answered {p.status.name}", self.path, self.sim.now)

    async def write_block(self, addr: int, words: list[int]) -> None:
        for i, w in enumerate(words):
            await self.wr(addr + 4 * i, w)

    # ----- tasks -----------------------------------------------------------------------------
    async def _run_task(self, t: dict[str, Any]) -> None:
        for dep in t.get("after", []):
            if self.records[dep].end is None:
                await self._done[dep]
        rec = self.records[t["id"]]
        rec.start = self.sim.now
        try:
            own = getattr(self, f"_op_{t['op']}", None)
            if own is not None:
                await own(t, rec)
            else:       # an accelerator family's operation (components/plugins.py)
                await self._family_ops[t["op"]](self, t, rec)
        except TaskError as e:
            rec.error = e.message
        except ValueError as e:
            rec.error = str(e)
        rec.end = self.sim.now
        tr = self.sim.tracer
        if tr is not None:
            tr.span(f"{self.path}.{t.get('category') or t['op']}", t["id"], rec.start, rec.end,
                    **({"layer": rec.layer} if rec.layer else {}))
        self._done[t["id"]].notify()
        self._pending -= 1
        if self._pending == 0:
            self.all_done.notify()

    async def _op_barrier(self, t: dict, rec: TaskRecord) -> None:
        return None

    async def _op_mmio(self, t: dict, rec: TaskRecord) -> None:
        reads = []
        irq_seen = dict(self._count)      # interrupts counted from the task's start
        for i, a in enumerate(t["accesses"]):
            where = f"{t['id']}.accesses[{i}]"
            if "write" in a:
                addr = resolve_address(a["write"], where, self.memory_map)[1]
                if "values" in a:       # an image: words from cosim.mmio.prepare
                    for k, w in enumerate(a["words"]):
                        await self.wr(addr + 4 * k, w)
                    continue
                value = a["value"]
                if isinstance(value, dict):
                    from .mmio import ExprError, evaluate
                    try:
                        value = evaluate(value["expr"], {**(t.get("constants") or {}),
                                                         **self.mmio_names})
                    except ExprError as e:
                        raise TaskError(f"accesses[{i}]: {e}", self.path, self.sim.now) from None
                await self.wr(addr, int(value))
                continue
            if "wait_irq" in a:
                name = a["wait_irq"]
                if name not in self._count:
                    raise ValueError(f"{where}: unknown interrupt {name!r}; the host has "
                                     + ", ".join(sorted(self._count)))
                await self._wait_irq(name, irq_seen[name])
                irq_seen[name] += 1
                continue
            addr = resolve_address(a["read"], where, self.memory_map)[1]
            value = await self.rd(addr)
            if "until" in a:
                mask, want, polls = int(a.get("mask", 0xFFFFFFFF)), int(a["until"]), 0
                while value & mask != want:
                    polls += 1
                    if polls > MMIO_MAX_POLLS:
                        raise TaskError(f"accesses[{i}]: 0x{addr:08x} & 0x{mask:08x} did not "
                                        f"become 0x{want:08x} within {MMIO_MAX_POLLS} polls "
                                        f"(last value 0x{value:08x})", self.path, self.sim.now)
                    await self.sim.wait(MMIO_POLL)
                    value = await self.rd(addr)
            reads.append(f"0x{value:08x}")
            if "as" in a:
                self.mmio_names[a["as"]] = value
            if "expect" in a and value != int(a["expect"]):
                raise TaskError(f"accesses[{i}]: read 0x{addr:08x} returned 0x{value:08x}, "
                                f"expected 0x{int(a['expect']):08x}", self.path, self.sim.now)
        rec.detail.update(accesses=len(t["accesses"]), reads=reads)

    async def _op_wait(self, t: dict, rec: TaskRecord) -> None:
        await self.sim.wait(int(t["time"]))

    async def _op_load(self, t: dict, rec: TaskRecord) -> None:
        return None  # applied before time 0 by the runner (debug writes take no time)

    async def _op_dma(self, t: dict, rec: TaskRecord) -> None:
        _, src = resolve_address(t["src"], f"{t['id']}.src", self.memory_map)
        _, dst = resolve_address(t["dst"], f"{t['id']}.dst", self.memory_map)
        to_tcdm = self.tcdm.contains(dst)
        l2, tcdm = (src, dst) if to_tcdm else (dst, src)
        size = int(t["size"])
        rows = int(t.get("rows", 1))
        total = size * rows
        l2_stride = t.get("src_stride" if to_tcdm else "dst_stride", size)
        tcdm_stride = t.get("dst_stride" if to_tcdm else "src_stride", size)
        word = total | (DMA_L2_TO_TCDM if to_tcdm else 0) | DMA_EVT | DMA_IRQ
        if rows > 1 and l2_stride != size:
            word |= DMA_L2_2D
        if rows > 1 and tcdm_stride != size:
            word |= DMA_TCDM_2D
        rec.detail.update(bytes=total, direction="l2_to_tcdm" if to_tcdm else "tcdm_to_l2")
        lock = self._locks["dma"]
        while True:
            await lock.acquire()
            seen = self._count["dma_irq"]
            await self.wr(self.dma_base + DMA_TCDM, tcdm)
            await self.wr(self.dma_base + DMA_L2, l2)
            if word & (DMA_L2_2D | DMA_TCDM_2D):
                await self.wr(self.dma_base + DMA_ROW, size)
                await self.wr(self.dma_base + DMA_L2_STRIDE, l2_stride)
                await self.wr(self.dma_base + DMA_TCDM_STRIDE, tcdm_stride)
            tid = await self.rd(self.dma_base + DMA_CMD)
            if tid != DMA_ID_FULL:
                await self.wr(self.dma_base + DMA_CMD, word)
                lock.release()
                break
            lock.release()
            await self._wait_irq("dma_irq", seen)  # the queue is full: wait for a completion
        while True:
            seen = self._count["dma_irq"]
            if await self.rd(self.dma_base + DMA_DONE) >> tid & 1:
                break
            await self._wait_irq("dma_irq", seen)
        err = await self.rd(self.dma_base + DMA_ERROR)
        if err and await self.rd(self.dma_base + DMA_ERR_ID) == tid:
            await self.wr(self.dma_base + DMA_ERROR, err)
            await self.wr(self.dma_base + DMA_FREE, 1 << tid)
            raise TaskError(f"cluster DMA error bits 0x{err:x}", self.path, self.sim.now)
        await self.wr(self.dma_base + DMA_FREE, 1 << tid)

    async def _op_kernel(self, t: dict, rec: TaskRecord) -> None:
        name = t["name"]
        if name not in KERNELS:
            from tlm.params import suggest
            raise ValueError(f"unknown kernel {name!r}{suggest(name, KERNELS)}")
        kernel = KERNELS[name]
        args = dict(t.get("args", {}))
        addr_args = {a.name for a in kernel.args if a.kind == "addr"}
        for k, v in list(args.items()):
            if k in addr_args and isinstance(v, str):  # an address given as 'tcdm+0x400'
                args[k] = resolve_address(v, f"{t['id']}.args.{k}", self.memory_map)[1]
        words = kernel.encode(kernel.normalize(args))
        if 4 * len(words) > ARGS_BYTES:
            raise ValueError(f"kernel {name}: args block of {len(words)} words exceeds {ARGS_BYTES} B")
        lock = self._locks["cluster"]
        await lock.acquire()
        try:
            seen = self._count["cluster_eoj"]
            await self.write_block(self.args_addr, words)
            await self.wr(self.ctrl_base + C_KERNEL, kernel.kid)
            await self.wr(self.ctrl_base + C_ARGS, self.args_addr)
            await self.wr(self.ctrl_base + C_CORES, int(t.get("cores", 16)))
            await self.wr(self.ctrl_base + C_START, 1)
            while True:
                await self._wait_irq("cluster_eoj", seen)
                seen = self._count["cluster_eoj"]
                status = await self.rd(self.ctrl_base + C_STATUS)
                if not status & C_BUSY:
                    break
        finally:
            lock.release()
        rec.detail.update(kernel=name, cores=int(t.get("cores", 16)))
        if status & C_ERROR:
            raise TaskError(f"cluster kernel {name} failed (error code {C_ERROR_CODE.get(status)})",
                            self.path, self.sim.now)

    async def _op_udma(self, t: dict, rec: TaskRecord) -> None:
        s_space, src = resolve_address(t["src"], f"{t['id']}.src", self.memory_map)
        d_space, dst = resolve_address(t["dst"], f"{t['id']}.dst", self.memory_map)
        if (s_space, d_space) == ("hyperram", "soc"):
            ch, l2, ext, d = U_RX, dst, src, "RX"
        elif (s_space, d_space) == ("soc", "hyperram"):
            ch, l2, ext, d = U_TX, src, dst, "TX"
        else:
            raise ValueError(f"{t['id']}: an udma task moves between L2 and 'hyperram+...'")
        size = int(t["size"])
        rec.detail.update(bytes=size, direction="l3_to_l2" if ch == U_RX else "l2_to_l3")
        busy, err_bits, err_lsb = U_BITS[d]
        lock = self._locks["udma_rx" if ch == U_RX else "udma_tx"]
        await lock.acquire()
        try:
            seen = self._count["udma"]
            await self.wr(self.udma_base + ch["SADDR"], l2)
            await self.wr(self.udma_base + ch["SIZE"], size)
            await self.wr(self.udma_base + ch["EXT_ADDR"], ext)
            await self.wr(self.udma_base + ch["CFG"], U_CFG_EN)
            while True:
                if not await self.rd(self.udma_base + U_STATUS) & busy:
                    break
                await self._wait_irq("udma", seen)
                seen = self._count["udma"]
            err = await self.rd(self.udma_base + U_ERROR)
            mine = (err & err_bits) >> err_lsb
            await self.wr(self.udma_base + U_IRQ_STATUS, U_IRQ_ALL)
            if mine:
                await self.wr(self.udma_base + U_ERROR, err)
                raise TaskError(f"uDMA error bits 0x{mine:x}", self.path, self.sim.now)
        finally:
            lock.release()

    async def _op_pmu(self, t: dict, rec: TaskRecord) -> None:
        pmu = self.pmu
        if pmu is None:
            raise ValueError("this platform has no PMU")
        dom = t["domain"]
        fll = {"soc": "soc", "cluster": "cluster", "periph": "periph"}[dom]
        if "operating_point" in t:
            pmu.apply_operating_point(t["operating_point"])
        if "voltage" in t:
            if not pmu.set_vdd("soc" if dom == "periph" else dom, float(t["voltage"])):
                raise ValueError(f"supply {t['voltage']} V is out of range")
            reg = pmu.regulators["soc" if dom == "periph" else dom]
            while reg.busy:
                await self.sim.wait(100 * NS)
        if "frequency" in t:
            hz = parse_frequency(t["frequency"])
            if not pmu.set_frequency(fll, hz):
                raise ValueError(f"frequency {hz / 1e6:g} MHz is out of the FLL's range")
            f = pmu.fll.flls[fll]
            while not f.locked:
                await self.sim.wait(100 * NS)
        if "abb" in t:
            pmu.set_abb(bool(t["abb"]))
        if "power" in t:
            from components.pmu import PowerState
            state = {"on": PowerState.ON, "off": PowerState.OFF,
                     "clock_gated": PowerState.CLOCK_GATED}[t["power"]]
            if not pmu.set_state(dom, state):
                raise ValueError(f"the {dom} domain cannot go to {t['power']}")
            d = pmu.domains[dom]
            for _ in range(10_000):
                if d.state == state:
                    break
                await self.sim.wait(1 * US)
        rec.detail.update({k: t[k] for k in ("frequency", "voltage", "operating_point", "abb", "power") if k in t})
