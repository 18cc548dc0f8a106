"""The assembled memory subsystem: parameter paths, topology, paths across the crossing,
the partition boundary, an emulated process cut, and the memory-map document."""
from __future__ import annotations

from pathlib import Path

import msgpack
import numpy as np
import pytest

from components.cluster_dma import CMD_AUTO_FREE, CMD_L2_TO_TCDM, REG, DmaCommand
from components.marsellus.facts import MEMORY_MAP
from components.marsellus.memory_system import (PARAMS, build_memory_system, memory_map_table,
                                                 split_params)
from tlm import (READ, WRITE, Clock, GenericPayload, InitiatorSocket, Module, Simulator, Status,
                 TargetSocket)
from tlm.params import ParameterError

L2, TC, ROM, DMA = MEMORY_MAP["l2"], MEMORY_MAP["tcdm"], MEMORY_MAP["boot_rom"], MEMORY_MAP["cluster_dma"]
DOCS = Path(__file__).resolve().parents[1] / "docs"


class Master(Module):
    def __init__(self, parent, name, target):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")
        self.socket.bind(target)

    async def access(self, cmd, address, data):
        """One access, waiting out the annotated delay; returns (payload, elapsed ps)."""
        t0 = self.sim.now
        p = GenericPayload(cmd, address, data, len(data), initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        await self.sim.wait(d)
        return p, self.sim.now - t0


def run(sim, coro):
    out = []

    async def go():
        out.append(await coro)
    sim.spawn(go(), "go")
    sim.run()
    return out[0]


# ----- parameters -----------------------------------------------------------------------------------
def test_paths_and_defaults():
    sim = Simulator()
    ms = build_memory_system(sim)
    for path in ("soc.l2", "soc.l2_private", "soc.rom", "soc.xbar", "cdc", "cluster.xbar",
                 "cluster.periph", "cluster.tcdm", "cluster.dma", "cluster.dma.regs"):
        assert path in sim.modules, path
    assert ms.tcdm.params.mode == "burst" and ms.cdc.side_of == {"a": "soc", "b": "cluster"}
    assert ms.l2.size == L2.size and ms.rom.read_only and ms.tcdm.size == TC.size
    assert set(ms.params) == set(PARAMS)


def test_both_override_forms_and_clock_params():
    sim = Simulator()
    ms = build_memory_system(sim, {"cluster.tcdm": {"mode": "word", "latency": 1},
                                   "cluster.dma.queue_depth": 8,
                                   "cluster.clock.freq": "250 MHz", "soc.clock": {"freq": 2e8}})
    assert ms.tcdm.params.mode == "word" and ms.tcdm.params.latency == 1
    assert ms.dma.params.queue_depth == 8
    assert ms.cluster_clock.freq_hz == 250e6 and ms.soc_clock.freq_hz == 200e6


@pytest.mark.parametrize("params,match", [
    ({"cluster.tcmd": {"mode": "word"}}, "did you mean 'cluster.tcdm'"),
    ({"cluster.tcdm.mdoe": "word"}, "cluster.tcdm.mdoe.*did you mean 'mode'"),
    ({"cluster.tcdm.mode": "fast"}, "cluster.tcdm.mode"),
    ({"soc.l2.banks": 0}, "soc.l2"),
    ({"cluster.dma": 3}, "expected a mapping"),
    ({"cdc.cluster_fmax": "100 MHz"}, "cdc.cluster_fmax"),   # the 400 MHz clock is faster
])
def test_bad_parameters_name_the_path(params, match):
    with pytest.raises(ParameterError, match=match):
        build_memory_system(Simulator(), params)


def test_non_strict_ignores_other_components_and_external_clocks():
    groups = split_params({"cluster.rbe.model": "rtl", "cluster.tcdm.mode": "word"}, strict=False)
    assert groups == {"cluster.tcdm": {"mode": "word"}}
    sim = Simulator()
    clk = Clock(sim, "fll.cluster", 300e6)
    ms = build_memory_system(sim, {"cluster.rbe": {"model": "rtl"}}, cluster_clock=clk,
                             strict=False)
    assert ms.cluster_clock is clk and ms.tcdm.clock is clk and ms.dma.clock is clk
    with pytest.raises(ParameterError, match="cluster.clock"):
        build_memory_system(Simulator(), {"cluster.clock.freq": 1e8},
                            cluster_clock=Clock(sim, "x", 1e8))


# ----- topology -------------------------------------------------------------------------------------
def test_only_the_crossing_joins_the_domains():
    """Every binding stays inside soc.* or cluster.*, except through the cdc link: the
    partitioner can cut there and nowhere else."""
    sim = Simulator()
    build_memory_system(sim)
    for s in sim.sockets:
        if isinstance(s, InitiatorSocket) and s.target is not None:
            a = s.owner.path.split(".")[0]
            b = s.target.owner.path.split(".")[0]
            assert a == b or "cdc" in (a, b), (s.path, s.target.path)
    assert [lk.path for lk in sim.links] == ["cdc"]


def test_soc_initiator_reaches_tcdm_and_dma_registers_through_the_crossing():
    sim = Simulator()
    ms = build_memory_system(sim, {"cluster.tcdm.latency": 2})
    fc = Master(ms.soc, "fc", ms.soc_xbar.target_socket)
    out = {}

    async def go():
        p, out["wr"] = await fc.access(WRITE, TC.base + 0x40, bytearray(b"ping"))
        q, out["rd"] = await fc.access(READ, TC.base + 0x40, bytearray(4))
        out["data"] = bytes(q.data)
        # the SOC core programs the cluster DMA: L2 -> TCDM, auto-freed
        ms.l2.load(L2.base + 0x100, b"from L2 via the cluster DMA!")
        for reg, v in (("TCDM_ADDR", TC.base + 0x200), ("L2_ADDR", L2.base + 0x100)):
            await fc.access(WRITE, DMA.base + REG[reg], bytearray(v.to_bytes(4, "little")))
        await fc.access(WRITE, DMA.base + REG["CMD"],
                        bytearray((28 | CMD_L2_TO_TCDM | CMD_AUTO_FREE).to_bytes(4, "little")))
        while True:
            s, _ = await fc.access(READ, DMA.base + REG["STATUS"], bytearray(4))
            if not int.from_bytes(s.data, "little"):
                break
    sim.spawn(go(), "go")
    sim.run()
    ts, tc = ms.soc_clock.period, ms.cluster_clock.period
    lat = ms.cdc.current_latency()
    # soc.xbar (latency + 1 beat) -> crossing -> cluster.xbar (latency) -> TCDM soc port
    # (latency 2 + 1 beat, covered by the beat already counted) -> crossing back
    assert out["wr"] == out["rd"] == 2 * ts + ts + lat + tc + 2 * tc + lat
    assert out["data"] == b"ping"
    assert ms.tcdm.dump(TC.base + 0x200, 28) == b"from L2 via the cluster DMA!"
    assert not sim.errors


def test_cluster_initiator_reaches_rom_and_private_l2():
    sim = Simulator()
    ms = build_memory_system(sim)
    ms.load(ROM.base, b"boot")
    ms.load(MEMORY_MAP["l2_private"].base + 8, b"priv")
    core = Master(ms.cluster, "core0", ms.cluster_xbar.target_socket)
    out = []

    async def go():
        for a in (ROM.base, MEMORY_MAP["l2_private"].base + 8):
            p, _ = await core.access(READ, a, bytearray(4))
            out.append(bytes(p.data))
        p, _ = await core.access(WRITE, ROM.base, bytearray(b"xxxx"))
        out.append(p.status)
    sim.spawn(go(), "go")
    sim.run()
    assert out == [b"boot", b"priv", Status.COMMAND_ERROR]
    assert ms.dump(ROM.base, 4) == b"boot"
    assert sim.errors[-1].initiator == "cluster.core0" and sim.errors[-1].where == "soc.rom"


def test_unmapped_address_across_the_crossing_is_an_error_naming_the_initiator():
    sim = Simulator()
    ms = build_memory_system(sim)
    core = Master(ms.cluster, "core3", ms.cluster_xbar.target_socket)
    gpio = MEMORY_MAP["gpio"].base            # in the SOC window, nothing mapped there yet
    p, _ = run(sim, core.access(READ, gpio, bytearray(4)))
    assert p.status == Status.ADDRESS_ERROR
    e = sim.errors[-1]
    assert (e.initiator, e.where, e.address) == ("cluster.core3", "soc.xbar", gpio)


def test_soc_peripherals_map_on_the_crossbar():
    """How another block attaches: map its region on soc.xbar by name."""
    sim = Simulator()
    ms = build_memory_system(sim)

    class Stdout(Module):
        def __init__(self, parent, name):
            super().__init__(parent, name)
            self.text = bytearray()
            self.socket = TargetSocket(self, "socket", b_transport=self.b_transport)

        async def b_transport(self, p, delay):
            self.text += bytes(p.data[:p.length])
            p.status = Status.OK
            return delay
    so = Stdout(ms.soc, "stdout")
    ms.soc_xbar.map_region(MEMORY_MAP["stdout"], so.socket)
    core = Master(ms.cluster, "core0", ms.cluster_xbar.target_socket)
    run(sim, core.access(WRITE, MEMORY_MAP["stdout"].base, bytearray(b"hi")))
    assert so.text == b"hi"


# ----- partition invariance -------------------------------------------------------------------------
def scenario(cut: bool, mode: str):
    sim = Simulator(seed=9)
    ms = build_memory_system(sim, {"cluster.tcdm.mode": mode, "cluster.clock.freq": 350e6})
    if cut:
        def remote(link, from_side, t, key, channel, message):
            msg = msgpack.unpackb(msgpack.packb(message, use_bin_type=True), raw=False)
            sim.post(t, tuple(key), link.deliver, channel, msg)
        ms.cdc.remote = remote
    rng = np.random.default_rng(0)
    ms.l2.array[:] = rng.integers(0, 256, ms.l2.size, dtype=np.uint8)
    fc = Master(ms.soc, "fc", ms.soc_xbar.target_socket)
    log = []

    async def dma():
        xs = [ms.dma.submit(DmaCommand(L2.base + 0x1000 * i, TC.base + 0x3000 * i, 5000, True))
              for i in range(3)]
        xs.append(ms.dma.submit(DmaCommand(L2.base + 0x80000, TC.base + 8, 64 * 20, False,
                                           row_len=64, l2_stride=200)))
        for x in xs:
            await x
            log.append(("dma", x.id, x.end_time, int(x.error)))

    async def soc():
        for i in range(6):
            p, e = await fc.access(WRITE, TC.base + 0x10000 + 4 * i, bytearray(b"abcd"))
            log.append(("fc", sim.now, e))
    sim.spawn(dma(), "dma")
    sim.spawn(soc(), "soc")
    sim.run()
    stats = sim.stats.as_dict()
    return (log, sim.now, ms.l2.array.tobytes(), ms.tcdm.array.tobytes(), stats["cluster.dma"],
            stats["cluster.tcdm"])


@pytest.mark.parametrize("mode", ["burst", "word"])
def test_cut_crossing_gives_identical_results(mode):
    assert scenario(False, mode) == scenario(True, mode)


# ----- documents ------------------------------------------------------------------------------------
def test_memory_map_document_is_generated_from_the_yaml():
    text = (DOCS / "memory_map.md").read_text()
    assert memory_map_table() in text, "regenerate: python -m components.marsellus.memory_system"
    assert "memory_map.yaml" in text


def test_memory_at_and_loaders():
    sim = Simulator()
    ms = build_memory_system(sim)
    assert ms.memory_at(L2.base) is ms.l2 and ms.memory_at(TC.end - 1) is ms.tcdm
    with pytest.raises(ValueError):
        ms.memory_at(L2.end - 2, 4)
    ms.load(TC.base + 3, b"xyz")
    assert ms.dump(TC.base + 3, 3) == b"xyz"
