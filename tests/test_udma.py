"""uDMA HyperRAM channel: data, timing (docs/hyperram_udma.md formula), registers, errors."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.hyperram import HyperRam, HyperRamParams
from components.marsellus.facts import MEMORY_MAP
from components.udma import (CFG_CLR, CFG_EN, CFG_PENDING, ERR_BUS, ERR_CFG,
                             ERR_EXT_RANGE, ERR_L2_RANGE, ERR_QUEUE_FULL, ERR_ZERO_LEN,
                             REGISTER_MAP, Udma, UdmaParams)
from tlm import (OK, READ, WRITE, Clock, GenericPayload, InitiatorSocket, Memory, Module,
                 Router, SimulationError, Simulator)
from tlm.params import ParameterError, resolve
from tlm.units import NS, US, period_ps
from marsellus_regions import UDMA_ARGS  # noqa: E402

L2_LO = MEMORY_MAP["l2_private"].base
L2_HI = MEMORY_MAP["l2"].end
UDMA = MEMORY_MAP["udma"].base
PERIPH_HZ = 250e6
L2_LATENCY = 3 * NS     # plain tlm.Memory latency (ps) standing in for the real L2


class Cpu(Module):
    """A bus master that reads/writes registers like firmware (waits each access's delay)."""

    def __init__(self, parent, name, xbar: Router):
        super().__init__(parent, name)
        self.sock = InitiatorSocket(self, "bus")
        self.sock.bind(xbar.target_socket)

    async def write(self, addr: int, value: int, size: int = 4) -> None:
        p = GenericPayload(WRITE, addr, bytearray(value.to_bytes(size, "little")), size,
                           initiator=self.path)
        d = await self.sock.b_transport(p, 0)
        assert p.status == OK, p
        await self.sim.wait(d)

    async def read(self, addr: int, size: int = 4) -> int:
        p = GenericPayload(READ, addr, bytearray(size), size, initiator=self.path)
        d = await self.sock.b_transport(p, 0)
        assert p.status == OK, p
        await self.sim.wait(d)
        return int.from_bytes(p.data, "little")


@dataclass
class Platform:
    sim: Simulator
    clk: Clock
    l2: Memory
    hyperram: HyperRam
    udma: Udma
    cpu: Cpu

    def run(self, coro) -> None:
        self.sim.spawn(coro, "test")
        self.sim.run()


def build(hyper: dict | None = None, udma: dict | None = None, l2_size: int | None = None,
          periph_hz: float = PERIPH_HZ) -> Platform:
    sim = Simulator(seed=1)
    clk = Clock(sim, "soc.periph_clk", periph_hz)
    xbar = Router(sim, "xbar")
    size = l2_size if l2_size is not None else L2_HI - L2_LO
    l2 = Memory(sim, "l2", size, latency=L2_LATENCY)
    xbar.map(L2_LO, size, l2.socket)
    hparams = resolve(HyperRamParams, hyper, "hyperram")
    hr = HyperRam(sim, "hyperram", hparams)
    u = Udma(sim, "udma", clock=clk, params=udma, hyperram=hparams, **UDMA_ARGS)
    u.l2_socket.bind(xbar.target_socket)
    u.connect(hr.socket)
    xbar.map(UDMA, MEMORY_MAP["udma"].size, u.target_socket)
    cpu = Cpu(sim, "cpu", xbar)
    return Platform(sim, clk, l2, hr, u, cpu)


# ----- the documented timing formula, computed here from the parameters ---------------------------
def plan(ext: int, size: int, max_burst: int, boundary: int) -> list[tuple[int, int]]:
    out, a, end = [], ext, ext + size
    while a < end:
        n = min(max_burst, end - a)
        if boundary:
            n = min(n, (a // boundary + 1) * boundary - a)
        out.append((a, n))
        a += n
    return out


def burst_ps(hp: HyperRamParams, a: int, n: int, doubled: bool) -> int:
    rows = (a + n - 1) // hp.row_bytes - a // hp.row_bytes
    clocks = (hp.ca_clocks + hp.initial_latency * (2 if doubled else 1)
              + math.ceil((a % 2 + n) / 2) + hp.row_cross_clocks * rows)
    return clocks * period_ps(hp.freq_hz)


def expected_duration(direction: str, ext: int, size: int, hp: HyperRamParams,
                      up: UdmaParams, max_burst: int | None = None,
                      boundary: int | None = None, periph_hz: float = PERIPH_HZ) -> int:
    """Fixed latency (always doubled), no pipeline bubbles:
    TX = setup + d(first) + L + sum(T_i) + (N-1) tCSHI + L
    RX = setup + L + sum(T_i) + (N-1) tCSHI + L + d(last)."""
    P = period_ps(periph_hz)
    mb = max_burst if max_burst is not None else (up.max_burst or hp.max_burst_bytes())
    bursts = plan(ext, size, mb, up.burst_boundary if boundary is None else boundary)
    d = lambda n: math.ceil(n / up.l2_width) * P + L2_LATENCY  # noqa: E731
    L = up.link_latency
    bus = sum(burst_ps(hp, a, n, True) for a, n in bursts)
    bus += (len(bursts) - 1) * hp.cs_high_clocks * period_ps(hp.freq_hz)
    l2 = d(bursts[0][1]) if direction == "tx" else d(bursts[-1][1])
    return up.setup_cycles * P + l2 + 2 * L + bus


def pipeline_end(direction: str, t0: int, ext: int, size: int, hp: HyperRamParams,
                 up: UdmaParams, periph_hz: float) -> int:
    """The exact recurrence of docs/hyperram_udma.md (fixed latency, device idle at t0):
    TX: R_i = max(D_(i-1), B_(i-W)), D_i = R_i + d_i, S_i = max(D_i + L, F_(i-1) + cs),
        F_i = S_i + T_i, B_i = F_i + L; end = B_(N-1).
    RX: Q_i = t0' (i < W) or E_(i-W), S_i = max(Q_i + L, F_(i-1) + cs), B_i = F_i + L,
        E_i = max(B_i, E_(i-1)) + d_i; end = E_(N-1)."""
    P = period_ps(periph_hz)
    L, W = up.link_latency, up.max_outstanding
    cs = hp.cs_high_clocks * period_ps(hp.freq_hz)
    bursts = plan(ext, size, up.max_burst or hp.max_burst_bytes(), up.burst_boundary)
    d = [math.ceil(n / up.l2_width) * P + L2_LATENCY for _, n in bursts]
    T = [burst_ps(hp, a, n, True) for a, n in bursts]
    start = t0 + up.setup_cycles * P
    F, B, E = [], [], []
    prev_f = None
    D_prev = 0  # the previous TX burst's L2 read end (set at i == 0 before use)
    for i in range(len(bursts)):
        if direction == "tx":
            r = start if i == 0 else max(D_prev, B[i - W] if i >= W else 0)
            D_prev = r + d[i]
            arrive = D_prev + L
        else:
            arrive = (start if i < W else E[i - W]) + L
        s = arrive if prev_f is None else max(arrive, prev_f + cs)
        prev_f = s + T[i]
        F.append(prev_f)
        B.append(prev_f + L)
        if direction == "rx":
            E.append(max(B[i], E[i - 1] if i else 0) + d[i])
    return B[-1] if direction == "tx" else E[-1]


@settings(max_examples=60, deadline=None)
@given(direction=st.sampled_from(["tx", "rx"]), ext=st.integers(0, 5000),
       size=st.integers(1, 5000), periph_mhz=st.sampled_from([20, 50, 250, 400]),
       window=st.integers(1, 3), link_ns=st.sampled_from([1, 12, 200]),
       freq=st.sampled_from(["100 MHz", "166 MHz", "200 MHz"]))
def test_transfer_time_matches_the_pipeline_recurrence(direction, ext, size, periph_mhz,
                                                       window, link_ns, freq):
    # covers the cases where the pipeline drains (tiny bursts, slow L2 side, long links)
    pf = build(hyper={"freq_hz": freq}, periph_hz=periph_mhz * 1e6,
               udma={"max_outstanding": window, "link_latency": link_ns * NS})
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, ext, size, direction)

    pf.run(main())
    job = out["job"]
    assert job.t_end == pipeline_end(direction, job.t_start, ext, size, pf.hyperram.params,
                                     pf.udma.params, periph_mhz * 1e6)


def test_a_tiny_first_burst_drains_the_tx_pipeline():
    # 2 bytes below a 1 KiB boundary, then a full burst whose L2 fetch (64 cycles at 20 MHz
    # = 3.2 us) outlasts the tiny burst on the bus: the closed form is then a lower bound
    pf = build(periph_hz=20e6)
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 1022, 2050, "tx")

    pf.run(main())
    hp, up = pf.hyperram.params, pf.udma.params
    job = out["job"]
    closed = expected_duration("tx", 1022, 2050, hp, up, periph_hz=20e6)
    assert job.duration > closed
    assert job.t_end == pipeline_end("tx", job.t_start, 1022, 2050, hp, up, 20e6)


# ----- data --------------------------------------------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(1, 6000), l2_off=st.integers(0, 20000), ext_off=st.integers(0, 9000),
       rx_l2_off=st.integers(0, 20000), max_burst=st.sampled_from([0, 2, 64, 250, 1024]),
       boundary=st.sampled_from([0, 16, 256, 1024]))
