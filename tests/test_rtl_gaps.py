"""Port-map gaps of issue 22, checked on small SV blocks of our own (rtl/gaps): port widths
of packed multi-dimensional arrays and structs, build options of ``rtl_blocks``
(``verilator_args``, ``defines``, ``parameters``), ``irq_out`` bit-selects and ORs."""
from __future__ import annotations

from pathlib import Path

import pytest

from rtl_scenario_support import _isolated  # noqa: F401
from cosim.rtl import RtlBlock
from cosim.rtl.portmap import PortMap, PortMapError, rtl_ports

ROOT = Path(__file__).resolve().parents[1]
GAPS = ROOT / "rtl" / "gaps"


def packed(**parameters) -> RtlBlock:
    return RtlBlock.make("packed_ports", [GAPS / "packed_ports.sv"], "packed_ports",
                         parameters=parameters)


@pytest.mark.parametrize("mp", [9, 4])
def test_packed_port_width_is_the_product_of_all_dimensions(mp):
    ports = rtl_ports(packed(MP=mp))
    # widths by hand from the declarations: [MP-1:0][31:0]; struct {32, 4, 1};
    # [1:0] of that struct; [1:0][2:0][3:0]; [15:0]; 1 bit
    assert ports["bus_i"].width == mp * 32
    assert ports["req_i"].width == 32 + 4 + 1
    assert ports["reqs_i"].width == 2 * (32 + 4 + 1)
    assert ports["cube_o"].width == 2 * 3 * 4
    assert ports["evt_o"].width == 16 and ports["one_o"].width == 1
    assert ports["bus_i"].direction == "input" and ports["cube_o"].direction == "output"


def test_vector_is_no_one_bit_irq():
    pm = PortMap.from_dict({"top": "packed_ports", "clock": {"port": "clk_i"},
                            "adapters": {"evt": {"kind": "irq_out", "port": "evt_o"}}},
                           where="t.yaml:rtl")
    with pytest.raises(PortMapError, match="'evt_o' is 16 bit"):
        pm.resolve(rtl_ports(packed()))
