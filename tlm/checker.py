"""A TLM-2.0 base-protocol checker that can be inserted on any initiator->target binding.

Each rule has a short name (``ProtocolError.rule``). By default a violation raises
:class:`ProtocolError` naming the checker's path, the rule and the simulated time; with
``raise_on_violation=False`` violations are collected in ``checker.violations``.

Rules:
  status-incomplete    a request must arrive with status INCOMPLETE (so an interconnect
                       upstream never set OK; only the target sets it)
  response-status      the target must set a status before returning / completing
  length               1 <= length <= len(data)
  streaming-width      streaming width must be >= 1
  byte-enable-length   a byte-enable array must not be empty
  address-range        address >= 0 and address + length <= 2**64
  command              command is READ, WRITE or IGNORE
  delay-negative       delays are >= 0
  delay-decreased      a returned delay is never smaller than the one passed in
  data-pointer         the target must not replace the payload's data buffer
  payload-in-flight    a payload must not be sent again while it is in flight
  phase-order          nb phases follow BEGIN_REQ -> END_REQ -> BEGIN_RESP -> END_RESP
  phase-direction      END_REQ/BEGIN_RESP only on the backward path, BEGIN_REQ/END_RESP forward
  one-outstanding-request   no BEGIN_REQ while another request phase is open on the socket
  one-outstanding-response  no BEGIN_RESP while another response phase is open on the socket
  dmi-range            a granted DMI region must contain the requested address
  dbg-length           transport_dbg returns at most ``length`` bytes
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dmi import DmiRegion
from .errors import ProtocolError
from .module import Module
from .payload import INCOMPLETE, Command, GenericPayload, Phase, Sync
from .sockets import InitiatorSocket, TargetSocket

if TYPE_CHECKING:
    from .kernel import Simulator

_REQ, _WAIT_RESP, _RESP = "request", "waiting for response", "response"


class ProtocolChecker(Module):
    """Pass-through module: bind the initiator to ``target_socket`` and
    ``initiator_socket`` to the target (or use :func:`insert_checker`)."""

    def __init__(self, parent: "Module | Simulator", name: str, *, raise_on_violation: bool = True):
        super().__init__(parent, name)
        self.raise_on_violation = raise_on_violation
        self.violations: list[ProtocolError] = []
        self.target_socket = TargetSocket(self, "target", b_transport=self.b_transport,
                                          transport_dbg=self.transport_dbg,
                                          get_direct_mem_ptr=self.get_direct_mem_ptr,
                                          nb_transport_fw=self.nb_transport_fw)
        self.initiator_socket = InitiatorSocket(self, "initiator",
                                                invalidate_direct_mem_ptr=self._invalidate,
                                                nb_transport_bw=self.nb_transport_bw)
        self._in_flight: set[GenericPayload] = set()
        self._nb_state: dict[GenericPayload, str] = {}
        self._open_req: GenericPayload | None = None
        self._open_resp: GenericPayload | None = None
        self.transactions = 0

    def _violation(self, rule: str, message: str) -> None:
        err = ProtocolError(rule, message, self.path, self.sim.now)
        self.violations.append(err)
        if self.raise_on_violation:
            raise err

    def _check_request(self, p: GenericPayload, delay: int) -> None:
        if p.status != INCOMPLETE:
            self._violation("status-incomplete", f"request arrived with status "
                            f"{p.status!r}; only the target may set the response status")
        if p.command not in (Command.READ, Command.WRITE, Command.IGNORE):
            self._violation("command", f"unknown command {p.command!r}")
        n = p.length
        size = None if p.data is None else memoryview(p.data).nbytes
        if n < 1 or (size is not None and n > size) or (size is None and p.command != Command.IGNORE):
            self._violation("length", f"length {n} with a data buffer of {size} bytes")
        if p.streaming_width is not None and p.streaming_width < 1:
            self._violation("streaming-width", f"streaming width {p.streaming_width}")
        if p.byte_enable is not None and len(p.byte_enable) == 0:
            self._violation("byte-enable-length", "byte-enable array is empty")
        if p.address < 0 or p.address + n > 1 << 64:
            self._violation("address-range", f"address 0x{p.address:x} + {n} is outside the 64-bit space")
        if delay < 0:
            self._violation("delay-negative", f"delay {delay} ps")

    def _check_response(self, p: GenericPayload, data_obj: object, before: int, after: int) -> None:
        if p.status == INCOMPLETE:
            self._violation("response-status", "target returned with status INCOMPLETE")
        if after < before:
            self._violation("delay-decreased", f"delay went from {before} to {after} ps")
        if p.data is not data_obj:
            self._violation("data-pointer", "the target replaced the payload's data buffer")

    # ----- blocking -----------------------------------------------------------------------------
    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        self.transactions += 1
        if p in self._in_flight:
            self._violation("payload-in-flight", f"{p!r} sent again while in flight")
        self._check_request(p, delay)
        self._in_flight.add(p)
        data_obj = p.data
        try:
            out = await self.initiator_socket.b_transport(p, delay)
        finally:
            self._in_flight.discard(p)
        self._check_response(p, data_obj, delay, out)
        return out

    def transport_dbg(self, p: GenericPayload) -> int:
        n = self.initiator_socket.transport_dbg(p)
        if n > p.length:
            self._violation("dbg-length", f"transport_dbg returned {n} > length {p.length}")
        return n

    def get_direct_mem_ptr(self, p: GenericPayload) -> DmiRegion | None:
        region = self.initiator_socket.get_direct_mem_ptr(p)
        if region is not None and not region.start <= p.address <= region.end:
            self._violation("dmi-range", f"region [0x{region.start:x}, 0x{region.end:x}] does "
                            f"not contain 0x{p.address:x}")
        return region

    def _invalidate(self, start: int, end: int) -> None:
        self.target_socket.invalidate_direct_mem_ptr(start, end)

    # ----- non-blocking -------------------------------------------------------------------------
    def _close(self, p: GenericPayload) -> None:
        self._nb_state.pop(p, None)
        if self._open_req is p:
            self._open_req = None
        if self._open_resp is p:
            self._open_resp = None

    def _after_return(self, p: GenericPayload, sync: Sync, phase: Phase) -> None:
        """Apply the state change implied by a return value on either path."""
        if sync == Sync.COMPLETED:
            if p.status == INCOMPLETE:
                self._violation("response-status", "transaction completed with status INCOMPLETE")
            self._close(p)
        elif sync == Sync.UPDATED:
            if phase == Phase.END_REQ:
                self._end_req(p)
            elif phase == Phase.BEGIN_RESP:
                self._begin_resp(p)
            elif phase == Phase.END_RESP:
                self._close(p)
            else:
                self._violation("phase-order", f"return with UPDATED and phase {phase.name}")

    def _end_req(self, p: GenericPayload) -> None:
        if self._nb_state.get(p) != _REQ:
            self._violation("phase-order", f"END_REQ for a payload in state "
                            f"{self._nb_state.get(p, 'idle')!r}")
        self._nb_state[p] = _WAIT_RESP
        if self._open_req is p:
            self._open_req = None

    def _begin_resp(self, p: GenericPayload) -> None:
        if p.status == INCOMPLETE:
            self._violation("response-status", "BEGIN_RESP with status INCOMPLETE")
        if self._nb_state.get(p) not in (_REQ, _WAIT_RESP):
            self._violation("phase-order", f"BEGIN_RESP for a payload in state "
                            f"{self._nb_state.get(p, 'idle')!r}")
        if self._open_resp is not None and self._open_resp is not p:
            self._violation("one-outstanding-response", "BEGIN_RESP while another response "
                            "phase is open on this socket")
        if self._open_req is p:
            self._open_req = None
        self._nb_state[p] = _RESP
        self._open_resp = p

    def nb_transport_fw(self, p: GenericPayload, phase: Phase, delay: int) -> tuple[Sync, Phase, int]:
        if delay < 0 and phase != Phase.BEGIN_REQ:  # BEGIN_REQ: checked by _check_request
            self._violation("delay-negative", f"delay {delay} ps")
        if phase == Phase.BEGIN_REQ:
            self.transactions += 1
            if p in self._nb_state:
                self._violation("phase-order", f"BEGIN_REQ for a payload already in state "
                                f"{self._nb_state[p]!r}")
            if self._open_req is not None:
                self._violation("one-outstanding-request", "BEGIN_REQ while another request "
                                "phase is open on this socket (wait for END_REQ)")
            self._check_request(p, delay)
            self._nb_state[p] = _REQ
            self._open_req = p
        elif phase == Phase.END_RESP:
            if self._nb_state.get(p) != _RESP:
                self._violation("phase-order", f"END_RESP for a payload in state "
                                f"{self._nb_state.get(p, 'idle')!r}")
        else:
            self._violation("phase-direction", f"{Phase(phase).name} sent on the forward path")
        sync, ph, d = self.initiator_socket.nb_transport_fw(p, phase, delay)
        if d < delay:
            self._violation("delay-decreased", f"delay went from {delay} to {d} ps")
        if phase == Phase.END_RESP:
            self._close(p)
        else:
            self._after_return(p, sync, ph)
        return sync, ph, d

    def nb_transport_bw(self, p: GenericPayload, phase: Phase, delay: int) -> tuple[Sync, Phase, int]:
        if delay < 0:
            self._violation("delay-negative", f"delay {delay} ps")
        if phase == Phase.END_REQ:
            self._end_req(p)
        elif phase == Phase.BEGIN_RESP:
            self._begin_resp(p)
        else:
            self._violation("phase-direction", f"{Phase(phase).name} sent on the backward path")
        sync, ph, d = self.target_socket.nb_transport_bw(p, phase, delay)
        if sync == Sync.COMPLETED or (sync == Sync.UPDATED and ph == Phase.END_RESP):
            self._close(p)
        return sync, ph, d


def insert_checker(parent: "Module | Simulator", name: str, initiator: InitiatorSocket,
                   target: TargetSocket, **kwargs: Any) -> ProtocolChecker:
    """Bind ``initiator -> checker -> target`` and return the checker."""
    chk = ProtocolChecker(parent, name, **kwargs)
    initiator.bind(chk.target_socket)
    chk.initiator_socket.bind(target)
    return chk
