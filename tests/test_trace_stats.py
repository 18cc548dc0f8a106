"""Statistics (per-path counters, providers, sorted output) and tracing (spans, instants,
Chrome trace-event JSON) — tlm/stats.py, tlm/trace.py."""
from __future__ import annotations

import io
import json

from tlm import NS, US, READ, WRITE, Memory, Router, StatsRegistry, Tracer, write_chrome_trace
from tlm.module import Module
from tlm.trace import TraceRecord


# ----- statistics --------------------------------------------------------------------------------
def test_stat_scope_operations(top):
    """add accumulates, set overwrites, max keeps the largest, get has a default."""
    s = top.stats
    assert s.path == "top"
    s.add("hits")
    s.add("hits", 4)
    s.add("bytes", 2.5)
    s.set("state", "idle")
    s.max("peak", 3)
    s.max("peak", 1)
    s.max("peak", 7)
    s.max("low", -5)
    assert s.values == {"hits": 5, "bytes": 2.5, "state": "idle", "peak": 7, "low": -5}
    assert s.get("hits") == 5 and s.get("nope") == 0 and s.get("nope", None) is None


def test_registry_sorted_and_merged_with_providers():
    """as_dict sorts paths and names, merges providers into the scope of their path
    (provider values win), and drops empty paths."""
    reg = StatsRegistry()
    reg.scope("soc.l2").add("z_last", 1)
    reg.scope("soc.l2").add("a_first", 2)
    reg.scope("cluster").add("x", 3)
    reg.scope("empty")
    reg.add_provider("soc.l2", lambda: {"m_mid": 9, "a_first": 20})
    reg.add_provider("accel", lambda: {"ops": 4})
    out = reg.as_dict()
    assert list(out) == ["accel", "cluster", "soc.l2"]
    assert list(out["soc.l2"].items()) == [("a_first", 20), ("m_mid", 9), ("z_last", 1)]
    assert reg.get("cluster", "x") == 3 and reg.get("nowhere", "x", -1) == -1
    assert reg.scope("cluster") is reg.scope("cluster")


def test_providers_are_read_at_collection_time(sim, top, make_initiator, run_proc):
    """Components keep hot counters in attributes; the registry reads them when asked."""
    bus = Router(top, "bus")
    mem = Memory(top, "mem", 64)
    bus.map(0x100, 64, mem.socket)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)
    before = sim.stats.as_dict()
    assert before["top.mem"]["reads"] == 0

    async def go():
        await cpu.access(WRITE, 0x100, bytearray(8))
        await cpu.access(READ, 0x104, length=4)
        await cpu.access(READ, 0x104, length=4)

    run_proc(go)
    after = sim.stats.as_dict()
    assert after["top.mem"] == {"busy_ps": 0, "bytes_read": 8, "bytes_written": 8,
                                "reads": 2, "writes": 1}
    assert after["top.bus"] == {"mem.busy_ps": 0, "mem.bytes": 16, "mem.transactions": 3}
    assert sim.stats.get("top.mem", "reads") == 2


# ----- tracing ---------------------------------------------------------------------------------
def test_tracer_spans_instants_and_tokens(sim, top):
    m = Module(top, "dma")
    m.trace_span("ignored", 0, 10)          # tracing off: nothing happens, no error
    tr = sim.tracer = Tracer(sim)

    async def go():
        await sim.wait(5 * NS)
        m.trace_span("burst", 5 * NS, 9 * NS, bytes=64)
        tr.instant("top.irq", "fire", line=3)
        tok = tr.begin("top.dma", "job", id=1)
        await sim.wait(2 * NS)
        tr.end(tok, status="ok")

    sim.spawn(go(), "p")
    sim.run()
    assert tr.records == [
        TraceRecord("top.dma", "burst", 5000, 9000, {"bytes": 64}),
        TraceRecord("top.irq", "fire", 5000, None, {"line": 3}),
        TraceRecord("top.dma", "job", 5000, 7000, {"id": 1, "status": "ok"}),
    ]


def test_tracer_limit_counts_dropped(sim):
    tr = Tracer(sim, limit=2)
    for i in range(5):
        tr.span("a", f"s{i}", i, i + 1)
    assert [r.name for r in tr.records] == ["s0", "s1"] and tr.dropped == 3


def test_chrome_trace_json(sim):
    """Valid trace-event JSON: process and thread-name metadata (one track per path,
    numbered in path order), X events with ts/dur in microseconds, instant events."""
    records = [
        TraceRecord("soc.l2", "read", 3 * US, 3 * US + 1500 * NS, {"bytes": 64}),
        TraceRecord("cluster.dma", "copy", 1 * US, 4 * US, {}),
        TraceRecord("soc.l2", "irq", 2 * US, None, {}),
    ]
    buf = io.StringIO()
    write_chrome_trace(records, buf, process_name="demo")
    doc = json.loads(buf.getvalue())
    assert doc["displayTimeUnit"] == "ns"
    ev = doc["traceEvents"]
    meta = [e for e in ev if e["ph"] == "M"]
    assert {"ph": "M", "pid": 1, "tid": 0, "name": "process_name",
            "args": {"name": "demo"}} in meta
    threads = {e["args"]["name"]: e["tid"] for e in meta if e["name"] == "thread_name"}
    assert threads == {"cluster.dma": 1, "soc.l2": 2}
    body = [e for e in ev if e["ph"] != "M"]
    assert body == [
        {"name": "copy", "pid": 1, "tid": 1, "ts": 1.0, "ph": "X", "dur": 3.0},
        {"name": "irq", "pid": 1, "tid": 2, "ts": 2.0, "ph": "i", "s": "t"},
        {"name": "read", "pid": 1, "tid": 2, "ts": 3.0, "ph": "X", "dur": 1.5,
         "args": {"bytes": 64}},
    ]


def test_chrome_trace_of_an_empty_run(sim):
    buf = io.StringIO()
    write_chrome_trace([], buf)
    doc = json.loads(buf.getvalue())
    assert doc["traceEvents"] == [{"ph": "M", "pid": 1, "tid": 0, "name": "process_name",
                                   "args": {"name": "simulation"}}]
