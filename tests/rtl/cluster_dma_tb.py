"""cocotb testbench of rtl/cluster_dma against the Python model components.cluster_dma.

Every test runs *register programs*: lists of register operations that firmware would do
on the DMA's configuration port. The same program runs on the RTL (through the bridge's
HWPE peripheral adapter; L2 served by cocotbext-axi's AxiSlave through ``AxiResponder``,
TCDM by ``TcdmResponder``) and, in this process, on the Python model (a fresh
``build_memory_system`` with a core initiator on the cluster bus), both starting from the
same random memory contents. Compared: every register value read, the event counts at
each ``events`` point and at the end (done event, irq, error event), and the whole L2
window and TCDM afterwards.

Program operations (JSON lists)::

    ["w", REG, value]          write (all bytes)
    ["w", REG, value, be]      write the bytes of ``be`` (1, 2 or 4 contiguous bytes)
    ["r", REG]                 read, the value is compared
    ["wait"]                   wait until the DMA is idle (model: poll STATUS; RTL: busy_o
                               with a cycle timeout, then STATUS must read 0)
    ["events"]                 the (evt, irq, err) counts so far are compared

Reads are only placed where their value does not depend on timing (the RTL moves data at
a different speed than the model): after ``wait``, or right after a push that fails.

Results go to ``DMA_TB_REPORT`` (JSON, one entry per test); tests/test_rtl_dma.py checks
them. Environment: ``DMA_TB_COPY_PROGRAMS`` (number of random copy programs, default 24),
``DMA_TB_REG_STEPS`` (random register operations per program, default 500), ``DMA_TB_SEED``.
"""
from __future__ import annotations

import json
import os
from typing import Any

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, FallingEdge, First, Timer

from components.cluster_dma import (CMD_AUTO_FREE, CMD_EVT_EN, CMD_IRQ_EN, CMD_L2_2D,
                                    CMD_L2_TO_TCDM, CMD_TCDM_2D, REG, DmaError)
from components.marsellus.facts import MEMORY_MAP
from cosim.rtl.adapters import (AdapterTimeout, ByteMemory, HwpePeriphMaster, IrqMonitor,
                                TcdmResponder, reset, start_clock)
from cosim.rtl.adapters.hwpe import periph_signals
from cosim.rtl.adapters.tcdm import master_signals as tcdm_signals
from cosim.rtl.adapters.axi import AxiResponder

L2, L2P, TC, DMA = (MEMORY_MAP["l2"], MEMORY_MAP["l2_private"], MEMORY_MAP["tcdm"],
                    MEMORY_MAP["cluster_dma"])
L2_LO, L2_HI = L2P.base, L2.end          # the DMA's L2 window (private + shared L2)
PERIOD_NS = 2.5
WAIT_CYCLES = 400_000                    # bound of one "wait" (a 256 KiB transfer fits)
RW_REGS = ("TCDM_ADDR", "L2_ADDR", "ROW_LEN", "L2_STRIDE", "TCDM_STRIDE")
RO_REGS = ("STATUS", "ERR_ID", "LAST_ID", "DONE")
BE_PATTERNS = (0x1, 0x2, 0x4, 0x8, 0x3, 0x6, 0xC, 0xF)


# ============================================================================ the model side
def _be_span(be: int) -> tuple[int, int]:
    k = (be & -be).bit_length() - 1
    n = bin(be).count("1")
    if be >> k != (1 << n) - 1 or n not in (1, 2, 4):
        raise ValueError(f"byte enables {be:#x} are not a TLM access (1, 2 or 4 contiguous bytes)")
    return k, n


