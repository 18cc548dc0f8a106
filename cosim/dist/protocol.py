"""The coordinator <-> worker wire protocol (ZeroMQ ROUTER/DEALER, msgpack).

Every message is a multipart ZeroMQ message whose first frame is a msgpack list
``[kind, ...]``; link events travel in *batches*: one msgpack blob per destination
followed by raw frames holding the payload bytes of 64 B or more that the blob refers to
(ext type :data:`FRAME_EXT`), so bulk data is never copied into msgpack. Data and sync share
the one ordered DEALER channel of each worker; a separate DEALER (same endpoint, identity
``h:<token>``) carries heartbeats so a long window still shows liveness.

Worker -> coordinator
  ``[HELLO, version, token, pid, host, index_hint]``
  ``[READY, next_time, links_digest]``                          (after building)
  ``[REPORT, window, next_time, last_time, [[dest, min_time, count, nframes], ...]]`` + batches
  ``[RESULT, {...}]``                                           (after FINISH)
  ``[ERROR, kind, message, time, traceback]``
  ``[PING]`` on the heartbeat socket
Coordinator -> worker
  ``[SETUP, {index, builder, config, groups, heartbeat, ...}]``
  ``[GRANT, window, start, end | None, [nframes, ...]]`` + batches  (run all before ``end``)
  ``[FINISH, end_time]`` (the run's end: every worker ends its clock there), ``[ABORT, reason]``, ``[PONG]`` (to the heartbeat socket)

A batch event is ``[time, link_index, side (0=a, 1=b), seq, channel, message]``; its key in
the receiver is ``(link path, side, seq)``, exactly as in one process.
"""
from __future__ import annotations

from typing import Any

import msgpack
import zmq

from tlm import fmt_time

from ..proc.channel import pack, tune, unpack

PROTOCOL_VERSION = 1

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

__all__ = ["pack", "unpack", "tune", "encode_batch", "decode_batch", "DistributedError"]


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
