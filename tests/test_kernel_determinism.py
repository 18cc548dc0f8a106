"""Determinism (design.md: one total order; seeded per-path RNGs): random process
networks give the identical event trace when re-run with the same seed and when their
processes, events and signals are created in another order; RNGs depend only on
(seed, path), never on PYTHONHASHSEED."""
from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

import tlm
from tlm import Module, Signal, Simulator, rng_for

N_EVENTS = 3
N_SIGNALS = 2
HORIZON = 400

# One action of a process program; see ``simulate`` for what each does.
_ev = st.integers(0, N_EVENTS - 1)
_sig = st.integers(0, N_SIGNALS - 1)
ACTION = st.one_of(
    st.tuples(st.just("wait"), st.sampled_from([0, 0, 1, 3, 5, 10])),
    st.tuples(st.just("rwait"), st.integers(1, 9)),
    st.tuples(st.just("notify"), _ev, st.sampled_from([None, 0, 2, 7])),
    st.tuples(st.just("cancel"), _ev),
    st.tuples(st.just("any"), _ev, _ev, st.sampled_from([0, 4, 15])),
    st.tuples(st.just("all"), _ev, _ev),
    st.tuples(st.just("write"), _sig, st.integers(0, 3)),
    st.tuples(st.just("watch"), _sig, st.sampled_from([3, 12])),
    st.tuples(st.just("sched"), _ev, st.sampled_from([0, 1, 6])),
    st.tuples(st.just("spawn"), _ev, st.sampled_from([0, 2, 5])),
    st.tuples(st.just("post"), _ev, st.sampled_from([1, 4])),
)
PROGRAMS = st.lists(st.lists(ACTION, min_size=1, max_size=8), min_size=1, max_size=6)


def simulate(programs, seed, order=None, obj_order=None):
    """Build the network (process i runs ``programs[i]`` as ``top.p<i>.run``), creating
    the modules in ``order`` and the events/signals in ``obj_order``; run it and return
    the trace of (time, delta, who, what) records plus final values."""
    sim = Simulator(seed)
    top = Module(sim, "top")
    trace: list = []

    def rec(who, *what):
        trace.append((sim.now, sim.delta, who, *what))

    events: dict[int, tlm.Event] = {}
    signals: dict[int, Signal] = {}
    for k in obj_order or range(N_EVENTS + N_SIGNALS):
        if k < N_EVENTS:
            events[k] = top.event(f"e{k}")
        else:
            signals[k - N_EVENTS] = Signal(sim, f"top.s{k - N_EVENTS}", 0)

    def make(mod, program):
        async def run():
            children = 0
            posts = 0
            for act in program:
                kind = act[0]
                if kind == "wait":
                    await sim.wait(act[1])
                elif kind == "rwait":
                    await sim.wait(int(mod.rng.integers(0, act[1])))
                elif kind == "notify":
                    events[act[1]].notify(act[2])
                elif kind == "cancel":
                    events[act[1]].cancel()
                elif kind == "any":
                    r = await sim.any_of(events[act[1]], events[act[2]], timeout=act[3])
                    rec(mod.path, "any", r.name if r else None)
                    continue
                elif kind == "all":
                    await sim.all_of(events[act[1]], events[act[2]])
                elif kind == "write":
                    signals[act[1]].write(act[2] + len(mod.name))
                elif kind == "watch":
                    r = await sim.any_of(signals[act[1]].changed, timeout=act[2])
                    rec(mod.path, "watch", r is not None, signals[act[1]].read())
                    continue
                elif kind == "sched":
                    ev = events[act[1]]
                    sim.schedule(act[2], lambda ev=ev, who=mod.path: (rec(who, "cb", ev.name),
                                                                      ev.notify()))
                elif kind == "spawn":
                    children += 1
                    name = f"{mod.path}.child{children}"

                    async def child(ev=events[act[1]], d=act[2], name=name):
                        await sim.wait(d)
                        rec(name, "child")
                        ev.notify(0)
                        return d

                    proc = sim.spawn(child(), name)
                    if act[2] == 2:
                        rec(mod.path, "joined", await proc)
                elif kind == "post":
                    posts += 1
                    ev = events[act[1]]
                    sim.post(sim.now + act[2], (mod.path, posts),
                             lambda ev=ev, who=mod.path: (rec(who, "link", ev.name), ev.notify()))
                rec(mod.path, *act)
            return len(program)
        return run

    for i in order or range(len(programs)):
        m = Module(top, f"p{i}")
        m.spawn(make(m, programs[i])(), "run")
    end = sim.run(until=HORIZON)
    return trace, [signals[k].read() for k in range(N_SIGNALS)], end


