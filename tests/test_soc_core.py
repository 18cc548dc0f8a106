"""SOC core (components/soc_core/): the unicorn-based fabric controller as a TLM initiator.

These tests drive raw RV32 code (assembled below, so no cross compiler is needed) against
plain tlm targets: a Router, Memories and RegisterBanks. The committed firmware ELFs are
exercised in tests/test_firmware.py.
"""
from __future__ import annotations

import pytest

import unicorn  # noqa: E402,F401  (the test extra installs it: a missing ISS must fail, not skip)
from support.platform_kind import require_native_counter  # noqa: E402

from tlm import (NS, US, Clock, Event, Link, Memory, Module, ProcessError, RegisterBank,  # noqa: E402
                 Router, Signal, SimulationError, Simulator)
from components.marsellus.facts import MEMORY_MAP as MM  # noqa: E402
from components.marsellus.facts import IRQ_LINES  # noqa: E402
from components.soc_core import FirmwareFaultError, SocCore, irq_number  # noqa: E402
from components.soc_core.elf import PF_R, PF_W, PF_X, ElfImage, Segment, parse_elf  # noqa: E402
from marsellus_regions import SOC_CORE_ARGS  # noqa: E402

COUNTING = {"mode": "auto"}


@pytest.fixture(autouse=True, params=["native", "python"])
def counting(request):
    """Every test runs with both instruction counters (they must agree exactly)."""
    if request.param == "native":
        require_native_counter()
    COUNTING["mode"] = request.param
    yield request.param
    COUNTING["mode"] = "auto"


BASE = MM["l2_private"].base
L2 = MM["l2"].base
FREQ = 400e6
PERIOD = 2500  # ps at 400 MHz


# ----- a minimal RV32I assembler (enough for these tests) ------------------------------------
REGS = {f"x{i}": i for i in range(32)}
REGS.update(zero=0, ra=1, sp=2, gp=3, tp=4, t0=5, t1=6, t2=7, s0=8, s1=9, a0=10, a1=11,
            a2=12, a3=13, a4=14, a5=15, a6=16, a7=17, t3=28, t4=29, t5=30, t6=31)
CSRS = {"mstatus": 0x300, "mie": 0x304, "mtvec": 0x305, "mepc": 0x341, "mcause": 0x342,
        "mip": 0x344, "mcycle": 0xB00, "minstret": 0xB02}


def _i(imm, rs1, f3, rd, op):
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op


