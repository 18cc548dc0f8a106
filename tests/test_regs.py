"""RegisterBank: access sizes, read-only/write-only, partial writes and byte masks."""
from tlm import READ, WRITE, GenericPayload, InitiatorSocket, Module, RegisterBank, Simulator


def bank_with_cpu():
    sim = Simulator()
    top = Module(sim, "top")
    rb = RegisterBank(top, "regs", 0x40, latency=0)
    cpu = InitiatorSocket(top, "cpu")
    cpu.bind(rb.socket)
    return sim, rb, cpu


def access(sim, cpu, cmd, addr, data):
    out = {}

    async def go():
        p = GenericPayload(cmd, addr, bytearray(data), initiator="top.cpu")
        await cpu.b_transport(p, 0)
        out["p"] = p

    sim.spawn(go(), f"acc{len(sim.modules)}_{addr}_{cmd}")
    sim.run()
    return out["p"]


def test_partial_write_merges_stored_value_and_passes_the_mask():
    sim, rb, cpu = bank_with_cpu()
    seen = []
    status = {"bits": 0xFF00FF}
    rb.add(0x0, "irq_status", read=lambda: status["bits"],
           write=lambda v, mask: (seen.append((v, mask)), status.update(bits=status["bits"] & ~(v & mask))))
    rb.add(0x4, "plain")
    # a byte write at byte 2 clears only bits written there (write-1-to-clear)
    access(sim, cpu, WRITE, 0x2, b"\x0f")
    assert seen == [(0x0F0000, 0xFF0000)]
    assert status["bits"] == 0xF000FF
    # a plain register merges partial writes with its stored value
    access(sim, cpu, WRITE, 0x4, b"\x11\x22\x33\x44")
    access(sim, cpu, WRITE, 0x5, b"\xaa")
    p = access(sim, cpu, READ, 0x4, bytearray(4))
    assert int.from_bytes(p.data, "little") == 0x4433AA11


def test_read_only_and_bad_accesses():
    sim, rb, cpu = bank_with_cpu()
    rb.add(0x0, "id", access="ro", reset=0x1234)
    access(sim, cpu, WRITE, 0x0, b"\0\0\0\0")
    assert rb.ignored_writes == 1
    assert int.from_bytes(access(sim, cpu, READ, 0x0, bytearray(4)).data, "little") == 0x1234
    assert access(sim, cpu, READ, 0x2, bytearray(4)).status.name == "BURST_ERROR"
    assert access(sim, cpu, READ, 0x8, bytearray(4)).status.name == "ADDRESS_ERROR"
    assert [e.status for e in sim.errors] == ["BURST_ERROR", "ADDRESS_ERROR"]
