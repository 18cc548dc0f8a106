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


# ------------------------------------------------------------------ irq_out on a vector
def irq_map(port: str, **extra) -> PortMap:
    return PortMap.from_dict({"top": "packed_ports", "clock": {"port": "clk_i"},
                              "adapters": {"evt": {"kind": "irq_out", "port": port, **extra}}},
                             where="t.yaml:rtl")


@pytest.mark.parametrize("expr, select", [("evt_o[0]", 0), ("evt_o[15]", 15),
                                          (" evt_o [ 3 ] ", 3), ("any(evt_o)", "any"),
                                          ("one_o", None)])
def test_irq_bit_select_and_any(expr, select):
    r = irq_map(expr).resolve(rtl_ports(packed()))
    ra = r.adapters["evt"]
    assert ra.ports["port"] == ("one_o" if select is None else "evt_o")
    assert ra.select == select


@pytest.mark.parametrize("expr, message", [
    ("evt_o[16]", "bit 16 of RTL port 'evt_o', which is 16 bit(s) wide (bits 0 .. 15)"),
    ("any(evt_x)", "RTL port 'evt_x' does not exist in packed_ports; did you mean 'evt_o'?"),
    ("any(bus_i)", "RTL port 'bus_i' is an input, expected an output"),
])
def test_irq_select_errors(expr, message):
    with pytest.raises(PortMapError) as e:
        irq_map(expr).resolve(rtl_ports(packed()))
    assert str(e.value).startswith("t.yaml:rtl: adapter 'evt' (irq_out)") and message in str(e.value)


# ------------------------------------------------------------------ manifests
def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_bender_manifest_order_targets_include_dirs_and_exclusions(tmp_path):
    from cosim.rtl.manifest import read_manifest
    for f in ("pkg.sv", "a.sv", "b.sv", "fpga.sv", "sim.sv", "tb.sv", "inc/x.svh"):
        write(tmp_path / "src" / f, "")
    m = write(tmp_path / "Bender.yml", """
package: {name: demo}
export_include_dirs: [src/inc]
sources:
  - src/pkg.sv
  - include_dirs: [src]
    defines: {WIDTH: 8}
    files:
      - src/b.sv
      - src/a.sv
      - target: all(fpga, xilinx)
        files: [src/fpga.sv]
      - target: not(synthesis)
        files: [src/sim.sv]
  - target: test
    files: [src/tb.sv]
""")
    got = read_manifest(m)
    assert [f.name for f in got.files] == ["pkg.sv", "b.sv", "a.sv", "sim.sv"]   # file order
    assert got.include_dirs == [tmp_path / "src" / "inc", tmp_path / "src"]
    assert got.defines == {"WIDTH": 8}
    got = read_manifest(m, targets=["fpga", "xilinx", "synthesis", "test"], exclude=["src/a.*"])
    assert [f.name for f in got.files] == ["pkg.sv", "b.sv", "fpga.sv", "tb.sv"]


def test_src_files_manifest(tmp_path):
    from cosim.rtl.manifest import read_manifest
    for f in ("a.sv", "b.sv", "fpga.sv"):
        write(tmp_path / "rtl" / f, "")
    m = write(tmp_path / "src_files.yml", """
core:
  incdirs: [rtl]
  files: [rtl/b.sv, rtl/a.sv]
fpga_only:
  targets: [xilinx]
  files: [rtl/fpga.sv]
""")
    got = read_manifest(m)
    assert [f.name for f in got.files] == ["b.sv", "a.sv"] and got.include_dirs == [tmp_path / "rtl"]
    assert [f.name for f in read_manifest(m, targets=["xilinx"]).files] == ["b.sv", "a.sv", "fpga.sv"]


@pytest.mark.parametrize("text, message", [
    ("sources: [missing.sv]\n", "source missing.sv does not exist"),
    ("sources:\n  - target: all(a, b\n    files: []\n", "missing ')'"),
    ("- just a list\n", "not a Bender.yml or src_files.yml manifest"),
])
def test_bad_manifests_are_named(tmp_path, text, message):
    from cosim.rtl.manifest import ManifestError, read_manifest
    m = write(tmp_path / "Bender.yml", text)
    with pytest.raises(ManifestError) as e:
        read_manifest(m)
    assert str(m) in str(e.value) and message in str(e.value)


# ------------------------------------------------------------------ scenario keys
PERIPH = ROOT / "scenarios" / "rtl_peripherals.yaml"


def periph_variant(edit):
    import yaml
    from cosim.scenario import load_scenario_text
    data = yaml.safe_load(PERIPH.read_text())
    edit(data["platform"]["rtl_blocks"]["soc.apb_regs"])
    return load_scenario_text(yaml.safe_dump(data, sort_keys=False),
                              PERIPH.with_name("rtl_peripherals_variant.yaml"))