def _s(imm, rs2, rs1, f3, op=0x23):
    return (((imm >> 5) & 0x7F) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | \
        ((imm & 0x1F) << 7) | op


def _b(off, rs2, rs1, f3):
    return (((off >> 12) & 1) << 31) | (((off >> 5) & 0x3F) << 25) | (rs2 << 20) | (rs1 << 15) \
        | (f3 << 12) | (((off >> 1) & 0xF) << 8) | (((off >> 11) & 1) << 7) | 0x63


def _j(off, rd):
    return (((off >> 20) & 1) << 31) | (((off >> 1) & 0x3FF) << 21) | (((off >> 11) & 1) << 20) \
        | (((off >> 12) & 0xFF) << 12) | (rd << 7) | 0x6F


def assemble(src: str, base: int = BASE) -> bytes:
    """Two passes over ``src``: labels ``name:``, one instruction per line, ``#`` comments."""
    lines = []
    for raw in src.splitlines():
        line = raw.split("#")[0].strip()
        while ":" in line:
            lab, line = line.split(":", 1)
            lines.append(("label", lab.strip()))
            line = line.strip()
        if line:
            op, _, rest = line.partition(" ")
            lines.append((op, [a.strip() for a in rest.split(",")] if rest else []))
    labels, pc = {}, base
    for op, args in lines:  # every instruction here is 4 bytes (li expands to 2)
        if op == "label":
            labels[args] = pc
        else:
            pc += 8 if op == "li" else 4
    out, pc = [], base

    def num(s):
        return labels[s] if s in labels else int(s, 0)

    def mem(s):  # "imm(reg)"
        imm, reg = s.rstrip(")").split("(")
        return int(imm or "0", 0), REGS[reg]

    for op, args in lines:
        if op == "label":
            continue
        r = [REGS.get(a) for a in args]
        if op == "li":
            v = num(args[1]) & 0xFFFFFFFF
            lo = v & 0xFFF
            lo = lo - 0x1000 if lo & 0x800 else lo
            hi = ((v - lo) >> 12) & 0xFFFFF
            words = [(hi << 12) | (r[0] << 7) | 0x37, _i(lo, r[0], 0, r[0], 0x13)]
        elif op == "addi":
            words = [_i(num(args[2]), r[1], 0, r[0], 0x13)]
        elif op in ("lw", "sw"):
            imm, rs1 = mem(args[1])
            words = [_i(imm, rs1, 2, r[0], 0x03) if op == "lw" else _s(imm, r[0], rs1, 2)]
        elif op in ("beq", "bne", "blt"):
            f3 = {"beq": 0, "bne": 1, "blt": 4}[op]
            words = [_b(num(args[2]) - pc, r[1], r[0], f3)]
        elif op == "j":
            words = [_j(num(args[0]) - pc, 0)]
        elif op == "jr":
            words = [_i(0, r[0], 0, 0, 0x67)]
        elif op in ("csrw", "csrs", "csrc"):
            f3 = {"csrw": 1, "csrs": 2, "csrc": 3}[op]
            words = [_i(CSRS[args[0]], REGS[args[1]], f3, 0, 0x73)]
        elif op == "csrr":
            words = [_i(CSRS[args[1]], 0, 2, r[0], 0x73)]
        elif op == "wfi":
            words = [0x10500073]
        elif op == "mret":
            words = [0x30200073]
        elif op == "ebreak":
            words = [0x00100073]
        elif op == "nop":
            words = [0x00000013]
        elif op == ".word":
            words = [num(args[0])]
        else:
            raise ValueError(f"unknown op {op}")
        for w in words:
            out.append((w & 0xFFFFFFFF).to_bytes(4, "little"))
            pc += 4
    return b"".join(out)


def image(src: str, base: int = BASE) -> ElfImage:
    code = assemble(src, base)
    return ElfImage("<test>", base, [Segment(base, code, len(code), PF_R | PF_W | PF_X)])


# ----- a small platform ------------------------------------------------------------------------
class Platform:
    """FC + router + shared L2 memory + an 'EOC' register bank at the stdout region
    (PUTC at 0xF80, EXIT at 0xF84 like the stdout model) + a scratch register bank at GPIO."""

    def __init__(self, src_or_image, *, params=None, l2_dmi=True, seed=1):
        self.sim = sim = Simulator(seed=seed)
        self.top = top = Module(sim, "soc")
        self.clock = Clock(sim, "soc.clock", FREQ)
        self.xbar = Router(top, "xbar", clock=self.clock, latency=1)
        self.l2 = Memory(top, "l2", MM["l2"].size, dmi=l2_dmi)
        self.xbar.map(MM["l2"].base, MM["l2"].size, self.l2.socket)
        self.text = bytearray()
        self.eoc = RegisterBank(top, "stdout", MM["stdout"].size)
        self.eoc.add(0xF80, "PUTC", write=lambda v: self.text.append(v & 0xFF))
        self.eoc.add(0xF84, "EXIT", write=lambda v: self.fc.request_exit(v))
        self.xbar.map(MM["stdout"].base, MM["stdout"].size, self.eoc.socket)
        self.scratch_writes: list[tuple[int, int]] = []
        self.gpio = RegisterBank(top, "gpio", MM["gpio"].size, clock=self.clock, latency=2)
        self.gpio.add(0x0, "SCRATCH", write=lambda v: self.scratch_writes.append((sim.now, v)))
        self.gpio.add(0x4, "VALUE", reset=0x1234)
        self.xbar.map(MM["gpio"].base, MM["gpio"].size, self.gpio.socket)
        img = image(src_or_image) if isinstance(src_or_image, str) else src_or_image
        p = {"local_regions": ["l2_private"], "counting": COUNTING["mode"]}
        p.update(params or {})
        self.fc = SocCore(top, "fc", clock=self.clock, elf=img, params=p, **SOC_CORE_ARGS)
        self.fc.socket.bind(self.xbar.target_socket)

    def run(self, until=None):
        self.sim.run(until)
        return self.fc


EXIT = f"""
    li t6, {MM['stdout'].base + 0xF84}
    sw a0, 0(t6)
hang:
    wfi
    j hang
"""


def test_assembler_matches_gnu_as_encodings():
    # reference words from riscv64-unknown-elf-as
    assert assemble("lw a1, 0(t0)") == (0x0002A583).to_bytes(4, "little")
    assert assemble("sw a0, 4(t0)") == (0x00A2A223).to_bytes(4, "little")
    assert assemble("csrw mtvec, t0") == (0x30529073).to_bytes(4, "little")
    assert assemble("csrr a2, mcause") == (0x34202673).to_bytes(4, "little")


def test_exit_code_instruction_count_and_time_are_exact():
    # 4 setup instructions (2 li) + 100 iterations x 2 + 2 (li) + 1 (sw) retired
    plat = Platform("""
        li a0, 0
        li a1, 100
    loop:
        addi a0, a0, 1
        bne a0, a1, loop
        addi a0, a0, -58
    """ + EXIT)
    fc = plat.run()
    assert fc.state == "exited" and fc.exit_code == 42
    n = 4 + 200 + 1 + 2 + 1
    assert fc.instret == n
    assert fc.cycles == n * 5 // 4 + 1        # CPI 1.25 + the EXIT store's router hop
    # the EXIT store syncs first (sync_on_io); the router adds its 1-cycle hop latency
    assert fc.exit_time == n * 5 // 4 * PERIOD + PERIOD == plat.sim.now
    assert fc.summary()["exit_code"] == 42


def test_counter_csrs_are_deterministic():
    """mcycle/minstret read the core's own counts (unicorn would give host ticks)."""
    plat = Platform(f"""
        nop
        nop
        nop
        csrr a0, minstret
        csrr a1, mcycle
        li s0, {L2}
        sw a1, 0(s0)
    """ + EXIT)
    fc = plat.run()
    assert fc.exit_code == 3
    assert int.from_bytes(bytes(plat.l2.array[0:4]), "little") == 4 * 5 // 4


def test_negative_exit_code_is_signed():
    fc = Platform("li a0, -3\n" + EXIT).run()
    assert fc.exit_code == -3


def test_cpi_and_clock_set_the_time():
    src = "li a0, 0\n" + "addi a0, a0, 1\n" * 400 + EXIT
    t = {}
    for cpi in (1.0, 2.0):
        fc = Platform(src, params={"cpi": cpi}).run()
        t[cpi] = fc.exit_time
        assert fc.instret == 2 + 400 + 3
    for cpi in (1.0, 2.0):   # + the router's 1-cycle latency on the EXIT store
        assert t[cpi] == (405 * cpi + 1) * PERIOD


def test_peripheral_reads_and_writes_are_transactions_at_exact_times():
    plat = Platform(f"""
        li t0, {MM['gpio'].base}
        lw a1, 4(t0)
        sw a1, 0(t0)
        addi a1, a1, 1
        sw a1, 0(t0)
        li a0, 0
    """ + EXIT)
    fc = plat.run()
    assert fc.exit_code == 0
    assert [v for _, v in plat.scratch_writes] == [0x1234, 0x1235]
    t0, t1 = (t for t, _ in plat.scratch_writes)
    # between the two stores: the register latency (2 cycles) + 2 instructions x 1.25
    # second store: first store's latency (router 1 + bank 2 cycles) + 2 instructions at
    # CPI 1.25 counted with a fractional-cycle remainder: 3 instructions before the first
    # store leave 3/4 cycle, so the next 2 instructions complete 3 whole cycles
    assert t1 - t0 == 3 * PERIOD + 3 * PERIOD
    st = plat.sim.stats.as_dict()["soc.fc"]
    assert st["mmio_accesses"] == 4 and st["sync_stops"] == 4
    assert fc.instret == 2 + 1 + 1 + 1 + 1 + 2 + 2 + 1


def test_shared_l2_goes_through_dmi_zero_copy():
    plat = Platform(f"""
        li t0, {L2 + 0x100}
        li a1, 0xCAFEF00D
        sw a1, 0(t0)
        lw a2, 0(t0)
        sw a2, 4(t0)
        li a0, 0
    """ + EXIT)
    plat.run()
    arr = plat.l2.array
    assert bytes(arr[0x100:0x108]) == (0xCAFEF00D).to_bytes(4, "little") * 2
    st = plat.sim.stats.as_dict()["soc.fc"]
    assert st["dmi_regions"] >= 1
    assert st["mmio_accesses"] == 1           # only the EXIT store


def test_shared_l2_without_dmi_uses_transactions():
    plat = Platform(f"""
        li t0, {L2 + 0x100}
        li a1, 0x11223344
        sw a1, 0(t0)
        lw a2, 0(t0)
        sw a2, 4(t0)
        li a0, 0
    """ + EXIT, l2_dmi=False)
    fc = plat.run()
    assert fc.exit_code == 0
    assert bytes(plat.l2.array[0x104:0x108]) == (0x11223344).to_bytes(4, "little")
    st = plat.sim.stats.as_dict()["soc.fc"]
    assert st["dmi_regions"] == 0 and st["mmio_accesses"] == 4
    assert st["sync_stops"] == 1               # memory accesses run inline, no sync


def test_dmi_invalidation_mid_run_falls_back_to_transactions():
    plat = Platform(f"""
        li t0, {L2}
        li a1, 7
        sw a1, 0(t0)
        li t1, {MM['gpio'].base}
        sw a1, 0(t1)        # the scratch hook revokes L2's DMI
        lw a2, 0(t0)
        addi a2, a2, 1
        sw a2, 4(t0)
        sw a2, 8(t0)
        sw a2, 12(t0)
        sw a1, 4(t1)        # a synchronised access: the core re-requests DMI after it
        sw a2, 16(t0)
        sw a2, 20(t0)
        addi a0, a2, -8
    """ + EXIT)
    plat.gpio["SCRATCH"].write = lambda v: plat.l2.invalidate_dmi()
    plat.gpio["VALUE"].write = lambda v: None
    fc = plat.run()
    assert fc.exit_code == 0
    assert list(plat.l2.array[:24:4]) == [7, 8, 8, 8, 8, 8]
    st = plat.sim.stats.as_dict()["soc.fc"]
    # after the revocation: lw + 3 sw over MMIO (+ 3 peripheral accesses); the memory
    # answered dmi_allowed, so DMI is back for the last two stores
    assert st["mmio_accesses"] == 7 and st["dmi_regions"] == 1


def test_target_behind_a_link_suspends_the_core():
    """A target that waits (a tlm.Link) is served by the core's process: the access
    instruction is re-executed once the transaction completes."""
    sim = Simulator(seed=1)
    top = Module(sim, "soc")
    clk = Clock(sim, "soc.clock", FREQ)
    xbar = Router(top, "xbar", clock=clk)
    link = Link(sim, "cdc", side_a="soc", side_b="cluster", min_latency=10 * NS)
    tr = link.transport("to_cluster")
    tcdm = Memory(top, "tcdm", MM["tcdm"].size, dmi=False)
    xbar.map(MM["tcdm"].base, MM["tcdm"].size, tr.target_socket, translate=False)
    inner = Router(top, "cl_xbar")
    inner.map(MM["tcdm"].base, MM["tcdm"].size, tcdm.socket)
    tr.initiator_socket.bind(inner.target_socket)
    eoc = RegisterBank(top, "stdout", MM["stdout"].size)
    xbar.map(MM["stdout"].base, MM["stdout"].size, eoc.socket)
    src = f"""
        li t0, {MM['tcdm'].base + 0x40}
        li a1, 0x5A5A
        sw a1, 0(t0)
        lw a2, 0(t0)
        addi a2, a2, 1
        sw a2, 4(t0)
        li a0, 0
    """ + EXIT
    fc = SocCore(top, "fc", clock=clk, elf=image(src),
                 params={"local_regions": ["l2_private"], "counting": COUNTING["mode"]},
                 **SOC_CORE_ARGS)
    eoc.add(0xF84, "EXIT", write=lambda v: fc.request_exit(v))
    fc.socket.bind(xbar.target_socket)
    sim.run()
    assert fc.exit_code == 0
    assert tcdm.dump(0x44, 4) == (0x5A5B).to_bytes(4, "little")
    st = sim.stats.as_dict()["soc.fc"]
    assert st["async_accesses"] == 3
    # each access is a round trip over the link (2 x 10 ns)
    assert fc.exit_time >= 3 * 20 * NS


# ----- faults ------------------------------------------------------------------------------------
def _fault(src, **params):
    plat = Platform(src, params={"on_fault": "stop", **params})
    fc = plat.run()
    assert fc.state == "faulted", fc.summary()
    return fc, plat


def test_illegal_instruction_fault_record():
    fc, plat = _fault("""
        nop
        nop
        nop
        .word 0xFFFFFFFF
        nop
    """)
    f = fc.fault
    assert f.kind == "illegal_instruction"
    assert f.pc == BASE + 12 and f.instruction == 0xFFFFFFFF
    assert f.instret == 3
    assert f.time == 3 * 5 // 4 * PERIOD == plat.sim.now
    assert "illegal instruction at pc=0x1c00000c" in f.message()
    assert f.to_dict()["message"] == f.message()


def test_load_from_unmapped_address_fault_record():
    fc, _ = _fault("""
        li t0, 0x30000000
        lw a0, 8(t0)
        nop
    """)
    f = fc.fault
    assert f.kind == "access_fault" and f.access == "read"
    assert f.address == 0x30000008 and f.pc == BASE + 8
    assert f.instruction == 0x0082A503
    assert f.instret == 2 and f.time == 2 * 5 // 4 * PERIOD


def test_store_to_mapped_region_without_target_is_a_tlm_error():
    fc, plat = _fault(f"""
        li t0, {MM['udma'].base}
        sw t0, 0(t0)
    """)
    f = fc.fault
    assert f.kind == "access_fault" and f.access == "write" and f.status == "ADDRESS_ERROR"
    assert f.address == MM["udma"].base and f.pc == BASE + 8
    assert plat.sim.errors and plat.sim.errors[-1].initiator == "soc.fc"


def test_jump_to_unmapped_memory_fault_record():
    fc, _ = _fault("""
        li t0, 0x30000000
        jr t0
    """)
    f = fc.fault
    assert f.kind == "fetch_fault" and f.pc == 0x30000000 and f.address == 0x30000000
    assert f.instruction is None and f.instret == 3


def test_jump_into_peripheral_space_is_a_fetch_fault():
    fc, _ = _fault(f"""
        li t0, {MM['gpio'].base}
        jr t0
    """)
    assert fc.fault.kind == "fetch_fault" and fc.fault.pc == MM["gpio"].base


def test_ebreak_and_instruction_limit():
    fc, _ = _fault("nop\nebreak\n")
    assert fc.fault.kind == "breakpoint" and fc.fault.pc == BASE + 4
    fc, _ = _fault("loop:\nj loop\n", max_instructions=1000)
    assert fc.fault.kind == "instruction_limit" and fc.fault.instret == 1000


def test_fault_raises_a_simulation_error_by_default():
    plat = Platform("nop\n.word 0\n")
    with pytest.raises(ProcessError) as ei:
        plat.run()
    assert "illegal instruction at pc=0x1c000004" in str(ei.value)
    assert isinstance(ei.value.__cause__, FirmwareFaultError)
    assert ei.value.__cause__.fault.pc == BASE + 4


# ----- interrupts and wfi ------------------------------------------------------------------------
HANDLER_PROGRAM = f"""
    li t0, handler
    csrw mtvec, t0
    li t0, 0x10000          # line 16
    csrw mie, t0
    csrs mstatus, t0        # harmless bits; then MIE:
    li t0, 8
    csrs mstatus, t0
    li s0, {L2}             # counter in shared L2
main:
    lw a1, 0(s0)
    beq a1, zero, main      # spin until the handler ran
    li a0, 0
""" + EXIT + """
handler:
    csrr t1, mcause
    sw t1, 4(s0)
    csrr t1, mepc
    sw t1, 8(s0)
    li t1, 1
    sw t1, 0(s0)
    mret
"""


def test_interrupt_from_an_event_runs_the_handler():
    plat = Platform(HANDLER_PROGRAM)
    ev = Event(plat.sim, "dma_done")
    plat.fc.connect_irq("cluster_dma", ev)
    plat.sim.schedule(10 * US, ev.notify)
    fc = plat.run()
    assert fc.exit_code == 0
    words = [int.from_bytes(bytes(plat.l2.array[i:i + 4]), "little") for i in (0, 4, 8)]
    assert words[1] == 0x80000010                     # interrupt, line 16
    assert BASE <= words[2] < BASE + 0x100            # mepc inside the spin loop
    # taken at the first run boundary after 10 us (1 us quanta)
    assert 10 * US <= fc.exit_time <= 11.1 * US
    assert plat.sim.stats.as_dict()["soc.fc"]["interrupts"] == 1
    assert fc.mip == 0                                # the edge was consumed by the trap


def test_level_interrupt_from_a_signal():
    plat = Platform(HANDLER_PROGRAM)
    sig = Signal(plat.sim, "irq_level", False)
    plat.fc.connect_irq(16, sig)
    plat.sim.schedule(3 * US, sig.write, True)
    fc = plat.run()
    assert fc.exit_code == 0 and fc.mip == 1 << 16    # still asserted
    assert 3 * US <= fc.exit_time <= 4.1 * US


def test_masked_interrupt_is_not_taken():
    src = HANDLER_PROGRAM.replace("li t0, 8\n    csrs mstatus, t0", "nop\n    nop")
    plat = Platform(src, params={"max_instructions": 20000, "on_fault": "stop"})
    ev = Event(plat.sim, "irq")
    plat.fc.connect_irq(16, ev)
    plat.sim.schedule(2 * US, ev.notify)
    fc = plat.run()
    assert fc.fault.kind == "instruction_limit"
    assert fc.mip == 1 << 16 and plat.sim.stats.as_dict()["soc.fc"]["interrupts"] == 0


WFI_PROGRAM = f"""
    li t0, 0x20000          # line 17
    csrw mie, t0
    wfi
    li s0, {L2}
    csrr a1, mip
    sw a1, 0(s0)
    li a0, 0
""" + EXIT


def test_wfi_skips_idle_time():
    plat = Platform(WFI_PROGRAM)
    ev = Event(plat.sim, "rbe_done")
    plat.fc.connect_irq("rbe", ev)
    plat.sim.schedule(1_000 * US, ev.notify)          # 1 ms later
    fc = plat.run()
    st = plat.sim.stats.as_dict()["soc.fc"]
    assert fc.exit_code == 0
    assert fc.instret == 2 + 1 + 1 + 2 + 1 + 1 + 2 + 2 + 1
    assert st["wfi"] == 1 and st["emulator_runs"] < 20
    assert 1_000 * US < fc.exit_time < 1_000 * US + 100 * NS
    assert st["idle_ps"] >= 999 * US
    # interrupts masked: the wfi consumed the event (PULP wait-for-event)
    assert int.from_bytes(bytes(plat.l2.array[0:4]), "little") == 0


def test_wfi_without_any_event_leaves_the_core_idle():
    plat = Platform("li t0, 0x20000\ncsrw mie, t0\nwfi\nnop\n")
    fc = plat.run()
    assert fc.state == "wfi" and fc.instret == 4


def test_software_can_read_and_clear_pending_lines():
    plat = Platform(f"""
        li t0, 0x20000
        csrw mie, t0
        li s0, {L2}
    wait:
        csrr a1, mip
        beq a1, zero, wait
        sw a1, 0(s0)
        csrc mip, a1
        csrr a2, mip
        sw a2, 4(s0)
        csrr a3, mie
        sw a3, 8(s0)
        li a0, 0
    """ + EXIT)
    ev = Event(plat.sim, "irq")
    plat.fc.connect_irq(17, ev)
    plat.sim.schedule(2 * US, ev.notify)
    fc = plat.run()
    words = [int.from_bytes(bytes(plat.l2.array[i:i + 4]), "little") for i in (0, 4, 8)]
    assert words == [1 << 17, 0, 1 << 17] and fc.exit_code == 0


def test_exit_requested_while_idle():
    plat = Platform("li t0, 0x20000\ncsrw mie, t0\nwfi\nnop\n")
    plat.sim.schedule(5 * US, plat.fc.request_exit, 9)
    fc = plat.run()
    assert fc.state == "exited" and fc.exit_code == 9 and plat.sim.now == 5 * US


def test_irq_lines_and_errors():
    assert irq_number("timer", IRQ_LINES) == 7 and irq_number(16, IRQ_LINES) == 16
    assert IRQ_LINES["cluster_dma"][0] == 16
    with pytest.raises(SimulationError):
        irq_number("nope", IRQ_LINES)
    with pytest.raises(SimulationError):
        irq_number(40, IRQ_LINES)
    plat = Platform("li a0, 0\n" + EXIT)
    with pytest.raises(SimulationError):
        plat.fc.connect_irq(3, object())
    assert plat.run().exit_code == 0


# ----- determinism --------------------------------------------------------------------------
def _trace(seed):
    plat = Platform(HANDLER_PROGRAM, seed=seed)
    ev = Event(plat.sim, "irq")
    plat.fc.connect_irq(16, ev)
    plat.sim.schedule(7 * US + 123, ev.notify)
    fc = plat.run()
    return fc.instret, fc.cycles, fc.exit_time, plat.sim.now, plat.sim.stats.as_dict()["soc.fc"]


def test_two_runs_are_identical():
    assert _trace(1) == _trace(1) == _trace(2)


def test_quantum_does_not_change_results_without_interrupts():
    src = "li a0, 0\nli a1, 3000\nloop:\naddi a0, a0, 1\nbne a0, a1, loop\n" \
          f"li t0, {MM['gpio'].base}\nsw a0, 0(t0)\nli a0, 0\n" + EXIT
    res = []
    for q in ("100 ns", "1 us", "50 us"):
        plat = Platform(src, params={"quantum": q, "max_run_instructions": 777})
        fc = plat.run()
        res.append((fc.instret, fc.exit_time, plat.scratch_writes))
    assert res[0] == res[1] == res[2]


# ----- ELF loader ------------------------------------------------------------------------------
def test_elf_loader_rejects_bad_files(tmp_path):
    with pytest.raises(ValueError, match="not an ELF"):
        parse_elf(b"hello world" * 10, "x.bin")
    hdr = bytearray(b"\x7fELF\x02\x01\x01" + bytes(57))
    with pytest.raises(ValueError, match="32-bit"):
        parse_elf(bytes(hdr), "x.elf")
    sim = Simulator()
    top = Module(sim, "soc")
    p = tmp_path / "bad.elf"
    p.write_bytes(b"junk")
    with pytest.raises(SimulationError, match="bad.elf: not an ELF"):
        SocCore(top, "fc", clock=Clock(sim, "c", FREQ), elf=p, **SOC_CORE_ARGS)
    with pytest.raises(SimulationError, match="cannot read"):
        SocCore(top, "fc2", clock=Clock(sim, "c2", FREQ), elf=tmp_path / "missing.elf",
                **SOC_CORE_ARGS)


def test_segment_outside_the_memory_map_is_refused():
    sim = Simulator()
    top = Module(sim, "soc")
    img = ElfImage("<t>", 0x30000000, [Segment(0x30000000, b"\x13\0\0\0", 4, PF_R | PF_X)])
    with pytest.raises(SimulationError, match="not inside one region"):
        SocCore(top, "fc", clock=Clock(sim, "c", FREQ), elf=img, **SOC_CORE_ARGS)


def test_bad_parameters_name_the_path():
    sim = Simulator()
    top = Module(sim, "soc")
    with pytest.raises(SimulationError, match="soc.fc.cpii"):
        SocCore(top, "fc", clock=Clock(sim, "c", FREQ), params={"cpii": 1}, **SOC_CORE_ARGS)
    with pytest.raises(SimulationError, match=r"soc.fc2.cpi: 0 is out of range \[0.25, 64\]"):
        SocCore(top, "fc2", clock=Clock(sim, "c2", FREQ), params={"cpi": 0}, **SOC_CORE_ARGS)