def test_data_roundtrip_matches_numpy(size, l2_off, ext_off, rx_l2_off, max_burst, boundary):
    pf = build(udma={"max_burst": max_burst, "burst_boundary": boundary})
    rng = np.random.default_rng(size + l2_off)
    l2_init = rng.integers(0, 256, pf.l2.size, dtype=np.uint8)
    hr_init = rng.integers(0, 256, 16384, dtype=np.uint8)
    pf.l2.load(0, l2_init)
    pf.hyperram.load(0, hr_init)

    async def main():
        await pf.udma.transfer(L2_LO + l2_off, ext_off, size, "tx")
        await pf.udma.transfer(L2_LO + rx_l2_off, ext_off, size, "rx")

    pf.run(main())
    exp_hr = hr_init.copy()
    exp_hr[ext_off:ext_off + size] = l2_init[l2_off:l2_off + size]
    exp_l2 = l2_init.copy()
    exp_l2[rx_l2_off:rx_l2_off + size] = exp_hr[ext_off:ext_off + size]
    np.testing.assert_array_equal(pf.hyperram.array[:16384], exp_hr)
    assert not pf.hyperram.array[16384:].any()
    np.testing.assert_array_equal(pf.l2.array, exp_l2)
    assert not pf.sim.errors


def test_concurrent_rx_and_tx_share_the_bus_correctly():
    pf = build()
    src = np.arange(8192, dtype=np.uint8) * 7
    pf.l2.load(0, src)
    pf.hyperram.load(100_000, src[::-1].copy())

    async def main():
        tx = pf.udma.start("tx", L2_LO, 0, 8192)
        rx = pf.udma.start("rx", L2_LO + 65536, 100_000, 8192)
        await pf.sim.all_of(tx.done, rx.done)
        assert tx.ok and rx.ok

    pf.run(main())
    np.testing.assert_array_equal(pf.hyperram.array[:8192], src)
    np.testing.assert_array_equal(pf.l2.array[65536:65536 + 8192], src[::-1])


