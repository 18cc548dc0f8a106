"""SOC timer and stdout peripheral, driven through real register accesses (b_transport)."""
from __future__ import annotations

import pytest

from components.marsellus.facts import MEMORY_MAP
from components.soc_timer import (CFG_EN, CFG_IRQ_EN, CFG_MODE, CFG_ONE_SHOT,
                                  CFG_PRESCALER_SHIFT, REGISTER_MAP, SocTimer)
from components.stdout import EXIT, PUTC, Stdout, StdoutLine
from tlm import (OK, READ, WRITE, Clock, GenericPayload, InitiatorSocket, Module,
                 ParameterError, Router, Simulator)
from tlm.units import US
from marsellus_regions import STDOUT_ARGS, TIMER_ARGS  # noqa: E402

TIMER = MEMORY_MAP["timer"].base
STDOUT = MEMORY_MAP["stdout"].base
T = {k: TIMER + v for k, v in REGISTER_MAP.items()}
SOC_HZ = 100e6
PERIOD = 10_000   # ps at 100 MHz


class Cpu(Module):
    """A bus master issuing register accesses like firmware (waits each access's delay)."""

    def __init__(self, parent, name, xbar: Router):
        super().__init__(parent, name)
        self.sock = InitiatorSocket(self, "bus")
        self.sock.bind(xbar.target_socket)

    async def write(self, addr: int, value: int, size: int = 4) -> None:
        raw = (value & (1 << 8 * size) - 1).to_bytes(size, "little")   # two's complement
        p = GenericPayload(WRITE, addr, bytearray(raw), size, initiator=self.path)
        d = await self.sock.b_transport(p, 0)
        assert p.status == OK, p
        await self.sim.wait(d)

    async def read(self, addr: int, size: int = 4) -> int:
        p = GenericPayload(READ, addr, bytearray(size), size, initiator=self.path)
        d = await self.sock.b_transport(p, 0)
        assert p.status == OK, p
        await self.sim.wait(d)
        return int.from_bytes(p.data, "little")


def platform(echo=None, stdout_params=None):
    sim = Simulator()
    clk = Clock(sim, "soc_clk", SOC_HZ)
    xbar = Router(sim, "xbar")
    timer = SocTimer(sim, "timer", clock=clk, **TIMER_ARGS)
    out = Stdout(sim, "stdout", clock=clk, echo=echo, params=stdout_params, **STDOUT_ARGS)
    xbar.map(TIMER, MEMORY_MAP["timer"].size, timer.target_socket)
    xbar.map(STDOUT, MEMORY_MAP["stdout"].size, out.target_socket)
    return sim, clk, timer, out, Cpu(sim, "cpu", xbar)


def run(sim, coro):
    sim.spawn(coro, "fw")
    sim.run()


# ----- timer --------------------------------------------------------------------
@pytest.mark.parametrize("prescaler", [0, 3])
@pytest.mark.parametrize("start_delay", [0, 12_345])   # on an edge / between edges
def test_compare_irq_at_the_exact_edge(prescaler, start_delay):
    sim, clk, timer, _, cpu = platform()
    seen = {}

    async def fw():
        await sim.wait(start_delay)
        await cpu.write(T["CMP_LO"], 1000)
        await cpu.write(T["CMP_HI"], 0)
        seen["t_en"] = sim.now          # the write takes effect when it is issued
        await cpu.write(T["CFG"], CFG_EN | CFG_IRQ_EN | prescaler << CFG_PRESCALER_SHIFT)
        await timer.irq
        seen["t_irq"] = sim.now
        seen["cnt"] = await cpu.read(T["CNT_LO"])
        seen["status"] = await cpu.read(T["STATUS"])
        await cpu.write(T["STATUS"], 1)
        seen["status_after"] = await cpu.read(T["STATUS"])

    run(sim, fw())
    edges_before = seen["t_en"] // PERIOD               # rising edges at k * PERIOD
    assert seen["t_irq"] == (edges_before + 1000 * (prescaler + 1)) * PERIOD
    assert seen["cnt"] == 1000          # free-running: read a few cycles later, same tick
    assert seen["status"] == 1 and seen["status_after"] == 0
    assert timer.irqs == timer.matches == 1


