"""Statistics: counters keyed by hierarchical path, cheap enough for hot paths."""
from __future__ import annotations

from typing import Any, Callable


class StatScope:
    """The counters of one component path. ``add`` is one dict update."""

    __slots__ = ("path", "values")

    def __init__(self, path: str):
        self.path = path
        self.values: dict[str, Any] = {}

    def add(self, name: str, amount: int | float = 1) -> None:
        v = self.values
        v[name] = v.get(name, 0) + amount

    def set(self, name: str, value: Any) -> None:
        self.values[name] = value

    def max(self, name: str, value: int | float) -> None:
        v = self.values
        if value > v.get(name, value - 1):
            v[name] = value

    def get(self, name: str, default: Any = 0) -> Any:
        return self.values.get(name, default)


class StatsRegistry:
    """All scopes of a simulation; ``as_dict()`` is sorted so reports are stable."""

    def __init__(self) -> None:
        self._scopes: dict[str, StatScope] = {}
        self._providers: list[tuple[str, Callable[[], dict[str, Any]]]] = []

    def add_provider(self, path: str, fn: Callable[[], dict[str, Any]]) -> None:
        """Register ``fn`` returning counters of ``path`` that a hot path keeps in plain
        attributes; it is read when statistics are collected."""
        self._providers.append((path, fn))

    def scope(self, path: str) -> StatScope:
        s = self._scopes.get(path)
        if s is None:
            s = self._scopes[path] = StatScope(path)
        return s

    def get(self, path: str, name: str, default: Any = 0) -> Any:
        return self.as_dict().get(path, {}).get(name, default)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        merged: dict[str, dict[str, Any]] = {p: dict(s.values) for p, s in self._scopes.items()}
        for path, fn in self._providers:
            merged.setdefault(path, {}).update(fn())
        return {p: dict(sorted(merged[p].items())) for p in sorted(merged) if merged[p]}