# ----- timing --------------------------------------------------------------------
@pytest.mark.parametrize("direction", ["tx", "rx"])
@pytest.mark.parametrize("ext,size", [(0, 1024), (0, 64 * 1024), (1, 3001), (1000, 50), (4095, 2)])
def test_transfer_time_matches_formula(direction, ext, size):
    pf = build()
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO + 32, ext, size, direction)

    pf.run(main())
    job = out["job"]
    exp = expected_duration(direction, ext, size, pf.hyperram.params, pf.udma.params)
    assert job.duration == exp
    assert job.bursts == len(plan(ext, size, pf.hyperram.params.max_burst_bytes(), 1024))


def test_bursts_split_at_tcsm_and_boundary_limits():
    # at 100 MHz tCSM = 4 us allows 400 clocks: 3 + 12 + 1 + n/2 <= 400 -> 768 bytes
    pf = build(hyper={"freq_hz": "100 MHz"})
    hp = pf.hyperram.params
    avail = hp.t_csm // period_ps(hp.freq_hz)
    assert hp.max_burst_bytes() == 2 * (avail - hp.ca_clocks - 2 * hp.initial_latency - 1)
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 512, 4096, "tx")

    pf.run(main())
    bursts = plan(512, 4096, hp.max_burst_bytes(), 1024)
    assert [n for _, n in bursts][:3] == [512, 768, 256]
    assert out["job"].bursts == len(bursts) == pf.hyperram.bursts
    assert out["job"].duration == expected_duration("tx", 512, 4096, hp, pf.udma.params)
    # every burst stayed within tCSM
    assert pf.hyperram.busy_ps <= len(bursts) * hp.t_csm


