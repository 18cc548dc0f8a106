"""Pin-level adapters (cocotb side). Import only inside a cocotb simulation.

* :mod:`.pins` — fast int pin access, clock, reset, errors/timeouts;
* :mod:`.hwpe` — PULP HWPE peripheral master (configures an RTL HWPE target);
* :mod:`.tcdm` — PULP TCDM/HCI slave responder (single/multi-port, back-pressure);
* :mod:`.wires` — interrupt/event monitors and wire drivers;
* :mod:`.axi` — AXI4 / AXI-Lite through cocotbext-axi (masters and responders);
* :mod:`.memory` — memory back-ends (numpy bytes, a TLM target via debug transport);
* :mod:`.driver` — window-stepped driver (advance the simulator to T, batch events).
"""
from .hwpe import HwpePeriphMaster
from .memory import AsyncTarget, ByteMemory, RemoteMemory, TlmMemory
from .pins import AdapterError, AdapterTimeout, Pin, now_ps, reset, start_clock
from .tcdm import TcdmResponder
from .wires import IrqMonitor, WireDriver

__all__ = ["AdapterError", "AdapterTimeout", "AsyncTarget", "ByteMemory", "HwpePeriphMaster",
           "IrqMonitor", "Pin", "RemoteMemory", "TcdmResponder", "TlmMemory", "WireDriver", "now_ps", "reset",
           "start_clock"]
