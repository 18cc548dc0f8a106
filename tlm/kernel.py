"""The discrete-event kernel: processes, events, delta cycles and the total event order.

Processes are ``async def`` coroutines driven directly by :class:`Simulator` (no asyncio):
a process suspends by awaiting ``sim.wait(delay)``, an :class:`Event`, ``sim.any_of``,
``sim.all_of`` or another process. The scheduler follows SystemC's evaluate / update /
delta-notify cycle; see docs/architecture.md for the exact semantics and the total order
of simultaneous events.

Implementation notes (why it looks the way it does): the hot path is a plain loop over
lists; timed activity is bucketed per distinct time (a heap of distinct times plus a dict of
lists), so that waking N processes at one time costs O(N) list appends, not N heap pushes;
insertion order within a bucket *is* the sequence order, so no sequence numbers are stored.

This module is compiled with mypyc when a C compiler is present at install time (setup.py;
``tlm.kernel_info()`` says which build is active). Compiled classes check annotations at
run time, take no new attributes and no weak references, and compiled generators cannot be
``@types.coroutine`` waiters: so parameters that are validated here are typed ``Any``,
``Simulator.wait``/``wait_until`` live in the interpreted base class (tlm/_waiting.py), and
CONTRIBUTING.md lists the rest.
"""
from __future__ import annotations

import hashlib
import heapq
import types
from typing import Any, Callable, Coroutine, Generator, Iterable

import numpy as np

from . import _waiting
from .errors import CausalityError, ElaborationError, ProcessError, SimulationError
from .units import fmt_time

__all__ = ["Simulator", "Process", "Event", "AnyOf", "AllOf", "Call", "PassiveCall", "rng_for"]

_heappush = heapq.heappush
_heappop = heapq.heappop


class Process:
    """A running coroutine. ``await proc`` waits for it to finish and returns its result."""

    __slots__ = ("sim", "name", "_coro", "_send", "done", "result", "_done_event")

    def __init__(self, sim: "Simulator", coro: Coroutine[Any, Any, Any], name: str):
        self.sim = sim
        self.name = name
        self._coro = coro
        self._send = coro.send
        self.done = False
        self.result: Any = None
        self._done_event: Event | None = None

    def __repr__(self) -> str:
        return f"<Process {self.name}{' done' if self.done else ''}>"

    @property
    def terminated(self) -> "Event":
        """Event notified (immediately) when the process returns."""
        if self._done_event is None:
            self._done_event = Event(self.sim, self.name + ".terminated")
        return self._done_event

    def __await__(self) -> Generator[Any, Any, Any]:
        if not self.done:
            yield self.terminated
        return self.result

    def close(self) -> None:
        """Close the coroutine of a process that will never run (no 'never awaited' warning)."""
        if not self.done:
            self._coro.close()

    def _finish(self, result: Any) -> None:
        self.done = True
        self.result = result
        if self._done_event is not None:
            self._done_event.notify()


class Event:
    """A SystemC-style event.

    ``notify()`` is immediate (waiters run in the current evaluation phase), ``notify(0)``
    is a delta notification, ``notify(d)`` a timed one. An earlier pending notification
    overrides a later one; an immediate notification cancels any pending one.
    """

    __slots__ = ("sim", "name", "_waiters", "_others", "_callbacks", "_pending")

    def __init__(self, sim: "Simulator", name: str = "event"):
        self.sim = sim
        self.name = name
        self._waiters: list[Process] = []   # one-shot: processes awaiting this event
        self._others: list[AnyOf | AllOf] = []  # one-shot: AnyOf/AllOf waiters
        self._callbacks: list[Callable[["Event"], None]] = []  # persistent (static sensitivity)
        self._pending: int | None = None    # time of the pending delta/timed notification

    def __repr__(self) -> str:
        return f"<Event {self.name}>"

    def __await__(self) -> Generator[Any, Any, None]:
        yield self

    def _add_waiter(self, proc: Process) -> None:
        self._waiters.append(proc)

    def add_callback(self, fn: Callable[["Event"], None]) -> None:
        """Call ``fn(event)`` every time the event fires (like an SC_METHOD's sensitivity)."""
        self._callbacks.append(fn)

    def remove_callback(self, fn: Callable[["Event"], None]) -> None:
        self._callbacks.remove(fn)

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def notify(self, delay: Any = None) -> None:  # Any: validated below (floats, numpy ints)
        """Notify now (``None``), at the next delta (``0``) or after ``delay`` ps."""
        sim = self.sim
        if type(delay) is int:  # the common case first (compiled: a native int from here on)
            if delay == 0:
                now = sim.now
                if self._pending is not None and self._pending <= now:
                    return
                self._pending = now
                sim._delta.append(self)
                return
        elif delay is None:
            self._pending = None
            self._fire()
            return
        else:
            delay = sim._check_delay(delay, self.name)
            if delay == 0:
                return self.notify(0)
        now = sim.now
        if delay < 0:
            raise SimulationError(f"event notified with a negative delay ({delay} ps)", self.name, now)
        t = now + delay
        if self._pending is not None and self._pending <= t:
            return
        self._pending = t
        sim._bucket(t).append(self)

    def cancel(self) -> None:
        """Cancel a pending delta or timed notification."""
        self._pending = None

    def _fire(self) -> None:
        w = self._waiters
        if w:
            self._waiters = []
            self.sim._runnable += w
        o = self._others
        if o:
            self._others = []
            for x in o:
                x._on_event(self)
        for cb in self._callbacks:
            cb(self)


