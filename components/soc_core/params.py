"""Parameters of the SOC core (path ``soc.fc``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tlm.params import param, time_field
from tlm.units import US


@dataclass
class SocCoreParams:
    """Parameters of the SOC core (path ``soc.fc`` in the MARSELLUS platform)."""

    cpi: float = param(1.25, "average cycles per instruction (CV32E40P-class 4-stage pipeline: "
                       "load-use and taken-branch stalls)", lo=0.25, hi=64.0)
    quantum: int = time_field(1 * US, "run length between synchronisations when the "
                              "simulator has no global quantum", lo=1)
    max_run_instructions: int = param(100_000, "upper bound of instructions per emulator run",
                                      lo=1, hi=100_000_000)
    sync_on_io: bool = field(default=True, metadata={
        "doc": "synchronise simulated time before every peripheral access (exact ordering "
               "with other processes); false: loosely timed with an annotated delay"})
    dmi: bool = field(default=True, metadata={"doc": "map DMI-capable memories straight "
                                              "into the emulator"})
    local_regions: tuple = field(default=(), metadata={
        "doc": "memory-map regions the core holds as its own RAM (standalone use, e.g. "
               "('l2_private',)); by default every memory comes through the socket, by DMI"})
    max_instructions: int = param(0, "stop with an 'instruction_limit' fault after this many (0: no limit)",
                                  lo=0, hi=2**62)
    on_fault: Literal["raise", "stop"] = field(default="raise", metadata={
        "doc": "raise: a fault raises FirmwareFaultError (the run fails); stop: record it "
               "in .fault, stop the simulation"})
    stop_on_exit: bool = field(default=True, metadata={
        "doc": "stop the simulation when the firmware exits"})
    counting: Literal["auto", "native", "python"] = field(default="auto", metadata={
        "doc": "instruction counting: a native 5-byte hook (x86-64 Linux, fast), a Python "
               "translation-block hook (portable), or auto (native when available)"})


