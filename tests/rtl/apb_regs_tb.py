"""cocotb testbench of the APB adapters (cosim/rtl/adapters/apb.py) through rtl/bus/apb_regs:

* ``master_adapter``: our ApbMasterAdapter -> apb_regs' registers (a Python model of the
  register file, wait states 0..5, PSTRB, PSLVERR on the read-only ID and unmapped
  addresses) and -> the forwarding window, served by cocotbext-apb's ``ApbRam`` (the
  reference target); the RTL protocol checker must stay quiet;
* ``responder_adapter``: cocotbext-apb's ``ApbHost`` (the reference initiator) -> the
  forwarding window -> our ApbResponder serving a ByteMemory (PSLVERR outside it);
* ``parking``: an idle adapter costs no Python per cycle (its host task is stopped) and
  works again on the next request;
* ``never_ready``: a window with nothing behind it -> AdapterTimeout naming s_apb_pready;
* ``port_map``: both adapters built from a port map through the kinds' builders.
Results go to ``TB_REPORT`` (JSON).
"""
from __future__ import annotations

import json
import os
import random

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from cosim.rtl.adapters import AdapterTimeout, ByteMemory, reset, start_clock
from cosim.rtl.adapters.apb import ApbError, ApbMasterAdapter, ApbResponder

PERIOD = 2.5
ID_VALUE = 0xA9B0_0001
FWD = 0x800


def _report(entry: dict) -> None:
    path = os.environ.get("TB_REPORT")
    if path:
        data = json.load(open(path)) if os.path.exists(path) else {}
        data.update(entry)
        json.dump(data, open(path, "w"), indent=1)


async def setup(dut):
    start_clock(dut.clk_i, PERIOD)
    await reset(dut.clk_i, dut.rst_ni, 3)


def quiet_ref(factory):
    """Build a cocotbext-apb reference object without its banner or touching ``random``."""
    import logging
    state = random.getstate()
    logging.disable(logging.INFO)
    try:
        obj = factory()
    finally:
        logging.disable(logging.NOTSET)
        random.setstate(state)
    obj.log.setLevel(logging.WARNING)
    return obj


