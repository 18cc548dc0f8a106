"""The coordinator <-> worker wire protocol (ZeroMQ ROUTER/DEALER, msgpack).

Every message is a multipart ZeroMQ message whose first frame is a msgpack list
``[kind, ...]``; link events travel in *batches*: one msgpack blob per destination
followed by raw frames holding the payload bytes of 64 B or more that the blob refers to
(ext type :data:`FRAME_EXT`), so bulk data is never copied into msgpack. Data and sync share
the one ordered DEALER channel of each worker; a separate DEALER (same endpoint, identity
``h:<token>``) carries heartbeats so a long window still shows liveness.

Worker -> coordinator
  ``[HELLO, version, token, pid, host, index_hint, secret, max_message]``
  ``[READY, next_time, links_digest]``                          (after building)
  ``[REPORT, window, next_time, last_time, [[dest, min_time, count, nframes], ...]]`` + batches
  ``[RESULT, {...}]``                                           (after FINISH)
  ``[ERROR, kind, message, time, traceback]``
  ``[PING]`` on the heartbeat socket
Coordinator -> worker
  ``[SETUP, {index, builder, config, groups, heartbeat_*, max_message}]``
  ``[GRANT, window, start, end | None, [nframes, ...]]`` + batches  (run all before ``end``)
  ``[FINISH, end_time]`` (the run's end: every worker ends its clock there), ``[ABORT, reason]``,
  ``[PONG]`` (to the heartbeat socket)

A batch event is ``[time, link_index, side (0=a, 1=b), seq, channel, message]``; its key in
the receiver is ``(link path, side, seq)``, exactly as in one process.

Every received header is checked against the schema of its kind (:func:`check_from_worker`,
:func:`check_from_coordinator`: type, arity, field types and sizes) before anything reads
it: a message that does not fit is dropped and logged, it never raises in the reader.
Frames are bounded by ZMQ_MAXMSGSIZE (:data:`DEFAULT_MAX_MESSAGE`, ``max_message``).
"""
from __future__ import annotations

from typing import Any, Callable

import msgpack
import zmq

from tlm import fmt_time

from ..proc.channel import pack, tune, unpack

PROTOCOL_VERSION = 2     # 2: HELLO carries the run secret and the worker's max_message

# message kinds
HELLO, SETUP, READY, GRANT, REPORT, FINISH, RESULT, ERROR, ABORT, PING, PONG = range(11)
KIND_NAMES = ["HELLO", "SETUP", "READY", "GRANT", "REPORT", "FINISH", "RESULT", "ERROR",
              "ABORT", "PING", "PONG"]

FRAME_EXT = 7          # msgpack ext code: "payload bytes in raw frame #n"
FRAME_MIN = 64         # bytes objects at least this long travel as raw frames
SIDES = ("a", "b")

# exit codes (documented in docs/distributed.md)
EXIT_OK = 0
EXIT_CONFIG = 2            # bad arguments, partition or builder errors (before anything ran)
EXIT_ABORTED = 3           # coordinator: the run was aborted (worker died/hung/raised)
EXIT_MODEL_ERROR = 3       # worker: its model raised, or a causality error
EXIT_ABORT_RECEIVED = 4    # worker: the coordinator aborted the run
EXIT_COORDINATOR_LOST = 5  # worker: the coordinator vanished, refused us, or never answered
EXIT_SIGINT = 130
EXIT_SIGTERM = 143

#: default bound on one ZeroMQ frame (ZMQ_MAXMSGSIZE) on the coordinator's and the workers'
#: sockets: a peer sending a larger frame is disconnected by libzmq before it is buffered.
#: The largest legitimate frame measured (docs/distributed.md) is the RESULT of the library's
#: largest scenario with traces; this leaves a wide margin. ``--max-message`` changes it.
DEFAULT_MAX_MESSAGE = 64 * 2**20
#: bounds on small header fields (bytes or characters)
MAX_NAME = 256              # host names, kinds, digests, tokens, secrets, builder specs
MAX_TEXT = 1 * 2**20        # error messages, tracebacks, abort reasons

__all__ = ["pack", "unpack", "tune", "encode_batch", "decode_batch", "DistributedError",
           "check_from_worker", "check_from_coordinator", "set_max_message", "DEFAULT_MAX_MESSAGE"]


