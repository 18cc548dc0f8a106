"""Register maps (tlm/regmap.py): the schema, located errors, every block's YAML, and the
files `cosim regs` generates from them (fresh, and a stale one is detected)."""
from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from cosim.regs import HEADER, LINKER, SV_DIR, DOC, ROOT, load_blocks, outputs, update, yaml_files
from tlm.regmap import RegMapError, parse_regmap

GOOD = textwrap.dedent("""\
    block: demo
    c_prefix: DM
    width: 32
    doc: "a demo block"
    constants:
      - {name: MAGIC, value: 0xCAFE, doc: "a value"}
    registers:
      - name: CTRL
        offset: 0x00
        access: rw
        reset: 0x10
        doc: "control"
        fields:
          - {name: EN, lsb: 0, width: 1}
          - {name: MODE, lsb: 4, width: 3, access: ro}
      - {name: STATUS, offset: 0x04, access: rw1c}
    arrays:
      - name: CH
        base: 0x100
        stride: 0x10
        count: 4
        registers:
          - {name: ADDR, offset: 0x0}
          - {name: LEN, offset: 0x4, access: wo}
    """)


def test_a_good_map_loads_with_lookup_helpers():
    m = parse_regmap(GOOD, "demo.yaml")
    assert (m.block, m.prefix, m.width) == ("demo", "DM", 32)
    assert m.offset("STATUS") == 4 and m.register("CTRL").reset == 0x10
    assert m.mask("CTRL", "MODE") == 0x70 and m.shift("CTRL", "MODE") == 4
    f = m.field("CTRL", "MODE")
    assert f.access == "ro" and f.get(0x50) == 5 and f.put(0xFF, 2) == 0xAF
    assert m.field("CTRL", "EN").access == "rw"     # inherits the register's access
    assert m.register("STATUS").bank_access == "rw"  # w1c is the write hook's business
    assert m.constant("MAGIC") == 0xCAFE
    assert m.array("CH").offset(2, "LEN") == 0x124 and m.array("CH").end == 0x140
    assert m.offsets() == {"CTRL": 0, "STATUS": 4}
    with pytest.raises(KeyError):
        m.offset("NOPE")
    with pytest.raises(IndexError):
        m.array("CH").offset(4, "ADDR")


