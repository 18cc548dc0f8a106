"""YAML loading that remembers the line of every key, and refuses duplicate keys.

``load(text)`` returns ``(data, lines)`` where ``lines`` maps a key path (a tuple of keys
and list indices) to its 1-based line, so validation errors can point at the file.
``read_text(path)`` reads a scenario or platform file within bounds. The bounds keep a
careless or hostile file from exhausting the machine: only regular files of at most
:data:`MAX_FILE_BYTES`, UTF-8; at most :data:`MAX_VALUES` values once aliases are expanded
(a "billion laughs" file) and :data:`MAX_DEPTH` levels of nesting. Tags other than the
standard scalar ones are refused, on scalars and on collections alike (``!foo [1]``), as
are merge keys.
"""
from __future__ import annotations

import os
import stat
from typing import Any

import yaml

from .errors import ScenarioError

Path = tuple

#: the largest scenario or platform file read (bytes)
MAX_FILE_BYTES = 4 << 20
#: the most values a file may hold once its aliases are expanded
MAX_VALUES = 250_000
#: the deepest nesting of mappings and lists
MAX_DEPTH = 64


def read_text(path: str | os.PathLike[str], what: str = "file") -> str:
    """The text of a regular file of at most :data:`MAX_FILE_BYTES`, decoded as UTF-8; a
    ScenarioError naming the file otherwise (a device, a FIFO, a folder, too large, binary)."""
    name = str(path)
    try:
        # non-blocking open: a FIFO must be refused, not waited on for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ScenarioError(f"the {what} is not a regular file", name)
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ScenarioError(f"cannot read the {what}: {e.strerror}", name) from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"the {what} is larger than {MAX_FILE_BYTES >> 20} MiB", name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ScenarioError(f"the {what} is not UTF-8 text (byte 0x{data[e.start]:02x})", name,
                            line) from None


def load(text: str, filename: str | None = None) -> tuple[Any, dict[Path, int]]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ScenarioError(f"not valid YAML: {getattr(e, 'problem', e)}", filename,
                            mark.line + 1 if mark else None) from None
    except RecursionError:
        raise ScenarioError(f"nested deeper than {MAX_DEPTH} levels", filename) from None
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
