"""Schema validation with errors that name the file, line, key path and what was expected."""
from __future__ import annotations

import math
import reprlib
from typing import Any

import jsonschema

from tlm.params import suggest

from .errors import ScenarioError
from .schema import NETWORK, OPS, SCENARIO
from .yamlpos import dotted, line_of

_VALIDATOR = jsonschema.Draft202012Validator(SCENARIO)
_NETWORK_VALIDATOR = jsonschema.Draft202012Validator(NETWORK)
_OP_VALIDATORS = {op: jsonschema.Draft202012Validator(s) for op, s in OPS.items()}
_TYPE_NAMES = {"integer": "an integer", "string": "a string", "number": "a number",
               "boolean": "true or false", "object": "a mapping", "array": "a list"}


def _schema_at(schema: dict, path: tuple) -> dict:
    for p in path:
        if isinstance(p, int):
            schema = schema.get("items", {})
        else:
            schema = schema.get("properties", {}).get(p, {})
    return schema


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a huge value must not flood the message)."""
    r = reprlib.Repr()
    r.maxstring = r.maxother = limit
    text = r.repr(value)
    return text if len(text) <= limit + 10 else text[:limit] + "..."


def _describe(err: jsonschema.ValidationError) -> tuple[tuple, str]:
    """(key path, message) for one jsonschema error."""
    path = tuple(err.absolute_path)
    v = err.validator
    if v == "maxLength":
        return path, f"a text of {len(err.instance):,} characters is too long (at most {err.validator_value})"
    if v == "additionalProperties":
        known = sorted(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in known]
        key = extra[0] if extra else "?"
        return path + (key,), (f"unknown key {_short(key)}{suggest(str(key)[:200], known)}; expected one of: "
                               f"{', '.join(known)}")
    if v == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return path, f"missing required key {missing[0]!r}" if missing else err.message
    if v == "enum":
        opts = [str(o) for o in err.validator_value]
        return path, (f"expected one of {', '.join(repr(o) for o in err.validator_value)}, got "
                      f"{_short(err.instance)}{suggest(str(err.instance)[:200], opts)}")
    if v == "type":
        types = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        want = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
        return path, f"expected {want}, got {type(err.instance).__name__} {_short(err.instance)}"
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return path, f"{_short(err.instance)} is out of range ({v} {err.validator_value})"
    if v == "pattern":
        return path, f"{_short(err.instance)} is not a valid {err.schema.get('description', 'value')}"
    if v in ("minProperties", "maxProperties"):
        opts = ", ".join(sorted(err.schema.get("properties", {})))
        exactly = v == "maxProperties" or err.schema.get("maxProperties")
        return path, f"give exactly one of: {opts}" if exactly else f"give at least one of: {opts}"
    return path, err.message if len(err.message) <= 300 else err.message[:300] + "..."


#: how many mistakes one pass reports (the rest follow once these are fixed)
MAX_REPORTED = 20


def _located(errors: list[jsonschema.ValidationError], prefix: tuple, lines: dict,
             file: str | None) -> list[ScenarioError]:
    """One located error per key path, the most specific of each: the deepest; at equal
    depth an unknown key explains a "missing required key" (a misspelling)."""
    best: dict[tuple, jsonschema.ValidationError] = {}
    for e in errors:
        path = tuple(e.absolute_path)
        rank = (len(path), e.validator == "additionalProperties")
        held = best.get(path)
        if held is None or rank > (len(held.absolute_path), held.validator == "additionalProperties"):
            best[path] = e
    # a mapping's own error (missing key) is dropped when a key inside it explains it
    paths = list(best)
    out = []
    for path, e in best.items():
        if e.validator == "required" and any(p[:len(path)] == path and len(p) > len(path) for p in paths):
            continue
        where, msg = _describe(e)
        full = prefix + where
        out.append(ScenarioError(msg, file, line_of(lines, full), dotted(full) or None))
    return out


def _raise_all(found: list[ScenarioError]) -> None:
    if found:
        found = sorted(found, key=lambda e: (e.line or 0, e.key or ""))[:MAX_REPORTED]
        first = found[0]
        raise ScenarioError(first.message, first.file, first.line, first.key, found[1:])


def raise_first(errors: list[jsonschema.ValidationError], prefix: tuple, lines: dict, file: str | None) -> None:
    """Raise a jsonschema validator's errors as one located ScenarioError (the others ride
    along in ``others``; ``prefix``: where the validated mapping sits in the file); other
    YAML files use it too."""
    _raise_all(_located(errors, prefix, lines, file))


_raise = raise_first


def refuse_non_finite(data: Any, lines: dict, file: str | None, prefix: tuple = ()) -> None:
    """No ``.nan``/``.inf`` anywhere (JSON Schema bounds let NaN through: it compares false
    with everything)."""
    stack: list[tuple[tuple, Any]] = [(prefix, data)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise ScenarioError(f"{v!r} is not a finite number", file, line_of(lines, path), dotted(path) or None)
        if isinstance(v, dict):
            stack.extend((path + (k,), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((path + (i,), x) for i, x in enumerate(v))


def validate(data: Any, lines: dict, file: str | None = None) -> None:
    """Raise :class:`ScenarioError` for what is wrong in ``data`` (a scenario mapping): every
    schema mistake at once (the first, with the others in ``others``), then the task graph."""
    if not isinstance(data, dict):
        raise ScenarioError("a scenario must be a mapping with at least 'platform' and "
                            "'workload'", file, 1)
    refuse_non_finite(data, lines, file)
    found = _located(list(_VALIDATOR.iter_errors(data)), (), lines, file)
    wl = data.get("workload")
    tasks = (wl.get("tasks") if isinstance(wl, dict) else None) or []
    if isinstance(tasks, list):
        for i, task in enumerate(tasks):
            if isinstance(task, dict) and task.get("op") in _OP_VALIDATORS:
                found += _located(list(_OP_VALIDATORS[task["op"]].iter_errors(task)),
                                  ("workload", "tasks", i), lines, file)
    _raise_all(found)
    ids: dict[str, int] = {}
    for i, task in enumerate(tasks):
        tid = task.get("id", f"{task['op']}{i}")
        if tid in ids:
            raise ScenarioError(f"duplicate task id {tid!r} (also task {ids[tid]})", file,
                                line_of(lines, ("workload", "tasks", i, "id")),
                                f"workload.tasks[{i}].id")
        ids[tid] = i
    for i, task in enumerate(tasks):
        for j, dep in enumerate(task.get("after", [])):
            if dep not in ids:
                raise ScenarioError(f"unknown task {dep!r}{suggest(dep, ids)}", file,
                                    line_of(lines, ("workload", "tasks", i, "after", j)),
                                    f"workload.tasks[{i}].after[{j}]")
    _check_cycles(tasks, ids, lines, file)
    network = (data.get("workload") or {}).get("network")
    if network is not None:
        _check_network(network, lines, file)
    _check_wave_window(((data.get("outputs") or {}).get("waves") or {}).get("window"), lines, file)


def _check_wave_window(window: list | None, lines: dict, file: str | None) -> None:
    """``outputs.waves.window`` (two times, by the schema) must start before it stops."""
    from tlm.units import parse_time
    if not window:
        return
    key = ("outputs", "waves", "window")
    try:
        start, stop = parse_time(window[0]), parse_time(window[1])
    except ValueError as e:
        raise ScenarioError(str(e), file, line_of(lines, key), dotted(key)) from None
    if start >= stop:
        raise ScenarioError(f"the window starts at {window[0]} and stops at {window[1]}: it must "
                            "start before it stops", file, line_of(lines, key), dotted(key))


def validate_network(net: Any, lines: dict, file: str | None) -> None:
    """A network description in a file of its own (a family's compile command): what a
    scenario's ``workload.network`` must be, errors located in ``file``."""
    if not isinstance(net, dict):
        raise ScenarioError("a network description is a mapping: preset (and options) or input and layers",
                            file, 1)
    refuse_non_finite(net, lines, file)
    _raise_all(_located(list(_NETWORK_VALIDATOR.iter_errors(net)), (), lines, file))
    _check_network(net, lines, file, ())


def _check_network(net: dict, lines: dict, file: str | None, key: tuple = ("workload", "network")) -> None:
    """A preset network: a known preset and options within its schema (a layer list is
    checked by the scenario schema itself)."""
    from cosim.deploy.presets import presets
    options = presets()[1]
    if "preset" in net:
        if "input" in net or "layers" in net:
            raise ScenarioError("give a preset or an input and layers, not both", file,
                                line_of(lines, key + ("preset",)), dotted(key + ("preset",)))
        name = net["preset"]
        if name not in options:
            raise ScenarioError(f"unknown network preset {name!r}{suggest(name, options)}; known: "
                                f"{', '.join(sorted(options))}", file,
                                line_of(lines, key + ("preset",)), dotted(key + ("preset",)))
        errors = list(jsonschema.Draft202012Validator(options[name]).iter_errors(net.get("options", {})))
        if errors:
            _raise(errors, key + ("options",), lines, file)
    elif "onnx" in net:
        from .schema import FAMILY_NETWORK_KEYS      # a family's deployer's own keys (prune, ...)
        allowed = {"onnx", "input_shape", "name", *FAMILY_NETWORK_KEYS}
        if set(net) - allowed:
            extra = sorted(set(net) - allowed)[0]
            raise ScenarioError(f"an ONNX network takes only {', '.join(sorted(allowed - {'name'}))} (the model "
                                f"holds the rest), not {extra!r}", file, line_of(lines, key + (extra,)),
                                dotted(key + (extra,)))
    elif "input_shape" in net:
        raise ScenarioError("input_shape goes with onnx", file, line_of(lines, key + ("input_shape",)),
                            dotted(key + ("input_shape",)))
    elif "options" in net:
        raise ScenarioError("options go with a preset", file, line_of(lines, key + ("options",)),
                            dotted(key + ("options",)))
    else:
        for k in ("input", "layers"):
            if k not in net:
                raise ScenarioError(f"missing required key {k!r} (or give a preset)", file,
                                    line_of(lines, key), dotted(key) or None)


def _check_cycles(tasks: list[dict], ids: dict[str, int], lines: dict, file: str | None) -> None:
    state: dict[int, int] = {}

    def visit(i: int, stack: list[int]) -> None:
        state[i] = 1
        for dep in tasks[i].get("after", []):
            j = ids[dep]
            if state.get(j) == 1:
                cycle = [tasks[k].get("id", f"{tasks[k]['op']}{k}") for k in stack[stack.index(j):] + [i, j]] \
                    if j in stack else [dep]
                raise ScenarioError(f"tasks depend on each other in a cycle: {' -> '.join(cycle)}",
                                    file, line_of(lines, ("workload", "tasks", i, "after")),
                                    f"workload.tasks[{i}].after")
            if state.get(j) is None:
                visit(j, stack + [i])
        state[i] = 2

    for i in range(len(tasks)):
        if state.get(i) is None:
            visit(i, [])
