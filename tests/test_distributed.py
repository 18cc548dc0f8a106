"""Distributed runs give the same result dict as one process (times, statistics, memory
digests, errors, hash), whatever the partition (cosim/distributed)."""
from __future__ import annotations

import struct

import pytest

from cosim.distributed import (DistributedError, build_platform, comparable, run_distributed,
                        run_local)
from tlm import NS

RING = "support.dist_platforms:ring"
STREAM = "support.dist_platforms:stream"
IDLE = "support.dist_platforms:idle"
RING_CFG = {"nodes": 3, "rounds": 12, "seed": 7}


@pytest.fixture(scope="module")
def ring_local():
    return run_local(RING, RING_CFG)


def test_single_process_result_structure(ring_local):
    r = ring_local
    assert set(r) == {"time", "stopped", "stats", "errors", "memories", "link_events", "hash",
                      "manifest", "collected"}
    assert r["collected"] == [{}]      # the ring builder returns nothing to collect
    assert r["stopped"] == "quiescence" and r["time"] > 0
    assert r["stats"]["node1.gen"]["rounds"] == 12 and r["stats"]["node1.gen"]["mismatches"] == 0
    # two deliberate access errors per node: unmapped locally, past the remote memory's end
    assert len(r["errors"]) == 6
    assert {e["where"] for e in r["errors"]} == {f"node{i}.{w}" for i in range(3) for w in ("xbar", "mem")}
    assert set(r["memories"]) == {f"node{i}.{m}" for i in range(3) for m in ("mem", "log")}
    assert len(r["hash"]) == 64
    assert set(r["manifest"]["versions"]) >= {"python", "numpy", "pyzmq", "msgpack", "tlm-cosim"}


#: a second and third partition of the same invariance run in the slow set
OTHER_CUT = pytest.mark.slow(reason="the same invariance on another cut: test_partition_invariance[node0|node1,node2] "
                                    "and test_automatic_partition_is_invariant_too")


@pytest.mark.parametrize("partition", ["node0|node1,node2", pytest.param("node0,node2|node1", marks=OTHER_CUT),
                                       pytest.param("node0|node1|node2", marks=OTHER_CUT)])
def test_partition_invariance(ring_local, partition):
    r = run_distributed(RING, RING_CFG, partition)
    assert comparable(r) == comparable(ring_local)
    m = r["manifest"]
    assert m["partition"] == [g.split(",") for g in partition.split("|")]
    assert m["lookahead"] == 5 * NS and m["windows"] > 0 and m["events_routed"] > 0


def test_automatic_partition_is_invariant_too(ring_local):
    r = run_distributed(RING, RING_CFG, processes=2)
    assert comparable(r) == comparable(ring_local)
    assert r["manifest"]["processes"] == 2


def test_same_time_ties_from_different_links_are_ordered_by_key():
    """node1 receives link0's interrupt (from node0) and link1's acknowledge (from node2) at
    the same picosecond; it logs arrivals in order. In one process that order is the key
    order (link0 before link1); the memory digest proves every partition does the same,
    including the one where the two senders are two other processes."""
    sim = build_platform(RING, RING_CFG)
    sim.run()
    log = sim.modules["node1.log"].array.tobytes()
    recs = [struct.unpack_from("<QBxxxI", log, i * 16) for i in range(64)]
    by_time: dict[int, list[int]] = {}
    for t, src, _ in recs:
        if t:
            by_time.setdefault(t, []).append(src)
    ties = [srcs for srcs in by_time.values() if len(set(srcs)) > 1]
    assert len(ties) >= 10 and all(s[:2] == [1, 2] for s in ties)
    local = run_local(RING, RING_CFG)
    split = run_distributed(RING, RING_CFG, "node0|node1|node2")
    assert split["memories"]["node1.log"] == local["memories"]["node1.log"]


def test_unequal_latencies_and_max_time():
    cfg = {**RING_CFG, "latency_ns": [4, 9, 6]}
    for max_time in (None, 700 * NS):
        local = run_local(RING, cfg, max_time=max_time)
        split = run_distributed(RING, cfg, "node0|node1|node2", max_time=max_time)
        assert comparable(split) == comparable(local)
        assert split["manifest"]["lookahead"] == 4 * NS
    assert local["stopped"] == "max_time" and local["time"] < 700 * NS


def test_end_time_ignores_stale_entries():
    cfg = {**RING_CFG, "stale_tail": True}
    local = run_local(RING, cfg)
    assert local["time"] == run_local(RING, RING_CFG)["time"]
    assert comparable(run_distributed(RING, cfg, "node0|node1,node2")) == comparable(local)


def test_payload_bytes_travel_as_raw_frames():
    cfg = {"ticks": 30, "batch": 20, "payload": 300}
    local = run_local(STREAM, cfg)
    split = run_distributed(STREAM, cfg, "src|dst")
    assert comparable(split) == comparable(local)
    assert split["stats"]["dst.cons"]["events"] == 600
    assert split["stats"]["pipe"]["messages_a_to_b"] == 630


def test_without_cut_links_one_window_runs_to_the_end():
    cfg = {"nodes": 2, "rounds": 50}
    local = run_local(IDLE, cfg)
    one = run_distributed(IDLE, cfg, "node0,node1")
    assert comparable(one) == comparable(local)
    assert one["manifest"]["lookahead"] is None and one["manifest"]["windows"] == 1


def test_hash_tracks_the_simulation(ring_local):
    other = run_local(RING, {**RING_CFG, "seed": 8})
    assert other["hash"] != ring_local["hash"]
    assert other["stats"] == ring_local["stats"] or other["memories"] != ring_local["memories"]


def test_an_event_in_the_receivers_past_aborts_naming_link_time_and_worker():
    """A send with a negative delay is due inside the current window: across processes it
    would arrive in the receiver's past, a hard error (in one process it slips through)."""
    cfg = {**RING_CFG, "early": {"node": 0, "round": 2, "by_ps": 4999}}
    with pytest.raises(DistributedError) as ei:
        run_distributed(RING, cfg, "node0|node1,node2")
    e = ei.value
    assert e.worker == "w0" and e.components == ["node0"] and e.exit_code == 3
    assert "link link0" in str(e) and "receiver's past" in str(e) and e.time is not None
