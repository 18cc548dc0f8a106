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

**Commands** (``cosim import``, and the commands accelerator families add): the same budget and limit as
``--max-memory``/``--max-wall`` (:func:`memory_option`, :func:`wall_option`), the estimate
of what they will allocate checked first (:func:`onnx_items` is shared with the scenario's
estimate; :func:`over_budget` words the refusal), then :func:`memory_watch` holds the
resident size while they work.
"""
from __future__ import annotations

import argparse
import math
import mmap
import os
import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from tlm.units import fmt_bytes, parse_bytes

from .scenario import Scenario, ScenarioError
from .scenario.data import load_bytes
from .scenario.loader import MAX_MEMORY_LIMIT

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


#: bytes per element of a tensor ONNX shape inference gives: int64 in our reference, float32
#: in onnxruntime
ONNX_ELEMENT_BYTES = 8 + 4
#: bytes per weight of a grouped convolution or an average pooling the importer makes dense
#: (``cosim/onnx/graph.py``: an int64 (Cout, K, K, Cin) array, its copy and |w| while checked)
DENSE_WEIGHT_BYTES = 3 * 8


def onnx_items(model: Any, path: str | Path) -> list[tuple[str, int]]:
    """What importing and running the checked, shape-inferred ONNX ``model`` allocates, item
    by item: every tensor shape inference gives (node outputs and weights, as int64 and as
    onnxruntime's float32), the dense weights of each grouped convolution and average pooling
    (a pooling is a depthwise convolution with all-one windows), and the file twice (the loaded
    model and onnxruntime's session)."""
    items: list[tuple[str, int]] = []
    dims: dict[str, list[int]] = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        d = [x.dim_value for x in vi.type.tensor_type.shape.dim]
        dims[vi.name] = d
        items.append((f"tensor {vi.name!r}", (math.prod(x for x in d if x > 0) if d else 1) * ONNX_ELEMENT_BYTES))
    inits = {}
    for init in model.graph.initializer:
        inits[init.name] = list(init.dims)
        items.append((f"weights {init.name!r}", (math.prod(init.dims) if init.dims else 1) * ONNX_ELEMENT_BYTES))
    for node in model.graph.node:
        shape = dims.get(node.input[0], []) if node.input else []
        cin = shape[1] if len(shape) == 4 else 0
        attrs = {a.name: a for a in node.attribute}
        dense = 0
        if node.op_type == "Conv" and "group" in attrs and attrs["group"].i > 1 and len(node.input) > 1:
            w = inits.get(node.input[1], [])
            if len(w) == 4:
                dense = w[0] * w[2] * w[3] * cin
        elif node.op_type in ("AveragePool", "GlobalAveragePool") and cin:
            k = list(attrs["kernel_shape"].ints) if "kernel_shape" in attrs else shape[2:]
            dense = cin * cin * math.prod(k)
        if dense:
            items.append((f"node {node.name or node.output[0]!r} ({node.op_type}) as a dense convolution",
                          dense * DENSE_WEIGHT_BYTES))
    items.append(("the model file, twice", 2 * Path(path).stat().st_size))
    return items


def _onnx_bytes(sc: Scenario, spec: dict) -> int:
    """An ONNX network: :func:`onnx_items`, summed."""
    from .onnx import OnnxImportError
    from .onnx.load import load_model
    key = ("workload", "network", "onnx")
    try:
        path = sc.resolve_file(spec["onnx"], key)
        model = load_model(path, spec.get("input_shape"), str(spec["onnx"]))
    except (OnnxImportError, ScenarioError):
        return 0              # deployment reports it, with its key
    return sum(n for _, n in onnx_items(model, path))


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


def over_budget(items: list[tuple[Any, ...]], budget: int, what: str = "the run") -> str | None:
    """None when ``items`` ((name, bytes, ...) each) fit ``budget``; else the message that says
    by how much, naming the three largest."""
    total = sum(it[1] for it in items)
    if total <= budget:
        return None
    top = sorted(items, key=lambda it: -it[1])[:3]
    largest = ", ".join(f"{it[0]} {fmt_bytes(it[1])}" for it in top)
    return (f"{what} would need about {fmt_bytes(total)}, over the memory budget of {fmt_bytes(budget)} "
            f"(largest: {largest})")


def import_budget(path: str | Path, input_shape: list[int] | None, budget: int) -> None:
    """Refuse (OnnxImportError) a model whose import (``cosim import``) would need more than
    ``budget`` bytes by :func:`onnx_items`' estimate, naming its largest tensors."""
    from .onnx.errors import OnnxImportError
    from .onnx.load import load_model
    model = load_model(path, input_shape, str(path))
    items = [("the importer itself", BASE_BYTES), *onnx_items(model, path)]
    message = over_budget(items, budget, "the import")
    if message is not None:
        raise OnnxImportError(str(path), f"{message}; shrink the model or raise --max-memory")


def check(sc: Scenario, resolved: dict[str, dict[str, Any]] | None = None) -> None:
    """Refuse a scenario whose estimated footprint exceeds ``limits.max_memory``, naming its
    largest items (located ScenarioError)."""
    items = estimate(sc, resolved)
    message = over_budget(items, sc.max_memory)
    if message is None:
        return
    top = max(items, key=lambda it: it[1])
    raise sc.error(f"{message}; shrink it or raise limits.max_memory", top[2] if top[2] else ("limits",))


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
class MemoryLimitExceeded(BaseException):
    """The resident size went over the memory budget while :func:`memory_watch` held it.
    A BaseException for the same reason as :class:`WallLimitExceeded`."""

    def __init__(self, budget: int, held: int):
        super().__init__(f"the memory budget ({fmt_bytes(budget)}) exceeded: the process holds {fmt_bytes(held)}")
        self.budget, self.held = budget, held


#: how often :func:`memory_watch` samples the resident size (seconds)
WATCH_PERIOD = 0.05


@contextmanager
def memory_watch(budget: int | None) -> Iterator[None]:
    """Hold the resident size under ``budget`` over the block, for work that has no loop of
    its own to check it in (``cosim import``, a family's own commands): a thread samples it and, once
    it is over, interrupts the main thread (SIGUSR2), which raises
    :class:`MemoryLimitExceeded` at its next Python instruction. One allocation larger than
    the budget is the estimate's to refuse before the work starts; this catches what grows.
    Main thread with SIGUSR2 only; elsewhere the block runs unwatched."""
    if not budget or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "pthread_kill"):
        yield
        return
    main_id = threading.main_thread().ident
    stop = threading.Event()
    held = [0]

    def watch() -> None:
        while not stop.wait(WATCH_PERIOD):
            rss = rss_bytes()
            if rss > budget:
                held[0] = rss
                signal.pthread_kill(main_id, signal.SIGUSR2)  # type: ignore[arg-type]
                return

    def on_signal(signum: int, frame: Any) -> None:
        if not stop.is_set():      # a signal that arrives as the block ends is dropped
            raise MemoryLimitExceeded(budget, held[0])

    old = signal.signal(signal.SIGUSR2, on_signal)
    thread = threading.Thread(target=watch, name="cosim-memory-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        signal.signal(signal.SIGUSR2, old)


def memory_option(text: str) -> int:
    """``--max-memory``: bytes or a size with a unit (``2 GiB``), within the bounds of
    ``limits.max_memory`` (an argparse ``type``)."""
    try:
        n = parse_bytes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not 1 << 20 <= n <= MAX_MEMORY_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range [1 MiB, {fmt_bytes(MAX_MEMORY_LIMIT)}]")
    return n


#: the largest ``max_wall``: a week, as the scenario schema's
MAX_WALL_S = 7 * 86400


def wall_option(text: str) -> float:
    """``--max-wall``: seconds in (0, a week], as ``limits.max_wall`` (an argparse ``type``)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < v <= MAX_WALL_S:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range (0, {MAX_WALL_S}] seconds")
    return v


def add_limit_args(p: argparse.ArgumentParser, what: str) -> None:
    """``--max-memory`` and ``--max-wall``, with a scenario's defaults (docs/scenarios.md#limits)."""
    from .scenario.model import DEFAULT_MAX_MEMORY
    p.add_argument("--max-memory", type=memory_option, default=DEFAULT_MAX_MEMORY, metavar="SIZE",
                   help=f"memory budget of {what}: bytes or e.g. '2 GiB' (default 4 GiB); checked against an "
                        "estimate before it starts and against the resident size while it runs")
    p.add_argument("--max-wall", type=wall_option, default=None, metavar="S",
                   help=f"seconds of wall time {what} may take (default: no limit)")


def positive_int(text: str) -> int:
    """An argparse ``type``: an integer in [1, 2^63)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= v < 2**63:
        raise argparse.ArgumentTypeError(f"{v} is out of range [1, 2^63)")
    return v