class AnyOf:
    """Wait for the first of several events, or a timeout. Evaluates to the event that
    fired, or ``None`` when the timeout expired first."""

    __slots__ = ("sim", "events", "timeout", "fired", "_proc", "_done")
    _proc: Process   # the waiting process, set when the wait begins (_add_waiter)

    def __init__(self, sim: "Simulator", events: Iterable[Any], timeout: Any = None):
        # Iterable[Any]: the elements are checked here (a compiled Iterable[Event] would
        # raise a TypeError before the located error)
        self.sim = sim
        evs = tuple(events)
        for e in evs:
            if not isinstance(e, Event):
                raise SimulationError(f"any_of() takes Events, got {e!r}", None, sim.now)
        self.events: tuple[Event, ...] = evs
        if timeout is not None:
            timeout = sim._check_delay(timeout, "any_of timeout")
        if not self.events and timeout is None:
            raise SimulationError("any_of() needs at least one event or a timeout", None, sim.now)
        self.timeout = timeout
        self.fired: Event | None = None
        self._done = False

    def __await__(self) -> Generator[Any, Any, Event | None]:
        yield self
        return self.fired

    def _add_waiter(self, proc: Process) -> None:
        self._proc = proc
        for e in self.events:
            e._others.append(self)
        if self.timeout == 0:
            self.sim._delta.append(self)  # a zero timeout is one delta cycle
        elif self.timeout is not None:
            self.sim._schedule_item(self.timeout, self)

    def _detach(self, keep: Event | None) -> None:
        for e in self.events:
            if e is not keep:
                try:
                    e._others.remove(self)
                except ValueError:
                    pass

    def _on_event(self, ev: Event) -> None:
        if not self._done:
            self._done = True
            self.fired = ev
            self._detach(ev)
            self.sim._runnable.append(self._proc)

    def _timed_fire(self) -> bool:
        if self._done:
            return False  # stale: an event won
        self._done = True
        self._detach(None)
        self.sim._runnable.append(self._proc)
        return True


class AllOf:
    """Wait until every one of several events has fired (each after the wait began)."""

    __slots__ = ("sim", "_remaining", "_proc")
    _proc: Process   # the waiting process, set when the wait begins (_add_waiter)

    def __init__(self, sim: "Simulator", events: Iterable[Any]):
        self.sim = sim
        evs: list[Any] = list(dict.fromkeys(events))  # dedupe, keep order
        for e in evs:
            if not isinstance(e, Event):
                raise SimulationError(f"all_of() takes Events, got {e!r}", None, sim.now)
        self._remaining: list[Event] = evs

    def __await__(self) -> Generator[Any, Any, None]:
        if self._remaining:
            yield self

    def _add_waiter(self, proc: Process) -> None:
        self._proc = proc
        for e in self._remaining:
            e._others.append(self)

    def _on_event(self, ev: Event) -> None:
        self._remaining.remove(ev)
        if not self._remaining:
            self.sim._runnable.append(self._proc)


