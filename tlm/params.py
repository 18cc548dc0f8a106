"""Component parameters: a dataclass per component, filled from overrides keyed by path.

A component declares ``@dataclass class XParams`` with documented defaults; the platform
builder calls ``resolve(XParams, overrides, path)``. Unknown keys are errors with a
"did you mean" suggestion, values are type-checked (with unit strings such as
``'420 MHz'`` or ``'10 ns'`` accepted where a field's metadata says so), and every error
names the parameter's full path.

Every numeric field carries bounds (``lo``/``hi`` in its metadata: :func:`param`,
:func:`time_field`, :func:`freq_field`); :func:`resolve` refuses a value outside them, so no
accepted number can make a model allocate or loop without limit. ``describe`` shows them.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import typing
from typing import Any, TypeVar

from .errors import SimulationError
from .units import FREQ_MAX, FREQ_MIN, TIME_MAX, fmt_time, parse_frequency, parse_time

T = TypeVar("T")


class ParameterError(SimulationError):
    """A bad parameter value or an unknown parameter name (``path`` is the full key)."""


def param(default: Any, doc: str = "", *, lo: float | None = None, hi: float | None = None) -> Any:
    """A documented parameter field; a number must lie in ``[lo, hi]`` (both required for a
    numeric field: tests/test_param_bounds.py checks every component's parameters)."""
    meta: dict[str, Any] = {"doc": doc}
    if lo is not None:
        meta["lo"] = lo
    if hi is not None:
        meta["hi"] = hi
    return dataclasses.field(default=default, metadata=meta)


def freq_field(default: float | None, doc: str = "", *, lo: float = FREQ_MIN,
               hi: float = FREQ_MAX) -> Any:
    """A frequency in Hz that also accepts strings like ``'420 MHz'`` (in ``[lo, hi]`` Hz)."""
    return dataclasses.field(default=default, metadata={"unit": "freq", "doc": doc, "lo": lo, "hi": hi})


def time_field(default: int | None, doc: str = "", *, lo: int = 0, hi: int = TIME_MAX) -> Any:
    """A time in ps that also accepts strings like ``'10 ns'`` (in ``[lo, hi]`` ps)."""
    return dataclasses.field(default=default, metadata={"unit": "time", "doc": doc, "lo": lo, "hi": hi})


def bounds(f: dataclasses.Field) -> tuple[float | None, float | None]:  # type: ignore[type-arg]
    """``(lo, hi)`` of a parameter field (None where the field declares none)."""
    return f.metadata.get("lo"), f.metadata.get("hi")


def _fmt(value: float, unit: str | None) -> str:
    if unit == "time":
        return fmt_time(int(value))
    if unit == "freq":
        return f"{value:g} Hz"
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_range(value: Any, f: dataclasses.Field, key: str) -> None:  # type: ignore[type-arg]
    """Raise :class:`ParameterError` at ``key`` if numeric ``value`` is outside ``f``'s bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if value != value:      # NaN compares false with both bounds
        raise ParameterError("nan is not a number", key)
    lo, hi = bounds(f)
    unit = f.metadata.get("unit")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"[{_fmt(lo, unit) if lo is not None else '-inf'}, {_fmt(hi, unit) if hi is not None else 'inf'}]"
        raise ParameterError(f"{_fmt(value, unit)} is out of range {rng}", key)


def suggest(name: str, choices: typing.Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` or an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _coerce(value: Any, hint: Any, unit: str | None, key: str) -> Any:
    try:
        if unit == "freq":
            return parse_frequency(value)
        if unit == "time":
            return parse_time(value)
    except ValueError as e:
        raise ParameterError(str(e), key) from None
    origin = typing.get_origin(hint)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        last: ParameterError | None = None
        for h in typing.get_args(hint):
            if h is type(None):
                if value is None:
                    return None
                continue
            try:
                return _coerce(value, h, None, key)
            except ParameterError as e:
                last = e
        raise last or ParameterError(f"bad value {value!r}", key)
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            opts = ", ".join(repr(a) for a in typing.get_args(hint))
            hint_s = suggest(str(value), map(str, typing.get_args(hint)))
            raise ParameterError(f"expected one of {opts}, got {value!r}{hint_s}", key)
        return value
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ParameterError(f"expected a list, got {value!r}", key)
        return origin(value)
    if origin is dict:
        if not isinstance(value, dict):
            raise ParameterError(f"expected a mapping, got {value!r}", key)
        return dict(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ParameterError(f"expected true or false, got {value!r}", key)
        return value
    if hint is int:
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            raise ParameterError(f"expected an integer, got {value!r}", key)
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(f"expected a number, got {value!r}", key)
        if not math.isfinite(value):
            raise ParameterError(f"expected a finite number, got {value!r}", key)
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ParameterError(f"expected a string, got {value!r}", key)
        return value
    return value


def resolve(cls: type[T], overrides: dict[str, Any] | None, path: str) -> T:
    """Build ``cls`` (a dataclass) from its defaults and ``overrides`` (a flat mapping of
    field name -> value). Errors name ``path.field``."""
    overrides = dict(overrides or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in fields:
            raise ParameterError(f"unknown parameter {key!r}{suggest(key, fields)}; known: "
                                 f"{', '.join(sorted(fields))}", f"{path}.{key}" if path else key)
        f = fields[key]
        kwargs[key] = _coerce(value, hints[key], f.metadata.get("unit"), f"{path}.{key}" if path else key)
    obj = cls(**kwargs)
    check_params(obj, path)
    return obj


def check_params(obj: Any, path: str) -> None:
    """Raise :class:`ParameterError` if a field of the parameter dataclass ``obj`` is outside
    its bounds or the class's own ``validate()`` (cross-field rules) refuses it. Components
    call it on parameters they are handed ready-made (``resolve`` calls it too)."""
    for f in dataclasses.fields(obj):
        check_range(getattr(obj, f.name), f, f"{path}.{f.name}" if path else f.name)
    check = getattr(obj, "validate", None)
    if check is not None:
        try:
            check()
        except ValueError as e:
            raise ParameterError(str(e), path) from None


def describe(cls: type) -> list[dict[str, Any]]:
    """Name, type, default and doc of each field (for ``cosim list`` and the docs)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        lo, hi = bounds(f)
        out.append({"name": f.name, "type": getattr(hints[f.name], "__name__", str(hints[f.name])),
                    "default": default, "doc": f.metadata.get("doc", ""), "min": lo, "max": hi})
    return out
