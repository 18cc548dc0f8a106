"""tlm: a SystemC-style discrete-event kernel and a TLM-2.0 layer in Python.

Knows nothing of SoCs. See docs/architecture.md for the semantics.
"""
# first: decides whether tlm.kernel is the compiled (mypyc) module or its source
from ._compiled import KernelInfo, kernel_info
from .address_map import MemoryMap, Region, load_memory_map
from .checker import ProtocolChecker, insert_checker
from .clock import Clock
from .dmi import DmiCache, DmiRegion
from .errors import (BindingError, CausalityError, ElaborationError, ProcessError,
                     ProtocolError, SimulationError)
from .link import Link, LinkEvent, LinkSignal, LinkTransport
from .kernel import AllOf, AnyOf, Event, Process, Simulator, rng_for
from .memory import Memory
from .module import Module
from .payload import (IGNORE, INCOMPLETE, OK, READ, WRITE, Command, GenericPayload, Phase,
                      Status, Sync, TlmErrorRecord)
from .peq import PayloadEventQueue
from .params import ParameterError, freq_field, resolve, time_field
from .quantum import QuantumKeeper
from .regs import Register, RegisterBank
from .router import Router
from .signal import Signal
from .sockets import InitiatorSocket, TargetSocket
from .stats import StatScope, StatsRegistry
from .timing import HopTiming
from .trace import Tracer, TraceRecord, write_chrome_trace
from .units import MS, NS, PS, SEC, US, fmt_time, parse_frequency, parse_time, period_ps

__all__ = [
    "AllOf", "AnyOf", "BindingError", "CausalityError", "Clock", "Command", "DmiCache",
    "DmiRegion", "ElaborationError", "Event", "GenericPayload", "HopTiming", "IGNORE",
    "INCOMPLETE", "InitiatorSocket", "KernelInfo", "Link", "LinkEvent", "LinkSignal", "LinkTransport",
    "Memory",
    "MemoryMap", "Module", "MS", "NS", "OK", "PayloadEventQueue", "Phase", "Process", "ProcessError",
    "ProtocolChecker", "ProtocolError", "PS", "ParameterError", "QuantumKeeper", "Register", "RegisterBank",
    "READ", "Region", "Router", "SEC", "Signal", "SimulationError", "Simulator", "StatScope",
    "StatsRegistry", "Status", "Sync", "TargetSocket", "TlmErrorRecord", "TraceRecord", "Tracer",
    "US", "WRITE", "fmt_time", "freq_field", "insert_checker", "kernel_info", "load_memory_map", "resolve",
    "time_field",
    "parse_frequency", "parse_time", "period_ps",
    "rng_for", "write_chrome_trace",
]
__version__ = "0.1.0"