def _bad(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


# (edit of GOOD, line of the error, key named in the message, words of the problem)
BAD = [
    ("overlapping registers", ("offset: 0x04, access: rw1c", "offset: 0x00, access: rw1c"),
     16, "registers[STATUS].offset", "overlaps register CTRL"),
    ("same register name twice", ("{name: STATUS, offset", "{name: CTRL, offset"),
     16, "registers[CTRL].name", "already defined (line 8)"),
    ("overlapping fields", ("{name: MODE, lsb: 4", "{name: MODE, lsb: 0"),
     15, "registers[CTRL].fields[MODE].lsb", "overlaps field EN"),
    ("field beyond the width",
     ("{name: MODE, lsb: 4, width: 3", "{name: MODE, lsb: 30, width: 3"),
     15, "registers[CTRL].fields[MODE].width", "beyond the 32-bit register"),
    ("unaligned offset", ("offset: 0x04, access: rw1c", "offset: 0x06, access: rw1c"),
     16, "registers[STATUS].offset", "not aligned"),
    ("unknown key", ("    reset: 0x10\n", "    reste: 0x10\n"),
     11, "registers[0].reste", "unknown key"),
    ("bad access code", ("access: rw1c}", "access: w1c}"),
     16, "registers[STATUS].access", "bad access code 'w1c'"),
    ("unknown top-level key", ("width: 32\n", "widht: 32\n"), 3, "widht", "unknown key"),
    ("duplicate YAML key", ("    reset: 0x10\n", "    reset: 0x10\n    reset: 0x20\n"),
     12, "reset", "duplicate key"),
    ("array over a register", ("    base: 0x100\n", "    base: 0x000\n"),
     17, "arrays", "overlaps register"),
    ("array register beyond the stride", ("{name: LEN, offset: 0x4", "{name: LEN, offset: 0x10"),
     24, "arrays[CH].registers[LEN].offset", "outside the array stride"),
    ("reset too wide", ("reset: 0x10", "reset: 0x100000000"), 11, "registers[CTRL].reset",
     "does not fit"),
    ("missing offset",
     ("{name: STATUS, offset: 0x04, access: rw1c}", "{name: STATUS, access: rw1c}"),
     16, "registers[1].offset", "missing required key"),
    ("bad width", ("width: 32\n", "width: 24\n"), 3, "width", "must be one of"),
    ("bad name", ("{name: EN,", "{name: 3EN,"), 14, "registers[CTRL].fields[0].name",
     "not an identifier"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_refused_with_file_line_and_key(case):
    _, (old, new), line, key, problem = case
    with pytest.raises(RegMapError) as e:
        parse_regmap(_bad(old, new), "blocks/demo.registers.yaml")
    err = e.value
    assert (err.source, err.line, err.key) == ("blocks/demo.registers.yaml", line, key), str(err)
    assert problem in err.problem
    assert str(err).startswith(f"blocks/demo.registers.yaml:{line}: {key}: ")


def test_every_block_yaml_loads():
    maps = {m.block: m for m in load_blocks()}
    assert set(maps) >= {"cluster_dma", "udma", "soc_timer", "stdout", "cluster_ctrl",
                         "event_unit", "pmu", "fll", "rbe"}
    assert len(maps) == len(yaml_files())
    prefixes = [m.prefix for m in maps.values()]
    assert len(set(prefixes)) == len(prefixes)


def test_models_use_their_maps():
    from components import cluster_dma, soc_timer, udma
    from components.cluster import ctrl, event_unit
    assert cluster_dma.REG == cluster_dma.MAP.offsets()
    assert soc_timer.REGISTER_MAP["STATUS"] == 0x28
    assert udma.REGISTER_MAP["HYPER_TX_CFG"] == 0x98
    assert ctrl.STATUS_START_IGNORED == 1 << 3
    assert event_unit.BARRIER_BASE == 0x400 and event_unit.CORE_REG["EVT_WAIT_CLEAR"] == 0x1C


def test_generated_files_are_fresh():
    stale = update(check=True)
    assert not stale, f"stale generated files {[str(p) for p in stale]}: run `cosim regs`"


def _copy_tree(tmp: Path) -> Path:
    """The inputs and generated files of `cosim regs` under ``tmp``."""
    files = [p.relative_to(ROOT) for p in yaml_files()]
    files += [HEADER, LINKER, DOC] + [p.relative_to(ROOT) for p in (ROOT / SV_DIR).glob("*.sv")]
    for rel in files:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp / rel)
    return tmp


def test_the_check_detects_stale_files(tmp_path):
    root = _copy_tree(tmp_path)
    assert update(root, check=True) == []
    pkg = root / SV_DIR / "cluster_dma_regs_pkg.sv"
    pkg.write_text(pkg.read_text().replace("32'h0000_002C", "32'h0000_0030"))
    (root / SV_DIR / "gone_regs_pkg.sv").write_text("package gone_regs_pkg; endpackage\n")
    yml = root / "components/soc_timer.registers.yaml"
    yml.write_text(yml.read_text().replace('doc: "Write 1: set CFG.EN."', 'doc: "Starts it."'))
    stale = {str(p) for p in update(root, check=True)}
    assert stale == {"rtl/regs/cluster_dma_regs_pkg.sv", "rtl/regs/gone_regs_pkg.sv",
                     "docs/registers.md"}
    assert update(root) and update(root, check=True) == []   # rewritten: fresh again
    assert not (root / SV_DIR / "gone_regs_pkg.sv").exists()
    assert "Starts it." in (root / DOC).read_text()
    assert outputs(root)[DOC] == (root / DOC).read_text()


def test_a_changed_offset_reaches_header_package_and_docs(tmp_path):
    root = _copy_tree(tmp_path)
    yml = root / "components/cluster/ctrl.registers.yaml"
    yml.write_text(yml.read_text().replace("{name: CYCLES, offset: 0x1C",
                                           "{name: CYCLES, offset: 0x20"))
    stale = {str(p) for p in update(root, check=True)}
    assert stale == {str(HEADER), "rtl/regs/cluster_ctrl_regs_pkg.sv", str(DOC)}


def test_cli_check(capsys):
    from cosim.cli import main
    assert main(["regs", "--check"]) == 0


def test_a_bad_block_yaml_fails_the_generator_with_its_location(tmp_path):
    root = _copy_tree(tmp_path)
    yml = root / "components/stdout.registers.yaml"
    yml.write_text(yml.read_text().replace("offset: 0x4, access: wo", "offset: 0x0, access: wo"))
    with pytest.raises(RegMapError, match=r"stdout\.registers\.yaml:\d+: arrays\[SLOT\]\."
                                          r"registers\[EXIT\]\.offset: 0x0 overlaps register PUTC"):
        update(root, check=True)
