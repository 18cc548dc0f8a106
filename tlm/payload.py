"""The TLM-2.0 generic payload and its enumerations (SystemC names, Python style)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from .units import fmt_time

if TYPE_CHECKING:
    from .kernel import Simulator


class Command(IntEnum):
    READ = 0
    WRITE = 1
    IGNORE = 2


class Status(IntEnum):
    """tlm_response_status; a target sets it, an interconnect never sets OK."""

    OK = 1
    INCOMPLETE = 0
    GENERIC_ERROR = -1
    ADDRESS_ERROR = -2
    COMMAND_ERROR = -3
    BURST_ERROR = -4
    BYTE_ENABLE_ERROR = -5


class Phase(IntEnum):
    """The four phases of the base protocol (nb_transport)."""

    BEGIN_REQ = 1
    END_REQ = 2
    BEGIN_RESP = 3
    END_RESP = 4


class Sync(IntEnum):
    """tlm_sync_enum: the return value of nb_transport_fw/bw."""

    ACCEPTED = 0
    UPDATED = 1
    COMPLETED = 2


READ = Command.READ
WRITE = Command.WRITE
IGNORE = Command.IGNORE
OK = Status.OK
INCOMPLETE = Status.INCOMPLETE


class GenericPayload:
    """tlm_generic_payload. ``data`` is any writable bytes-like object (bytearray, numpy
    uint8 array, memoryview) of at least ``length`` bytes; targets copy into/out of it.

    Beyond the standard attributes: ``initiator`` (path of the originating component, for
    error reports) and ``bw_occupancy`` (ps; the largest bandwidth occupancy met so far on
    the path, so that "latency adds up along the path, occupancy takes the maximum")."""

    __slots__ = ("command", "address", "data", "length", "byte_enable", "streaming_width",
                 "status", "dmi_allowed", "extensions", "initiator", "bw_occupancy")

    def __init__(self, command: Command = READ, address: int = 0, data: Any = None,
                 length: int | None = None, byte_enable: bytes | None = None,
                 streaming_width: int | None = None, initiator: str = ""):
        self.command = command
        self.address = address
        if data is None and length is not None:
            data = bytearray(length)
        self.data = data
        if length is None and data is not None:
            length = getattr(data, "nbytes", None)  # numpy/memoryview: bytes, not elements
            if length is None:
                length = len(data)
        self.length = length or 0
        self.byte_enable = byte_enable
        self.streaming_width = streaming_width if streaming_width is not None else self.length
        self.status = INCOMPLETE
        self.dmi_allowed = False
        self.extensions: dict[str, Any] | None = None
        self.initiator = initiator
        self.bw_occupancy = 0

    def reset(self, command: Command, address: int, length: int) -> "GenericPayload":
        """Reuse the payload for a new transaction (status back to INCOMPLETE)."""
        self.command = command
        self.address = address
        self.length = length
        self.streaming_width = length
        self.byte_enable = None
        self.status = INCOMPLETE
        self.dmi_allowed = False
        self.bw_occupancy = 0
        return self

    @property
    def is_ok(self) -> bool:
        return self.status == OK

    @property
    def is_read(self) -> bool:
        return self.command == READ

    @property
    def is_write(self) -> bool:
        return self.command == WRITE

    def set_extension(self, key: str, value: Any) -> None:
        if self.extensions is None:
            self.extensions = {}
        self.extensions[key] = value

    def get_extension(self, key: str, default: Any = None) -> Any:
        return default if self.extensions is None else self.extensions.get(key, default)

    def __repr__(self) -> str:
        return (f"<GP {_name(Command, self.command)} 0x{self.address:x} len={self.length} "
                f"{_name(Status, self.status)}>")


def _name(enum: type, value: Any) -> str:
    """The enum member's name, or the raw value when it is not a member (malformed
    payloads must still be reportable)."""
    try:
        return str(enum(value).name)
    except ValueError:
        return repr(value)


@dataclass(frozen=True, slots=True)
class TlmErrorRecord:
    """An access that ended in an error response, as the report shows it."""

    time: int
    initiator: str
    where: str
    command: str
    address: int
    length: int
    status: str
    reason: str

    def __str__(self) -> str:
        return (f"{fmt_time(self.time)}: {self.command} 0x{self.address:08x} (+{self.length}) "
                f"from {self.initiator or '?'} -> {self.status} at {self.where}: {self.reason}")


#: TLM error records a simulation keeps for its report (a few hundred bytes each); the ones
#: after them are counted in the statistic ``tlm_errors_not_kept`` of the component
MAX_ERROR_RECORDS = 10_000


def record_error(sim: Simulator, p: GenericPayload, where: str, status: Status, reason: str,
                 address: int | None = None) -> None:
    """Set ``status`` on ``p`` and log the error for the report (never raises); past
    :data:`MAX_ERROR_RECORDS`, only count it (a model erring forever holds a bounded log)."""
    p.status = status
    if len(sim.errors) >= MAX_ERROR_RECORDS:
        sim.stats.scope(where).add("tlm_errors_not_kept")
        return
    sim.errors.append(TlmErrorRecord(
        sim.now, p.initiator, where, _name(Command, p.command),
        p.address if address is None else address, p.length, Status(status).name, reason))