def run_model(program: list, seed: int, *, bus_error: bool = False) -> dict:
    """Run ``program`` on the Python model; reads, event counts and final memories."""
    from tlm import READ, WRITE, GenericPayload, InitiatorSocket, Module, Simulator, Status
    sim = Simulator(seed=seed)
    if bus_error:
        # as tests/test_cluster_dma.py: the DMA's AXI side on a bus where nothing is mapped
        from components.cluster_dma import ClusterDma
        from components.marsellus.facts import MEMORY_MAP as MM
        from components.tcdm import Tcdm
        from tlm import Clock, Router
        clk = Clock(sim, "cluster.clock", 400e6)
        cl = Module(sim, "cluster")
        tcdm = Tcdm(cl, "tcdm", clk, region=MM["tcdm"])
        dma = ClusterDma(cl, "dma", clk, l2_regions=(MM["l2_private"], MM["l2"]),
                         tcdm_region=MM["tcdm"], region=MM["cluster_dma"])
        dma.axi.bind(Router(cl, "xbar", clock=clk, latency=1).target_socket)
        dma.tcdm.bind(tcdm.dma_ports[0])
        target, base = dma.regs.socket, 0
        l2_parts: list = []
        tcdm_arr = tcdm.array
        parent = cl
    else:
        from components.marsellus.memory_system import build_memory_system
        ms = build_memory_system(sim, {})
        dma, target, base, parent = ms.dma, ms.cluster_xbar.target_socket, DMA.base, ms.cluster
        l2_parts = [ms.l2_private.array, ms.l2.array]
        tcdm_arr = ms.tcdm.array
    l2_init, tc_init = initial_memories(seed)
    if l2_parts:
        l2_parts[0][:] = l2_init[:L2P.size]
        l2_parts[1][:] = l2_init[L2P.size:]
    tcdm_arr[:] = tc_init

    class Core(Module):
        def __init__(self, parent, name):
            super().__init__(parent, name)
            self.socket = InitiatorSocket(self, "socket")
            self.socket.bind(target)

        async def access(self, cmd, addr, data: bytearray) -> None:
            p = GenericPayload(cmd, addr, data, len(data), initiator=self.path)
            d = await self.socket.b_transport(p, 0)
            assert p.status == Status.OK, f"model register access 0x{addr:x}: {p.status}"
            await self.sim.wait(d)

    core = Core(parent, "core0")
    counts = {"evt": 0, "irq": 0, "err": 0}
    dma.done_event.add_callback(lambda e: counts.__setitem__("evt", counts["evt"] + 1))
    dma.irq.add_callback(lambda e: counts.__setitem__("irq", counts["irq"] + 1))
    dma.error_event.add_callback(lambda e: counts.__setitem__("err", counts["err"] + 1))
    reads: list[int] = []
    events: list[list[int]] = []

    async def read(reg: str) -> int:
        buf = bytearray(4)
        await core.access(READ, base + REG[reg], buf)
        return int.from_bytes(buf, "little")

    async def go():
        for op in program:
            kind = op[0]
            if kind == "w":
                be = op[3] if len(op) > 3 else 0xF
                k, n = _be_span(be)
                data = bytearray(int(op[2] & 0xFFFFFFFF).to_bytes(4, "little")[k:k + n])
                await core.access(WRITE, base + REG[op[1]] + k, data)
            elif kind == "r":
                reads.append(await read(op[1]))
            elif kind == "wait":
                for _ in range(1_000_000):
                    if await read("STATUS") == 0:
                        break
                else:
                    raise AssertionError("model: the DMA never became idle")
            elif kind == "events":
                events.append([counts["evt"], counts["irq"], counts["err"]])
            else:
                raise ValueError(f"unknown program operation {op!r}")
    sim.spawn(go(), "program")
    sim.run()
    l2 = np.concatenate(l2_parts) if l2_parts else l2_init.copy()
    return {"reads": reads, "events": events,
            "counts": [counts["evt"], counts["irq"], counts["err"]], "l2": l2, "tcdm": tcdm_arr.copy(),
            "stats": sim.stats.as_dict().get(dma.path, {})}


