"""Kernel ordering semantics: immediate / delta / timed notification and their override
rules, delta cycles, waits on time / events / any_of / all_of / processes, run(until),
next_event_time, schedule and link posts (tlm/kernel.py)."""
from __future__ import annotations

import pytest

from tlm import CausalityError, NS, ProcessError, SimulationError, Simulator


def stamp(sim, log, tag):
    log.append((tag, sim.now, sim.delta))


# ----- timed and delta waits --------------------------------------------------------------
def test_wait_time_and_delta_counts(sim):
    """wait(0) advances one delta at the same time; wait(d) moves time and resets delta."""
    log = []

    async def p():
        stamp(sim, log, "start")
        await sim.wait(0)
        stamp(sim, log, "d1")
        await sim.wait()
        stamp(sim, log, "d2")
        await sim.wait(7)
        stamp(sim, log, "t7")
        await sim.wait(0)
        stamp(sim, log, "t7d1")

    sim.spawn(p(), "p")
    assert sim.run() == 7
    assert log == [("start", 0, 0), ("d1", 0, 1), ("d2", 0, 2), ("t7", 7, 0), ("t7d1", 7, 1)]


def test_wait_until_absolute(sim):
    """wait_until(t) resumes exactly at absolute time t."""
    log = []

    async def p():
        await sim.wait(3)
        await sim.wait_until(10)
        stamp(sim, log, "at10")
        await sim.wait_until(10)  # now: a zero wait, i.e. one delta
        stamp(sim, log, "again")

    sim.spawn(p(), "p")
    sim.run()
    assert log == [("at10", 10, 0), ("again", 10, 1)]


def test_timed_wakeups_same_time_keep_sequence_order(sim):
    """Processes waking at the same time run in the order they started waiting."""
    log = []

    async def p(name, first, second):
        await sim.wait(first)
        await sim.wait(second)
        log.append((name, sim.now))

    sim.spawn(p("a", 5, 5), "a")   # waits for t=10 at t=5
    sim.spawn(p("b", 2, 8), "b")   # waits for t=10 at t=2 (earlier): runs first
    sim.spawn(p("c", 0, 10), "c")  # waits for t=10 at t=0 (earliest)
    sim.run()
    assert log == [("c", 10), ("b", 10), ("a", 10)]


# ----- event notification kinds ------------------------------------------------------------
def test_immediate_notification_wakes_in_same_delta(sim):
    """notify() wakes waiters in the current evaluation phase (same time, same delta)."""
    ev = sim.event("ev")
    log = []

    async def waiter():
        await ev
        stamp(sim, log, "woke")

    async def notifier():
        await sim.wait(5)
        stamp(sim, log, "notify")
        ev.notify()

    sim.spawn(waiter(), "a")
    sim.spawn(notifier(), "b")
    sim.run()
    assert log == [("notify", 5, 0), ("woke", 5, 0)]


def test_delta_notification_wakes_next_delta(sim):
    """notify(0) wakes waiters one delta later at the same time."""
    ev = sim.event("ev")
    log = []

    async def waiter():
        await ev
        stamp(sim, log, "woke")

    async def notifier():
        await sim.wait(5)
        ev.notify(0)

    sim.spawn(waiter(), "a")
    sim.spawn(notifier(), "b")
    sim.run()
    assert log == [("woke", 5, 1)]


def test_timed_notification(sim):
    """notify(d) wakes waiters at now + d, delta 0."""
    ev = sim.event("ev")
    log = []

    async def waiter():
        await ev
        stamp(sim, log, "woke")

    async def notifier():
        await sim.wait(5)
        ev.notify(12)

    sim.spawn(waiter(), "a")
    sim.spawn(notifier(), "b")
    sim.run()
    assert log == [("woke", 17, 0)]


def test_immediate_notify_without_waiters_is_lost(sim):
    """Events carry no memory: a waiter that arrives after notify() is not woken."""
    ev = sim.event("ev")
    log = []

    async def notifier():
        ev.notify()

    async def waiter():
        await sim.wait(0)
        r = await sim.any_of(ev, timeout=10)
        log.append((r, sim.now))

    sim.spawn(notifier(), "a")
    sim.spawn(waiter(), "b")
    sim.run()
    assert log == [(None, 10)]


