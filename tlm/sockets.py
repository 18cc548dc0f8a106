"""Initiator and target sockets with checked binding.

Forward calls on an initiator socket (``b_transport``, ``transport_dbg``,
``get_direct_mem_ptr``, ``nb_transport_fw``) go straight to the bound target's functions:
binding installs them as attributes of the initiator socket, so a call costs no more than
calling the target directly. Before binding, each of them raises a :class:`BindingError`.
"""
from __future__ import annotations

import inspect
from functools import partial
from typing import TYPE_CHECKING, Awaitable, Callable

from .errors import BindingError
from .payload import GenericPayload, Phase, Sync

if TYPE_CHECKING:
    from .dmi import DmiRegion
    from .module import Module

BTransport = Callable[[GenericPayload, int], Awaitable[int]]
NbTransport = Callable[[GenericPayload, Phase, int], "tuple[Sync, Phase, int]"]


class _Socket:
    kind = "socket"

    def __init__(self, owner: "Module", name: str):
        self.owner = owner
        self.sim = owner.sim
        self.name = name
        self.path = f"{owner.path}.{name}"
        owner.sim.sockets.append(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


class TargetSocket(_Socket):
    """The target side. ``max_bindings`` initiators may bind (routers and memories that
    serve several initiators pass a larger number)."""

    kind = "target socket"

    def __init__(self, owner: "Module", name: str, *, b_transport: BTransport | None = None,
                 transport_dbg: Callable[[GenericPayload], int] | None = None,
                 get_direct_mem_ptr: Callable[[GenericPayload], "DmiRegion | None"] | None = None,
                 nb_transport_fw: NbTransport | None = None, max_bindings: int = 1,
                 optional: bool = False):
        super().__init__(owner, name)
        if b_transport is not None and not inspect.iscoroutinefunction(b_transport):
            raise BindingError(f"b_transport of {self.path} must be an 'async def' function, "
                               f"got {b_transport!r}", self.path)
        self._b = b_transport
        self._dbg = transport_dbg
        self._dmi = get_direct_mem_ptr
        self._nb = nb_transport_fw
        self.max_bindings = max_bindings
        self.optional = optional
        self.initiators: list[InitiatorSocket] = []
        self._nb_route: dict[GenericPayload, InitiatorSocket] = {}

    def _check_bound(self) -> None:
        if not self.initiators and not self.optional:
            raise BindingError("target socket is not bound to any initiator "
                               "(bind it, or create it with optional=True)", self.path)

    # ----- backward path ----------------------------------------------------------------
    def invalidate_direct_mem_ptr(self, start: int, end: int) -> None:
        """Tell every bound initiator to drop DMI regions overlapping [start, end]."""
        for ini in self.initiators:
            ini._invalidate(start, end)

    def nb_transport_bw(self, p: GenericPayload, phase: Phase, delay: int) -> "tuple[Sync, Phase, int]":
        ini = self._nb_route.get(p)
        if ini is None:
            if len(self.initiators) != 1:
                raise BindingError(f"nb_transport_bw for a payload this socket never received "
                                   f"({p!r})", self.path, self.sim.now)
            ini = self.initiators[0]
        result = ini._nb_bw(p, phase, delay)
        if result[0] == Sync.COMPLETED or result[1] == Phase.END_RESP:
            self._nb_route.pop(p, None)
        return result

    def _nb_fw_from(self, ini: "InitiatorSocket", p: GenericPayload, phase: Phase,
                    delay: int) -> "tuple[Sync, Phase, int]":
        if phase == Phase.BEGIN_REQ:
            self._nb_route[p] = ini
        result = self._nb(p, phase, delay)  # type: ignore[misc]
        if result[0] == Sync.COMPLETED or phase == Phase.END_RESP:
            self._nb_route.pop(p, None)
        return result


class InitiatorSocket(_Socket):
    """The initiator side. Call ``bind(target_socket)`` once."""

    kind = "initiator socket"

    def __init__(self, owner: "Module", name: str, *,
                 invalidate_direct_mem_ptr: Callable[[int, int], None] | None = None,
                 nb_transport_bw: NbTransport | None = None, optional: bool = False):
        super().__init__(owner, name)
        self._inv = invalidate_direct_mem_ptr
        self._nb_bw_fn = nb_transport_bw
        self.optional = optional
        self.target: TargetSocket | None = None

    def bind(self, target: TargetSocket) -> None:
        """Bind to ``target``. Binding twice, or to anything but a target socket, is an error."""
        if not isinstance(target, TargetSocket):
            raise BindingError(f"can only bind to a target socket, got {target!r}", self.path)
        if self.target is not None:
            raise BindingError(f"already bound to {self.target.path}; cannot also bind to "
                               f"{target.path}", self.path)
        if len(target.initiators) >= target.max_bindings:
            raise BindingError(f"target socket {target.path} already has "
                               f"{len(target.initiators)} binding(s) (max_bindings="
                               f"{target.max_bindings}); cannot bind {self.path}", target.path)
        self.target = target
        target.initiators.append(self)
        # calls go straight to the target's callbacks: the bound methods are replaced
        if target._b is not None:
            setattr(self, "b_transport", target._b)
        if target._dbg is not None:
            setattr(self, "transport_dbg", target._dbg)
        if target._dmi is not None:
            setattr(self, "get_direct_mem_ptr", target._dmi)
        if target._nb is not None:
            if len(target.initiators) == 1 and target.max_bindings == 1:
                setattr(self, "nb_transport_fw", target._nb)
            else:
                setattr(self, "nb_transport_fw", partial(target._nb_fw_from, self))

    def _check_bound(self) -> None:
        if self.target is None and not self.optional:
            raise BindingError("initiator socket is not bound to any target "
                               "(bind it, or create it with optional=True)", self.path)

    def _unbound(self, what: str) -> BindingError:
        if self.target is None:
            return BindingError(f"{what} called on an unbound initiator socket", self.path, self.sim.now)
        return BindingError(f"{what}: target {self.target.path} does not implement it",
                            self.path, self.sim.now)

    # ----- forward path (replaced by the target's functions at bind time) ----------------
    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        """Blocking transport: returns the annotated delay (ps) after the access."""
        raise self._unbound("b_transport")

    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug transport: no time, no side effects; returns the bytes transferred."""
        raise self._unbound("transport_dbg")

    def get_direct_mem_ptr(self, p: GenericPayload) -> "DmiRegion | None":
        """Ask for a DMI region containing ``p.address``; ``None`` if refused."""
        return None

    def nb_transport_fw(self, p: GenericPayload, phase: Phase, delay: int) -> "tuple[Sync, Phase, int]":
        raise self._unbound("nb_transport_fw")

    # ----- backward path -----------------------------------------------------------------
    def _invalidate(self, start: int, end: int) -> None:
        if self._inv is not None:
            self._inv(start, end)

    def _nb_bw(self, p: GenericPayload, phase: Phase, delay: int) -> "tuple[Sync, Phase, int]":
        if self._nb_bw_fn is None:
            raise BindingError("nb_transport_bw called but this initiator has no backward "
                               "function", self.path, self.sim.now)
        return self._nb_bw_fn(p, phase, delay)
