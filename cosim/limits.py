"""The limits of a run: its memory budget and its wall-time limit (docs/scenarios.md).

**Memory** (``limits.max_memory``, default 4 GiB).
Checked twice: before anything is built, against an estimate of what the scenario will
allocate (the platform's memories, the data its tasks load, the network's reference
tensors), so an oversized scenario is refused with its biggest items named; and while it
simulates, against the process's resident size (model state grows with simulated time,
which no estimate knows in advance). What a run keeps for its report while simulated time
grows is capped by a share of the budget (:func:`power_samples_cap`,
:func:`trace_records_cap`; the firmware's output and TLM error records by their models), and
a :class:`Reserve` of address space, released before the report is made, leaves room to
report a run stopped near its limit.

**Wall time** (``limits.max_wall``). The simulation checks it between slices of simulated
time and ends with a report; :func:`wall_limit` holds it in every other phase (building and
deploying, gathering results, writing outputs) and is the backstop for a model stuck inside
one slice: a SIGALRM that raises :class:`WallLimitExceeded` naming the phase.
"""
from __future__ import annotations

import math
import mmap
import os
import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


from tlm.units import fmt_bytes

from .scenario import Scenario, ScenarioError
from .scenario.data import load_bytes

#: what the interpreter, numpy and the models cost before any scenario data (measured:
#: ~150 MB resident for a quickstart run; rounded up)
BASE_BYTES = 256 << 20
#: one power sample (all domains, as report data: dicts of floats), rounded up
SAMPLE_BYTES = 4 << 10