@settings(max_examples=40, deadline=None)
@given(programs=PROGRAMS, seed=st.integers(0, 2**32 - 1), shuffle_seed=st.integers(0, 2**16))
def test_same_seed_same_trace_regardless_of_creation_order(programs, seed, shuffle_seed):
    """Re-running, and creating processes/events/signals in a shuffled order, gives the
    identical trace; the trace is ordered by (time, delta)."""
    ref = simulate(programs, seed)
    assert simulate(programs, seed) == ref
    shuf = random.Random(shuffle_seed)
    order = list(range(len(programs)))
    shuf.shuffle(order)
    obj_order = list(range(N_EVENTS + N_SIGNALS))
    shuf.shuffle(obj_order)
    assert simulate(programs, seed, order, obj_order) == ref
    stamps = [(t, d) for t, d, *_ in ref[0]]
    assert stamps == sorted(stamps)


def test_seed_drives_random_delays():
    """The per-module RNG really feeds the trace: another seed changes it, the same seed
    reproduces it."""
    programs = [[("rwait", 1000), ("rwait", 1000), ("notify", 0, None)]] * 3
    a = simulate(programs, seed=1)
    assert a == simulate(programs, seed=1)
    assert a != simulate(programs, seed=2)
    times = [t for t, *_ in a[0]]
    assert len(set(times)) > 1


def test_initial_start_order_is_name_order_not_creation_order():
    """Two processes racing on one signal in the same delta: the last writer in name order
    wins however they were created."""
    progs = [[("write", 0, 0)], [("write", 0, 0)], [("write", 0, 0)]]
    results = {tuple(simulate(progs, 0, order)[1]) for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0])}
    assert results == {(len("p2"), 0)}


# ----- RNG --------------------------------------------------------------------------------------
def test_module_rng_stable_for_seed_and_path():
    def draws(seed, path):
        sim = Simulator(seed)
        parts = path.split(".")
        m = Module(sim, parts[0])
        for p in parts[1:]:
            m = Module(m, p)
        assert m.rng is m.rng
        return m.rng.integers(0, 2**32, 8).tolist()

    a = draws(7, "soc.l2")
    assert a == draws(7, "soc.l2")
    assert a == rng_for(7, "soc.l2").integers(0, 2**32, 8).tolist()
    assert a != draws(7, "soc.l3")
    assert a != draws(8, "soc.l2")
    assert draws(7, "cluster.rbe") != draws(7, "cluster.dma")


def test_rng_for_golden_values():
    """The derivation (SHA-256 of the path + seed -> SeedSequence -> PCG64) is pinned:
    a change would silently change every scenario's random streams."""
    raw = rng_for(2024, "soc.l2").bit_generator.random_raw(3).tolist()
    assert raw == [11459024794895734007, 9719428786804969715, 10941104819754520158]


_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from tlm import rng_for
import test_kernel_determinism as t
programs = [[("rwait", 50), ("post", 0, 1), ("any", 0, 1, 15), ("write", 0, 2)],
            [("notify", 1, 7), ("spawn", 0, 2), ("watch", 0, 12), ("rwait", 30)],
            [("sched", 0, 6), ("all", 0, 1), ("write", 0, 1)]]
trace, values, end = t.simulate(programs, 99)
print(json.dumps({"rng": {p: rng_for(5, p).integers(0, 2**32, 4).tolist()
                          for p in ("a", "soc.l2", "cluster.core[3]")},
                  "trace": trace, "values": values, "end": end}))
"""


def test_results_do_not_depend_on_pythonhashseed():
    """The same draws and the same trace under two PYTHONHASHSEED values."""
    here = pathlib.Path(__file__).parent
    root = pathlib.Path(tlm.__file__).resolve().parent.parent
    outs = []
    for hs in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hs,
                   PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
        res = subprocess.run([sys.executable, "-c", _CHILD, str(here)], env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        outs.append(json.loads(res.stdout))
    assert outs[0] == outs[1]
    assert outs[0]["rng"]["soc.l2"] == rng_for(5, "soc.l2").integers(0, 2**32, 4).tolist()
    assert len(outs[0]["trace"]) > 5