def wake_times(sim, ev, notifies, rewait=True):
    """Run a waiter that waits on ``ev`` repeatedly and a driver that performs
    ``notifies`` (list of (at_time, delay-or-'cancel')); return the waiter's wake stamps."""
    log = []

    async def waiter():
        while True:
            await ev
            stamp(sim, log, "woke")
            if not rewait:
                return

    async def driver():
        for at, what in notifies:
            if at > sim.now:
                await sim.wait_until(at)
            if what == "cancel":
                ev.cancel()
            else:
                ev.notify(what)

    sim.spawn(waiter(), "a")
    sim.spawn(driver(), "b")
    sim.run(until=1000)
    return log


def test_earlier_timed_notification_overrides_later(sim):
    """A pending notify(10) is replaced by a later call's earlier notify(5)."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(0, 10), (0, 5)]) == [("woke", 5, 0)]


def test_later_timed_notification_is_ignored(sim):
    """A pending notify(5) ignores a subsequent notify(10)."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(0, 5), (0, 10)]) == [("woke", 5, 0)]


def test_delta_overrides_pending_timed(sim):
    """A delta notification beats a pending timed one, which is then dropped."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(2, 10), (3, 0)]) == [("woke", 3, 1)]


def test_timed_does_not_override_pending_delta(sim):
    """A pending delta notification is not replaced by a timed one."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(3, 0), (3, 4)]) == [("woke", 3, 1)]


def test_immediate_cancels_pending(sim):
    """notify() fires now and cancels the pending timed notification."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(0, 50), (20, None)]) == [("woke", 20, 0)]


def test_immediate_cancels_pending_delta(sim):
    """notify() fires now and cancels a pending delta notification."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(4, 0), (4, None)]) == [("woke", 4, 0)]


def test_cancel_drops_pending_notification(sim):
    """cancel() removes a pending timed notification: the waiter never wakes."""
    ev = sim.event("ev")
    assert wake_times(sim, ev, [(0, 50), (10, "cancel")]) == []
    assert not ev.pending


def test_notify_after_cancel_and_after_fire(sim):
    """After cancel() or after firing, a new notification is scheduled normally."""
    ev = sim.event("ev")
    log = wake_times(sim, ev, [(0, 50), (10, "cancel"), (10, 30), (40, 0), (41, 5)])
    assert log == [("woke", 40, 0), ("woke", 40, 1), ("woke", 46, 0)]


def test_pending_property(sim):
    """Event.pending reflects a scheduled delta or timed notification."""
    ev = sim.event("ev")
    assert not ev.pending
    ev.notify(10)
    assert ev.pending
    ev.cancel()
    assert not ev.pending
    ev.notify(0)
    assert ev.pending
    sim.run()
    assert not ev.pending


def test_event_callbacks_fire_each_time(sim):
    """add_callback is static sensitivity: called on every firing until removed."""
    ev = sim.event("ev")
    calls = []

    def cb(e):
        calls.append((e.name, sim.now))

    ev.add_callback(cb)

    async def p():
        ev.notify(5)
        await sim.wait(5)
        ev.notify()
        ev.notify(3)
        await sim.wait(3)
        ev.remove_callback(cb)
        ev.notify()

    sim.spawn(p(), "p")
    sim.run()
    assert calls == [("ev", 5), ("ev", 5), ("ev", 8)]


def test_delta_notified_callback_sees_next_delta():
    """An event callback triggered by notify(0) runs at the same (time, delta) as the
    processes the notification wakes."""
    sim = Simulator()
    ev = sim.event("ev")
    log = []
    ev.add_callback(lambda e: stamp(sim, log, "callback"))

    async def waiter():
        await ev
        stamp(sim, log, "process")

    async def notifier():
        ev.notify(0)

    sim.spawn(waiter(), "a")
    sim.spawn(notifier(), "b")
    sim.run()
    assert log == [("callback", 0, 1), ("process", 0, 1)]