@cocotb.test()
async def master_adapter(dut):
    from cocotbext.apb import ApbBus, ApbRam
    # (cocotbext-apb 1.1.0: ApbRam passes seednum= on to object.__init__ and fails, so it
    # gets none; quiet_ref restores the global random state ApbBase re-seeds)
    ram = quiet_ref(lambda: ApbRam(ApbBus.from_prefix(dut, "m_apb"), dut.clk_i, size=4096))
    ad = ApbMasterAdapter.from_prefix(dut, "s_apb", dut.clk_i, period_ns=PERIOD,
                                      timeout_cycles=100, name="apb_regs")
    await setup(dut)
    rng = np.random.default_rng(1)
    regs = [0] * 8
    wait = 0
    fwd_model: dict[int, int] = {}
    n_err = n_fwd = n_wait = 0
    bad = []
    for step in range(400):
        r = rng.random()
        if r < 0.25:                                       # register write, random strobes
            k = int(rng.integers(0, 8))
            v = int(rng.integers(0, 1 << 32))
            be = int(rng.integers(1, 16))
            await ad.write(4 * k, v, be)
            m = sum(0xFF << (8 * b) for b in range(4) if be >> b & 1)
            regs[k] = (regs[k] & ~m) | (v & m)
        elif r < 0.45:                                     # register read
            k = int(rng.integers(0, 8))
            got = await ad.read(4 * k)
            if got != regs[k]:
                bad.append((step, 4 * k, got, regs[k]))
        elif r < 0.52:                                     # wait states
            wait = int(rng.integers(0, 6))
            await ad.write(0x24, wait)
            n_wait += 1
            assert await ad.read(0x24) == wait
        elif r < 0.57:
            assert await ad.read(0x20) == ID_VALUE
        elif r < 0.67:                                     # PSLVERR: ID write, unmapped
            addr = 0x20 if rng.random() < 0.4 else 4 * int(rng.integers(0x0A, 0x200))
            try:
                if addr == 0x20 or rng.random() < 0.5:
                    await ad.write(addr, 0xDEAD)
                else:
                    await ad.read(addr)
            except ApbError as e:
                assert f"0x{addr:08x}" in str(e), str(e)
                n_err += 1
            else:
                raise AssertionError(f"no PSLVERR for 0x{addr:x}")
        else:                                              # forwarding window -> ApbRam
            a = FWD + 4 * int(rng.integers(0, 64))
            if rng.random() < 0.5:
                v = int(rng.integers(0, 1 << 32))
                await ad.write(a, v)
                fwd_model[a] = v
                if ram.read(a, 4) != v.to_bytes(4, "little"):
                    bad.append((step, a, ram.read(a, 4).hex(), v))
            else:
                got = await ad.read(a)
                want = fwd_model.get(a, int.from_bytes(ram.read(a, 4), "little"))
                if got != want:
                    bad.append((step, a, got, want))
            n_fwd += 1
    # bytes API (what generic port-map testbenches use)
    await ad.write(0x10, b"\x01\x02\x03\x04\x05\x06\x07\x08")
    assert await ad.read(0x10, 8) == b"\x01\x02\x03\x04\x05\x06\x07\x08"
    proto = int(dut.proto_err_o.value)
    _report({"apb_master": {"mismatches": bad, "errors": n_err, "forwarded": n_fwd,
                            "wait_changes": n_wait, "proto_err": proto, "parked": ad.parked,
                            "reads": ad.reads, "writes": ad.writes}})
    assert not bad, bad[:5]
    assert proto == 0, f"APB protocol checker flagged {proto:#x}"
    assert n_err > 10 and n_fwd > 50 and ad.parked


@cocotb.test()
async def responder_adapter(dut):
    from cocotbext.apb import ApbBus, ApbHost
    mem = ByteMemory(0x400, base=FWD)                      # 0x800..0xBFF; 0xC00.. -> PSLVERR
    ApbResponder.from_prefix(dut, "m_apb", dut.clk_i, mem)
    host = quiet_ref(lambda: ApbHost(ApbBus.from_prefix(dut, "s_apb"), dut.clk_i, seednum=5))
    await setup(dut)
    rng = np.random.default_rng(2)
    model: dict[int, bytes] = {}
    for _ in range(120):
        a = FWD + 4 * int(rng.integers(0, 256))
        if rng.random() < 0.5:
            d = rng.integers(0, 256, 4, dtype=np.uint8).tobytes()
            strb = int(rng.integers(1, 16))
            await host.write(a, d, strb)
            old = model.get(a, bytes(4))
            model[a] = bytes(d[i] if strb >> i & 1 else old[i] for i in range(4))
            assert mem.read(a, 4) == model[a], (hex(a), mem.read(a, 4), model[a])
        else:
            got = await host.read(a)
            assert got == model.get(a, bytes(4)), (hex(a), got, model.get(a))
    # outside the responder's memory: PSLVERR (the reference host checks it)
    await host.write(0xC00, 0x1234, error_expected=True)
    await host.read(0xFFC, error_expected=True)
    await ClockCycles(dut.clk_i, 2)
    proto = int(dut.proto_err_o.value)
    _report({"apb_responder": {"words": len(model), "proto_err": proto,
                               "mem_errors": len(mem.errors)}})
    assert proto == 0


@cocotb.test()
async def parking(dut):
    ad = ApbMasterAdapter.from_prefix(dut, "s_apb", dut.clk_i, period_ns=PERIOD)
    await setup(dut)
    assert ad.parked
    await ad.write(0x0, 0x11)
    assert ad.parked and int(dut.s_apb_psel.value) == 0
    await ClockCycles(dut.clk_i, 50)
    assert await ad.read(0x0) == 0x11 and ad.parked
    # back to back: each transfer ends with PSEL released for a cycle, checker quiet
    for k in range(8):
        await ad.write(4 * k, k)
    assert [await ad.read(4 * k) for k in range(8)] == list(range(8))
    _report({"apb_parking": {"parked": ad.parked, "proto_err": int(dut.proto_err_o.value)}})
    assert int(dut.proto_err_o.value) == 0