# ----- batches of link events ------------------------------------------------------------------
def _extract(obj: Any, frames: list) -> Any:
    """Replace bytes objects of >= FRAME_MIN bytes inside ``obj`` by frame references."""
    c = obj.__class__
    if c is list or c is tuple:
        return [_extract(x, frames) for x in obj]
    if (c is bytes or c is bytearray or c is memoryview) and len(obj) >= FRAME_MIN:
        frames.append(obj)
        return msgpack.ExtType(FRAME_EXT, (len(frames) - 1).to_bytes(4, "big"))
    return obj


def encode_batch(events: list[list]) -> list:
    """``[blob, *raw_frames]`` for a list of batch events (messages are rewritten in place)."""
    frames: list = []
    for ev in events:
        m = ev[5]
        c = m.__class__
        if c is list or c is tuple or ((c is bytes or c is bytearray) and len(m) >= FRAME_MIN):
            ev[5] = _extract(m, frames)
    return [pack(events), *frames]


def decode_batch(blob: Any, frames: list) -> list[list]:
    def hook(code: int, data: bytes) -> Any:
        if code == FRAME_EXT:
            f = frames[int.from_bytes(data, "big")]
            return f.bytes if isinstance(f, zmq.Frame) else bytes(f)
        return msgpack.ExtType(code, data)

    return unpack(blob, hook)


# ----- message schemas -----------------------------------------------------------------------------
# One checker per field; a schema is the tuple of checkers of a kind's fields after the kind.
# They check what the readers rely on (types, arity, sizes), not the values' meaning.
def _int(x: Any) -> bool:
    return x.__class__ is int and x >= 0      # bool is not an int here (True is not a time)


def _opt_int(x: Any) -> bool:
    return x is None or _int(x)


def _name(x: Any) -> bool:
    return x.__class__ is str and len(x) <= MAX_NAME


def _opt_name(x: Any) -> bool:
    return x is None or _name(x)


def _text(x: Any) -> bool:
    return x.__class__ is str and len(x) <= MAX_TEXT


def _token(x: Any) -> bool:
    return x.__class__ is bytes and 0 < len(x) <= MAX_NAME


def _number(x: Any) -> bool:
    return x.__class__ in (int, float) and 0 < x < 1e6


def _desc(x: Any) -> bool:          # REPORT: [[dest, min_time, count, nframes], ...]
    return x.__class__ is list and all(d.__class__ is list and len(d) == 4 and all(map(_int, d))
                                       for d in x)


def _counts(x: Any) -> bool:        # GRANT: [nframes, ...]
    return x.__class__ is list and all(map(_int, x))


def _groups(x: Any) -> bool:
    return x.__class__ is list and all(g.__class__ is list and all(map(_name, g)) for g in x)