# ----- any_of / all_of ---------------------------------------------------------------------
def test_any_of_returns_fired_event_and_loser_does_not_wake_later(sim):
    """any_of returns the event that fired; the other event (and the timeout) must not
    wake the process later while it waits on something else."""
    e1, e2, e3 = sim.event("e1"), sim.event("e2"), sim.event("e3")
    log = []

    async def waiter():
        r = await sim.any_of(e1, e2, timeout=100)
        log.append((r.name if r else None, sim.now))
        await e3
        log.append(("e3", sim.now))

    async def driver():
        e2.notify(10)
        e1.notify(20)
        e3.notify(200)

    sim.spawn(waiter(), "a")
    sim.spawn(driver(), "b")
    sim.run()
    assert log == [("e2", 10), ("e3", 200)]


def test_any_of_timeout_returns_none(sim):
    """any_of with a timeout that expires first evaluates to None; a later event does
    not wake the process again."""
    e1, e2 = sim.event("e1"), sim.event("e2")
    log = []

    async def waiter():
        r = await sim.any_of(e1, timeout=30)
        log.append((r, sim.now, sim.delta))
        r = await sim.any_of(e2)
        log.append((r.name, sim.now))

    async def driver():
        e1.notify(50)
        e2.notify(80)

    sim.spawn(waiter(), "a")
    sim.spawn(driver(), "b")
    sim.run()
    assert log == [(None, 30, 0), ("e2", 80)]


def test_any_of_timeout_only(sim):
    """any_of() with no events and a timeout is a plain timed wait returning None."""
    async def p():
        r = await sim.any_of(timeout=25)
        return r, sim.now

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (None, 25)


def test_any_of_event_beats_timeout_at_same_time(sim):
    """An event notified for the same time as the timeout, but scheduled earlier,
    wins (sequence order within a time)."""
    ev = sim.event("ev")

    async def p():
        ev.notify(10)
        r = await sim.any_of(ev, timeout=10)
        return r

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result is ev


def test_any_of_zero_timeout_is_one_delta(sim):
    """any_of(..., timeout=0) times out one delta later (a zero delay is a delta)."""
    ev = sim.event("ev")

    async def p():
        r = await sim.any_of(ev, timeout=0)
        return r, sim.now, sim.delta

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (None, 0, 1)


def test_all_of_waits_for_every_event(sim):
    """all_of resumes when the last of its events fires."""
    e1, e2, e3 = sim.event("e1"), sim.event("e2"), sim.event("e3")

    async def waiter():
        await sim.all_of(e1, e2, e3)
        return sim.now, sim.delta

    async def driver():
        e1.notify(5)
        e3.notify(0)
        e2.notify(40)

    w = sim.spawn(waiter(), "a")
    sim.spawn(driver(), "b")
    sim.run()
    assert w.result == (40, 0)


def test_all_of_ignores_notifications_before_the_wait(sim):
    """An event that fired before the all_of wait began does not count."""
    e1, e2 = sim.event("e1"), sim.event("e2")

    async def waiter():
        await sim.wait(10)
        await sim.all_of(e1, e2)
        return sim.now

    async def driver():
        e1.notify(5)      # before the wait: ignored
        e2.notify(20)
        await sim.wait(30)
        e1.notify()

    w = sim.spawn(waiter(), "a")
    sim.spawn(driver(), "b")
    sim.run()
    assert w.result == 30


def test_all_of_duplicates_and_empty(sim):
    """Duplicated events count once; all_of() of nothing returns immediately."""
    ev = sim.event("ev")

    async def p():
        await sim.all_of()
        t0 = (sim.now, sim.delta)
        ev.notify(3)
        await sim.all_of(ev, ev)
        return t0, sim.now

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == ((0, 0), 3)


def test_any_of_rejects_non_events(sim):
    """any_of/all_of accept Events only, and any_of needs an event or a timeout."""
    with pytest.raises(SimulationError, match="any_of"):
        sim.any_of("x")
    with pytest.raises(SimulationError, match="all_of"):
        sim.all_of(3)
    with pytest.raises(SimulationError, match="at least one event"):
        sim.any_of()


# ----- processes ------------------------------------------------------------------------------
def test_await_process_returns_result(sim):
    """Awaiting a process (directly or via sim.wait) waits for it and returns its result,
    in the same delta in which it finished."""
    log = []

    async def child():
        await sim.wait(15)
        return 42

    async def parent():
        c = sim.spawn(child(), "child")
        r1 = await c
        stamp(sim, log, "joined")
        r2 = await sim.wait(c)      # already done: returns at once
        r3 = await c
        return r1, r2, r3

    p = sim.spawn(parent(), "parent")
    sim.run()
    assert p.result == (42, 42, 42)
    assert log == [("joined", 15, 0)]


