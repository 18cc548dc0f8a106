"""YAML loading that remembers the line of every key, and refuses duplicate keys.

``load(text)`` returns ``(data, lines)`` where ``lines`` maps a key path (a tuple of keys
and list indices) to its 1-based line, so validation errors can point at the file.
"""
from __future__ import annotations

from typing import Any

import yaml

from .errors import ScenarioError

Path = tuple


def load(text: str, filename: str | None = None) -> tuple[Any, dict[Path, int]]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ScenarioError(f"not valid YAML: {getattr(e, 'problem', e)}", filename,
                            mark.line + 1 if mark else None) from None
    lines: dict[Path, int] = {}
    if node is None:
        return None, lines
    data = _build(node, (), lines, filename)
    return data, lines


def _build(node: yaml.Node, path: Path, lines: dict[Path, int], filename: str | None) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for knode, vnode in node.value:
            key = _scalar(knode, filename)
            if key in out:
                raise ScenarioError(f"duplicate key {key!r} (first at line {lines[path + (key,)]})",
                                    filename, knode.start_mark.line + 1, _dotted(path + (key,)))
            lines[path + (key,)] = knode.start_mark.line + 1
            out[key] = _build(vnode, path + (key,), lines, filename)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(v, path + (i,), lines, filename) for i, v in enumerate(node.value)]
    return _scalar(node, filename)


def _scalar(node: yaml.Node, filename: str | None) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise ScenarioError("a mapping key must be a plain value", filename, node.start_mark.line + 1)
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


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
