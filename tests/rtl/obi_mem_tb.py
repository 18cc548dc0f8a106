"""cocotb testbench of the OBI adapters (cosim/rtl/adapters/obi.py) through rtl/bus/obi_mem:

* ``master_adapter``: our ObiMasterAdapter (cocotbext-obi ``ObiHost`` inside) -> obi_mem's
  SRAM (an independent SystemVerilog memory with a protocol checker, compared with a
  Python model; byte enables; random grant stalls and response delays from the block's
  LFSR), err on the unmapped window, and -> the forwarding window served by our
  ObiResponder with random grant/response back-pressure; the checker must stay quiet;
* ``responder_adapter``: cocotbext-obi's ``ObiHost`` (the reference manager, pipelined,
  with random req/rready back-pressure) -> the forwarding window -> our ObiResponder
  serving a ByteMemory (err outside it). (cocotbext-obi's own ``ObiDevice`` is not used:
  with an RTL manager it answers phantom transactions, see cosim/rtl/adapters/obi.py);
* ``parking``: an idle adapter has no per-cycle tasks; works again afterwards;
* ``never_grants``: a window whose subordinate never grants -> AdapterTimeout naming
  s_obi_gnt_o;
* ``port_map``: both adapters from a port map (kinds obi_slave / obi_master).
Results go to ``TB_REPORT`` (JSON).
"""
from __future__ import annotations

import json
import logging
import os
import random

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from cosim.rtl.adapters import AdapterTimeout, ByteMemory, reset, start_clock
from cosim.rtl.adapters.obi import (ObiError, ObiMasterAdapter, ObiResponder,
                                    bus_from_signals)

PERIOD = 2.5
FWD = 0x800


def _report(entry: dict) -> None:
    path = os.environ.get("TB_REPORT")
    if path:
        data = json.load(open(path)) if os.path.exists(path) else {}
        data.update(entry)
        json.dump(data, open(path, "w"), indent=1)


def quiet_ref(factory):
    state = random.getstate()
    logging.disable(logging.INFO)
    try:
        obj = factory()
    finally:
        logging.disable(logging.NOTSET)
        random.setstate(state)
    obj.log.setLevel(logging.ERROR)
    return obj


async def setup(dut, bp: int = 0):
    dut.bp_i.value = bp
    start_clock(dut.clk_i, PERIOD)
    await reset(dut.clk_i, dut.rst_ni, 3)


def s_bus(dut):
    return bus_from_signals(dut, {}, "s_obi_")


def m_bus(dut):
    return bus_from_signals(dut, {}, "m_obi_")


@cocotb.test()
async def master_adapter(dut):
    ram = ByteMemory(0x800, base=FWD)
    prng = np.random.default_rng(9)
    ObiResponder(m_bus(dut), dut.clk_i, ram, gnt_policy=lambda c: prng.random() < 0.6,
                 rsp_policy=lambda c: prng.random() < 0.6)
    ad = ObiMasterAdapter(s_bus(dut), dut.clk_i, period_ns=PERIOD, timeout_cycles=100,
                          name="obi_mem")
    await setup(dut, bp=1)
    rng = np.random.default_rng(1)
    model = [None] * 256
    fwd_model: dict[int, int] = {}
    bad, n_err, n_fwd = [], 0, 0
    for step in range(500):
        r = rng.random()
        if r < 0.3:
            k = int(rng.integers(0, 256))
            v = int(rng.integers(0, 1 << 32))
            be = 0xF if model[k] is None else int(rng.integers(1, 16))
            await ad.write(4 * k, v, be)
            m = sum(0xFF << (8 * b) for b in range(4) if be >> b & 1)
            model[k] = ((model[k] or 0) & ~m) | (v & m)
        elif r < 0.55:
            k = int(rng.integers(0, 256))
            got = await ad.read(4 * k)
            if model[k] is not None and got != model[k]:
                bad.append((step, 4 * k, got, model[k]))
        elif r < 0.65:
            a = 0x400 + 4 * int(rng.integers(0, 256))
            try:
                if rng.random() < 0.5:
                    await ad.write(a, 1)
                else:
                    await ad.read(a)
            except ObiError as e:
                assert f"0x{a:08x}" in str(e), str(e)
                n_err += 1
            else:
                raise AssertionError(f"no err for 0x{a:x}")
        else:
            a = FWD + 4 * int(rng.integers(0, 512))
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
    await ad.write(0x40, b"\x01\x02\x03\x04\x05\x06\x07\x08")
    assert await ad.read(0x40, 8) == b"\x01\x02\x03\x04\x05\x06\x07\x08"
    proto = int(dut.proto_err_o.value)
    _report({"obi_master": {"mismatches": bad, "errors": n_err, "forwarded": n_fwd,
                            "proto_err": proto, "parked": ad.parked, "reads": ad.reads,
                            "writes": ad.writes}})
    assert not bad, bad[:5]
    assert proto == 0, f"OBI protocol checker flagged {proto:#x}"
    assert n_err > 20 and n_fwd > 100 and ad.parked