@cocotb.test()
async def never_ready(dut):
    dut.m_apb_pready.value = 0
    dut.m_apb_prdata.value = 0
    dut.m_apb_pslverr.value = 0
    ad = ApbMasterAdapter.from_prefix(dut, "s_apb", dut.clk_i, period_ns=PERIOD,
                                      timeout_cycles=40, name="apb_regs")
    await setup(dut)
    try:
        await ad.read(0x900)
    except AdapterTimeout as e:
        msg = str(e)
    else:
        raise AssertionError("no timeout")
    # the adapter is usable again afterwards
    await ad.write(0x4, 0x55)
    assert await ad.read(0x4) == 0x55
    _report({"apb_timeout": msg})
    assert "s_apb_pready" in msg and "never answers" in msg and "0x00000900" in msg


@cocotb.test()
async def port_map(dut):
    """Both adapters from a port map (kinds apb_slave / apb_master) via the builders."""
    from cosim.rtl.adapters import apb as apb_mod
    from cosim.rtl.adapters.factory import bring_up
    from cosim.rtl.portmap import PortMap, ports_from_dut
    pm = json.loads(os.environ.get("APB_PORTMAP", "null")) or {
        "top": "apb_regs", "clock": {"port": "clk_i", "period_ns": PERIOD},
        "reset": {"port": "rst_ni"},
        "adapters": {"host": {"kind": "apb_slave", "prefix": "s_apb_"},
                     "mem": {"kind": "apb_master", "prefix": "m_apb_"}}}
    rpm = PortMap.from_dict(pm).resolve(ports_from_dut(dut))
    mem = ByteMemory(0x800, base=FWD)
    start_clock(dut.clk_i, rpm.period_ns)
    ad = {n: apb_mod.BUILDERS[ra.kind](dut, ra, dut.clk_i, dut.rst_ni, rpm, {"mem": mem})
          for n, ra in rpm.adapters.items()}
    await bring_up(dut, rpm)
    await ad["host"].write(0x0, 0xCAFEF00D)
    await ad["host"].write(0x804, 0x12345678)
    assert await ad["host"].read(0x0) == 0xCAFEF00D
    assert mem.read(0x804, 4) == (0x12345678).to_bytes(4, "little")
    assert await ad["host"].read(0x804) == 0x12345678
    _report({"apb_port_map": True})


@cocotb.test()
async def checker_is_live(dut):
    """The protocol checker flags a hand-made bad initiator (so its silence above means
    something): an access phase without a setup phase, then PADDR changed mid-transfer."""
    from cocotb.triggers import RisingEdge
    await setup(dut)
    s = dut
    s.s_apb_pwrite.value = 0
    s.s_apb_paddr.value = 0x24
    s.s_apb_psel.value = 1
    s.s_apb_penable.value = 1                        # no setup phase
    await RisingEdge(dut.clk_i)
    s.s_apb_psel.value = 0
    s.s_apb_penable.value = 0
    await ClockCycles(dut.clk_i, 2)
    first = int(dut.proto_err_o.value)
    s.s_apb_psel.value = 1                           # setup ...
    await RisingEdge(dut.clk_i)
    s.s_apb_paddr.value = 0x28                       # ... address changes in the access
    s.s_apb_penable.value = 1
    await ClockCycles(dut.clk_i, 2)
    s.s_apb_psel.value = 0
    s.s_apb_penable.value = 0
    second = int(dut.proto_err_o.value)
    _report({"apb_checker": [first, second]})
    assert first & 0b0010 and second & 0b0100, (first, second)
