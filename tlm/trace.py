"""Tracing hooks: components record spans (begin/end) and instants per path; the writer
turns them into Chrome trace-event JSON, which ui.perfetto.dev opens (one track per path).

Tracing is off unless ``sim.tracer`` is set; components test ``if sim.tracer:`` so the cost
when off is one attribute read."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, IO, Iterable, Iterator, TYPE_CHECKING

if TYPE_CHECKING:
    from .kernel import Simulator


@dataclass(slots=True)
class TraceRecord:
    """A span ``[begin, end]`` (ps) on the track ``path``; ``end is None`` for an instant."""

    path: str
    name: str
    begin: int
    end: int | None
    args: dict[str, Any] = field(default_factory=dict)


class Tracer:
    """Collects trace records in memory (bounded by ``limit`` records; the count of
    dropped records is kept so a report can say the trace was truncated)."""

    def __init__(self, sim: Simulator, limit: int = 2_000_000):
        self.sim = sim
        self.records: list[TraceRecord] = []
        self.limit = limit
        self.dropped = 0
        self._open: dict[int, TraceRecord] = {}
        self._next_token = 0

    def _add(self, rec: TraceRecord) -> None:
        if len(self.records) < self.limit:
            self.records.append(rec)
        else:
            self.dropped += 1

    def span(self, path: str, name: str, begin: int, end: int, **args: Any) -> None:
        """Record a complete span (e.g. a transaction with its annotated end time)."""
        self._add(TraceRecord(path, name, begin, end, args))

    def instant(self, path: str, name: str, **args: Any) -> None:
        self._add(TraceRecord(path, name, self.sim.now, None, args))

    def begin(self, path: str, name: str, **args: Any) -> int:
        """Open a span now; close it with ``end(token)``."""
        tok = self._next_token
        self._next_token += 1
        self._open[tok] = TraceRecord(path, name, self.sim.now, self.sim.now, args)
        return tok

    def end(self, token: int, **args: Any) -> None:
        rec = self._open.pop(token)
        rec.end = self.sim.now
        rec.args.update(args)
        self._add(rec)


def write_chrome_trace(records: list[TraceRecord], out: IO[str], process_name: str = "simulation",
                       counters: Iterable[tuple[str, int, dict[str, float]]] = ()) -> None:
    """Write Chrome trace-event JSON: one thread (track) per path, times in microseconds;
    ``counters`` — ``(track name, time ps, {series: value})`` — become counter tracks
    (``"ph": "C"``: Perfetto draws each track's series as a stepped graph). Events are
    written one at a time (a long trace is never held twice as JSON objects); the text is
    what ``json.dump`` of the whole document gives."""
    tids: dict[str, int] = {}
    for r in records:
        if r.path not in tids:
            tids[r.path] = 0
    for i, path in enumerate(sorted(tids), start=1):
        tids[path] = i
    out.write('{"traceEvents": [')
    out.write(json.dumps({"ph": "M", "pid": 1, "tid": 0, "name": "process_name", "args": {"name": process_name}}))
    for ev in _events(records, tids, counters):
        out.write(", ")
        out.write(json.dumps(ev))
    out.write('], "displayTimeUnit": "ns"}')


def _events(records: list[TraceRecord], tids: dict[str, int],
            counters: Iterable[tuple[str, int, dict[str, float]]]) -> Iterator[dict[str, Any]]:
    for path, tid in tids.items():
        yield {"ph": "M", "pid": 1, "tid": tid, "name": "thread_name", "args": {"name": path}}
    for r in sorted(records, key=lambda r: (r.begin, tids[r.path])):
        ev: dict[str, Any] = {"name": r.name, "pid": 1, "tid": tids[r.path], "ts": r.begin / 1e6}
        if r.end is None:
            ev.update(ph="i", s="t")
        else:
            ev.update(ph="X", dur=(r.end - r.begin) / 1e6)
        if r.args:
            ev["args"] = r.args
        yield ev
    for name, t, values in counters:
        yield {"name": name, "ph": "C", "pid": 1, "tid": 0, "ts": t / 1e6, "args": dict(values)}
