"""stdout peripheral: firmware prints characters and reports its exit code.

PULP layout: every core has a slot at ``cluster_id * cluster_stride + core_id * core_stride``
(the fabric controller is cluster 31, core 0 -> offset 0xF80). In a slot, offset 0 is PUTC
(write a byte: the low 8 bits are one character of that core's output) and offset 4 is
EXIT (write the exit code, a signed 32-bit value). Output is buffered per core and cut into
lines at ``\\n``; each line is kept in :attr:`Stdout.lines` with the simulated time of its
newline and, if given, passed to ``echo``; it keeps the first ``max_lines`` lines and the
last :data:`TAIL_LINES` (a firmware that prints forever holds a bounded amount; every line
still reaches ``echo`` and the ``lines`` statistic). The first EXIT write sets
:attr:`exit_code`, flushes every partial line and fires the ``exited`` event.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from tlm.address_map import Region
from tlm.bounded import HeadTail
from tlm.clock import Clock
from tlm.module import Module
from tlm.params import ParameterError, param, resolve
from tlm.regmap import load_regmap
from tlm.regs import RegisterBank
from tlm.sockets import TargetSocket
from tlm.units import fmt_time

if TYPE_CHECKING:
    from tlm.kernel import Simulator

__all__ = ["Stdout", "StdoutParams", "StdoutLine", "PUTC", "EXIT"]

#: The register map (components/stdout.registers.yaml): one SLOT of PUTC and EXIT per core.
MAP = load_regmap(Path(__file__).with_name("stdout.registers.yaml"))
_SLOT = MAP.array("SLOT")
PUTC = _SLOT.register("PUTC").offset   # inside a core's slot
EXIT = _SLOT.register("EXIT").offset
#: lines kept after the first ``max_lines``: the most recent ones (where the firmware was)
TAIL_LINES = 100



@dataclass
class StdoutParams:
    """stdout peripheral parameters (PULP layout by default)."""

    n_clusters: int = param(32, "cluster-id slots (PULP: 32; the FC is fc_cluster_id)", lo=1, hi=256)
    cores_per_cluster: int = param(16, "core-id slots per cluster", lo=1, hi=256)
    cluster_stride: int = param(0x80, "bytes between cluster slot groups (PULP: cid << 7)", lo=0, hi=1 << 20)
    core_stride: int = param(_SLOT.stride, "bytes between core slots (PULP: pid << 3): PUTC, EXIT", lo=0, hi=1 << 16)
    fc_cluster_id: int = param(31, "cluster id of the SOC core (labelled fc)", lo=0, hi=255)
    encoding: str = param("utf-8", "text encoding (invalid bytes become U+FFFD)")
    max_line: int = param(4096, "a longer line is cut (firmware that never prints newline)", lo=1, hi=1 << 20)
    max_lines: int = param(10_000, f"lines kept for the report: the first max_lines and the last {TAIL_LINES}; "
                           "the ones between are counted", lo=1, hi=1 << 20)
    reg_latency: int = param(1, "register access time in bus-clock cycles", lo=0, hi=1000)

    def validate(self) -> None:
        if self.n_clusters < 1 or self.cores_per_cluster < 1:
            raise ValueError("n_clusters and cores_per_cluster must be >= 1")
        if self.core_stride < 8 or self.core_stride % 4:
            raise ValueError(f"core_stride must be a multiple of 4 and >= 8 (PUTC + EXIT), "
                             f"got {self.core_stride}")
        if self.cores_per_cluster * self.core_stride > self.cluster_stride:
            raise ValueError(f"{self.cores_per_cluster} cores x {self.core_stride} B do not fit "
                             f"cluster_stride {self.cluster_stride}")
        if not 0 <= self.fc_cluster_id < self.n_clusters:
            raise ValueError(f"fc_cluster_id {self.fc_cluster_id} is not a cluster slot")
        if self.max_line < 1:
            raise ValueError("max_line must be >= 1")
        try:
            "".encode(self.encoding)
        except LookupError:
            raise ValueError(f"unknown encoding {self.encoding!r}") from None


@dataclass(frozen=True)
class StdoutLine:
    """One printed line: when its newline was written, by which core, and the text."""

    time: int
    cluster: int
    core: int
    text: str
    fc: bool = False

    @property
    def source(self) -> str:
        return "fc" if self.fc else f"cluster{self.cluster}.core{self.core}"

    def __str__(self) -> str:
        return f"[{fmt_time(self.time)}] {self.source}: {self.text}"


class Stdout(Module):
    """The stdout peripheral; ``region`` is where the composer maps it (its size bounds the
    cluster slots), map ``target_socket`` there on the SOC crossbar. ``echo(line)`` is called
    for every completed line. Events: ``exited``."""

    def __init__(self, parent: "Module | Simulator", name: str, *, region: Region,
                 params: StdoutParams | Mapping[str, Any] | None = None,
                 clock: Clock | None = None,
                 echo: Callable[[StdoutLine], None] | None = None):
        super().__init__(parent, name)
        if not isinstance(params, StdoutParams):
            params = resolve(StdoutParams, params, self.path)
        self.params = params
        self.region = region
        if params.n_clusters * params.cluster_stride > region.size:
            raise ParameterError(f"{params.n_clusters} clusters x {params.cluster_stride} B "
                                 f"exceed the 0x{region.size:x}-byte stdout region", self.path)
        self.echo = echo
        #: the lines kept (``lines.total`` counts every line, ``lines.dropped`` the ones not kept)
        self.lines: HeadTail[StdoutLine] = HeadTail(params.max_lines, TAIL_LINES)
        self.exited = self.event("exited")
        self.exit_code: int | None = None
        self.exit_time: int | None = None
        self.exit_source: tuple[int, int] | None = None
        self._buffers: dict[tuple[int, int], bytearray] = {}
        self.chars = self.extra_exits = 0
        self.sim.stats.add_provider(self.path, lambda: {
            "chars": self.chars, "lines": self.lines.total, "extra_exits": self.extra_exits})
        self.regs = RegisterBank(self, "regs", self.region.size, clock=clock,
                                 latency=params.reg_latency if clock is not None else 0)
        self.target_socket: TargetSocket = self.regs.socket
        for cid in range(params.n_clusters):
            for pid in range(params.cores_per_cluster):
                slot = self.slot(cid, pid)
                who = "fc" if cid == params.fc_cluster_id and pid == 0 else f"c{cid}p{pid}"
                k = (cid, pid)   # the slot's registers as stdout.registers.yaml declares them
                self.regs.add_map(_SLOT.registers, {
                    "PUTC": dict(write=lambda v, k=k: self._putc(k, v & 0xFF)),
                    "EXIT": dict(write=lambda v, k=k: self._exit(k, v)),
                }, base=slot, suffix=f"_{who}")

    def slot(self, cluster: int, core: int) -> int:
        """Offset of a core's slot (PUTC at +0, EXIT at +4)."""
        return cluster * self.params.cluster_stride + core * self.params.core_stride

    @property
    def fc_slot(self) -> int:
        return self.slot(self.params.fc_cluster_id, 0)

    @property
    def text(self) -> str:
        """Everything printed in completed lines, one per line."""
        return "".join(line.text + "\n" for line in self.lines)

    def _putc(self, key: tuple[int, int], c: int) -> None:
        self.chars += 1
        buf = self._buffers.setdefault(key, bytearray())
        if c == 0x0A:
            self._emit(key, buf)
            return
        buf.append(c)
        if len(buf) >= self.params.max_line:
            self._emit(key, buf)

    def _emit(self, key: tuple[int, int], buf: bytearray) -> None:
        text = bytes(buf).decode(self.params.encoding, errors="replace").rstrip("\r")
        buf.clear()
        line = StdoutLine(self.sim.now, key[0], key[1], text,
                          key == (self.params.fc_cluster_id, 0))
        self.lines.append(line)
        if self.echo is not None:
            self.echo(line)

    def flush(self) -> None:
        """Emit every partial line (in slot order, so the result is deterministic)."""
        for key in sorted(self._buffers):
            buf = self._buffers[key]
            if buf:
                self._emit(key, buf)

    def _exit(self, key: tuple[int, int], v: int) -> None:
        if self.exit_code is not None:
            self.extra_exits += 1   # the first exit wins; later ones are only counted
            return
        self.exit_code = v - (1 << 32) if v & 0x80000000 else v
        self.exit_time = self.sim.now
        self.exit_source = key
        self.flush()
        self.exited.notify()
