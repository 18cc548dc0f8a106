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


_MAP_TEXT = """
block: demo
registers:
  - {name: CTRL, offset: 0x0, access: rw, reset: 0x5, doc: "control"}
  - {name: FLAGS, offset: 0x4, access: rw1c, doc: "sticky flags"}
  - {name: ID, offset: 0x8, access: ro, reset: 0x42, doc: "id"}
arrays:
  - name: CH
    base: 0x10
    stride: 0x8
    count: 2
    registers:
      - {name: ADDR, offset: 0x0, access: rw, doc: "address"}
      - {name: GO, offset: 0x4, access: wo, doc: "start"}
"""


def test_add_map_declares_the_maps_registers_with_its_access_reset_and_doc():
    import pytest

    from tlm.regmap import parse_regmap
    m = parse_regmap(_MAP_TEXT, "demo.yaml")
    sim, rb, cpu = bank_with_cpu()
    cleared = []
    regs = rb.add_map(m, {"FLAGS": {"read": lambda: 0xF, "write": cleared.append}})
    assert [(r.offset, r.name, r.access, r.reset, r.doc) for r in regs] == [
        (0x0, "CTRL", "rw", 0x5, "control"), (0x4, "FLAGS", "rw", 0, "sticky flags"),
        (0x8, "ID", "ro", 0x42, "id")]
    access(sim, cpu, WRITE, 0x4, b"\x03\x00\x00\x00")
    assert cleared == [3] and rb.registers[0x8].value == 0x42
    for i in range(2):
        rb.add_map(m.array("CH"), {"GO": {"write": lambda v: None}}, index=i, prefix=f"CH{i}_")
    assert rb["CH1_GO"].offset == 0x1C and rb["CH1_GO"].access == "wo"
    assert rb["CH0_ADDR"].doc == "address"
    one = rb.add_from_map(m.register("ID"), base=0x20, name="ID_COPY", reset=7)
    assert (one.offset, one.name, one.access, one.reset) == (0x28, "ID_COPY", "ro", 7)
    with pytest.raises(ValueError, match="not in the map: NOPE"):
        rb.add_map(m.array("CH"), {"NOPE": {}}, index=0, base=0x20)
    with pytest.raises(ValueError, match="index 2 is not one"):
        rb.add_map(m.array("CH"), index=2)
    with pytest.raises(ValueError, match="index is for a register array"):
        rb.add_map(m, index=0)


def _hook_arity_by_signature(fn):
    import inspect
    try:
        return sum(1 for p in inspect.signature(fn).parameters.values()
                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)
    except (TypeError, ValueError):
        return 1


def test_hook_arity_agrees_with_inspect_signature():
    """tlm.regs._arity (write(value) or write(value, mask)?) reads code objects for speed;
    it must say what inspect.signature says for every kind of callable."""
    import functools

    from tlm.regs import _arity

    class Hooks:
        def both(self, v, mask): ...
        def masked_default(self, v, mask=0xFF): ...
        def all_default(self=None, v=1): ...
        def __call__(self, v, mask): ...
        @staticmethod
        def static(v, mask): ...
        @classmethod
        def klass(cls, v): ...

    def keep(f):
        @functools.wraps(f)
        def w(*a):
            return f(*a)
        return w

    @keep
    def wrapped(v, mask): ...

    def posonly(a, /, b, *args, k, **kw): ...

    h = Hooks()
    cases = [h.both, h.masked_default, h.all_default, h, Hooks.static, Hooks.klass, wrapped,
             posonly, lambda v: 0, lambda v, m, x=1: 0, functools.partial(h.both, 1), print]
    assert [_arity(f) for f in cases] == [_hook_arity_by_signature(f) for f in cases]
