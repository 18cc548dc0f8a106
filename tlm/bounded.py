"""A record log of bounded size, for what a model keeps for the report while simulated time
grows without bound (a firmware's output lines, ...): the first ``head`` items, then the
last ``tail``; the ones between are only counted. A run that records less than ``head``
items sees a plain list."""
from __future__ import annotations

from collections import deque
from itertools import chain
from typing import Generic, Iterator, TypeVar, overload

T = TypeVar("T")


class HeadTail(Generic[T]):
    """The first ``head`` items appended and the last ``tail`` after them; ``total`` counts
    every item, ``dropped`` the ones kept in neither. Iteration, ``len`` and indexing see
    the kept items in order (head, then tail)."""

    __slots__ = ("head", "tail", "total", "_cap")

    def __init__(self, head: int, tail: int = 0):
        if head < 0 or tail < 0:
            raise ValueError(f"head and tail must be >= 0, got {head} and {tail}")
        self.head: list[T] = []
        self.tail: deque[T] = deque(maxlen=tail)
        self.total = 0
        self._cap = head

    def append(self, item: T) -> None:
        self.total += 1
        if len(self.head) < self._cap:
            self.head.append(item)
        elif self.tail.maxlen:
            self.tail.append(item)

    @property
    def dropped(self) -> int:
        """Items appended but kept in neither the head nor the tail."""
        return self.total - len(self.head) - len(self.tail)

    def clear(self) -> None:
        self.head.clear()
        self.tail.clear()
        self.total = 0

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    def __iter__(self) -> Iterator[T]:
        return chain(self.head, self.tail)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("HeadTail index out of range")
        h = len(self.head)
        return self.head[j] if j < h else self.tail[j - h]

    def __eq__(self, other: object) -> bool:
        """Equal to a list or a HeadTail of the same kept items (what a plain list was)."""
        if isinstance(other, (list, HeadTail)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]   # mutable, like a list

    def __repr__(self) -> str:
        return f"HeadTail({len(self.head)} + {len(self.tail)} of {self.total})"