def test_several_processes_await_one(sim):
    """Every process awaiting another is resumed with its result."""
    async def child():
        await sim.wait(5)
        return "done"

    c = sim.spawn(child(), "c")

    async def w():
        return await c, sim.now

    ws = [sim.spawn(w(), f"w{i}") for i in range(3)]
    sim.run()
    assert [x.result for x in ws] == [("done", 5)] * 3
    assert c.done and c.result == "done"


def test_initial_processes_start_in_name_order(sim):
    """Initial processes start in name order, whatever the creation order."""
    log = []

    async def p(n):
        log.append(n)

    for n in ["m", "b", "z", "a"]:
        sim.spawn(p(n), n)
    sim.run()
    assert log == ["a", "b", "m", "z"]


def test_spawn_during_run_runs_in_same_delta(sim):
    """A process spawned while running starts in the current evaluation phase, after
    the processes already runnable."""
    log = []

    async def child(tag):
        stamp(sim, log, tag)

    async def parent():
        await sim.wait(4)
        sim.spawn(child("child"), "child")
        stamp(sim, log, "parent")

    async def other():
        await sim.wait(4)
        stamp(sim, log, "other")

    sim.spawn(parent(), "a")
    sim.spawn(other(), "b")
    sim.run()
    assert log == [("parent", 4, 0), ("other", 4, 0), ("child", 4, 0)]


def test_stop_after_current_delta(sim):
    """stop() ends run() after the current delta (update phase included); a new run()
    resumes where it stopped."""
    from tlm import Signal
    s = Signal(sim, "s", 0)
    log = []

    async def p():
        await sim.wait(5)
        s.write(1)
        sim.stop()
        await sim.wait(0)
        stamp(sim, log, "after")

    sim.spawn(p(), "p")
    assert sim.run(until=100) == 5
    assert s.read() == 1 and log == []
    assert sim.run(until=100) == 100
    assert log == [("after", 5, 1)]


# ----- run(until), next_event_time ----------------------------------------------------------
def test_run_until_excludes_activity_at_until(sim):
    """run(until=T) runs activity strictly before T, then now == T; the rest runs later."""
    log = []

    async def p():
        for _ in range(3):
            await sim.wait(10)
            stamp(sim, log, "tick")

    sim.spawn(p(), "p")
    assert sim.run(until=20) == 20
    assert log == [("tick", 10, 0)]
    assert sim.now == 20 and sim.delta == 0
    assert sim.next_event_time() == 20
    assert sim.run(until=21) == 21
    assert log == [("tick", 10, 0), ("tick", 20, 0)]
    assert sim.run() == 30
    assert log[-1] == ("tick", 30, 0)
    assert sim.next_event_time() is None


def test_run_until_with_nothing_to_do_sets_now(sim):
    """run(until=T) with an empty schedule still advances now to T."""
    assert sim.run(until=123) == 123
    assert sim.now == 123


def test_run_until_in_the_past_is_an_error(sim):
    sim.run(until=50)
    with pytest.raises(SimulationError, match="in the past"):
        sim.run(until=49)


def test_next_event_time(sim):
    """next_event_time: now if something is runnable, else the earliest timed activity,
    else None."""
    assert sim.next_event_time() is None

    async def p():
        await sim.wait(40)

    sim.spawn(p(), "p")
    assert sim.next_event_time() == 0      # initial process runnable now
    sim.run(until=10)
    assert sim.next_event_time() == 40
    sim.schedule(5, lambda: None)
    assert sim.next_event_time() == 15
    sim.run()
    assert sim.next_event_time() is None


def test_run_end_time_ignores_stale_entries():
    """run() stops at the last activity: a cancelled notification and a timeout that lost
    its any_of are not activity and must not move time forward."""
    sim = Simulator()
    ev, other = sim.event("ev"), sim.event("other")

    async def p():
        ev.notify(500)
        ev.cancel()
        other.notify(10)
        await sim.any_of(other, timeout=1000)

    sim.spawn(p(), "p")
    assert sim.run() == 10