def initial_memories(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(10_000 + seed)
    return (rng.integers(0, 256, L2_HI - L2_LO, dtype=np.uint8),
            rng.integers(0, 256, TC.size, dtype=np.uint8))


# ============================================================================ the RTL side
class FailingMemory:
    """An L2 back-end whose accesses raise while ``fail`` is set (cocotbext-axi answers
    SLVERR): the RTL counterpart of the model's bus with nothing mapped."""

    def __init__(self, mem: ByteMemory):
        self.mem = mem
        self.fail = False

    def read(self, addr: int, n: int) -> bytes:
        if self.fail:
            raise OSError(f"no target at 0x{addr:08x}")
        return self.mem.read(addr, n)

    def write(self, addr: int, data: bytes, be_mask: bytes | None = None) -> None:
        if self.fail:
            raise OSError(f"no target at 0x{addr:08x}")
        self.mem.write(addr, data, be_mask)




class Bench:
    """Clock, reset, the configuration master, the two memory responders and the three
    event monitors around cluster_dma. ``backpressure(seed)`` makes both memory sides
    stall at random (AXI: every channel's ready/valid via cocotbext pause generators;
    TCDM: per-port grants)."""

    def __init__(self, dut):
        self.dut = dut
        start_clock(dut.clk_i, PERIOD_NS)
        self.cfg = HwpePeriphMaster(dut.clk_i, periph_signals(dut), name="dma.cfg",
                                    timeout_cycles=200)
        self.l2 = ByteMemory(L2_HI - L2_LO, base=L2_LO)
        self.l2_backend = FailingMemory(self.l2)
        self.tcdm = ByteMemory(TC.size, base=TC.base)
        self.axi = AxiResponder(dut, "m_axi", dut.clk_i, self.l2_backend, dut.rst_ni, True)
        self._grant_rng: np.random.Generator | None = None
        self.tcdm_port = TcdmResponder(dut.clk_i, tcdm_signals(dut), self.tcdm, n_ports=2,
                                       contiguous=True, policy=self._policy,
                                       name="dma.tcdm").start()
        self.mon = {k: IrqMonitor(getattr(dut, f"{k}_o"), name=f"dma.{k}_o")
                    for k in ("evt", "irq", "err")}
        # AXI bursts issued (ARVALID/AWVALID rise once per burst: one burst in flight)
        self.bursts = (IrqMonitor(dut.m_axi_arvalid), IrqMonitor(dut.m_axi_awvalid))
        self._base_counts = [0, 0, 0]

    def _policy(self, _cycle: int) -> int:
        rng = self._grant_rng
        return 0b11 if rng is None else int(rng.integers(0, 4))

    def _channels(self):
        s = self.axi.slave
        return (s.read_if.ar_channel, s.read_if.r_channel, s.write_if.aw_channel,
                s.write_if.w_channel, s.write_if.b_channel)

    def backpressure(self, seed: int | None) -> None:
        if seed is None:
            self._grant_rng = None
            for ch in self._channels():
                ch.clear_pause_generator()
                ch.pause = False      # clearing the generator leaves the last value
            return
        self._grant_rng = np.random.default_rng(seed)
        for k, ch in enumerate(self._channels()):
            bits = np.random.default_rng(seed * 7 + k).random(4096) < 0.4

            def gen(bits=bits):
                while True:
                    yield from (bool(b) for b in bits)
            ch.set_pause_generator(gen())

    async def reset(self, seed: int) -> None:
        """Reset the DMA and load the program's initial memories."""
        self.dut.periph_req_i.value = 0
        await reset(self.dut.clk_i, self.dut.rst_ni, 3)
        l2, tc = initial_memories(seed)
        self.l2.data[:] = l2
        self.tcdm.data[:] = tc
        self.l2.errors.clear()
        self.tcdm.errors.clear()
        self._base_counts = [m.count for m in self.mon.values()]
        self._base_bursts = sum(m.count for m in self.bursts)

    def counts(self) -> list[int]:
        return [m.count - b for m, b in zip(self.mon.values(), self._base_counts)]

    async def wait_idle(self, cycles: int = WAIT_CYCLES) -> None:
        dut = self.dut
        for _ in range(4):
            if int(dut.busy_o.value):
                await First(FallingEdge(dut.busy_o), Timer(cycles * PERIOD_NS, unit="ns"))
                if int(dut.busy_o.value):
                    raise AdapterTimeout(f"cluster_dma: busy_o still 1 after {cycles} "
                                         "cycles: the transfer never finished")
            await ClockCycles(dut.clk_i, 4)          # let the last event pulses out
            if await self.cfg.read(REG["STATUS"]) == 0 and not int(dut.busy_o.value):
                return
        raise AdapterTimeout("cluster_dma: STATUS never read 0 while busy_o was 0")

    async def run(self, program: list, seed: int) -> dict:
        await self.reset(seed)
        from cocotb.simtime import get_sim_time
        t0 = get_sim_time("ns")
        reads: list[int] = []
        events: list[list[int]] = []
        for op in program:
            kind = op[0]
            if kind == "w":
                await self.cfg.write(REG[op[1]], int(op[2]) & 0xFFFFFFFF,
                                     op[3] if len(op) > 3 else 0xF)
            elif kind == "r":
                reads.append(await self.cfg.read(REG[op[1]]))
            elif kind == "wait":
                await self.wait_idle()
            elif kind == "events":
                await ClockCycles(self.dut.clk_i, 4)
                events.append(self.counts())
            else:
                raise ValueError(f"unknown program operation {op!r}")
        await self.wait_idle()
        cycles = round((get_sim_time("ns") - t0) / PERIOD_NS)
        return {"reads": reads, "events": events, "counts": self.counts(),
                "l2": self.l2.data.copy(), "tcdm": self.tcdm.data.copy(), "cycles": cycles,
                "bursts": sum(m.count for m in self.bursts) - self._base_bursts,
                "mem_errors": len(self.l2.errors) + len(self.tcdm.errors)}


def compare(program: list, model: dict, rtl: dict) -> dict:
    """Differences between the model's and the RTL's run of ``program``."""
    labels = [f"#{i} {op[1]}" for i, op in enumerate(program) if op[0] == "r"]
    bad_reads = [(lab, hex(m), hex(r)) for lab, m, r in zip(labels, model["reads"], rtl["reads"])
                 if m != r]
    l2_diff = np.flatnonzero(model["l2"] != rtl["l2"])
    tc_diff = np.flatnonzero(model["tcdm"] != rtl["tcdm"])
    return {
        "reads": len(model["reads"]),
        "read_mismatches": bad_reads[:10],
        "n_read_mismatches": len(bad_reads) + abs(len(model["reads"]) - len(rtl["reads"])),
        "events_model": model["events"], "events_rtl": rtl["events"],
        "counts_model": model["counts"], "counts_rtl": rtl["counts"],
        "l2_mismatches": int(l2_diff.size),
        "first_l2_mismatch": hex(L2_LO + int(l2_diff[0])) if l2_diff.size else None,
        "tcdm_mismatches": int(tc_diff.size),
        "first_tcdm_mismatch": hex(TC.base + int(tc_diff[0])) if tc_diff.size else None,
        "cycles": rtl["cycles"], "mem_errors": rtl["mem_errors"],
        "bursts_model": model["stats"].get("bursts"), "bursts_rtl": rtl["bursts"],
    }


def ok(c: dict) -> bool:
    return (c["n_read_mismatches"] == 0 and c["events_model"] == c["events_rtl"]
            and c["counts_model"] == c["counts_rtl"] and c["l2_mismatches"] == 0
            and c["tcdm_mismatches"] == 0 and c["mem_errors"] == 0
            and (c["bursts_model"] is None or c["bursts_model"] == c["bursts_rtl"]))


def _report(name: str, entry: Any) -> None:
    path = os.environ.get("DMA_TB_REPORT")
    if not path:
        return
    data = json.load(open(path)) if os.path.exists(path) else {}
    data[name] = entry
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=str)