class PassiveCall:
    """A timed callback that is not simulation activity (:meth:`Simulator.schedule_passive`):
    it runs at its time if not cancelled, but neither ``now`` nor the run's end time moves
    for it (like a stale notification)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]):
        self.fn: Callable[[], Any] | None = fn

    def cancel(self) -> None:
        self.fn = None

    def _timed_fire(self) -> bool:
        fn, self.fn = self.fn, None
        if fn is not None:
            fn()
        return False


class Call:
    """A callback scheduled by :meth:`Simulator.schedule` (the kernel's equivalent of a
    method process), and its handle: ``cancel()`` before it runs and it never runs (nor
    counts as activity); cancelling after it ran does nothing."""

    __slots__ = ("fn", "args", "cancelled")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]):
        self.fn = fn
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        """Drop the call if it has not run yet."""
        self.cancelled = True

    def _timed_fire(self) -> bool | None:
        if self.cancelled:
            return False  # stale, like a cancelled notification
        self.fn(*self.args)
        return None


def rng_for(seed: int, path: str) -> np.random.Generator:
    """The RNG of component ``path`` under scenario ``seed``: stable across processes,
    hosts and Python versions (hashes the path with SHA-256, never ``hash()``)."""
    digest = hashlib.sha256(path.encode()).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([int(seed) % (1 << 64), *words]))


class Simulator(_waiting.Waiting):
    """The simulation context: time, the scheduler, the module tree, stats and traces.

    ``sim.now`` is the current time in ps; ``sim.delta`` counts delta cycles at ``now``.
    ``await sim.wait(...)`` and ``sim.wait_until(...)`` come from the base class
    (tlm/_waiting.py), which stays interpreted.
    """

    def __init__(self, seed: int = 0):
        from .stats import StatsRegistry  # local: stats imports nothing from here at import time

        self.seed = int(seed)
        self.now = 0
        self.delta = 0
        self.global_quantum = 0       # ps; 0 = no quantum (see tlm.quantum)
        self._runnable: list[Process] = []
        self._delta: list[Any] = []   # processes (wait(0)), events (notify(0)), calls, in order
        self._updates: list[Any] = [] # signals with a pending update
        self._buckets: dict[int, list[Any]] = {}
        self._link_buckets: dict[int, list[tuple[Any, ...]]] = {}
        self._times: list[int] = []
        self._initial: list[Process] = []
        self._elaborated = False
        self._running = False
        self._stop = False
        self._now_started = False     # True once activity at ``now`` has begun (link posts at now are late)
        self.current: Process | None = None
        self.modules: dict[str, Any] = {}
        self.sockets: list[Any] = []  # every socket, for the unbound check at elaboration
        self.links: list[Any] = []    # every tlm.link.Link (the cuttable connections)
        self.stats = StatsRegistry()
        self.tracer: Any = None       # a tlm.trace.Tracer when tracing is on
        self.errors: list[Any] = []   # tlm.payload.TlmErrorRecord entries (access errors)
        self._elab_hooks: list[Callable[[], None]] = []
        self.last_activity = 0        # time of the last live activity (the run's end time)

    # ----- creating things ------------------------------------------------------------
    def event(self, name: str = "event") -> Event:
        return Event(self, name)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "process") -> Process:
        """Start a process. Before ``run`` it becomes an initial process; initial processes
        first run in the order of their names (so creation order does not matter)."""
        if not isinstance(coro, types.CoroutineType):
            raise SimulationError(
                f"spawn() needs a coroutine object (call the async function), got {coro!r}",
                name, self.now)
        p = Process(self, coro, name)
        if self._running or self._elaborated:
            self._runnable.append(p)
        else:
            self._initial.append(p)
        return p

    def discard(self) -> None:
        """Drop a simulator that will never run (its elaboration failed): close the
        coroutines of processes that never started, so nothing warns about them."""
        for p in self._initial + self._runnable:
            p.close()
        self._initial.clear()
        self._runnable.clear()

    # ----- inspecting (the distribution layer's view of the scheduler) ----------------------
    @property
    def initial_processes(self) -> tuple[Process, ...]:
        """The processes spawned before elaboration that have not been queued yet."""
        return tuple(self._initial)

    def keep_initial(self, keep: Callable[[Process], bool]) -> None:
        """Keep only the initial processes for which ``keep(p)`` holds; the others are
        closed, never run (a partition drops what another process simulates)."""
        kept = []
        for p in self._initial:
            if keep(p):
                kept.append(p)
            else:
                p.close()
        self._initial[:] = kept

    def pending_items(self) -> list[Any]:
        """Everything scheduled but not yet run, in no particular order: runnable and
        delta-waiting processes, pending notifications, timed calls, signal updates."""
        items: list[Any] = list(self._runnable) + list(self._delta)
        items += [it for t in self._times for it in self._buckets.get(t, [])]
        items += list(self._updates)
        return items

    def pending_posts(self) -> int:
        """The number of link deliveries posted but not yet delivered."""
        return sum(len(lb) for lb in self._link_buckets.values())

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` ended the last ``run``."""
        return self._stop

    def rng(self, path: str) -> np.random.Generator:
        return rng_for(self.seed, path)

    def on_elaboration(self, fn: Callable[[], None]) -> None:
        """Register a check/setup to run once, before time 0 (e.g. binding checks)."""
        self._elab_hooks.append(fn)

    # ----- waiting -----------------------------------------------------------------------
    def _check_delay(self, delay: Any, what: str) -> int:
        if isinstance(delay, bool) or not isinstance(delay, (int, np.integer)):
            if isinstance(delay, float) and delay.is_integer():
                delay = int(delay)
            else:
                raise SimulationError(
                    f"{what}: a delay must be an integer number of ps (use tlm.units: "
                    f"10 * NS), got {delay!r}", self._where(), self.now)
        d = int(delay)
        if d < 0:
            raise SimulationError(f"{what}: negative delay ({d} ps)", self._where(), self.now)
        return d

    def _where(self) -> str | None:
        return self.current.name if self.current is not None else None

    def any_of(self, *events: Event, timeout: Any = None) -> AnyOf:
        return AnyOf(self, events, timeout)

    def all_of(self, *events: Event) -> AllOf:
        return AllOf(self, events)

    # ----- scheduling callbacks ------------------------------------------------------------
    def _bucket(self, t: int) -> list[Any]:
        """The bucket of absolute time ``t``, created (and its time queued) if new: the one
        place time buckets are made. Appending to it is the sequence order at ``t``."""
        b = self._buckets.get(t)
        if b is None:
            b = self._buckets[t] = []
            _heappush(self._times, t)
        return b

    def _schedule_item(self, delay: int, item: Any) -> None:
        if delay == 0:
            raise SimulationError("internal: zero-delay timed item", None, self.now)
        self._bucket(self.now + delay).append(item)

    def schedule(self, delay: Any, fn: Callable[..., Any], *args: Any) -> Call:
        """Call ``fn(*args)`` after ``delay`` ps (0 = next delta cycle), in sequence order
        with other events. Returns a handle whose ``cancel()`` drops the call."""
        delay = self._check_delay(delay, "schedule()")
        call = Call(fn, args)
        if delay == 0:
            self._delta.append(call)
        else:
            self._schedule_item(delay, call)
        return call

    def schedule_passive(self, delay: Any, fn: Callable[[], Any]) -> PassiveCall:
        """Call ``fn()`` after ``delay`` ps (> 0) as an observer: the call is not activity,
        so a run whose only remaining items are passive ends at its last real event, with
        the same end time as without them (used to keep an external simulator, e.g. an RTL
        block, in step without changing the TLM side's results). Returns a handle whose
        ``cancel()`` drops the call."""
        delay = self._check_delay(delay, "schedule_passive()")
        if delay == 0:
            raise SimulationError("schedule_passive() needs a delay > 0", None, self.now)
        item = PassiveCall(fn)
        self._schedule_item(delay, item)
        return item

    def post(self, time: int, key: tuple[Any, ...], fn: Callable[..., Any], *args: Any) -> None:
        """Deliver a link event: call ``fn(*args)`` at absolute ``time``.

        Link deliveries at one time run before local activity of that time, sorted by
        ``key`` (link path, per-link sequence), so their order does not depend on which
        process produced them: that is what makes every partition give the same results.
        An event in the receiver's past is a :class:`CausalityError`, never reordered.
        """
        if time < self.now or (time == self.now and self._now_started):
            raise CausalityError(
                f"link event {key!r} for {fmt_time(time)} arrived in the receiver's past",
                str(key[0]) if key else None, self.now)
        lb = self._link_buckets.get(time)
        if lb is None:
            self._link_buckets[time] = [(key, fn, args)]
            self._bucket(time)  # the time must be visited even if nothing local is due
        else:
            lb.append((key, fn, args))

    # ----- running ---------------------------------------------------------------------------
    def elaborate(self) -> None:
        """Run elaboration checks (e.g. unbound sockets) and queue the initial processes."""
        if self._elaborated:
            return
        for hook in self._elab_hooks:
            hook()
        for sock in self.sockets:
            sock._check_bound()
        names: dict[str, int] = {}
        for p in self._initial:
            names[p.name] = names.get(p.name, 0) + 1
        dups = sorted(n for n, c in names.items() if c > 1)
        if dups:
            raise ElaborationError(
                f"several initial processes share the name(s) {', '.join(dups)}: give each a "
                "distinct name so their start order is defined", None, self.now)
        self._runnable.extend(sorted(self._initial, key=lambda p: p.name))
        self._initial = []
        self._elaborated = True

    def stop(self) -> None:
        """Stop ``run`` after the current delta cycle."""
        self._stop = True

    def next_event_time(self) -> int | None:
        """Time of the earliest pending activity (``now`` if runnable now), else ``None``.
        (A bucket may only hold cancelled notifications; visiting it is harmless.)"""
        if self._runnable or self._delta or self._updates or (self._initial and not self._elaborated):
            return self.now
        return self._times[0] if self._times else None

    def settle(self) -> int:
        """After ``run(until=...)`` slices with nothing left pending, put ``now`` back at the
        last activity: the state a single ``run()`` would have ended in. Results then do not
        depend on how a run was sliced (progress bars, wall-clock limits)."""
        if self.next_event_time() is None and self.now > self.last_activity:
            self.now = self.last_activity
            self.delta = 0
        return self.now

    def settle_at(self, t: int) -> int:
        """Put ``now`` at ``t``: the end time of a run made of several simulators (the
        latest activity anywhere, or the time limit). Nothing may have happened here after
        ``t`` and nothing may be pending before it."""
        nxt = self.next_event_time()
        if self.last_activity > t or (nxt is not None and nxt < t):
            at = self.last_activity if self.last_activity > t or nxt is None else nxt
            raise SimulationError(f"cannot end at {fmt_time(t)}: activity at {fmt_time(at)}",
                                  None, self.now)
        self.now = t
        self.delta = 0
        return t

    def run(self, until: Any = None) -> int:
        """Run until nothing is left to do, or until all activity before ``until`` (ps,
        absolute) is done; then ``now == until``. Returns ``now``."""
        if until is not None and until.__class__ is not int:
            until = self._check_delay(until, "run(until)")  # numpy ints, integral floats
        self.elaborate()
        if until is not None and until < self.now:
            raise SimulationError(f"run(until={fmt_time(until)}) is in the past", None, self.now)
        self._running = True
        self._stop = False
        try:
            self._loop(until)
        except SimulationError:
            raise
        except Exception as e:  # a scheduled callback, event callback or link delivery raised
            err = SimulationError(f"a callback raised {type(e).__name__}: {e}", None, self.now)
            err.__cause__ = e  # explicit: compiled code drops the cause of ``raise ... from e``
            raise err
        finally:
            self._running = False
            self.current = None
        if until is not None and not self._stop:
            if self.now < until:
                self.now = until
                self.delta = 0
                self._now_started = False
        return self.now

    def _loop(self, until: int | None) -> None:
        # Hot state lives in locals: attribute traffic on ``self`` was most of the per-delta
        # cost. ``_runnable`` is iterated in place (a list iterator sees what immediate
        # notifications append during the pass) and cleared after it; ``_delta`` is swapped for
        # a fresh list (what its items notify belongs to the next delta). The local and the
        # attribute always name the same list, because Event.notify/_fire append through the
        # attribute. ``type(x) is Event`` (not isinstance) is the cheapest test interpreted and
        # lets the compiled build use native attribute access.
        buckets = self._buckets
        times = self._times
        updates = self._updates
        runnable = self._runnable
        deltas = self._delta
        now = self.now
        if not self._now_started and times and times[0] == now:
            # activity posted for ``now`` before it started (e.g. link events at time 0):
            # it precedes what is already runnable at ``now``
            _heappop(times)
            if self._dispatch_bucket(now):
                self.last_activity = now
        self._now_started = True
        while True:
            # ---- evaluation phase (immediate notifications append to ``runnable``) ----
            if runnable:
                for p in runnable:
                    try:
                        y = p._send(None)
                    except StopIteration as stop:
                        p._finish(stop.value)
                        continue
                    except Exception as e:  # noqa: BLE001 - reported with path and time
                        raise self._process_error(p, e, cause=True)
                    if type(y) is Event:
                        y._waiters.append(p)
                    elif type(y) is int:
                        if y > 0:
                            # hot path: a call only when the time is new (see _bucket)
                            b = buckets.get(now + y)
                            if b is None:
                                b = self._bucket(now + y)
                            b.append(p)
                        elif y == 0:
                            deltas.append(p)
                        else:
                            raise self._process_error(p, SimulationError(f"negative delay {y} ps"))
                    else:
                        try:
                            y._add_waiter(p)
                        except AttributeError:
                            raise self._process_error(p, SimulationError(
                                f"awaited {y!r}, which the simulator cannot wait on (use "
                                "sim.wait(), an Event, sim.any_of/all_of or a Process; asyncio "
                                "awaitables are not supported)")) from None
                runnable.clear()
            # ---- update phase ----
            if updates:
                ups = updates[:]
                updates.clear()
                for s in ups:
                    s._update()
            if self._stop:
                return
            # ---- delta notification phase ----
            if deltas:
                items = deltas
                deltas = self._delta = []
                self.delta += 1          # what the notifications wake runs at the next delta
                for it in items:
                    if type(it) is Event:
                        if it._pending == now:
                            it._pending = None
                            if it._others or it._callbacks:
                                it._fire()
                            else:
                                w = it._waiters
                                if w:
                                    it._waiters = []
                                    runnable += w
                    elif type(it) is Process:
                        runnable.append(it)
                    else:
                        it._timed_fire()
                continue
            # ---- advance time ----
            if not times:
                return
            t = times[0]
            if until is not None and t >= until:
                return
            _heappop(times)
            prev = now
            self.now = now = t
            self.delta = 0
            if not self._dispatch_bucket(t) and now != prev:
                # the bucket held only stale entries (cancelled notifications, timeouts that
                # lost their any_of): that is not activity, so time does not move
                self.now = now = prev
            else:
                self.last_activity = t

    def _dispatch_bucket(self, t: int) -> bool:
        """Fire what is due at ``t``: link deliveries (sorted by key) first, then local items
        in sequence order. Returns whether anything was live."""
        live = False
        lb = self._link_buckets.pop(t, None)
        if lb:
            live = True
            lb.sort(key=_link_key)
            for _key, fn, args in lb:
                fn(*args)
        runnable = self._runnable
        for it in self._buckets.pop(t):
            if type(it) is Process:
                runnable.append(it)
                live = True
            elif type(it) is Event:
                if it._pending == t:
                    it._pending = None
                    it._fire()
                    live = True
            elif it._timed_fire() is not False:
                live = True
        return live

    def _process_error(self, p: Process, e: BaseException, cause: bool = False) -> ProcessError:
        """The error that reports ``e`` raised in process ``p`` (``cause``: chained to ``e``,
        set explicitly because compiled code drops the cause of ``raise ... from e``)."""
        self._stop = True
        runnable = self._runnable
        if p in runnable:  # drop what already ran in this pass (the list is iterated in place)
            del runnable[:runnable.index(p) + 1]
        if isinstance(e, SimulationError):
            msg = e.message if e.path in (None, p.name) else f"{e.path}: {e.message}"
        else:
            msg = f"{type(e).__name__}: {e}"
        err = ProcessError(f"process raised {msg}", p.name, self.now)
        if cause:
            err.__cause__ = e
        return err


def _link_key(item: tuple[Any, ...]) -> tuple[Any, ...]:
    key: tuple[Any, ...] = item[0]
    return key


# what ``sim.wait(x)`` awaits directly (tlm/_waiting.py cannot import this module)
_waiting.WAITABLE = (Event, AnyOf, AllOf, Process)