def test_max_burst_register_changes_the_split_and_the_time():
    pf = build()
    out = {}

    async def main():
        await pf.cpu.write(UDMA + REGISTER_MAP["HYPER_MAX_BURST"], 128)
        await pf.cpu.write(UDMA + REGISTER_MAP["HYPER_BURST_BOUNDARY"], 0)
        out["job"] = await pf.udma.transfer(L2_LO, 3, 1000, "rx")

    pf.run(main())
    assert out["job"].bursts == 8
    assert out["job"].duration == expected_duration(
        "rx", 3, 1000, pf.hyperram.params, pf.udma.params, max_burst=128, boundary=0)


def test_row_crossing_penalty_when_bursts_may_cross_rows():
    pf = build(hyper={"row_cross_clocks": 4}, udma={"burst_boundary": 0, "max_burst": 1000})
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 900, 2000, "tx")

    pf.run(main())
    # bursts [900,1900) crosses row 1024, [1900,2900) crosses row 2048
    assert out["job"].duration == expected_duration(
        "tx", 900, 2000, pf.hyperram.params, pf.udma.params)
    clocks_without = expected_duration("tx", 900, 2000, HyperRamParams(), pf.udma.params)
    assert out["job"].duration - clocks_without == 2 * 4 * period_ps(166e6)


def test_variable_latency_doubles_only_on_refresh_collision():
    refresh = 20 * US
    pf = build(hyper={"latency_mode": "variable", "refresh_interval": refresh})
    hp, up = pf.hyperram.params, pf.udma.params
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 0, 16 * 1024, "rx")   # ~50 us: 2 refreshes

    pf.run(main())
    job = out["job"]
    # the documented rule, step by step: bursts back to back; a refresh due while CS# is low
    # starts when CS# rises; a burst starting during a refresh gets the doubled latency
    hclk = period_ps(hp.freq_hz)
    t_rfc = hp.initial_latency * hclk
    P = period_ps(PERIPH_HZ)
    start = job.t_start + up.setup_cycles * P + up.link_latency
    next_r, r_end, prev_end, doubled = refresh, 0, 0, 0
    for a, n in plan(0, 16 * 1024, hp.max_burst_bytes(), up.burst_boundary):
        while next_r <= start:
            r_end = max(next_r, prev_end, r_end) + t_rfc
            next_r += refresh
        dbl = start < r_end
        doubled += dbl
        prev_end = start + burst_ps(hp, a, n, dbl)
        start = prev_end + hp.cs_high_clocks * hclk
    end = prev_end + up.link_latency + math.ceil(n / up.l2_width) * P + L2_LATENCY
    assert doubled == 2 == pf.hyperram.doubled_latency
    assert job.t_end == end
    assert pf.hyperram.latency_cycles == 16 * hp.initial_latency + doubled * hp.initial_latency