@pytest.mark.parametrize("key, value, message", [
    ("verilator_args", ["-Mdir", "x"], "verilator_args: '-Mdir' is not allowed (the build sets it"),
    ("verilator_args", ["--no-timing; rm"], "is not allowed (not one of the options a scenario"),
    ("parameters", {"ID": [1]}, "platform.rtl_blocks.soc.apb_regs.parameters.ID"),
    ("defines", {"bad name": 1}, "platform.rtl_blocks.soc.apb_regs.defines"),
    ("busy", {"from_write": "0x1A130000", "until": "cfg"}, "busy.from_write: 0x1a130000 is in no "
                                                           "address window of the block"),
    ("busy", {"from_write": "0x1A120000", "until": "cfg"}, "busy.until: 'cfg' is not an irq_out "
                                                           "adapter"),
    ("busy", {"until": "cfg"}, "busy: give a port"),
    ("adapters", {"cfg": {"kind": "apb_slave", "prefix": "s_apb_", "bind": "0x1A10F000+0x400"}},
     "window [0x1a10f000, 0x1a10f400) overlaps stdout [0x1a10f000"),   # validate sees it too
])
def test_bad_block_keys_are_located_errors(key, value, message):
    from cosim.rtl.spec import block_spec
    from cosim.scenario import ScenarioError

    def edit(b):
        b[key] = value
    with pytest.raises(ScenarioError) as e:
        sc = periph_variant(edit)
        block_spec(sc, "soc.apb_regs", sc.rtl_blocks["soc.apb_regs"])
    assert message in str(e.value) and "rtl_peripherals_variant.yaml" in str(e.value)


def test_build_options_reach_the_block_and_its_cache_key():
    from cosim.rtl.build import build_key
    from cosim.rtl.spec import block_spec

    def edit(b):
        b.update(verilator_args=["--unroll-count", "256"], defines={"FAST": 1, "FLAG": None},
                 parameters={"ID_VALUE": 5})
    base = periph_variant(lambda b: None)
    sc = periph_variant(edit)
    one = block_spec(base, "soc.apb_regs", base.rtl_blocks["soc.apb_regs"]).block
    two = block_spec(sc, "soc.apb_regs", sc.rtl_blocks["soc.apb_regs"]).block
    # a define without a value is passed by the build itself, not as a raw argument
    assert two.build_args == ("--unroll-count", "256")
    assert two.defines == {"FAST": 1, "FLAG": None} and two.parameters == {"ID_VALUE": 5}
    assert {"--unroll-count", "-DFLAG", "-DFAST=1"} <= set(two.verilator_args())
    assert build_key(one) != build_key(two)


def test_periph_id_must_fit_its_port():
    pm = PortMap.from_dict({"top": "rbe_top", "clock": {"port": "clk_i"}, "adapters": {
        "cfg": {"kind": "hwpe_periph", "prefix": "periph_", "periph_id": 1 << 12}}},
        where="t.yaml:rtl")
    from cosim.rtl import blocks
    with pytest.raises(PortMapError, match=r"periph_id 4096 does not fit the \d+-bit port"):
        pm.resolve(rtl_ports(blocks.rbe()))


def test_busy_from_a_signal_inside_the_design(tmp_path):
    """rtl_ext_dma with its busy rule on signals inside the design (the register file's and
    the engine's busy, busy while any is 1) instead of the busy_o pin: the copies complete
    and are checked byte for byte. The engine's alone is not enough: a command is decoded
    for a few cycles before the engine starts, so the block would not be run ahead."""
    import yaml
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario_text
    ext = ROOT / "scenarios" / "rtl_ext_dma.yaml"
    data = yaml.safe_load(ext.read_text())
    data["platform"]["rtl_blocks"]["soc.ext_dma"]["busy"] = {"signal": ["i_regs.busy_o",
                                                                        "i_engine.busy_o"]}
    sc = load_scenario_text(yaml.safe_dump(data, sort_keys=False),
                            ext.with_name("rtl_ext_dma_variant.yaml"))
    rep = run_scenario(sc, out_dir=tmp_path, plots=False)
    assert rep.status == "passed", (rep.error, rep.checks)
    assert all(c.passed for c in rep.checks) and len(rep.checks) >= 3
    assert rep.extra["rtl"]["blocks"]["soc.ext_dma"]["syncs"] > 0


def test_busy_signal_that_does_not_exist_fails_naming_it(tmp_path):
    import yaml
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario_text
    ext = ROOT / "scenarios" / "rtl_ext_dma.yaml"
    data = yaml.safe_load(ext.read_text())
    data["platform"]["rtl_blocks"]["soc.ext_dma"]["busy"] = {"signal": "i_engine.bussy_o"}
    sc = load_scenario_text(yaml.safe_dump(data, sort_keys=False),
                            ext.with_name("rtl_ext_dma_variant.yaml"))
    rep = run_scenario(sc, out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "busy.signal 'i_engine.bussy_o': the design has no 'bussy_o' there" in rep.error