@cocotb.test()
async def responder_adapter(dut):
    from cocotbext.obi import ObiHost
    mem = ByteMemory(0x400, base=FWD)                  # 0x800..0xBFF; above -> err
    prng = np.random.default_rng(4)
    resp = ObiResponder(m_bus(dut), dut.clk_i, mem, gnt_policy=lambda c: prng.random() < 0.7,
                        rsp_policy=lambda c: prng.random() < 0.7)
    host = quiet_ref(lambda: ObiHost(s_bus(dut), dut.clk_i, seednum=5, max_outstanding=2))
    await setup(dut, bp=0)
    host.enable_backpressure(req=True, rready=True)
    rng = np.random.default_rng(2)
    model: dict[int, bytes] = {}
    for _ in range(60):                                 # pipelined bursts of accesses
        items = []
        for _ in range(int(rng.integers(1, 6))):
            a = FWD + 4 * int(rng.integers(0, 256))
            if rng.random() < 0.5:
                d = rng.integers(0, 256, 4, dtype=np.uint8).tobytes()
                strb = int(rng.integers(1, 16))
                host.write_nowait(a, d, strb)
                old = model.get(a, bytes(4))
                model[a] = bytes(d[i] if strb >> i & 1 else old[i] for i in range(4))
            else:
                items.append((host.read_nowait(a), model.get(a, bytes(4)), a))
        await host.wait()
        got = {}
        while host.queue_rx:
            v, tid = host.queue_rx.popleft()
            got[tid] = v
        for tid, want, a in items:
            assert got.get(tid) == want, (hex(a), got.get(tid), want)
    for a, v in model.items():
        assert mem.read(a, 4) == v, hex(a)
    await host.write(0xC00, 0x1234, error_expected=True)
    await host.read(0xFFC, error_expected=True)
    await ClockCycles(dut.clk_i, 2)
    proto = int(dut.proto_err_o.value)
    _report({"obi_responder": {"words": len(model), "proto_err": proto,
                               "target_errors": len(resp.errors)}})
    assert proto == 0, f"OBI protocol checker flagged {proto:#x}"
    assert len(resp.errors) == 2 and resp.stall_cycles > 0


@cocotb.test()
async def parking(dut):
    ad = ObiMasterAdapter(s_bus(dut), dut.clk_i, period_ns=PERIOD)
    await setup(dut)
    assert ad.parked
    await ad.write(0x0, 0x11)
    assert ad.parked and int(dut.s_obi_req_i.value) == 0
    await ClockCycles(dut.clk_i, 50)
    assert await ad.read(0x0) == 0x11 and ad.parked
    _report({"obi_parking": {"parked": ad.parked}})


@cocotb.test()
async def never_grants(dut):
    dut.m_obi_gnt_i.value = 0
    dut.m_obi_rvalid_i.value = 0
    dut.m_obi_rdata_i.value = 0
    dut.m_obi_err_i.value = 0
    ad = ObiMasterAdapter(s_bus(dut), dut.clk_i, period_ns=PERIOD, timeout_cycles=40,
                          name="obi_mem")
    await setup(dut)
    try:
        await ad.read(0x900)
    except AdapterTimeout as e:
        msg = str(e)
    else:
        raise AssertionError("no timeout")
    await ad.write(0x4, 0x55)                            # usable again
    assert await ad.read(0x4) == 0x55
    _report({"obi_timeout": msg})
    assert "s_obi_gnt_o" in msg and "never grants" in msg and "0x00000900" in msg


@cocotb.test()
async def port_map(dut):
    from cosim.rtl.adapters import obi as obi_mod
    from cosim.rtl.adapters.factory import bring_up
    from cosim.rtl.portmap import PortMap, ports_from_dut
    pm = {"top": "obi_mem", "clock": {"port": "clk_i", "period_ns": PERIOD},
          "reset": {"port": "rst_ni"},
          "adapters": {"host": {"kind": "obi_slave", "prefix": "s_obi_"},
                       "mem": {"kind": "obi_master", "prefix": "m_obi_"}}}
    rpm = PortMap.from_dict(pm).resolve(ports_from_dut(dut))
    mem = ByteMemory(0x800, base=FWD)
    dut.bp_i.value = 0
    start_clock(dut.clk_i, rpm.period_ns)
    ad = {n: obi_mod.BUILDERS[ra.kind](dut, ra, dut.clk_i, dut.rst_ni, rpm, {"mem": mem})
          for n, ra in rpm.adapters.items()}
    await bring_up(dut, rpm)
    await ad["host"].write(0x0, 0xCAFEF00D)
    await ad["host"].write(0x804, 0x12345678)
    assert await ad["host"].read(0x0) == 0xCAFEF00D
    assert mem.read(0x804, 4) == (0x12345678).to_bytes(4, "little")
    assert await ad["host"].read(0x804) == 0x12345678
    _report({"obi_port_map": True})


@cocotb.test()
async def checker_is_live(dut):
    """The checker flags a manager that drops req before gnt and changes addr meanwhile."""
    from cocotb.triggers import RisingEdge
    await setup(dut, bp=0)
    dut.m_obi_gnt_i.value = 0
    dut.m_obi_rvalid_i.value = 0
    dut.s_obi_addr_i.value = 0x900                       # forwarded: never granted
    dut.s_obi_we_i.value = 0
    dut.s_obi_be_i.value = 0xF
    dut.s_obi_wdata_i.value = 0
    dut.s_obi_rready_i.value = 1
    dut.s_obi_req_i.value = 1
    await RisingEdge(dut.clk_i)
    dut.s_obi_addr_i.value = 0x904                       # changed while waiting
    await RisingEdge(dut.clk_i)
    dut.s_obi_req_i.value = 0                            # dropped before gnt
    await ClockCycles(dut.clk_i, 2)
    proto = int(dut.proto_err_o.value)
    _report({"obi_checker": proto})
    assert proto & 0b011 == 0b011, proto