@pytest.mark.parametrize("direction", ["tx", "rx"])
def test_without_pipelining_each_burst_pays_the_link_round_trip(direction):
    # max_outstanding = 1: burst i+1 waits for burst i's response, so per burst
    # d(n_i) + 2 L + T_i, instead of one L2 access and one round trip for the whole transfer
    pf = build(udma={"max_outstanding": 1})
    hp, up = pf.hyperram.params, pf.udma.params
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 100, 5000, direction)

    pf.run(main())
    P = period_ps(PERIPH_HZ)
    exp = up.setup_cycles * P + sum(
        math.ceil(n / up.l2_width) * P + L2_LATENCY + 2 * up.link_latency + burst_ps(hp, a, n, True)
        for a, n in plan(100, 5000, hp.max_burst_bytes(), up.burst_boundary))
    assert out["job"].duration == exp
    assert exp > expected_duration(direction, 100, 5000, hp, up)


def test_hyperram_frequency_scales_throughput():
    size = 256 * 1024
    durations = {}
    for mhz in (100, 200):
        pf = build(hyper={"freq_hz": f"{mhz} MHz", "initial_latency": 6})
        out = {}

        async def main(pf=pf, out=out):
            out["job"] = await pf.udma.transfer(L2_LO, 0, size, "rx")

        pf.run(main())
        durations[mhz] = out["job"].duration
        hp, up = pf.hyperram.params, pf.udma.params
        assert durations[mhz] == expected_duration("rx", 0, size, hp, up)
    mbps = {f: size / d * 1e6 for f, d in durations.items()}   # bytes/ps * 1e12 / 1e6
    # twice the clock, about twice the throughput; a bit more, because at 100 MHz tCSM
    # (400 clocks) caps bursts at 768 B, so more bursts pay CA + latency
    assert 2.0 < mbps[200] / mbps[100] < 2.1
    assert 380 < mbps[200] < 400      # below the 400 MB/s peak: CA + doubled latency per burst
    assert 180 < mbps[100] < 200


def test_l2_side_runs_at_16_bytes_per_periph_cycle():
    # a slow peripheral clock makes the L2 side visible in the formula
    pf = build(periph_hz=20e6)
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 0, 1024, "tx")

    pf.run(main())
    assert out["job"].duration == expected_duration(
        "tx", 0, 1024, pf.hyperram.params, pf.udma.params, periph_hz=20e6)


# ----- registers --------------------------------------------------------------------
def test_register_programmed_transfer_with_irq_and_progress():
    pf = build()
    src = np.arange(4096, dtype=np.uint8) ^ 0x5A
    pf.l2.load(0x100, src)
    R = {k: UDMA + v for k, v in REGISTER_MAP.items()}
    seen = {}

    async def fw():
        await pf.cpu.write(R["HYPER_TX_SADDR"], L2_LO + 0x100)
        await pf.cpu.write(R["HYPER_TX_SIZE"], 4096)
        await pf.cpu.write(R["HYPER_TX_EXT_ADDR"], 0x2000)
        await pf.cpu.write(R["HYPER_TX_CFG"], CFG_EN | (2 << 1))   # 32-bit datasize
        seen["status_busy"] = await pf.cpu.read(R["HYPER_STATUS"])
        seen["cfg_busy"] = await pf.cpu.read(R["HYPER_TX_CFG"])
        await pf.sim.wait(5 * US)
        seen["saddr_mid"] = await pf.cpu.read(R["HYPER_TX_SADDR"])
        seen["size_mid"] = await pf.cpu.read(R["HYPER_TX_SIZE"])
        await pf.udma.irq
        seen["irq_t"] = pf.sim.now
        seen["irq_status"] = await pf.cpu.read(R["IRQ_STATUS"])
        await pf.cpu.write(R["IRQ_STATUS"], seen["irq_status"])
        seen["irq_after"] = await pf.cpu.read(R["IRQ_STATUS"])
        seen["status_idle"] = await pf.cpu.read(R["HYPER_STATUS"])
        seen["error"] = await pf.cpu.read(R["HYPER_ERROR"])

    pf.run(fw())
    np.testing.assert_array_equal(pf.hyperram.array[0x2000:0x3000], src)
    assert seen["status_busy"] == 0b0100 and seen["cfg_busy"] & CFG_EN
    assert seen["saddr_mid"] - (L2_LO + 0x100) == 4096 - seen["size_mid"]
    assert 0 < 4096 - seen["size_mid"] < 4096 and (4096 - seen["size_mid"]) % 1024 == 0
    assert seen["irq_status"] == 0b0010 and seen["irq_after"] == 0
    assert seen["status_idle"] == 0 and seen["error"] == 0
    stats = pf.sim.stats.as_dict()["udma"]
    assert stats["tx.transfers"] == 1 and stats["tx.bytes"] == 4096 and stats["tx.bursts"] == 4