def _fields(**checks: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """A dict holding (at least) these keys, each passing its check."""
    def check(x: Any) -> bool:
        return x.__class__ is dict and all(k in x and c(x[k]) for k, c in checks.items())
    return check


def _is(cls: type) -> Callable[[Any], bool]:
    return lambda x: x.__class__ is cls


_RESULT = _fields(stats=_is(dict), collected=_is(dict), errors=_is(list), memories=_is(dict),
                  last=_opt_int, next=_opt_int, count=_int,
                  acc=lambda x: x.__class__ is bytes and len(x) == 32)
_SETUP = _fields(index=_int, builder=_name, config=_is(dict), groups=_groups,
                 heartbeat_interval=_number, heartbeat_timeout=_number, max_message=_int)

#: kind -> field checkers, for what a coordinator accepts from workers
FROM_WORKER: dict[int, tuple[Callable[[Any], bool], ...]] = {
    HELLO: (_int, _token, _int, _name, _opt_int, _opt_name, _int),
    READY: (_opt_int, _name),
    REPORT: (_int, _opt_int, _opt_int, _desc),
    RESULT: (_RESULT,),
    ERROR: (_name, _text, _opt_int, _text),
    PING: (),
}
#: kind -> field checkers, for what a worker accepts from its coordinator
FROM_COORDINATOR: dict[int, tuple[Callable[[Any], bool], ...]] = {
    SETUP: (_SETUP,),
    GRANT: (_int, _int, _opt_int, _counts),
    FINISH: (_opt_int,),
    ABORT: (_text,),
    PONG: (),
}


#: a received header that is not msgpack (the receiver substitutes it; the checks refuse it)
UNREADABLE = ("unreadable",)


def _check(head: Any, schemas: dict[int, tuple[Callable[[Any], bool], ...]]) -> str | None:
    if head is UNREADABLE:
        return "not msgpack"
    if head.__class__ is not list or not head:
        what = "an empty list" if head == [] else f"a {type(head).__name__}"
        return f"not a message: {what}, expected a list [kind, ...]"
    kind = head[0]
    fields = schemas.get(kind) if kind.__class__ is int else None
    if fields is None:
        return f"unexpected message kind {short(kind)}"
    name = KIND_NAMES[kind]
    if kind == HELLO and len(head) > 1 and head[1] != PROTOCOL_VERSION:
        return f"HELLO speaking protocol {short(head[1])} (this coordinator speaks {PROTOCOL_VERSION})"
    if len(head) != len(fields) + 1:
        return f"{name} with {len(head) - 1} field(s), expected {len(fields)}"
    for i, (check, value) in enumerate(zip(fields, head[1:]), 1):
        if not check(value):
            return f"{name} field {i} is malformed ({type(value).__name__} {short(value)})"
    return None


def _frames(counts: Any, nparts: int, name: str) -> str | None:
    want = sum(1 + n for n in counts)
    return None if want == nparts else f"{name} announces {want} payload frame(s), carries {nparts}"


def check_from_worker(head: Any, nparts: int, workers: int) -> str | None:
    """None when ``head`` (with ``nparts`` payload frames) is a well-formed message a worker
    may send to a coordinator of ``workers`` workers; else why not (for the log)."""
    why = _check(head, FROM_WORKER)
    if why is None and head[0] == REPORT:
        desc = head[4]
        if any(d[0] >= workers for d in desc):
            return f"REPORT names a destination beyond worker {workers - 1}"
        return _frames([d[3] for d in desc], nparts, "REPORT")
    if why is None and nparts:
        return f"{KIND_NAMES[head[0]]} carries {nparts} unexpected payload frame(s)"
    return why


def check_from_coordinator(head: Any, nparts: int) -> str | None:
    """None when ``head`` (with ``nparts`` payload frames) is a well-formed message from a
    coordinator; else why not."""
    why = _check(head, FROM_COORDINATOR)
    if why is None and head[0] == GRANT:
        return _frames(head[4], nparts, "GRANT")
    if why is None and nparts:
        return f"{KIND_NAMES[head[0]]} carries {nparts} unexpected payload frame(s)"
    return why


def short(x: Any) -> str:
    """``repr(x)``, cut to 60 characters (for logs)."""
    r = repr(x)
    return r if len(r) <= 60 else f"{r[:57]}..."


def set_max_message(sock: zmq.Socket, limit: int) -> None:
    """Bound every inbound frame of ``sock`` to ``limit`` bytes (set before bind/connect):
    libzmq disconnects a peer that sends more, before buffering it."""
    sock.setsockopt(zmq.MAXMSGSIZE, int(limit))


def too_big(parts: list, limit: int) -> int | None:
    """The size of the first frame of ``parts`` over ``limit`` bytes, or None."""
    for f in parts:
        n = len(f) if not isinstance(f, memoryview) else f.nbytes
        if n > limit:
            return n
    return None


def _bytes(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} B"


def size_error(what: str, size: int, limit: int) -> str:
    """The message for a legitimate message over the limit: what, how big, how to fix."""
    return (f"{what} is {_bytes(size)}, over the message limit of {_bytes(limit)} "
            "(ZMQ_MAXMSGSIZE): raise it with --max-message (cosim run and cosim worker) or "
            "DistOptions(max_message=...)")


# ----- errors ------------------------------------------------------------------------------------
class DistributedError(Exception):
    """The distributed run was aborted. ``worker`` (e.g. ``"w1"``) and ``components`` name
    the culprit when there is one; ``time`` is the last simulated time reached (ps);
    ``exit_code`` is what a CLI should exit with."""

    def __init__(self, reason: str, *, worker: str | None = None,
                 components: list[str] | None = None, time: int | None = None,
                 exit_code: int = EXIT_ABORTED, kind: str = "abort"):
        self.reason = reason
        self.worker = worker
        self.components = components or []
        self.time = time
        self.exit_code = exit_code
        self.kind = kind
        super().__init__(self._format())

    def _format(self) -> str:
        who = ""
        if self.worker is not None:
            who = f"worker {self.worker} (components: {', '.join(self.components) or '-'}): "
        when = "" if self.time is None else f" [last simulated time {fmt_time(self.time)}]"
        what = "cannot start the distributed run" if self.kind == "config" else "distributed run aborted"
        return f"{what}: {who}{self.reason}{when}"

    def as_dict(self) -> dict:
        return {"reason": self.reason, "worker": self.worker, "components": self.components,
                "time": self.time, "exit_code": self.exit_code, "kind": self.kind,
                "message": str(self)}
