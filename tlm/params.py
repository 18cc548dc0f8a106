"""Component parameters: a dataclass per component, filled from overrides keyed by path.

A component declares ``@dataclass class XParams`` with documented defaults; the platform
builder calls ``resolve(XParams, overrides, path)``. Unknown keys are errors with a
"did you mean" suggestion, values are type-checked (with unit strings such as
``'420 MHz'`` or ``'10 ns'`` accepted where a field's metadata says so), and every error
names the parameter's full path.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import typing
from typing import Any, TypeVar

from .errors import SimulationError
from .units import parse_frequency, parse_time

T = TypeVar("T")


class ParameterError(SimulationError):
    """A bad parameter value or an unknown parameter name (``path`` is the full key)."""


def freq_field(default: float | None, doc: str = "") -> Any:
    """A frequency in Hz that also accepts strings like ``'420 MHz'``."""
    return dataclasses.field(default=default, metadata={"unit": "freq", "doc": doc})


def time_field(default: int | None, doc: str = "") -> Any:
    """A time in ps that also accepts strings like ``'10 ns'``."""
    return dataclasses.field(default=default, metadata={"unit": "time", "doc": doc})


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
    check = getattr(obj, "validate", None)
    if check is not None:
        try:
            check()
        except ValueError as e:
            raise ParameterError(str(e), path) from None
    return obj


def describe(cls: type) -> list[dict[str, Any]]:
    """Name, type, default and doc of each field (for ``cosim list`` and the docs)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        out.append({"name": f.name, "type": getattr(hints[f.name], "__name__", str(hints[f.name])),
                    "default": default, "doc": f.metadata.get("doc", "")})
    return out
