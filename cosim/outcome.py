"""What a run produced, as plain data: the input of the checks, the report and the plots.

Each process that simulated part of a scenario *gathers* the part it owns
(:func:`cosim.runner.gather`, with a predicate on top-level component names: the host's task records
and the firmware's exit live with ``soc``, the energy summary with ``pmu``, the bytes of
a checked memory region with the memory's owner); :func:`merge` puts the parts together
with the run's statistics and errors. A run in one process is the same thing with one
part, so a report never depends on how the scenario was split.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Callable, Iterable

from tlm.payload import MAX_ERROR_RECORDS, TlmErrorRecord
from tlm.units import fmt_time

from .host import TaskRecord


#: values that plain_fields shares instead of copying (immutable)
_ATOMS = frozenset({int, float, str, bool, bytes, type(None)})


def plain_fields(obj: Any) -> dict[str, Any]:
    """``dataclasses.asdict(obj)`` without its cost: the same dict, with dicts, lists,
    tuples and nested dataclasses copied recursively and immutable values shared.
    ``asdict`` deep-copies every leaf (``copy.deepcopy`` of each float), which cost
    0.1-0.5 s of a ResNet-20 run in the power samples and task records alone. Other leaf
    types are shared too, not deep-copied: the objects converted here hold plain data."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}


def _plain(v: Any) -> Any:
    cls = v.__class__
    if cls in _ATOMS:
        return v
    if cls is dict:
        return {k: x if x.__class__ in _ATOMS else _plain(x) for k, x in v.items()}
    if cls is list:
        return [x if x.__class__ in _ATOMS else _plain(x) for x in v]
    if cls is tuple:
        return tuple(_plain(x) for x in v)
    if is_dataclass(v) and not isinstance(v, type):
        return plain_fields(v)
    return v


def region_key(space: str, address: int, size: int) -> str:
    return f"{space}:{address:#x}:{size}"


@dataclass
class Outcome:
    """``stats`` (merged), ``errors`` (TLM error lines, in time order), ``records`` (the
    host's tasks, or None), ``firmware`` ({fault, exit_code, exit_time} or None),
    ``stdout`` (lines), ``pmu`` (operating point, ABB, timing errors, power samples),
    ``regions`` (bytes of the memory regions the checks read), ``rtl`` (RTL blocks),
    ``accelerators`` (each accelerator's report entry, by path)."""

    sim_time: int
    stats: dict[str, dict[str, Any]]
    errors: list[str]
    records: dict[str, TaskRecord] | None = None
    firmware: dict[str, Any] | None = None
    stdout: list[str] = field(default_factory=list)
    #: the same lines with when and by whom: ``{"time_ps", "from", "text"}``
    stdout_lines: list[dict[str, Any]] = field(default_factory=list)
    pmu: dict[str, Any] | None = None
    regions: dict[str, bytes] = field(default_factory=dict)
    rtl: dict[str, Any] | None = None
    accelerators: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: trace records (tlm.TraceRecord), when the run was traced
    trace: list | None = None
    #: checks an address range against the platform (raises its error for a bad range)
    locate: Callable[[str, int, int], Any] | None = None
    #: what was kept of a record that outgrew its cap, by record (report: ``extra.capped``)
    capped: dict[str, str] = field(default_factory=dict)

    def memory(self, space: str, address: int, size: int) -> bytes:
        """The final contents of a checked region (gathered by the memory's owner)."""
        if self.locate is not None:
            self.locate(space, address, size)
        try:
            return self.regions[region_key(space, address, size)]
        except KeyError:
            raise ValueError(f"[{address:#x}, +{size}) in {space}: not gathered (is it one of "
                             "the scenario's checks?)") from None

    def power_samples(self) -> list:
        from components.pmu import PowerSample
        return [PowerSample(**s) for s in (self.pmu or {}).get("samples", [])]


def power_counters(out: "Outcome") -> list[tuple[str, int, dict[str, float]]]:
    """The PMU's time series as trace counter tracks (``trace.json``): power per domain
    (mW), supply and body bias per domain (V), and the clocks (MHz), one sample each."""
    rows: list[tuple[str, int, dict[str, float]]] = []
    for s in (out.pmu or {}).get("samples", []):
        t = s["time"]
        rows.append(("power (mW)", t, s["power_mw"]))
        rows.append(("VDD (V)", t, s["vdd"]))
        rows.append(("body bias (V)", t, s["vbb"]))
        rows.append(("clock (MHz)", t, {k: v / 1e6 for k, v in s["freq_hz"].items()}))
    return rows


def stdout_line(line: dict[str, Any]) -> str:
    """One firmware output line as the terminal and ``stdout.log`` show it."""
    return f"[{fmt_time(line['time_ps'])}] {line['from']}: {line['text']}"


def error_lines(records: Iterable[dict]) -> list[str]:
    """TLM error records (dicts, already in canonical order) as the report prints them."""
    return [str(TlmErrorRecord(**r)) if "status" in r else r.get("error", str(r)) for r in records]


def merge(parts: Iterable[dict], *, sim_time: int, stats: dict, errors: list[dict],
          locate: Callable[[str, int, int], Any] | None) -> Outcome:
    """One Outcome from the parts of every process (each key comes from one owner); the
    first :data:`tlm.payload.MAX_ERROR_RECORDS` errors in canonical order, as one process
    keeps."""
    out = Outcome(sim_time=sim_time, stats=stats, errors=error_lines(errors[:MAX_ERROR_RECORDS]), locate=locate)
    for part in parts:
        if "records" in part:
            out.records = {k: TaskRecord(**v) for k, v in part["records"].items()}
        if "firmware" in part:
            out.firmware = part["firmware"]
        if "stdout" in part:
            out.stdout_lines = [{"time_ps": t, "from": src, "text": text} for t, src, text in part["stdout"]]
            out.stdout = [ln["text"] for ln in out.stdout_lines]
        if "pmu" in part:
            out.pmu = part["pmu"]
        if part.get("rtl") is not None:
            from .rtl.swap import rtl_table
            blocks = {**(out.rtl or {}).get("blocks", {}), **part["rtl"]["blocks"]}
            out.rtl = {"blocks": dict(sorted(blocks.items())), "table": rtl_table(blocks)}
        out.regions.update(part.get("regions", {}))
        out.capped.update(part.get("capped", {}))
        out.accelerators = dict(sorted({**out.accelerators, **part.get("accelerators", {})}.items()))
        if "trace" in part:
            from tlm.trace import TraceRecord
            out.trace = (out.trace or []) + [TraceRecord(*r) for r in part["trace"]]
    if out.trace is not None:
        out.trace.sort(key=lambda r: (r.begin, r.path, r.name))
    return out


#: what stops a run before it finishes (a report's ``stopped.by``)
STOPS = ("max_memory", "max_wall", "default_max_time", "out_of_memory", "interrupted")


def stop_record(by: str, sim_time: int, components: list[str]) -> dict[str, Any]:
    """A report's ``stopped`` section: what stopped the run (one of :data:`STOPS`), the
    simulated time it reached and where it was (the components with a process runnable or
    waiting for a time, or the one that ran out of memory)."""
    assert by in STOPS, by
    return {"by": by, "sim_time_ps": sim_time, "sim_time": fmt_time(sim_time), "components": components}