def rss_bytes() -> int:
    """This process's resident size in bytes (Linux /proc; elsewhere the peak from rusage)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        import sys
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _onnx_bytes(sc: Scenario, spec: dict) -> int:
    """An ONNX network: every tensor shape inference gives (the node outputs and the
    weights), held as int64 by our reference and as float32 by onnxruntime, plus the file
    itself twice (the loaded model and onnxruntime's session)."""
    from .onnx import OnnxImportError
    from .onnx.load import load_model
    key = ("workload", "network", "onnx")
    try:
        path = sc.resolve_file(spec["onnx"], key)
        model = load_model(path, spec.get("input_shape"), str(spec["onnx"]))
    except (OnnxImportError, ScenarioError):
        return 0              # deployment reports it, with its key
    elements = 0
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        elements += math.prod(d for d in dims if d > 0) if dims else 1
    for init in model.graph.initializer:
        elements += math.prod(init.dims) if init.dims else 1
    return elements * (8 + 4) + 2 * Path(path).stat().st_size


def _network_bytes(sc: Scenario) -> int:
    """The numpy reference run of the network: every layer's output kept (int64, channels
    padded to 32), plus the largest layer's im2col window matrix, accumulator and weights."""
    from .deploy import NetworkError, parse_network
    if "onnx" in (sc.network or {}):
        return _onnx_bytes(sc, sc.network)
    spec = {k: v for k, v in (sc.network or {}).items() if k != "weights"}
    try:
        net = parse_network(spec, "workload.network")
    except NetworkError:
        return 0              # deployment reports it, with its key
    pad = lambda k: -(-k // 32) * 32  # noqa: E731
    h, w, c = net.input_shape
    kept = h * w * pad(c) * 8
    peak = 0
    for ly in net.layers:
        hi, wi, ki = ly.in_shape
        kept += ly.h * ly.w * pad(ly.k) * 8
        if ly.on_rbe:
            taps = 9 if ly.type == "conv3x3" else 1
            cols = (hi + 2) * (wi + 2) * pad(ki) * taps * 8
            peak = max(peak, 2 * cols + (hi + 2) * (wi + 2) * pad(ly.k) * 8 + pad(ly.k) * pad(ki) * taps * 8)
    return kept + peak


def estimate(sc: Scenario, resolved: dict[str, dict[str, Any]] | None = None) -> list[tuple[str, int, tuple]]:
    """What the scenario will allocate before it simulates: (what, bytes, scenario key)."""
    from .platforms import memory_map_of
    items: list[tuple[str, int, tuple]] = [("the simulator itself", BASE_BYTES, ())]
    mm = memory_map_of(sc)
    for r in mm.regions + mm.external:
        if r.kind == "memory":
            items.append((f"memory {r.name}", r.size, ("platform",)))
    for path, params in (resolved or {}).items():
        cap = params.get("capacity")
        if isinstance(cap, int):
            items.append((f"{path}.capacity", cap, ("platform", "overrides")))
    for i, t in enumerate(sc.tasks):
        if t.get("op") == "load":
            # generated data passes through an int64 array on its way into memory
            n = load_bytes(sc, t)
            if "random" in t["data"]:
                n += 8 * int(t["data"]["random"]["count"])
            items.append((f"task {t.get('id', i)} data", n, ("workload", "tasks", i, "data")))
    if sc.network:
        items.append(("the network's reference tensors", _network_bytes(sc), ("workload", "network")))
    return items


def check(sc: Scenario, resolved: dict[str, dict[str, Any]] | None = None) -> None:
    """Refuse a scenario whose estimated footprint exceeds ``limits.max_memory``, naming its
    largest items (located ScenarioError)."""
    items = estimate(sc, resolved)
    total = sum(n for _, n, _ in items)
    if total <= sc.max_memory:
        return
    top = sorted(items, key=lambda it: -it[1])[:3]
    what = ", ".join(f"{name} {fmt_bytes(n)}" for name, n, _ in top)
    raise sc.error(f"the run would need about {fmt_bytes(total)}, over the memory budget of "
                   f"{fmt_bytes(sc.max_memory)} (largest: {what}); shrink it or raise limits.max_memory",
                   top[0][2] if top[0][2] else ("limits",))


#: seconds the simulation loop gets past the limit to stop by itself (with a report) before
#: the alarm interrupts it
SIMULATION_GRACE = 5.0


class WallLimitExceeded(BaseException):
    """``limits.max_wall`` ran out outside the simulation loop (or inside a stuck slice).
    A BaseException, like KeyboardInterrupt: it arrives asynchronously (SIGALRM) and no
    ``except Exception`` on its way may swallow it."""


class WallLimit:
    """The phase a run is in, for :func:`wall_limit`'s message (``phase(...)`` sets it)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.current = "building the platform"
        #: the simulated time the run reached, once it has simulated (for the report of a
        #: run the alarm stops after that: reporting, writing the outputs)
        self.sim_time: int | None = None
        self._grace_used = False
        self.armed = False

    def phase(self, name: str) -> None:
        self.current = name

    def disarm(self) -> None:
        """No alarm from here on (the run has ended; what remains is saying so)."""
        self._grace_used = True
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.armed = False

    def _on_alarm(self, signum: int, frame: Any) -> None:
        self.armed = False
        if self.current == "simulating" and not self._grace_used:
            self._grace_used = True   # the loop ends the run itself, with a report
            signal.setitimer(signal.ITIMER_REAL, SIMULATION_GRACE)
            self.armed = True
            return
        # the run's phase wrapper (cosim.runner.phase) says where
        raise WallLimitExceeded(f"limits.max_wall ({self.seconds:g} s) exceeded")


@contextmanager
def wall_limit(limit: WallLimit | float | None) -> Iterator[WallLimit]:
    """Hold ``limits.max_wall`` over the block (main thread with SIGALRM only; elsewhere
    the simulation loop's own check is all there is). The alarm may fire anywhere in the
    block, even as it starts: catch :class:`WallLimitExceeded` around the ``with``."""
    if not isinstance(limit, WallLimit):
        limit = WallLimit(limit)
    seconds = limit.seconds
    if not seconds or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield limit
        return
    old = signal.signal(signal.SIGALRM, limit._on_alarm)
    try:
        limit.armed = True
        signal.setitimer(signal.ITIMER_REAL, float(seconds))
        yield limit
    finally:
        limit.disarm()
        signal.signal(signal.SIGALRM, old)


# ----- the run-time watch: what a run keeps while simulated time grows ----------------------------
#: the power series as report data gets at most 1/16 of the budget (a sample and its copies
#: are ~4 KiB), and never more samples than this (the library's longest run has ~1 600)
MAX_POWER_SAMPLES = 50_000
#: a trace record with its copies in the report and the writer, rounded up
TRACE_RECORD_BYTES = 1 << 10
#: the trace gets at most 1/8 of the budget, and never more records than this
MAX_TRACE_RECORDS = 2_000_000
#: address space held while simulating and released before reporting
RESERVE_BYTES = 128 << 20


def power_samples_cap(max_memory: int) -> int:
    """The most power samples a run's report keeps (more: the series is decimated)."""
    return max(16, min(MAX_POWER_SAMPLES, max_memory // 16 // SAMPLE_BYTES))


def trace_records_cap(max_memory: int) -> int:
    """The most trace records a run keeps (more: counted, not kept)."""
    return max(1000, min(MAX_TRACE_RECORDS, max_memory // 8 // TRACE_RECORD_BYTES))


class Reserve:
    """Address space held while a run simulates (an anonymous mapping: never touched, so it
    costs no resident memory) and released before the report is made: a run stopped by an
    address-space limit (``ulimit -v``, a container) still has room to write its report."""

    def __init__(self, nbytes: int = RESERVE_BYTES):
        try:
            self._block: mmap.mmap | None = mmap.mmap(-1, nbytes)
        except (OSError, MemoryError):    # no room even now: the run goes on without it
            self._block = None

    @property
    def held(self) -> bool:
        return self._block is not None

    def release(self) -> None:
        if self._block is not None:
            self._block.close()
            self._block = None