# ============================================================================ programs
def push_ops(l2: int, tc: int, word: int, row_len: int | None = None,
             l2_stride: int | None = None, tc_stride: int | None = None,
             reserve: bool = False) -> list:
    ops = [["w", "TCDM_ADDR", tc], ["w", "L2_ADDR", l2]]
    if row_len is not None:
        ops.append(["w", "ROW_LEN", row_len])
    if l2_stride is not None:
        ops.append(["w", "L2_STRIDE", l2_stride])
    if tc_stride is not None:
        ops.append(["w", "TCDM_STRIDE", tc_stride])
    if reserve:
        ops.append(["r", "CMD"])
    ops += [["w", "CMD", word], ["r", "LAST_ID"]]
    return ops


SUMMARY = (["r", "STATUS"], ["r", "DONE"], ["r", "FREE"], ["r", "ERROR"], ["r", "ERR_ID"],
           ["r", "LAST_ID"])
CLEANUP = (["w", "FREE", 0xFFFFFFFF], ["w", "ERROR", 0x3F], ["r", "FREE"], ["r", "ERROR"])


def random_transfer(rng: np.random.Generator, used: list[tuple[int, int]]) -> dict | None:
    """A valid random transfer whose destination does not overlap ``used`` (the model
    pipelines same-direction transfers, so overlapping destinations would make the final
    contents depend on timing)."""
    for _ in range(50):
        to_tcdm = bool(rng.random() < 0.5)
        if rng.random() < 0.35:
            row = 4 * int(rng.integers(1, 65))
            rows = int(rng.integers(1, 9))
            l2_2d, tc_2d = bool(rng.random() < 0.7), bool(rng.random() < 0.6)
            if not (l2_2d or tc_2d):
                l2_2d = True
            ls = row + 4 * int(rng.integers(0, 80)) if l2_2d else None
            ts = row + 4 * int(rng.integers(0, 40)) if tc_2d else None
            length = row * rows
        else:
            row = rows = None
            ls = ts = None
            length = int(rng.choice([rng.integers(1, 17), rng.integers(17, 400),
                                     rng.integers(400, 3000), rng.integers(3000, 9000)]))
        nrows, rb = (rows, row) if row else (1, length)
        span_l2 = (nrows - 1) * (ls if ls is not None else rb) + rb
        span_tc = (nrows - 1) * (ts if ts is not None else rb) + rb
        if span_l2 > L2_HI - L2_LO or span_tc > TC.size:
            continue
        if rng.random() < 0.3:        # start just below a 4 KiB page (or the private/shared seam)
            page = int(rng.integers(1, (L2_HI - L2_LO) // 4096)) * 4096 + L2_LO
            l2 = min(max(page - int(rng.integers(1, 80)), L2_LO), L2_HI - span_l2)
        else:
            l2 = int(rng.integers(L2_LO, L2_HI - span_l2 + 1))
        tc = int(rng.integers(TC.base, TC.end - span_tc + 1))
        dst = (tc, tc + span_tc) if to_tcdm else (l2, l2 + span_l2)
        if any(dst[0] < hi and lo < dst[1] for lo, hi in used):
            continue
        used.append(dst)
        word = length | (CMD_L2_TO_TCDM if to_tcdm else 0)
        word |= (CMD_L2_2D if ls is not None else 0) | (CMD_TCDM_2D if ts is not None else 0)
        word |= CMD_EVT_EN if rng.random() < 0.5 else 0
        word |= CMD_IRQ_EN if rng.random() < 0.3 else 0
        word |= CMD_AUTO_FREE if rng.random() < 0.5 else 0
        return dict(l2=l2, tc=tc, word=word, row_len=row, l2_stride=ls, tc_stride=ts,
                    bytes=length, two_d=row is not None, to_tcdm=to_tcdm)
    return None


def random_bad(rng: np.random.Generator) -> dict:
    """A command that fails its checks (never moves data)."""
    k = int(rng.integers(0, 5))
    flags = (CMD_IRQ_EN if rng.random() < 0.5 else 0) | (CMD_AUTO_FREE if rng.random() < 0.5 else 0)
    if k == 0:
        return dict(l2=L2.base, tc=TC.base, word=0 | CMD_L2_TO_TCDM | flags)
    if k == 1:
        return dict(l2=L2.end - 10, tc=TC.base, word=64 | CMD_L2_TO_TCDM | flags)
    if k == 2:
        return dict(l2=L2.base, tc=TC.end - 4, word=8 | flags)
    if k == 3:
        return dict(l2=L2.base, tc=TC.base, word=60 | CMD_L2_2D | flags, row_len=16, l2_stride=32)
    return dict(l2=0x1A000000, tc=TC.end + 64, word=32 | flags)


def copy_program(rng: np.random.Generator, batches: int) -> tuple[list, dict]:
    """Batches of random transfers (and some failing pushes), each followed by a wait, a
    read of every status register, the event counts and a clean-up. Within a batch only
    the last push may use AUTO_FREE: an ID that frees itself while later pushes of the
    batch are made would make their IDs (and LAST_ID) depend on the RTL's speed."""
    prog: list = []
    info = {"transfers": 0, "bytes": 0, "two_d": 0, "to_tcdm": 0, "bad": 0}
    for _ in range(batches):
        used: list[tuple[int, int]] = []
        n = int(rng.integers(1, 6))
        for k in range(n):
            if rng.random() < 0.12:
                b = random_bad(rng)
                prog += push_ops(b["l2"], b["tc"], b["word"], b.get("row_len"),
                                 b.get("l2_stride"), b.get("tc_stride"), rng.random() < 0.5)
                prog += [["r", "ERROR"], ["r", "ERR_ID"]]
                info["bad"] += 1
                continue
            t = random_transfer(rng, used)
            if t is None:
                continue
            word = t["word"] if k == n - 1 else t["word"] & ~CMD_AUTO_FREE
            prog += push_ops(t["l2"], t["tc"], word, t["row_len"], t["l2_stride"],
                             t["tc_stride"], bool(rng.random() < 0.5))
            info["transfers"] += 1
            info["bytes"] += t["bytes"]
            info["two_d"] += t["two_d"]
            info["to_tcdm"] += t["to_tcdm"]
        prog += [["wait"], *SUMMARY, ["events"], *CLEANUP]
    return prog, info


def error_programs() -> list[tuple[str, list]]:
    """Every check of the command decoder, the FULL queue, and the ID lifecycle."""
    B = CMD_L2_TO_TCDM | CMD_IRQ_EN
    cases = [  # name, l2, tcdm, word, row_len, l2_stride, tcdm_stride
        ("l2_end", L2.end - 100, TC.base, 200 | B, None, None, None),
        ("tcdm_end", L2.base, TC.end - 100, 200 | B, None, None, None),
        ("rom", MEMORY_MAP["boot_rom"].base, TC.base, 64 | B, None, None, None),
        ("below_l2", L2_LO - 4, TC.base, 8 | B, None, None, None),
        ("below_tcdm", L2.base, TC.base - 1, 8, None, None, None),
        ("both_ranges", L2.end - 4, TC.end - 4, 8 | B, None, None, None),
        ("wrap_32bit", 0xFFFFFF00, TC.base, 0x200 | B, None, None, None),
        ("valid_tcdm_to_l2", L2.base, TC.base, 64 | CMD_IRQ_EN, None, None, None),
        ("zero_len", L2.base, TC.base, 0 | B, None, None, None),
        ("zero_row", L2.base, TC.base, 64 | B | CMD_L2_2D, 0, 32, None),
        ("stride_not_word", L2.base, TC.base, 64 | B | CMD_L2_2D, 16, 18, None),
        ("row_not_word", L2.base, TC.base, 60 | B | CMD_TCDM_2D, 6, None, 12),
        ("len_not_rows", L2.base, TC.base, 60 | B | CMD_L2_2D, 16, 32, None),
        ("len_not_rows_div", L2.base, TC.base, 100 | B | CMD_L2_2D, 12, 12, None),
        ("row_above_len", L2.base, TC.base, 16 | B | CMD_L2_2D, 32, 32, None),
        ("stride_below_row", L2.base, TC.base, 64 | B | CMD_L2_2D, 16, 8, None),
        ("tcdm_stride_below_row", L2.base, TC.base, 64 | B | CMD_TCDM_2D, 16, None, 12),
        ("2d_l2_range", L2.end - 64, TC.base, 64 | B | CMD_L2_2D, 16, 32, None),
        ("2d_huge_stride", L2.base, TC.base, 0x3FFFC | B | CMD_L2_2D, 4, 0xFFFFFFFC, None),
        ("2d_huge_tcdm_stride", L2.base, TC.base, 0x100 | B | CMD_L2_2D | CMD_TCDM_2D, 4, 8,
         0x80000000),
        ("2d_exact_fit", L2.end - (63 * 256 + 16), TC.end - (63 * 64 + 16),
         64 * 16 | B | CMD_L2_2D | CMD_TCDM_2D, 16, 256, 64),
        ("2d_one_byte_over", L2.end - (63 * 256 + 16) + 4, TC.base,
         64 * 16 | B | CMD_L2_2D | CMD_TCDM_2D, 16, 256, 64),
        ("private_to_shared", L2P.end - 32, TC.base, 64 | B, None, None, None),
        ("evt_on_error", L2.end, TC.base, 8 | B | CMD_EVT_EN | CMD_AUTO_FREE, None, None, None),
    ]
    valid = {"valid_tcdm_to_l2", "2d_exact_fit", "private_to_shared"}
    out = []
    for name, l2, tc, word, rl, ls, ts in cases:
        prog = push_ops(l2, tc, word, rl, ls, ts, reserve=name.startswith("2d"))
        # right after the push only what the push itself decides (a valid transfer may or
        # may not have finished yet); everything after the wait
        prog += ([["r", "ERROR"], ["r", "ERR_ID"], ["r", "LAST_ID"]] if name in valid
                 else [*SUMMARY, ["events"]])
        prog += [["wait"], *SUMMARY, ["events"], *CLEANUP, ["events"]]
        out.append((name, prog))

    # the full queue: 16 transfers left DONE (no AUTO_FREE), then a 17th push is dropped
    prog = []
    for i in range(16):
        prog += push_ops(L2.base + 64 * i, TC.base + 64 * i, 64 | CMD_L2_TO_TCDM)
    prog += [["wait"], ["r", "CMD"], *SUMMARY]
    prog += push_ops(L2.base + 0x1000, TC.base + 0x1000, 256 | CMD_L2_TO_TCDM | CMD_IRQ_EN)
    prog += [*SUMMARY, ["events"], ["w", "FREE", 1 << 2], ["r", "CMD"], ["r", "FREE"],
             ["w", "FREE", 0x00F0, 0x1], ["r", "FREE"], ["w", "FREE", 0x0100, 0x2], ["r", "FREE"],
             *CLEANUP, ["events"]]
    out.append(("full_queue", prog))

    # reservations: all 16 reserved -> CMD reads ID_FULL; pushes take the oldest reserved;
    # freeing a reserved ID removes it from the reservation order
    prog = [["r", "CMD"] for _ in range(17)] + [["r", "FREE"], ["w", "FREE", 0b1010_0000]]
    prog += [["r", "CMD"], ["r", "FREE"]]                     # gets 5 (lowest free) back
    prog += push_ops(L2.base, TC.base, 16 | CMD_L2_TO_TCDM)   # takes 0 (oldest)
    prog += push_ops(L2.base + 64, TC.base + 64, 16 | CMD_L2_TO_TCDM)  # takes 1
    prog += [["w", "FREE", 1 << 2], ["r", "FREE"]]            # 2 was reserved: freed
    prog += push_ops(L2.base + 128, TC.base + 128, 16 | CMD_L2_TO_TCDM)  # takes 3
    prog += [["wait"], *SUMMARY, ["events"], *CLEANUP]
    out.append(("reservations", prog))

    # FREE of a busy ID is ignored (a 64 KiB transfer is still running in both)
    prog = push_ops(L2.base, TC.base, 0x10000 | CMD_L2_TO_TCDM | CMD_EVT_EN)
    prog += [["w", "FREE", 1], ["r", "FREE"], ["r", "STATUS"], ["r", "DONE"], ["wait"],
             *SUMMARY, ["events"], ["w", "FREE", 1], ["r", "FREE"]]
    out.append(("free_busy_ignored", prog))
    return out


def register_program(rng: np.random.Generator, steps: int) -> list:
    """Random register traffic: partial writes (merge semantics of CMD/FREE/ERROR),
    read-only writes, reservations, random pushes (mostly failing, some small valid
    ones), FREE masks, error clears."""
    prog: list = []

    def rand_value(name: str) -> int:
        r = rng.random()
        if r < 0.3:
            return int(rng.integers(0, 1 << 32))
        if name in ("TCDM_ADDR",):
            return int(rng.integers(TC.base - 64, TC.end + 64))
        if name == "L2_ADDR":
            return int(rng.integers(L2_LO - 64, L2_HI + 64))
        return int(rng.choice([0, 4, 8, 12, 16, 32, 36, 64, 100, 128, 256, 1000]))

    for _ in range(steps):
        r = rng.random()
        be = int(rng.choice(BE_PATTERNS))
        if r < 0.30:
            name = RW_REGS[int(rng.integers(0, len(RW_REGS)))]
            prog.append(["w", name, rand_value(name), be])
        elif r < 0.50:
            prog.append(["r", str(rng.choice(list(REG)))])
        elif r < 0.58:
            prog.append(["w", "FREE", int(rng.integers(0, 1 << 32)), be])
        elif r < 0.64:
            prog.append(["w", "ERROR", int(rng.integers(0, 1 << 32)), be])
        elif r < 0.70:
            prog.append(["w", str(rng.choice(RO_REGS)), int(rng.integers(0, 1 << 32)), be])
        elif r < 0.80:
            prog.append(["r", "CMD"])
        else:
            # a push with a random small word: LEN < 2048 whatever bytes merge in
            word = int(rng.integers(0, 2048)) | (int(rng.integers(0, 64)) << 18)
            prog += [["w", "CMD", word, be], ["wait"], ["r", "ERROR"], ["r", "ERR_ID"],
                     ["r", "LAST_ID"], ["r", "DONE"], ["events"]]
    prog += [["wait"], *[["r", n] for n in REG if n != "CMD"], ["events"]]
    return prog


# ============================================================================ tests
async def _run_programs(dut, programs: list[tuple[str, list, int, int | None]]) -> list[dict]:
    bench = Bench(dut)
    out = []
    for name, prog, seed, bp in programs:
        bench.backpressure(bp)
        model = run_model(prog, seed)
        stalls0 = bench.tcdm_port.stall_cycles
        rtl = await bench.run(prog, seed)
        c = compare(prog, model, rtl)
        c.update(name=name, ok=ok(c), backpressure=bp is not None,
                 tcdm_stalls=bench.tcdm_port.stall_cycles - stalls0,
                 model_transfers=model["stats"].get("transfers"),
                 model_failed=model["stats"].get("failed"),
                 model_bursts=model["stats"].get("bursts"))
        out.append(c)
    bench.backpressure(None)
    return out


@cocotb.test()
async def copies(dut):
    """Random 1D/2D copies, both directions, with and without back-pressure."""
    n = int(os.environ.get("DMA_TB_COPY_PROGRAMS", "24"))
    seed0 = int(os.environ.get("DMA_TB_SEED", "1"))
    progs, infos = [], []
    for k in range(n):
        rng = np.random.default_rng(seed0 * 1000 + k)
        prog, info = copy_program(rng, batches=4)
        progs.append((f"copy{k}", prog, seed0 * 1000 + k, (seed0 * 1000 + k) if k % 2 else None))
        infos.append(info)
    res = await _run_programs(dut, progs)
    for r, info in zip(res, infos):
        r.update(info)
    _report("copies", res)
    bad = [r for r in res if not r["ok"]]
    assert not bad, f"RTL != model: {bad[:2]}"


@cocotb.test()
async def errors(dut):
    """Every decoder check, the full queue, reservations, FREE of a busy ID."""
    progs = [(name, prog, 50 + i, (50 + i) if i % 3 == 0 else None)
             for i, (name, prog) in enumerate(error_programs())]
    res = await _run_programs(dut, progs)
    _report("errors", res)
    bad = [r for r in res if not r["ok"]]
    assert not bad, f"RTL != model: {bad[:2]}"


@cocotb.test()
async def registers(dut):
    """Random register traffic; every read, event count and memory byte identical."""
    steps = int(os.environ.get("DMA_TB_REG_STEPS", "500"))
    seed0 = int(os.environ.get("DMA_TB_SEED", "1"))
    progs = [(f"regs{k}", register_program(np.random.default_rng(seed0 * 77 + k), steps),
              seed0 * 77 + k, None if k == 0 else seed0 * 77 + k) for k in range(3)]
    res = await _run_programs(dut, progs)
    _report("registers", res)
    bad = [r for r in res if not r["ok"]]
    assert not bad, f"RTL != model: {bad[:2]}"


@cocotb.test()
async def bus_error(dut):
    """An AXI error response mid-transfer: BUS, the rest skipped, the TCDM untouched."""
    prog = push_ops(L2.base, TC.base, 8192 | CMD_L2_TO_TCDM | CMD_IRQ_EN)
    prog += [["wait"], *SUMMARY, ["events"]]
    prog += push_ops(L2.base, TC.base, 64 | CMD_EVT_EN)
    prog += [["wait"], *SUMMARY, ["events"], *CLEANUP]
    bench = Bench(dut)
    seed = 7
    model = run_model(prog, seed, bus_error=True)
    bench.l2_backend.fail = True
    rtl = await bench.run(prog, seed)
    c = compare(prog, model, rtl)
    c["bursts_model"] = None   # the model had up to 8 bursts in flight when the error came
    l2_init, _ = initial_memories(seed)
    c["l2_mismatches"] = int(np.count_nonzero(rtl["l2"] != l2_init))   # model has no L2 here
    c["first_l2_mismatch"] = None
    c.update(name="bus_error", ok=ok(c), error=model["reads"][4])
    _report("bus_error", [c])
    assert c["ok"], c
    assert model["reads"][4] == int(DmaError.BUS)  # LAST_ID, STATUS, DONE, FREE, ERROR


@cocotb.test()
async def never_answers(dut):
    """An L2 that never accepts the read burst: bounded wait, a clear timeout message."""
    bench = Bench(dut)
    await bench.reset(3)
    bench.axi.slave.read_if.ar_channel.set_pause_generator(iter(lambda: True, None))
    for op in push_ops(L2.base, TC.base, 64 | CMD_L2_TO_TCDM):
        if op[0] == "w":
            await bench.cfg.write(REG[op[1]], op[2])
    dut_busy = int(dut.busy_o.value)
    try:
        await bench.wait_idle(cycles=2000)
    except AdapterTimeout as e:
        _report("never_answers", {"busy": dut_busy, "message": str(e)})
        return
    raise AssertionError("no timeout raised")


#: the DMA's port map: only standard adapter kinds, so the block needs no Python of its own
PORT_MAP = {
    "top": "cluster_dma",
    "clock": {"port": "clk_i", "period_ns": PERIOD_NS},
    "reset": {"port": "rst_ni", "active_low": True, "cycles": 3},
    "adapters": {
        "cfg": {"kind": "hwpe_periph", "prefix": "periph_", "bind": "cluster.periph"},
        "axi": {"kind": "axi_master", "prefix": "m_axi_", "data_width": 64, "addr_width": 32,
                "bind": "cluster.xbar"},
        "tcdm": {"kind": "tcdm_master", "prefix": "tcdm_", "ports": 2, "contiguous": True,
                 "bind": "cluster.tcdm.dma0"},
        "evt": {"kind": "irq_out", "port": "evt_o", "bind": "cluster.event_unit.dma_evt"},
        "irq": {"kind": "irq_out", "port": "irq_o", "bind": "soc.fc_irq.dma"},
        "err": {"kind": "irq_out", "port": "err_o"},
    },
}


@cocotb.test()
async def port_map(dut):
    """Adapters from the port map alone (cosim.rtl.adapters.factory): a 2D L2 -> TCDM and
    a 1D TCDM -> L2 transfer equal the model's."""
    from cosim.rtl.adapters.factory import bring_up, build_adapters
    from cosim.rtl.portmap import PortMap, ports_from_dut
    rpm = PortMap.from_dict(PORT_MAP, where="cluster_dma_tb.PORT_MAP").resolve(ports_from_dut(dut))
    seed = 11
    l2, tc = initial_memories(seed)
    mems = {"axi": ByteMemory(L2_HI - L2_LO, base=L2_LO, data=l2.copy()),
            "tcdm": ByteMemory(TC.size, base=TC.base, data=tc.copy())}
    ad = build_adapters(dut, rpm, memories=mems)
    await bring_up(dut, rpm)
    prog = push_ops(L2.base + 0x123, TC.base + 0x40, 12 * 40 | CMD_L2_TO_TCDM | CMD_L2_2D
                    | CMD_EVT_EN, 40, 100)
    prog += push_ops(L2.base + 0x2FFD, TC.base + 0x1001, 3000 | CMD_IRQ_EN | CMD_AUTO_FREE)
    model = run_model(prog + [["wait"]], seed)
    for op in prog:
        if op[0] == "w":
            await ad["cfg"].write(REG[op[1]], op[2])
    await ad["evt"].wait(dut.clk_i, timeout_cycles=20_000)
    if ad["irq"].count == 0:
        await ad["irq"].wait(dut.clk_i, timeout_cycles=20_000)
    await ClockCycles(dut.clk_i, 4)
    assert (mems["axi"].data == model["l2"]).all() and (mems["tcdm"].data == model["tcdm"]).all()
    assert [ad["evt"].count, ad["irq"].count, ad["err"].count] == model["counts"] == [1, 1, 0]
    _report("port_map", {"ok": True, "tcdm_accesses": ad["tcdm"].accesses})
