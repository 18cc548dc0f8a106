"""The unit of each sweep metric: the one place that says how a report value is shown.

The report keeps SI base units (``sim_time_ps``, ``energy.total_j``, fractions for
utilisation); a sweep's table, CSV, Parquet and plots show them in units a person reads
(ms, µJ, mW, %), and the column's name says which (``latency_ms``, ``energy_uJ``,
``power_mW``, ``rbe_utilisation_%``). A metric whose path matches no rule keeps its value
and its name.
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any


@dataclass(frozen=True)
class Unit:
    """How a report value becomes a table value: ``value * scale``, named ``<name>_<suffix>``."""

    suffix: str         # in column names (ASCII: ``uJ``, not ``µJ``)
    scale: float        # table value = report value * scale
    source: str         # the report path's own unit suffix, dropped from a metric's name
    label: str          # on plot axes

    def __call__(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        return value * self.scale


MS = Unit("ms", 1e-9, "ps", "ms")
UJ = Unit("uJ", 1e6, "j", "µJ")
MW = Unit("mW", 1e3, "w", "mW")
PERCENT = Unit("%", 100.0, "", "%")

#: report path patterns (fnmatch, first match wins) and their unit
RULES: tuple[tuple[str, Unit], ...] = (
    ("*_ps", MS),                       # sim_time_ps and any other time in picoseconds
    ("*_j", UJ), ("energy.per_*_j.*", UJ),
    ("*power_w", MW),                  # not any *_w: a width is no watt
    ("utilisation.*", PERCENT), ("*utilisation", PERCENT),    # fractions of the run
)


def unit_of(path: str) -> Unit | None:
    """The unit a metric at report ``path`` is shown in, or None (shown as it is)."""
    for pattern, unit in RULES:
        if fnmatchcase(path, pattern):
            return unit
    return None


def column(name: str, path: str) -> str:
    """The table column of metric ``name`` reading ``path``: the report's unit suffix of
    the name replaced by the shown one (``latency_ps`` -> ``latency_ms``), or the shown one
    appended (``rbe_utilisation`` -> ``rbe_utilisation_%``)."""
    unit = unit_of(path)
    if unit is None or name.endswith(f"_{unit.suffix}"):
        return name
    if unit.source and name.lower().endswith(f"_{unit.source}"):
        name = name[:-len(unit.source) - 1]
    return f"{name}_{unit.suffix}"


def axis_label(col: str, path: str) -> str:
    """A plot axis for table column ``col`` (metric at ``path``): ``latency (ms)``."""
    unit = unit_of(path)
    if unit is None or not col.endswith(f"_{unit.suffix}"):
        return col
    return f"{col[:-len(unit.suffix) - 1]} ({unit.label})"
