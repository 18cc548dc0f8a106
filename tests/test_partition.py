"""Partition maps: parsing, the cutting rules (errors before anything starts), automatic
partitioning, activation of one partition in a process (cosim/distributed/partition.py)."""
from __future__ import annotations

import pytest

from cosim.distributed import (PartitionError, auto_partition, build_platform, parse_partition,
                        plan, prepare, run_distributed, units)
from cosim.distributed.partition import Assignment, activate
from tlm import Link, Memory, Module, Simulator

RING = "support.dist_platforms:ring"
_built: list[Simulator] = []


@pytest.fixture(autouse=True)
def _discard_platforms():
    """Platforms built here only for checks never run: close their processes."""
    yield
    while _built:
        _built.pop().discard()


def ring(**cfg):
    sim = build_platform(RING, {"nodes": 3, "rounds": 2, **cfg})
    _built.append(sim)
    return sim


# ----- parsing --------------------------------------------------------------------------------------
def test_parse_cli_syntax():
    assert parse_partition("soc,hyperram|cluster") == [["soc", "hyperram"], ["cluster"]]
    assert parse_partition(" a , b | c ") == [["a", "b"], ["c"]]


@pytest.mark.parametrize("bad", ["", "a||b", "a,|b", "|"])
def test_parse_rejects_empty_names(bad):
    with pytest.raises(PartitionError):
        parse_partition(bad)


# ----- rules ----------------------------------------------------------------------------------------
def test_valid_plan_names_cut_links_and_lookahead():
    sim = ring(latency_ns=[5, 7, 3])
    p = plan(sim, "node0|node1,node2")
    assert p.groups == [["node0"], ["node1", "node2"]]
    assert p.cut_links == ["link0", "link2"]          # link1 joins node1 and node2
    assert p.lookahead == 3_000                        # min latency of the cut links (ps)
    assert plan(sim, "node0,node1,node2").lookahead is None


def test_unknown_component_is_named_with_a_suggestion():
    with pytest.raises(PartitionError, match=r"unknown component 'nod1'.*did you mean node1"):
        plan(ring(), "node0|nod1,node2")


def test_component_in_two_partitions():
    with pytest.raises(PartitionError, match=r"'node1' is in two partitions \(groups 0 and 1\)"):
        plan(ring(), "node0,node1|node1,node2")


def test_component_in_no_partition_and_the_rest_group():
    with pytest.raises(PartitionError, match=r"node2 are in no partition"):
        plan(ring(), "node0|node1")
    assert plan(ring(), "node0|*").groups == [["node0"], ["node1", "node2"]]


def test_links_are_cut_not_placed():
    with pytest.raises(PartitionError, match="inside\\) a link"):
        plan(ring(), "node0,link0|node1,node2")


def test_cutting_a_zero_latency_binding_is_refused_and_named():
    sim = ring()
    with pytest.raises(PartitionError) as ei:
        plan(sim, "node0.gen|node0|node1,node2")        # node0 minus its generator
    msg = str(ei.value)
    assert "node0.gen.socket -> node0.xbar.target" in msg
    assert "zero-latency" in msg


def test_link_sockets_belong_to_the_side_they_serve():
    """link0's transport initiator socket serves node1 (the target side): moving node1.mem
    away from node1 cuts the link's own zero-latency binding, named as such."""
    sim = ring()
    with pytest.raises(PartitionError, match=r"link0\.bus_out -> node1\.mem\.socket"):
        plan(sim, "node0,node1.mem|node1|node2")
    with pytest.raises(PartitionError, match=r"link0: side a \('node0'\) is in no partition"):
        plan(sim, "node0.gen,node0.xbar,node0.mem,node0.log|node1|node2")


def test_prepare_checks_before_any_process_starts(tmp_path):
    with pytest.raises(PartitionError, match="two partitions"):
        run_distributed(RING, {"nodes": 3}, "node0|node0,node1,node2")
    with pytest.raises(PartitionError, match="cannot be loaded"):
        prepare("cosim.distributed.nowhere:ring", {}, "a")


def test_initial_process_outside_every_component_is_refused():
    sim = ring()

    async def stray():
        await sim.wait(1)

    sim.spawn(stray(), "stray")
    with pytest.raises(PartitionError, match="stray"):
        plan(sim, "node0|node1|node2")


# ----- automatic partition -------------------------------------------------------------------------
def test_auto_partition_balances_atoms_deterministically():
    sim = ring(nodes=5)
    assert units(sim) == [f"node{i}" for i in range(5)]
    assert auto_partition(sim, 2) == [["node0", "node2", "node4"], ["node1", "node3"]]
    assert auto_partition(sim, 2, weights={"node0": 4}) == [["node0"], ["node1", "node2", "node3", "node4"]]
    groups = auto_partition(sim, 3)
    assert sorted(p for g in groups for p in g) == units(sim)
    plan(sim, groups)                                   # respects every rule


def test_auto_partition_keeps_bound_components_together_and_refuses_too_many():
    sim = Simulator()
    a, b = Module(sim, "a"), Module(sim, "b")
    Module(sim, "c")
    from tlm import InitiatorSocket
    ini = InitiatorSocket(a, "socket")
    mem = Memory(b, "mem", 64)
    ini.bind(mem.socket)                                # a and b are one atom
    link = Link(sim, "l", side_a="b", side_b="c", min_latency=10)
    link.event("e")
    assert auto_partition(sim, 2) == [["a", "b"], ["c"]]
    with pytest.raises(PartitionError, match=r"cannot split into 3 processes: the platform has "
                                             r"only 2 group\(s\).*a,b; c"):
        auto_partition(sim, 3)


# ----- activation -----------------------------------------------------------------------------------
def test_activation_keeps_own_processes_and_routes_cut_links():
    sim = ring()
    sent = []
    cut = activate(sim, Assignment([["node0"], ["node1", "node2"]]), 0,
                   lambda link: (lambda *a: sent.append(a[:2])))
    assert cut == ["link0", "link2"]
    sim.elaborate()
    assert [p.name for p in sim._runnable] == ["node0.gen.run"]


def test_activity_scheduled_at_construction_is_refused():
    sim = ring()
    sim.schedule(5, lambda: None)
    with pytest.raises(PartitionError, match="scheduled activity while being built"):
        activate(sim, Assignment([["node0"], ["node1", "node2"]]), 0, lambda link: None)