# ----- schedule ------------------------------------------------------------------------------
def test_schedule_calls_in_order(sim):
    """schedule(d, fn, *args) calls fn at now+d; same-time calls keep scheduling order;
    schedule(0, ...) runs in the next delta."""
    log = []

    def cb(tag):
        log.append((tag, sim.now))

    sim.schedule(10, cb, "b")
    sim.schedule(5, cb, "a")
    sim.schedule(10, cb, "c")

    async def p():
        await sim.wait(5)
        sim.schedule(0, cb, "delta")
        log.append(("proc", sim.now))

    sim.spawn(p(), "p")
    sim.run()
    assert log == [("a", 5), ("proc", 5), ("delta", 5), ("b", 10), ("c", 10)]


def test_schedule_callback_effects_visible_to_processes_at_same_time(sim):
    """A callback due at t runs before the processes woken at t run, so an immediate
    notification from it wakes a waiter at t, delta 0."""
    ev = sim.event("ev")
    log = []

    async def waiter():
        await ev
        stamp(sim, log, "woke")

    sim.spawn(waiter(), "w")
    sim.schedule(8, ev.notify)
    sim.run()
    assert log == [("woke", 8, 0)]


def test_schedule_returns_a_cancellable_handle(sim):
    """A cancelled timed or delta call never runs; the others keep their order."""
    log = []
    sim.schedule(5, log.append, "a")
    h = sim.schedule(5, log.append, "cancelled")
    sim.schedule(7, log.append, "b")

    async def p():
        d = sim.schedule(0, log.append, "delta-cancelled")
        sim.schedule(0, log.append, "delta")
        d.cancel()
        await sim.wait(1)

    sim.spawn(p(), "p")
    h.cancel()
    assert h.cancelled
    assert sim.run() == 7
    assert log == ["delta", "a", "b"]


def test_cancelled_call_is_not_activity(sim):
    """A run whose last item was cancelled ends at its last real event."""
    log = []
    sim.schedule(5, log.append, "a")
    sim.schedule(20, log.append, "late").cancel()
    assert sim.run() == 5
    assert sim.last_activity == 5 and log == ["a"]


def test_cancel_after_the_call_ran_is_a_no_op(sim):
    log = []
    h = sim.schedule(3, log.append, "x")
    sim.run()
    h.cancel()
    sim.schedule(2, log.append, "y")
    sim.run()
    assert log == ["x", "y"] and sim.now == 5


def test_public_scheduler_view(sim):
    """initial_processes / keep_initial / pending_items / pending_posts / stopped."""
    async def proc():
        await sim.wait(1)
        sim.stop()

    a = sim.spawn(proc(), "a")
    b = sim.spawn(proc(), "b")
    assert sim.initial_processes == (a, b)
    sim.keep_initial(lambda p: p.name == "a")
    assert sim.initial_processes == (a,)
    sim.schedule(4, lambda: None)
    sim.post(2, ("l", "a", 0), lambda: None)
    assert len(sim.pending_items()) == 1 and sim.pending_posts() == 1
    assert not sim.stopped
    sim.run()
    assert sim.stopped and sim.now == 1 and b.done is False


# ----- link posts ---------------------------------------------------------------------------
def test_post_orders_by_key_before_local_activity(sim):
    """Link deliveries at one time run sorted by key, before local activity of that time
    (timed callbacks and processes), whatever order they were posted in."""
    log = []

    def cb(tag):
        stamp(sim, log, tag)

    async def p():
        await sim.wait(100)
        stamp(sim, log, "proc")

    sim.spawn(p(), "p")
    sim.schedule(100, cb, "local")
    sim.post(100, ("link.b", 0), cb, "b0")
    sim.post(100, ("link.a", 1), cb, "a1")
    sim.post(100, ("link.a", 0), cb, "a0")
    sim.post(50, ("link.z", 0), cb, "z0")
    sim.run()
    assert log == [("z0", 50, 0), ("a0", 100, 0), ("a1", 100, 0), ("b0", 100, 0),
                   ("local", 100, 0), ("proc", 100, 0)]