def test_irq_mask_and_channel_events():
    pf = build()
    hits = []
    pf.udma.irq.add_callback(lambda e: hits.append(("irq", pf.sim.now)))
    pf.udma.rx_done.add_callback(lambda e: hits.append(("rx", pf.sim.now)))

    async def main():
        await pf.cpu.write(UDMA + REGISTER_MAP["IRQ_MASK"], 0b0010)   # TX done only
        await pf.udma.transfer(L2_LO, 0, 64, "rx")
        await pf.udma.transfer(L2_LO, 0, 64, "tx")

    pf.run(main())
    assert [h[0] for h in hits] == ["rx", "irq"]


def test_pending_slot_queue_full_and_continuous_with_clear():
    pf = build()
    pf.hyperram.load(0, np.full(256, 9, np.uint8))
    R = {k: UDMA + v for k, v in REGISTER_MAP.items()}
    out = {}
    done = []
    pf.udma.rx_done.add_callback(lambda e: done.append(pf.sim.now))

    async def main():
        a = pf.udma.start("rx", L2_LO, 0, 2048)
        b = pf.udma.start("rx", L2_LO + 4096, 0, 2048)
        out["cfg"] = await pf.cpu.read(R["HYPER_RX_CFG"])
        c = pf.udma.start("rx", L2_LO + 8192, 0, 2048)
        assert c.finished and c.error == ERR_QUEUE_FULL
        await b.done
        assert a.t_end <= b.t_start and a.ok and b.ok
        out["err"] = await pf.cpu.read(R["HYPER_ERROR"])
        # continuous: restarts until CLR
        before = len(done)
        pf.udma.start("rx", L2_LO + 0x10000, 0, 256, continuous=True)
        await pf.sim.wait(10 * US)
        await pf.cpu.write(R["HYPER_RX_CFG"], CFG_CLR)
        out["restarts"] = len(done) - before
        await pf.sim.wait(10 * US)
        out["busy"] = pf.udma.busy("rx")

    pf.run(main())
    assert out["cfg"] & CFG_PENDING and out["cfg"] & CFG_EN
    assert out["err"] == ERR_QUEUE_FULL
    assert out["restarts"] >= 3 and not out["busy"]
    assert not pf.l2.array[8192:8192 + 2048].any()          # the refused one never ran
    assert (pf.l2.array[0x10000:0x10100] == 9).all()


