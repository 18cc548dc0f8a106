"""YAML loading that remembers the line of every key, and refuses duplicate keys.

``load(text)`` returns ``(data, lines)`` where ``lines`` maps a key path (a tuple of keys
and list indices) to its 1-based line, so validation errors can point at the file.
This is the one loader of YAML a user gives: scenario, platform, sweep and port-map files,
source manifests and command-line values (``load_value``). ``read_text(path, kind)`` reads
such a file through the bounded reader (:mod:`tlm.files`: regular files only, the cap of its
kind, UTF-8). The bounds keep a careless or hostile file from exhausting the machine: at
most :data:`MAX_VALUES` values once aliases are expanded (a "billion laughs" file) and
:data:`MAX_DEPTH` levels of nesting. Tags other than the
standard scalar ones are refused, on scalars and on collections alike (``!foo [1]``), as
are merge keys.
"""
from __future__ import annotations

import os
from typing import Any

import yaml

from tlm import files

from .errors import ScenarioError

Path = tuple

#: the most values a file may hold once its aliases are expanded
MAX_VALUES = 250_000
#: the deepest nesting of mappings and lists
MAX_DEPTH = 64


def read_text(path: str | os.PathLike[str], kind: str = "scenario") -> str:
    """The UTF-8 text of a regular file within the cap of ``kind`` (:func:`tlm.files.read_text`:
    ``scenario``, ``platform``, ``sweep``, ``portmap``, ``manifest``); a ScenarioError naming the
    file otherwise (a device, a FIFO, a folder, a /proc file, too large, not UTF-8)."""
    try:
        return files.read_text(path, kind)
    except files.FileAccessError as e:
        raise ScenarioError(e.reason, e.path, e.line) from None


def load_file(path: str | os.PathLike[str], kind: str = "scenario") -> tuple[Any, dict[Path, int]]:
    """:func:`read_text` then :func:`load`: a user's YAML file, every bound applied."""
    return load(read_text(path, kind), str(path))


def load_value(text: str, where: str) -> Any:
    """A value given on the command line (``--set PATH=VALUE``, ``--grid``), read as YAML
    through the same bounds as a file (size: the ``set_value`` cap of tlm.files.LIMITS;
    aliases, depth, tags as :func:`load`). Text that is not valid YAML is the string
    itself (``--set description=a: b``); an empty value is ``""``. Errors name ``where``."""
    if not text.strip():
        return ""
    cap = files.LIMITS["set_value"].max_bytes
    if len(text) > cap:
        raise ScenarioError(f"the value has {len(text):,} characters, more than the "
                            f"{files.fmt_size(cap)} a command-line value may have", key=where)
    try:
        node = _compose(text, None)
    except yaml.YAMLError:
        return text
    except ScenarioError as e:
        raise ScenarioError(e.message, key=where) from None
    if node is None:
        return None
    try:
        return _build(node, (), {}, None, [0])
    except ScenarioError as e:
        raise ScenarioError(e.message, key=where) from None


def _compose(text: str, filename: str | None) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise ScenarioError(f"nested deeper than {MAX_DEPTH} levels", filename) from None


def load(text: str, filename: str | None = None) -> tuple[Any, dict[Path, int]]:
    """``(data, lines)`` of a YAML document, every bound applied (see the module doc)."""
    try:
        node = _compose(text, filename)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ScenarioError(f"not valid YAML: {getattr(e, 'problem', e)}", filename,
                            mark.line + 1 if mark else None) from None
    lines: dict[Path, int] = {}
    if node is None:
        return None, lines
    data = _build(node, (), lines, filename, [0])
    return data, lines


def _build(node: yaml.Node, path: Path, lines: dict[Path, int], filename: str | None,
           count: list[int]) -> Any:
    count[0] += 1
    if count[0] > MAX_VALUES:
        raise ScenarioError(f"more than {MAX_VALUES} values once aliases are expanded",
                            filename, node.start_mark.line + 1, _dotted(path))
    if len(path) > MAX_DEPTH:
        raise ScenarioError(f"nested deeper than {MAX_DEPTH} levels (or an alias that "
                            "contains itself)", filename, node.start_mark.line + 1)
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _PLAIN_COLLECTIONS:
        # '!foo [1, 2]', '!!set {a}', '!!omap [...]': PyYAML would build a plain list or
        # dict and drop the tag silently; refused like a tag on a scalar
        raise ScenarioError(f"unsupported YAML tag {node.tag!r}", filename, node.start_mark.line + 1,
                            _dotted(path) or None)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for knode, vnode in node.value:
            key = _scalar(knode, filename)
            if key in out:
                raise ScenarioError(f"duplicate key {key!r} (first at line {lines[path + (key,)]})",
                                    filename, knode.start_mark.line + 1, _dotted(path + (key,)))
            lines[path + (key,)] = knode.start_mark.line + 1
            out[key] = _build(vnode, path + (key,), lines, filename, count)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(v, path + (i,), lines, filename, count) for i, v in enumerate(node.value)]
    return _scalar(node, filename)


#: the only tags a mapping or a list may carry (the implicit ones, or '!!map' / '!!seq')
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


#: what a scalar may become: the JSON types
_PLAIN_SCALARS = (str, int, float, bool, type(None))


def _scalar(node: yaml.Node, filename: str | None) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise ScenarioError("a mapping key must be a plain value", filename, node.start_mark.line + 1)
    if node.tag == "tag:yaml.org,2002:merge":
        raise ScenarioError("YAML merge keys ('<<') are not supported: write the keys out",
                            filename, node.start_mark.line + 1)
    loader = yaml.SafeLoader("")
    try:
        value = loader.construct_object(node, deep=True)
    except yaml.YAMLError:     # an unknown or unsafe tag ('!foo', '!!python/...')
        raise ScenarioError(f"unsupported YAML tag {node.tag!r}", filename,
                            node.start_mark.line + 1) from None
    except Exception:          # noqa: BLE001 - '!!float abc', '!!timestamp x': PyYAML's own errors
        raise ScenarioError(f"cannot read {node.value!r} as a YAML {node.tag.rsplit(':', 1)[-1]}",
                            filename, node.start_mark.line + 1) from None
    finally:
        loader.dispose()
    if not isinstance(value, _PLAIN_SCALARS):
        # a date (2024-01-31), a '!!binary' blob: no scenario value has these types, and
        # the code after the loader expects only the JSON ones
        raise ScenarioError(f"{node.value!r} reads as a YAML {type(value).__name__}, which no "
                            "scenario value is; write it in quotes for a string", filename,
                            node.start_mark.line + 1)
    return value


def _dotted(path: Path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def dotted(path: Path) -> str:
    """``('workload', 'tasks', 2, 'op')`` -> ``workload.tasks[2].op``."""
    return _dotted(path)


def line_of(lines: dict[Path, int], path: Path) -> int | None:
    """The line of ``path``, or of its closest ancestor that has one."""
    p = tuple(path)
    while p not in lines and p:
        p = p[:-1]
    return lines.get(p)
