"""Simulated time: an integer number of picoseconds.

Integers keep time exact and comparisons cheap; every API that takes a delay takes
picoseconds (multiply by the unit constants below).
"""
from __future__ import annotations

import math
import re
from typing import Mapping

PS = 1
NS = 1_000
US = 1_000_000
MS = 1_000_000_000
SEC = 1_000_000_000_000

#: The longest span a time parameter or limit may name: an hour of simulated time. Models
#: step in ps, so anything longer is a mistake (or a run that would not end), not a study.
TIME_MAX = 3600 * SEC
#: The frequency range a clock parameter may take: 1 kHz (slow always-on clocks) to 10 GHz
#: (beyond any SoC clock; the ps period would lose precision).
FREQ_MIN = 1e3
FREQ_MAX = 10e9

_UNITS = {"ps": PS, "ns": NS, "us": US, "µs": US, "ms": MS, "s": SEC}
_TIME_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(ps|ns|us|µs|ms|s)\s*$")
_FREQ_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(hz|khz|mhz|ghz)\s*$", re.I)
_FREQ_UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def fmt_time(t: int) -> str:
    """Human-readable time, e.g. ``fmt_time(12_345) == '12.345 ns'``."""
    for unit, scale in (("s", SEC), ("ms", MS), ("us", US), ("ns", NS)):
        if abs(t) >= scale:
            return f"{t / scale:.6g} {unit}" if t % scale else f"{t // scale} {unit}"
    return f"{t} ps"


def _scaled(text: object, pattern: re.Pattern[str], units: Mapping[str, float], what: str, examples: str) -> float:
    """``'<number> <unit>'`` matched by ``pattern`` -> number x ``units[unit]`` (unit lower-cased
    when ``pattern`` ignores case); ValueError naming ``what`` and ``examples`` otherwise."""
    m = pattern.match(str(text))
    if not m:
        raise ValueError(f"not a {what}: {text!r} (expected e.g. {examples})")
    unit = m.group(2).lower() if pattern.flags & re.I else m.group(2)
    return float(m.group(1)) * units[unit]


def parse_time(text: str | int) -> int:
    """Parse ``'10 ns'``/``'1.5us'`` (or an int of ps) into integer picoseconds."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    value = _scaled(text, _TIME_RE, _UNITS, "time", "'10 ns', '2.5 us', or an integer of ps")
    if not math.isfinite(value):
        raise ValueError(f"time {text!r} is not finite")
    if value != int(value):
        raise ValueError(f"time {text!r} is not a whole number of picoseconds")
    return int(value)


def parse_frequency(text: str | float | int) -> float:
    """Parse ``'420 MHz'`` (or a number of Hz) into Hz."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        value = _scaled(text, _FREQ_RE, _FREQ_UNITS, "frequency", "'420 MHz' or a number of Hz")
    if not math.isfinite(value):
        raise ValueError(f"frequency {text!r} is not finite")
    return value


_BYTES_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*(B|KiB|MiB|GiB|TiB|kB|MB|GB|TB)\s*$")
_BYTE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
               "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def parse_bytes(text: str | int) -> int:
    """Parse ``'512 MiB'``/``'2 GB'`` (or an int of bytes) into bytes."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    return int(_scaled(text, _BYTES_RE, _BYTE_UNITS, "size", "'512 MiB', '2 GiB', or an integer of bytes"))


def fmt_bytes(n: float) -> str:
    """Human-readable size, e.g. ``fmt_bytes(3 << 30) == '3 GiB'``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def period_ps(freq_hz: float) -> int:
    """Clock period in whole picoseconds (rounded to nearest; 420 MHz -> 2381 ps)."""
    if not freq_hz > 0:
        raise ValueError(f"frequency must be > 0 Hz, got {freq_hz!r}")
    p = round(SEC / freq_hz)
    if p < 1:
        raise ValueError(f"frequency {freq_hz} Hz is above 1 THz: the period would be < 1 ps")
    return p