def test_compare_irq_after_a_frequency_change():
    sim, clk, timer, _, cpu = platform()
    seen = {}
    t_change = 3 * US + 4_321

    async def fw():
        await cpu.write(T["CMP_LO"], 1000)
        seen["t_en"] = sim.now
        await cpu.write(T["CFG"], CFG_EN | CFG_IRQ_EN | 1 << CFG_PRESCALER_SHIFT)   # every 2 cycles
        await timer.irq
        seen["t_irq"] = sim.now

    async def fll():
        await sim.wait(t_change)
        clk.set_frequency(40e6)          # 25 ns period from here on

    sim.spawn(fll(), "fll")
    run(sim, fw())
    c_en = seen["t_en"] // PERIOD
    cycles_done = t_change // PERIOD                 # edges counted before the change
    remaining = c_en + 2000 - cycles_done
    assert seen["t_irq"] == t_change + remaining * 25_000


def test_periodic_mode_and_reprogramming():
    sim, clk, timer, _, cpu = platform()
    irqs = []
    timer.irq.add_callback(lambda e: irqs.append(sim.now))
    seen = {}

    async def fw():
        await cpu.write(T["CMP_LO"], 99)
        seen["t_en"] = sim.now
        await cpu.write(T["CFG"], CFG_EN | CFG_IRQ_EN | CFG_MODE)
        await sim.wait(3 * 100 * PERIOD + 50 * PERIOD)
        seen["t_mid"] = sim.now          # a read samples the counter when it is issued
        seen["cnt_mid"] = await cpu.read(T["CNT_LO"])
        await cpu.write(T["CFG"], 0)     # stop: otherwise the timer runs forever

    run(sim, fw())
    c_en = seen["t_en"] // PERIOD
    # counts 0..99: the first match 99 ticks after enabling, then the counter clears on
    # the next tick, so matches repeat every CMP + 1 = 100 cycles
    assert irqs == [(c_en + 99 + 100 * k) * PERIOD for k in (0, 1, 2)]
    # the counter reads (ticks since enable) modulo (CMP + 1)
    assert seen["cnt_mid"] == (seen["t_mid"] // PERIOD - c_en) % 100


def test_cmp_rewrite_retimes_and_one_shot_stops():
    sim, clk, timer, _, cpu = platform()
    seen = {}

    async def fw():
        await cpu.write(T["CMP_LO"], 10_000)
        seen["t_en"] = sim.now
        await cpu.write(T["CFG"], CFG_EN | CFG_IRQ_EN | CFG_ONE_SHOT)
        await sim.wait(1 * US + 3_333)
        seen["t_cmp"] = sim.now
        await cpu.write(T["CMP_LO"], 500)          # sooner than the old compare
        await timer.irq
        seen["t_irq"] = sim.now
        await sim.wait(2 * US)
        seen["cfg"] = await cpu.read(T["CFG"])
        seen["cnt"] = await cpu.read(T["CNT_LO"])
        await cpu.write(T["CMP_LO"], 100)          # below the counter: no match (no wrap)

    run(sim, fw())
    # the CMP write restarts the prescaler phase at the write, not at an edge: with
    # PRESCALER = 0 a tick is simply every rising edge after the write
    count_at_write = seen["t_cmp"] // PERIOD - seen["t_en"] // PERIOD
    remaining = 500 - count_at_write
    assert seen["t_irq"] == (seen["t_cmp"] // PERIOD + remaining) * PERIOD
    assert seen["cfg"] & CFG_EN == 0 and seen["cnt"] == 500
    assert timer.matches == 1


def test_64_bit_counter_and_hi_latch():
    sim, clk, timer, _, cpu = platform()
    seen = {}

    async def fw():
        await cpu.write(T["CNT_LO"], 0xFFFF_FFF0)
        await cpu.write(T["CNT_HI"], 5)
        seen["t_en"] = sim.now
        await cpu.write(T["START"], 1)
        await sim.wait(100 * PERIOD)
        seen["t_lo"] = sim.now
        seen["lo"] = await cpu.read(T["CNT_LO"])
        seen["hi"] = await cpu.read(T["CNT_HI"])
        seen["t_reset"] = sim.now
        await cpu.write(T["RESET"], 1)
        seen["t_read"] = sim.now
        seen["after_reset"] = await cpu.read(T["CNT_LO"])
        await cpu.write(T["CFG"], 0)

    run(sim, fw())
    value = (5 << 32 | 0xFFFF_FFF0) + (seen["t_lo"] // PERIOD - seen["t_en"] // PERIOD)
    assert (seen["hi"] << 32 | seen["lo"]) == value and seen["hi"] == 6
    assert seen["after_reset"] == seen["t_read"] // PERIOD - seen["t_reset"] // PERIOD == 2


def test_timer_param_errors():
    sim = Simulator()
    clk = Clock(sim, "c", 1e6)
    with pytest.raises(ParameterError, match=r"timer\.prescaler_bit.*did you mean"):
        SocTimer(sim, "timer", clock=clk, params={"prescaler_bit": 4}, **TIMER_ARGS)


# ----- stdout --------------------------------------------------------------------
def test_lines_per_core_with_times_echo_and_exit():
    echoed: list[StdoutLine] = []
    sim, clk, _, out, cpu = platform(echo=echoed.append)
    fc = STDOUT + out.fc_slot
    c3 = STDOUT + out.slot(0, 3)
    seen = {}

    async def fw():
        for ch in b"Hel":
            await cpu.write(fc + PUTC, ch, size=1)          # sb, as printf's putc does
        for ch in b"abc":
            await cpu.write(c3 + PUTC, 0x4100 | ch)         # sw: only bits 7:0 count
        for ch in b"lo":
            await cpu.write(fc + PUTC, ch, size=1)
        seen["t_fc"] = sim.now                              # a line's time: its newline
        await cpu.write(fc + PUTC, ord("\n"), size=1)
        seen["t_c3"] = sim.now
        await cpu.write(c3 + PUTC, ord("\n"))
        for ch in b"tail":
            await cpu.write(fc + PUTC, ch, size=1)
        seen["t_exit"] = sim.now
        await cpu.write(fc + EXIT, -3)
        await cpu.write(c3 + EXIT, 0)                       # a later exit is only counted

    waiter = {}

    async def host():
        await out.exited
        waiter["t"] = sim.now

    sim.spawn(host(), "host")
    run(sim, fw())
    assert [(ln.source, ln.text) for ln in out.lines] == [
        ("fc", "Hello"), ("cluster0.core3", "abc"), ("fc", "tail")]
    assert out.lines[0].time == seen["t_fc"] and out.lines[1].time == seen["t_c3"]
    assert out.lines[2].time == seen["t_exit"]
    assert echoed == out.lines
    assert out.exit_code == -3 and out.exit_time == seen["t_exit"] == waiter["t"]
    assert out.exit_source == (31, 0) and out.extra_exits == 1
    assert out.text == "Hello\nabc\ntail\n"


def test_putc_reads_zero_bad_bytes_and_long_lines():
    sim, clk, _, out, cpu = platform(stdout_params={"max_line": 8})
    base = STDOUT + out.slot(2, 1)
    seen = {}

    async def fw():
        for ch in b"\xff\xfeok\n" + b"0123456789\n":
            await cpu.write(base + PUTC, ch, size=1)
        seen["read"] = await cpu.read(base + PUTC)

    run(sim, fw())
    assert [ln.text for ln in out.lines] == ["\ufffd\ufffdok", "01234567", "89"]
    assert seen["read"] == 0 and out.exit_code is None


def test_stdout_layout_checks():
    with pytest.raises(ParameterError, match="core_stride"):
        Stdout(Simulator(), "stdout", params={"core_stride": 4}, **STDOUT_ARGS)
    with pytest.raises(ParameterError, match="exceed"):
        Stdout(Simulator(), "stdout", params={"n_clusters": 64}, **STDOUT_ARGS)
    out = Stdout(Simulator(), "stdout", **STDOUT_ARGS)
    assert out.fc_slot == 0xF80 and out.slot(0, 15) == 0x78
