"""HyperRAM device: HyperBus timing per transaction, errors, contents and image files."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.hyperram import HyperRam, HyperRamParams
from components.marsellus.facts import MEMORY_MAP
from tlm import (OK, READ, WRITE, GenericPayload, InitiatorSocket, Module, ParameterError,
                 Simulator, Status)
from tlm.units import NS, US, period_ps


class Bus(Module):
    """A HyperBus controller stand-in bound straight to the device (no link)."""

    def __init__(self, parent, name, target):
        super().__init__(parent, name)
        self.sock = InitiatorSocket(self, "hbus")
        self.sock.bind(target)

    async def access(self, cmd, addr, data_or_len, delay=0, byte_enable=None):
        data = bytearray(data_or_len)  # bytes to write, or a length to read
        n = len(data)
        p = GenericPayload(cmd, addr, data, n, byte_enable=byte_enable, initiator=self.path)
        d = await self.sock.b_transport(p, delay)
        return p, d


def make(**overrides):
    sim = Simulator()
    hr = HyperRam(sim, "hyperram", overrides)
    bus = Bus(sim, "ctrl", hr.socket)
    return sim, hr, bus


def clocks(hp: HyperRamParams, a: int, n: int, doubled: bool) -> int:
    rows = (a + n - 1) // hp.row_bytes - a // hp.row_bytes
    return (hp.ca_clocks + hp.initial_latency * (2 if doubled else 1)
            + math.ceil((a % 2 + n) / 2) + hp.row_cross_clocks * rows)


def run(sim, coro):
    sim.spawn(coro, "test")
    sim.run()


@pytest.mark.parametrize("a,n", [(0, 2), (0, 700), (1, 1), (1, 2), (7, 333), (1023, 2)])
@pytest.mark.parametrize("freq", [100e6, 166e6, 200e6])
def test_fixed_latency_transaction_time(a, n, freq):
    sim, hr, bus = make(freq_hz=freq)
    hp = hr.params
    out = {}

    async def main():
        out["w"] = await bus.access(WRITE, a, bytes(i % 251 for i in range(n)))
        await sim.wait(out["w"][1] + 1 * US)   # the write's CS# low time, then idle
        out["r"] = await bus.access(READ, a, n)

    run(sim, main())
    for key in ("w", "r"):
        p, d = out[key]
        assert p.status == OK
        assert d == clocks(hp, a, n, True) * period_ps(freq)
    assert out["r"][0].data == out["w"][0].data
    assert hr.doubled_latency == 2 and hr.latency_cycles == 4 * hp.initial_latency


def test_back_to_back_transactions_are_serialised_with_cs_high():
    sim, hr, bus = make(cs_high_clocks=2)
    hp = hr.params
    T = period_ps(hp.freq_hz)
    out = []

    async def one(delay):
        out.append(await bus.access(READ, 0, 64, delay=delay))

    sim.spawn(one(0), "a")
    sim.spawn(one(5 * NS), "b")     # arrives while the first is on the bus
    sim.run()
    d1, d2 = out[0][1], out[1][1]
    assert d1 == clocks(hp, 0, 64, True) * T
    assert d2 == d1 + 2 * T + clocks(hp, 0, 64, True) * T   # waited for CS# high, then ran


def test_variable_latency_refresh_collision_is_deterministic():
    refresh = 10 * US
    sim, hr, bus = make(latency_mode="variable", refresh_interval=refresh)
    hp = hr.params
    T = period_ps(hp.freq_hz)
    t_rfc = hp.initial_latency * T
    out = {}

    async def main():
        out["before"] = await bus.access(READ, 0, 32)                  # t=0: no refresh yet
        await sim.wait_until(refresh + t_rfc // 2)                     # inside the refresh
        out["during"] = await bus.access(READ, 0, 32)
        await sim.wait_until(2 * refresh + t_rfc)                      # just after one
        out["after"] = await bus.access(READ, 0, 32)
        # a long burst that is running when refresh #4 falls due postpones it to CS# high;
        # the next transaction, tCSHI later, collides with it
        start = 4 * refresh - 100 * NS
        await sim.wait_until(start)
        p, d = await bus.access(READ, 0, 1024)
        out["long"] = (p, d)
        await sim.wait(d + hp.cs_high_clocks * T)
        out["next"] = await bus.access(READ, 0, 32)

    run(sim, main())
    single = clocks(hp, 0, 32, False) * T
    double = clocks(hp, 0, 32, True) * T
    assert out["before"][1] == single
    assert out["during"][1] == double
    assert out["after"][1] == single
    assert out["long"][1] == clocks(hp, 0, 1024, False) * T
    assert out["next"][1] == double
    assert hr.doubled_latency == 2 and hr.refreshes == 4


def test_row_crossing_adds_clocks():
    sim, hr, bus = make(row_cross_clocks=3, row_bytes=256)
    hp = hr.params
    out = {}

    async def main():
        out["x"] = await bus.access(READ, 200, 600)   # crosses 256, 512, 768

    run(sim, main())
    assert out["x"][1] == (clocks(hp, 200, 600, True)) * period_ps(hp.freq_hz)
    assert clocks(hp, 200, 600, True) - clocks(HyperRamParams(), 200, 600, True) == 9


def test_max_burst_bytes_is_the_tcsm_limit_and_longer_bursts_are_refused():
    sim, hr, bus = make()
    hp = hr.params
    T = period_ps(hp.freq_hz)
    mb = hp.max_burst_bytes()
    # worst case (odd start, doubled latency) of mb fits tCSM; of mb + 2 does not
    assert clocks(hp, 1, mb, True) * T <= hp.t_csm < clocks(hp, 1, mb + 2, True) * T
    out = {}

    async def main():
        out["ok"] = await bus.access(WRITE, 1, b"\x11" * mb)
        out["bad"] = await bus.access(WRITE, 0, b"\x22" * (mb + 1000))

    run(sim, main())
    assert out["ok"][0].status == OK
    p, d = out["bad"]
    assert p.status == Status.BURST_ERROR and d == 0
    assert (hr.array[1:1 + mb] == 0x11).all() and hr.array[0] == 0 and hr.array[1 + mb] == 0
    assert sim.errors[-1].status == "BURST_ERROR" and "tCSM" in sim.errors[-1].reason


@pytest.mark.parametrize("a,n,why", [
    (MEMORY_MAP["hyperram"].size - 4, 8, "outside"),      # crosses the end
    (MEMORY_MAP["hyperram"].size, 1, "outside"),
    (0, 0, "zero-length"),
])
def test_out_of_range_access_gets_address_error_without_side_effects(a, n, why):
    sim, hr, bus = make()
    hr.load(hr.params.capacity - 16, bytes(range(16)))
    before = hr.array.copy()
    out = {}

    async def main():
        out["w"] = await bus.access(WRITE, a, b"\xee" * n)
        out["r"] = await bus.access(READ, a, n)

    run(sim, main())
    for p, d in out.values():
        assert p.status == Status.ADDRESS_ERROR and d == 0
    np.testing.assert_array_equal(hr.array, before)
    assert why in sim.errors[0].reason and sim.errors[0].initiator == "ctrl"
    assert hr.bursts == 0 and hr.errors == 2


def test_byte_enables_mask_write_data():
    sim, hr, bus = make()
    hr.load(0, b"\xff" * 8)

    async def main():
        await bus.access(WRITE, 0, bytes(range(8)), byte_enable=b"\xff\x00")

    run(sim, main())
    assert hr.dump(0, 8) == bytes([0, 0xff, 2, 0xff, 4, 0xff, 6, 0xff])


@settings(max_examples=30, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 5000), st.integers(1, 700)),
                    min_size=1, max_size=12))
def test_random_accesses_match_a_numpy_mirror(ops):
    sim, hr, bus = make()
    mirror = np.zeros(8192, np.uint8)
    rng = np.random.default_rng(len(ops))
    reads = []

    async def main():
        for write, a, n in ops:
            if write:
                data = rng.integers(0, 256, n, dtype=np.uint8)
                p, _ = await bus.access(WRITE, a, data.tobytes())
                mirror[a:a + n] = data
            else:
                p, _ = await bus.access(READ, a, n)
                reads.append((bytes(p.data), mirror[a:a + n].tobytes()))
            assert p.status == OK

    run(sim, main())
    for got, exp in reads:
        assert got == exp
    np.testing.assert_array_equal(hr.array[:8192], mirror)


# ----- image files ------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".bin", ".npy"])
def test_save_load_roundtrip(tmp_path, ext):
    sim, hr, _ = make()
    rng = np.random.default_rng(7)
    hr.load(12345, rng.integers(0, 256, 100_000, dtype=np.uint8))
    path = hr.save(tmp_path / f"l3{ext}")
    sim2 = Simulator()
    hr2 = HyperRam(sim2, "hyperram", {"load_file": str(path)})
    np.testing.assert_array_equal(hr2.array, hr.array)


def test_load_npy_of_other_dtype_at_offset_and_save_file_param(tmp_path):
    w = np.arange(1000, dtype=np.int16) - 500
    np.save(tmp_path / "w.npy", w)
    sim = Simulator()
    hr = HyperRam(sim, "hyperram", {"load_file": str(tmp_path / "w.npy"), "load_offset": 4096,
                                    "save_file": str(tmp_path / "out.bin")})
    assert np.array_equal(hr.array[4096:4096 + 2000].view(np.int16), w)
    hr.save()
    assert (tmp_path / "out.bin").stat().st_size == hr.params.capacity


def test_image_errors_are_clear(tmp_path):
    sim = Simulator()
    with pytest.raises(ParameterError, match=r"hyperram\.load_file.*does not exist"):
        HyperRam(sim, "hyperram", {"load_file": str(tmp_path / "missing.bin")})
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * 4096)
    with pytest.raises(ParameterError, match=r"size mismatch.*4096 bytes"):
        HyperRam(Simulator(), "hyperram", {"load_file": str(big), "capacity": 2048})
    with pytest.raises(ParameterError, match=r"size mismatch"):
        HyperRam(Simulator(), "hyperram", {"load_file": str(big), "load_offset": 8 * 2**20 - 100})
    with pytest.raises(ParameterError, match=r"\.bin or \.npy"):
        HyperRam(Simulator(), "hyperram", {"load_file": str(tmp_path / "x.txt")})
    hr = HyperRam(Simulator(), "hyperram")
    with pytest.raises(ParameterError, match="no save_file"):
        hr.save()


def test_parameter_checks():
    with pytest.raises(ParameterError,
                       match=r"hyperram\.initial_latncy.*did you mean 'initial_latency'"):
        HyperRam(Simulator(), "hyperram", {"initial_latncy": 7})
    with pytest.raises(ParameterError, match="rating"):
        HyperRam(Simulator(), "hyperram", {"freq_hz": "250 MHz"})
    with pytest.raises(ParameterError, match="expected one of"):
        HyperRam(Simulator(), "hyperram", {"latency_mode": "sometimes"})
    with pytest.raises(ParameterError, match="too short"):
        HyperRam(Simulator(), "hyperram", {"t_csm": "50 ns"})
    hr = HyperRam(Simulator(), "hyperram", {"freq_hz": "200 MHz", "initial_latency": 7})
    assert hr.params.period == 5000 and hr.params.capacity == MEMORY_MAP["hyperram"].size