def test_post_at_unstarted_now_after_run_until(sim):
    """After run(until=T), activity at T has not started: a post at T is accepted and
    delivered before the local activity at T."""
    log = []

    async def p():
        await sim.wait(100)
        stamp(sim, log, "proc")

    sim.spawn(p(), "p")
    sim.run(until=100)
    sim.post(100, ("l", 0), lambda: stamp(sim, log, "link"))
    sim.run()
    assert log == [("link", 100, 0), ("proc", 100, 0)]


def test_post_at_time_zero_before_run_precedes_initial_processes():
    """A post for time 0 made before run() is delivered before the initial processes."""
    sim = Simulator()
    log = []

    async def p():
        stamp(sim, log, "proc")

    sim.spawn(p(), "p")
    sim.post(0, ("l", 0), lambda: stamp(sim, log, "link"))
    sim.run()
    assert log == [("link", 0, 0), ("proc", 0, 0)]


def test_post_into_the_past_is_a_causality_error(sim):
    """A post before now, or at a now whose activity already started, is refused."""
    async def p():
        await sim.wait(30)

    sim.spawn(p(), "p")
    sim.run()
    assert sim.now == 30
    with pytest.raises(CausalityError) as ei:
        sim.post(29, ("link.x", 3), lambda: None)
    assert ei.value.path == "link.x" and ei.value.time == 30
    with pytest.raises(CausalityError):
        sim.post(30, ("link.x", 4), lambda: None)
    sim.post(31, ("link.x", 5), lambda: None)  # the future is fine


def test_post_from_a_process_at_now_is_a_causality_error(sim):
    """Inside a running process, posting at the current time is already too late."""
    async def p():
        await sim.wait(5)
        sim.post(5, ("link.y", 0), lambda: None)

    sim.spawn(p(), "p")
    with pytest.raises(ProcessError) as ei:
        sim.run()
    assert isinstance(ei.value.__cause__, CausalityError)
    assert ei.value.path == "p" and ei.value.time == 5


def test_time_units_and_parsing():
    """Time is integer ps; parse/format helpers round-trip common values."""
    from tlm import MS, US, fmt_time, parse_frequency, parse_time
    assert (NS, US, MS) == (1_000, 1_000_000, 1_000_000_000)
    assert parse_time("10 ns") == 10_000
    assert parse_time("2.5us") == 2_500_000
    assert parse_time(7) == 7
    assert fmt_time(12_345) == "12.345 ns"
    assert fmt_time(3 * US) == "3 us"
    assert parse_frequency("420 MHz") == 420e6
    with pytest.raises(ValueError):
        parse_time("1.5 ps")
    with pytest.raises(ValueError):
        parse_time("ten ns")


@pytest.mark.parametrize("text", ["1e400 ms", "inf ns", "nan us"])
def test_non_finite_times_and_frequencies_are_refused(text):
    """An overflowing or non-finite value is a clear ValueError, never OverflowError."""
    from tlm import parse_frequency, parse_time
    with pytest.raises(ValueError, match="not finite|not a time"):
        parse_time(text)
    with pytest.raises(ValueError, match="not finite|not a frequency"):
        parse_frequency(text.replace("ms", "MHz").replace("ns", "Hz").replace("us", "GHz"))
    for v in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match="not finite"):
            parse_frequency(v)


def test_float_parameters_refuse_inf_and_nan():
    import dataclasses

    from tlm.params import ParameterError, resolve

    @dataclasses.dataclass
    class P:
        factor: float = 1.0

    assert resolve(P, {"factor": 2}, "blk").factor == 2.0
    for v in (float("inf"), float("-inf"), float("nan")):
        with pytest.raises(ParameterError, match="finite"):
            resolve(P, {"factor": v}, "blk")


def test_discard_closes_processes_that_never_ran():
    """A simulator whose elaboration failed is dropped without 'coroutine was never awaited'
    warnings: discard() closes the coroutines of its unstarted processes."""
    sim = Simulator()
    ran = []

    async def proc():
        ran.append(1)

    coros = [proc(), proc()]
    for i, c in enumerate(coros):
        sim.spawn(c, f"p{i}")
    sim.discard()
    assert all(c.cr_frame is None for c in coros) and ran == []
    sim.run()             # nothing left to run
    assert ran == []
