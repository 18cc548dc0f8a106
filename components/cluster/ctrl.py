"""Cluster control registers: offload of a kernel from the SOC side.

A :class:`tlm.RegisterBank` at the ``region`` its composer gives it. The register map is
``ctrl.registers.yaml`` beside this file (tables in docs/registers.md, semantics in
docs/cluster.md): INFO, KERNEL, ARGS, CORES, START (ignored while BUSY: START_IGNORED),
STATUS (BUSY, DONE, ERROR, START_IGNORED, the :class:`JobError` code), JOBS, CYCLES.

Every accepted START ends with the end-of-job event towards the SOC, failed jobs included
(so software waiting for it never hangs); STATUS tells how it ended.
"""
from __future__ import annotations

from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from tlm import Clock, Module, Region, RegisterBank
from tlm.regmap import load_regmap


if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["REG", "JobError", "ClusterCtrl", "STATUS_BUSY", "STATUS_DONE", "STATUS_ERROR",
           "STATUS_START_IGNORED", "VERSION"]

#: The register map (components/cluster/ctrl.registers.yaml); the names below derive from it.
MAP = load_regmap(Path(__file__).with_name("ctrl.registers.yaml"))
REG = MAP.offsets()
STATUS_BUSY = MAP.mask("STATUS", "BUSY")
STATUS_DONE = MAP.mask("STATUS", "DONE")
STATUS_ERROR = MAP.mask("STATUS", "ERROR")
STATUS_START_IGNORED = MAP.mask("STATUS", "START_IGNORED")
VERSION = MAP.constant("VERSION")
_INFO = MAP.register("INFO")
_ERROR_CODE = MAP.field("STATUS", "ERROR_CODE")

class JobError(IntEnum):
    """Error codes in STATUS[15:8]."""

    NONE = 0
    BAD_KERNEL = 1      #: KERNEL is not a registered kernel id
    BAD_CORES = 2       #: CORES is above the cluster's core count
    BAD_ARGS_PTR = 3    #: the args block is not inside the TCDM (or could not be read)
    BAD_ARGS = 4        #: the arguments failed the kernel's checks (see ``last_error``)
    ACCESS_FAULT = 5    #: a TCDM access of the kernel got an error response
    POWER_OFF = 6       #: the cluster was powered off during the job (Python API only:
                        #: the registers themselves are reset by the power-off)


class ClusterCtrl(Module):
    """The offload registers. ``start(kernel_id, args_ptr, cores)`` (given by the cluster)
    is called on an accepted START; the cluster reports back with :meth:`finish`."""

    def __init__(self, parent: "Module | Simulator", name: str, clock: Clock, n_cores: int,
                 n_kernels: int, start: Callable[[int, int, int], None], latency: int = 1, *,
                 region: Region):
        super().__init__(parent, name)
        self.region = region
        self.n_cores = n_cores
        self._start = start
        self.busy = False
        self.status = 0
        self.jobs = 0
        self.last_cycles = 0
        self.last_error = ""
        self.end_of_job = self.event("end_of_job")   # local: every job's end
        self.idle = self.event("idle")               # notified when BUSY falls
        self.regs = RegisterBank(self, "regs", region.size, clock=clock,
                                 latency=latency)
        self.regs.socket.optional = True   # the Python API works without the registers mapped
        info = _INFO.field("VERSION").put(_INFO.field("KERNELS").put(
            _INFO.field("CORES").put(0, n_cores), n_kernels), VERSION)
        self.regs.add_map(MAP, {   # names, access, reset and docs: ctrl.registers.yaml
            "INFO": dict(reset=info),   # the configuration's, not the map's 0
            "START": dict(write=self._on_start),
            "STATUS": dict(read=self._status),
            "JOBS": dict(read=lambda: self.jobs & 0xFFFFFFFF),
            "CYCLES": dict(read=lambda: min(self.last_cycles, 0xFFFFFFFF)),
        })
        self.regs.reset()

    def _status(self) -> int:
        return (self.status & 0xFFFE) | (STATUS_BUSY if self.busy else 0)

    def _on_start(self, _value: int) -> None:
        if self.busy:
            self.status |= STATUS_START_IGNORED
            self.stats.add("starts_ignored")
            return
        self.begin()
        self._start(self.regs["KERNEL"].value, self.regs["ARGS"].value, self.regs["CORES"].value)

    def reset(self) -> None:
        """Power-off: registers to their reset values, no job running."""
        self.regs.reset()
        self.status = 0
        self.last_cycles = 0
        was_busy = self.busy
        self.busy = False
        if was_busy:
            self.idle.notify()

    # ----- used by the cluster ------------------------------------------------------------
    def begin(self) -> None:
        """A job starts (register START or the Python API)."""
        self.busy = True
        self.status = 0

    def finish(self, error: JobError, cycles: int, message: str = "") -> None:
        """The job ended: update STATUS, JOBS and CYCLES, notify :attr:`end_of_job`."""
        self.busy = False
        self.jobs += 1
        self.last_cycles = cycles
        self.last_error = message
        code = _ERROR_CODE.put(0, int(error))
        self.status = STATUS_DONE | ((STATUS_ERROR | code) if error else 0)
        self.stats.add("jobs")
        if error:
            self.stats.add("jobs_failed")
        self.end_of_job.notify()
        self.idle.notify()
