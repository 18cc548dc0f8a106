"""The parameter table of a registered platform: every parameter path with its type,
default, bounds and meaning, generated from the parameter classes (``cosim list parameters``;
docs/scenarios.md holds its output, and a test keeps the two equal)."""
from __future__ import annotations

import dataclasses
import typing
from typing import Any

from tlm.params import bounds, resolve
from tlm.units import fmt_time

HEADER = ("| parameter path | dataclass | type | default | range | meaning |\n"
          "|---|---|---|---|---|---|")


def _type(hint: Any, unit: str | None) -> str:
    name = getattr(hint, "__name__", None) if typing.get_origin(hint) is None else None
    text = name or str(hint).replace("typing.", "")
    return text + {"time": " (ps, or '10 ns')", "freq": " (Hz, or '420 MHz')"}.get(unit or "", "")


def _num(v: float, unit: str | None) -> str:
    if unit == "time":
        return fmt_time(int(v))
    if unit == "freq":
        for name, scale in (("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3)):
            if v >= scale:
                return f"{v / scale:g} {name}"
        return f"{v:g} Hz"
    if isinstance(v, int) and v >= 1 << 16 and v & (v - 1) == 0:
        return f"2^{v.bit_length() - 1}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _default(value: Any, unit: str | None) -> str:
    if unit == "time" and isinstance(value, int):
        return f"`{value}` ({fmt_time(value)})"
    if unit == "freq" and isinstance(value, float):
        return f"`{_num(value, unit)}`"
    return f"`{value!r}`"


def rows(classes: dict[str, type], complete: Any = None) -> list[str]:
    """One markdown row per parameter of ``classes`` (path -> class), sorted by path;
    ``complete`` (a platform's hook) fills in defaults its facts give."""
    defaults = {path: resolve(cls, {}, path) for path, cls in classes.items()}
    filled = complete(dict(defaults)) if complete is not None else defaults
    out = []
    for path, cls in sorted(classes.items()):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            unit = f.metadata.get("unit")
            value = getattr(defaults[path], f.name)
            default = _default(value, unit)
            given = getattr(filled.get(path, defaults[path]), f.name)
            if value is None and given is not None:
                shown = _num(given, unit) if isinstance(given, (int, float)) else given
                default += f" (from the platform's facts: {shown})"
            lo, hi = bounds(f)
            rng = f"{_num(lo, unit)} .. {_num(hi, unit)}" if lo is not None and hi is not None else ""
            doc = f.metadata.get("doc", "").replace("|", "\\|")
            kind = _type(hints[f.name], unit).replace("|", "\\|")
            out.append(f"| `{path}.{f.name}` | {cls.__name__} | {kind} | {default} | {rng} | {doc} |")
    return out


def table(classes: dict[str, type], complete: Any = None) -> str:
    return "\n".join([HEADER, *rows(classes, complete)])


def platform_tables(name: str) -> tuple[str, str]:
    """The parameter table of registered platform ``name`` and the table of the parameters
    it has only with firmware (``workload.firmware``)."""
    from . import PLATFORMS
    entry = PLATFORMS[name]
    base, fw = entry.params(False), entry.params(True)
    extra = {p: c for p, c in fw.items() if p not in base}
    return table(base, entry.complete), table(extra)
