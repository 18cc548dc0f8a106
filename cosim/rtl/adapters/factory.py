"""Build adapters from a resolved port map (no block-specific Python needed)."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ..portmap import ResolvedPortMap
from .hwpe import HwpePeriphMaster
from .pins import AdapterError, reset, start_clock
from .tcdm import TcdmResponder
from .wires import IrqMonitor, WireDriver


def _sigs(dut: Any, ports: Mapping[str, str]) -> dict[str, Any]:
    return {role: getattr(dut, port) for role, port in ports.items()}


def build_adapters(dut: Any, rpm: ResolvedPortMap, *, memories: Mapping[str, Any] = {},
                   policies: Mapping[str, Callable[[int], int]] = {}) -> dict[str, Any]:
    """Start the clock and create one adapter per port-map entry.

    ``memories[name]`` is the back-end a responder serves (TCDM/AXI master ports of the
    RTL); ``policies[name]`` an optional grant policy for TCDM responders."""
    clk = getattr(dut, rpm.clock)
    start_clock(clk, rpm.period_ns)
    rst = getattr(dut, rpm.reset) if rpm.reset else None
    out: dict[str, Any] = {}
    from . import apb, obi
    for name, ra in rpm.adapters.items():
        k, spec = ra.kind, ra.spec
        prefix = spec.prefix.rstrip("_")
        builder = apb.BUILDERS.get(k) or obi.BUILDERS.get(k)
        if builder is not None:
            out[name] = builder(dut, ra, clk, rst, rpm, memories)
        elif k in ("hwpe_periph", "tcdm_slave"):
            # a constant id (default 0): hwpe-ctrl reads it as the one-hot id of the
            # offloading core, which picks the event line of the job's end
            out[name] = HwpePeriphMaster(clk, _sigs(dut, ra.ports), name=name,
                                         timeout_cycles=spec.timeout_cycles,
                                         periph_id=int(spec.params.get("periph_id", 0)))
        elif k == "tcdm_master":
            if name not in memories:
                raise AdapterError(f"adapter {name!r} (tcdm_master) needs a memory back-end")
            out[name] = TcdmResponder(clk, _sigs(dut, ra.ports), memories[name],
                                      n_ports=int(spec.params.get("ports", 1)),
                                      contiguous=bool(spec.params.get("contiguous", False)),
                                      policy=policies.get(name), name=name).start()
        elif k in ("axi_lite_slave", "axi_slave"):
            from .axi import AxiLiteMasterAdapter, AxiMasterAdapter
            cls = AxiLiteMasterAdapter if k == "axi_lite_slave" else AxiMasterAdapter
            out[name] = cls(dut, prefix, clk, rst, rpm.reset_active_low)
        elif k in ("axi_lite_master", "axi_master"):
            from .axi import AxiLiteResponder, AxiResponder
            if name not in memories:
                raise AdapterError(f"adapter {name!r} ({k}) needs a memory back-end")
            cls = AxiLiteResponder if k == "axi_lite_master" else AxiResponder
            out[name] = cls(dut, prefix, clk, memories[name], rst, rpm.reset_active_low)
        elif k == "irq_out":
            out[name] = IrqMonitor(getattr(dut, ra.ports["port"]), name=name, select=ra.select)
        elif k == "wire_in":
            out[name] = WireDriver(getattr(dut, ra.ports["port"]), int(spec.params.get("init", 0)))
        else:  # pragma: no cover - PortMap.from_dict rejects unknown kinds
            raise AdapterError(f"adapter {name!r}: unknown kind {k!r}")
    return out


async def bring_up(dut: Any, rpm: ResolvedPortMap) -> None:
    """Apply the port map's reset."""
    if rpm.reset:
        await reset(getattr(dut, rpm.clock), getattr(dut, rpm.reset), rpm.reset_cycles,
                    rpm.reset_active_low)