# ----- bad input --------------------------------------------------------------------
@pytest.mark.parametrize("l2_addr,ext,size,datasize,bit", [
    (L2_LO, 0, 0, 0, ERR_ZERO_LEN),
    (L2_LO - 16, 0, 64, 0, ERR_L2_RANGE),                 # below L2
    (L2_HI - 32, 0, 64, 0, ERR_L2_RANGE),                 # crosses the L2 end
    (MEMORY_MAP["tcdm"].base, 0, 64, 0, ERR_L2_RANGE),    # not L2 at all
    (L2_LO, MEMORY_MAP["hyperram"].size - 32, 64, 0, ERR_EXT_RANGE),   # crosses HyperRAM end
    (L2_LO, MEMORY_MAP["hyperram"].size, 4, 0, ERR_EXT_RANGE),
    (L2_LO + 2, 0, 64, 2, ERR_CFG),                       # 32-bit datasize, misaligned
    (L2_LO, 0, 64, 3, ERR_CFG),                           # reserved datasize
])
@pytest.mark.parametrize("direction", ["rx", "tx"])
def test_illegal_transfers_flag_errors_and_move_nothing(l2_addr, ext, size, datasize, bit,
                                                        direction):
    pf = build()
    rng = np.random.default_rng(3)
    l2_init = rng.integers(0, 256, pf.l2.size, dtype=np.uint8)
    hr_tail = rng.integers(0, 256, 4096, dtype=np.uint8)
    pf.l2.load(0, l2_init)
    pf.hyperram.load(0, hr_tail)
    pf.hyperram.load(MEMORY_MAP["hyperram"].size - 4096, hr_tail)
    hr_before = pf.hyperram.array.copy()
    R = {k: UDMA + v for k, v in REGISTER_MAP.items()}
    out = {}

    async def main():
        job = pf.udma.start(direction, l2_addr, ext, size, datasize=datasize)
        out["job"] = job
        out["irq"] = await pf.cpu.read(R["IRQ_STATUS"])
        out["err"] = await pf.cpu.read(R["HYPER_ERROR"])
        with pytest.raises(SimulationError, match="failed"):
            await pf.udma.transfer(l2_addr, ext, size, direction, datasize=datasize)

    pf.run(main())
    job = out["job"]
    shift = 0 if direction == "rx" else 8
    assert job.finished and job.error & bit and job.bytes_done == 0
    assert out["err"] >> shift & bit
    err_irq = 0b0100 if direction == "rx" else 0b1000
    assert out["irq"] & err_irq
    np.testing.assert_array_equal(pf.l2.array, l2_init)
    np.testing.assert_array_equal(pf.hyperram.array, hr_before)


def test_max_burst_beyond_tcsm_gets_bus_error_and_stops():
    pf = build()
    src = np.arange(8192, dtype=np.uint8)
    pf.l2.load(0, src)
    out = {}

    async def main():
        await pf.cpu.write(UDMA + REGISTER_MAP["HYPER_MAX_BURST"], 4096)   # > tCSM limit
        await pf.cpu.write(UDMA + REGISTER_MAP["HYPER_BURST_BOUNDARY"], 0)
        out["job"] = await pf.udma.transfer(L2_LO, 0, 8192, "tx", check=False)

    pf.run(main())
    job = out["job"]
    assert job.error == ERR_BUS and job.bytes_done == 0
    assert not pf.hyperram.array.any()      # refused bursts wrote nothing
    assert any(e.status == "BURST_ERROR" and e.where == "hyperram" for e in pf.sim.errors)


def test_l2_error_response_mid_transfer_stops_at_that_burst():
    # only the first 3 KiB of L2 are mapped: the 4th burst gets ADDRESS_ERROR from the xbar
    pf = build(l2_size=3 * 1024)
    pf.hyperram.load(0, np.full(8192, 0xAB, np.uint8))
    out = {}

    async def main():
        out["job"] = await pf.udma.transfer(L2_LO, 0, 8192, "rx", check=False)

    pf.run(main())
    job = out["job"]
    assert job.error == ERR_BUS and job.bytes_done == 3 * 1024
    assert (pf.l2.array == 0xAB).all()
    assert any(e.initiator == "udma" for e in pf.sim.errors)


def test_link_is_cuttable_and_counts_traffic():
    pf = build()

    async def main():
        await pf.udma.transfer(L2_LO, 0, 4096, "tx")

    pf.run(main())
    link = pf.udma.link
    assert link in pf.sim.links
    assert link.side_of == {"a": "soc", "b": "hyperram"}
    assert link.min_latency == pf.udma.params.link_latency
    assert link.messages["a"] == link.messages["b"] == 4
    assert link.bytes["a"] == 4096


def test_params_errors_name_the_path():
    with pytest.raises(ParameterError,
                       match=r"udma\.max_outstandin.*did you mean 'max_outstanding'"):
        build(udma={"max_outstandin": 3})
    with pytest.raises(ParameterError, match="power of two"):
        build(udma={"burst_boundary": 1000})
    with pytest.raises(ParameterError, match="not in the memory map"):
        build(udma={"l2_regions": ["l2", "nope"]})
