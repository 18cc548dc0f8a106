"""Nothing from a scenario reaches the C/C++ toolchain, and a scenario's RTL reads nothing
outside its place (issue 29, the RTL rows; docs/rtl.md, "What a scenario's RTL can make
the toolchain do").

Every case puts a canary file outside the scenario's folder and checks that its content
appears in no output, report or error. Argument and source checks go through
``cosim validate`` or :func:`cosim.rtl.spec.block_spec` (no build); one test builds, to
check what a real compiler failure quotes and the modes of the build's files."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rtl_scenario_support import _isolated  # noqa: F401
from cosim.rtl.build import DiagnosticFilter, RtlBlock, RtlBuildError, build, compiler_message
from cosim.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parents[1]
APB = ROOT / "rtl" / "bus" / "apb_regs.sv"
CANARY = "CANARY-29-RTL-4d1e"
BLOCK = "soc.apb_regs"

BASE = {
    "name": "hostile_rtl", "seed": 1,
    "platform": {"preset": "marsellus", "rtl_blocks": {BLOCK: {
        "sources": ["apb_regs.sv"], "top": "apb_regs",
        "clock": {"port": "clk_i", "period_ns": 10},
        "reset": {"port": "rst_ni", "active_low": True, "cycles": 4},
        "adapters": {"cfg": {"kind": "apb_slave", "prefix": "s_apb_",
                             "bind": "0x1A120000+0x800"}}}}},
    "workload": {"tasks": [{"id": "apb", "op": "mmio", "accesses": [
        {"write": 0x1A120000, "value": 0x12345678},
        {"read": 0x1A120000, "expect": 0x12345678}]}]},
}


@pytest.fixture
def place(tmp_path):
    """``(scenario folder, canary file outside it)``; the folder holds apb_regs.sv."""
    sc = tmp_path / "sc"
    sc.mkdir()
    (sc / "apb_regs.sv").write_text(APB.read_text())
    out = tmp_path / "outside"
    out.mkdir()
    canary = out / "canary.sv"
    canary.write_text(f"{CANARY} first line\nmodule apb_regs; endmodule\n")
    return sc, canary


def scenario(folder: Path, edit=None, files: dict | None = None, name: str = "s.yaml") -> Path:
    data = yaml.safe_load(yaml.safe_dump(BASE))
    block = data["platform"]["rtl_blocks"][BLOCK]
    if edit:
        edit(block)
    for k in [k for k, v in block.items() if v is None]:    # None: leave the key out
        del block[k]
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def cli(*args: str, cwd: Path | None = None) -> tuple[int, str]:
    r = subprocess.run([sys.executable, "-m", "cosim.cli", *args], capture_output=True,
                       text=True, cwd=cwd, timeout=300)
    return r.returncode, r.stdout + r.stderr


def spec_error(path: Path) -> str:
    """The located error of the block (what validate and run both report)."""
    from cosim.rtl.spec import block_spec
    sc = load_scenario(str(path))
    with pytest.raises(ScenarioError) as e:
        block_spec(sc, BLOCK, sc.rtl_blocks[BLOCK])
    text = str(e.value)
    assert CANARY not in text, text
    return text


def with_body(extra: str) -> str:
    """apb_regs.sv with ``extra`` inside its module."""
    text = APB.read_text()
    head, _, tail = text.rpartition("endmodule")
    return head + extra + "\nendmodule" + tail


# ------------------------------------------------------------------ the rows
@pytest.mark.slow(reason="the issue's row in the hostile corpus: "
                         "rtl/toolchain:cflags-B-runs-the-scenarios-assembler (default set)")
def test_cflags_B_runs_no_program_of_the_scenario(place, tmp_path):
    """`-CFLAGS -B/dir/` made g++ run the `as`/`cc1plus` of that folder: now refused by
    validate and by run, before anything is built, and nothing of the folder runs."""
    folder, _ = place
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "ran"
    for tool in ("as", "cc1plus", "ld", "collect2"):
        (evil / tool).write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
        (evil / tool).chmod(0o755)
    path = scenario(folder, lambda b: b.update(verilator_args=["-CFLAGS", f"-B{evil}/"]))
    for cmd in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "out")]):
        rc, out = cli(*cmd)
        assert rc == 2, out
        assert "verilator_args[0]" in out and "'-CFLAGS' is not allowed" in out, out
        assert "C/C++ compiler" in out and str(path) in out, out
    assert not marker.exists()


@pytest.mark.slow(reason="the issue's row in the hostile corpus: rtl/toolchain:cflags-include-quotes-a-file "
                         "(default set)")
def test_cflags_include_quotes_no_file(place, tmp_path):
    folder, canary = place
    path = scenario(folder, lambda b: b.update(verilator_args=["-CFLAGS",
                                                               f"-include{canary}"]))
    rc, out = cli("run", str(path), "--out", str(tmp_path / "out"))
    assert rc == 2 and "'-CFLAGS' is not allowed" in out and CANARY not in out, out
    for f in (tmp_path / "out").rglob("*") if (tmp_path / "out").exists() else ():
        assert not f.is_file() or CANARY not in f.read_text(errors="replace"), f


@pytest.mark.parametrize("name", ["abs", "dotdot", "symlink"])
def test_sources_outside_the_scenario_are_refused(place, name):
    folder, canary = place
    src = {"abs": str(canary), "dotdot": "../outside/canary.sv", "symlink": "link.sv"}[name]
    if name == "symlink":
        (folder / "link.sv").symlink_to(canary)
    text = spec_error(scenario(folder, lambda b: b.update(sources=["apb_regs.sv", src])))
    assert f"{BLOCK}.sources[1]" in text and "outside the folder of the file naming it" in text


@pytest.mark.parametrize("name", ["evil.cpp", "evil.c", "libevil.so", "evil.o", "evil"])
def test_sources_are_hdl_files(place, name):
    """Verilator compiles and links C/C++ files and libraries it is given (cocotb builds
    with --exe): a source or a manifest's file that is not HDL is refused, located."""
    folder, _ = place
    (folder / name).write_text("int x;\n")
    text = spec_error(scenario(folder, lambda b: b.update(sources=["apb_regs.sv", name])))
    assert f"{BLOCK}.sources[1]" in text and "a source is an HDL file" in text, text
    (folder / "Bender.yml").write_text(f"package: {{name: p}}\nsources: [apb_regs.sv, {name}]\n")
    text = spec_error(scenario(folder, lambda b: b.update(
        sources=None, manifests=[{"file": "Bender.yml"}])))
    assert f"{BLOCK}.manifests[0]" in text and "Bender.yml: sources[1]" in text, text


@pytest.mark.parametrize("top", ["../../evil", "a b", "x;id"])
def test_top_is_a_module_name(place, top):
    """The top names the executable the build links (`-o TOP`): an escaped Verilog
    identifier such as `\\../../evil` would put it outside the build folder."""
    folder, _ = place
    text = spec_error(scenario(folder, lambda b: b.update(top=top)))
    assert f"{BLOCK}.top" in text and "is not a module name" in text, text


# ------------------------------------------------------------------ the allow-list
@pytest.mark.parametrize("args, index, why", [
    (["-CFLAGS", "-O2"], 0, "C/C++ compiler"),
    (["-LDFLAGS", "-lfoo"], 0, "C/C++ compiler"),
    (["-MAKEFLAGS", "CXX=/tmp/x"], 0, "C/C++ compiler"),
    (["--compiler", "clang"], 0, "C/C++ compiler"),
    (["--exe", "main.cpp"], 0, "C/C++ compiler"),
    (["--build-jobs", "4"], 0, "C/C++ compiler"),
    (["evil.cpp"], 0, "not one of the options"),
    (["-I/etc"], 0, "read files or search folders"),
    (["-y", "/etc"], 0, "read files or search folders"),
    (["-v", "/etc/passwd"], 0, "read files or search folders"),
    (["-f", "/etc/passwd"], 0, "read files or search folders"),
    (["-F", "opts.f"], 0, "read files or search folders"),
    (["+incdir+/etc"], 0, "read files or search folders"),
    (["--trace"], 0, "waves are asked for"),
    (["--trace-fst"], 0, "waves are asked for"),
    (["-o", "x"], 0, "the build sets it itself"),
    (["--Mdir", "/tmp"], 0, "the build sets it itself"),
    (["--top-module", "other"], 0, "the build sets it itself"),
    (["+define+X=1"], 0, "give defines as"),
    (["--unroll-count", "-CFLAGS"], 1, "--unroll-count takes a number"),
    (["--unroll-count"], 0, "got nothing"),
    (["--x-assign", "/tmp/x"], 1, "--x-assign takes 0, 1, fast or unique"),
    (["-DX=/etc/passwd"], 0, "is not a literal"),
    (['-DX="a b"'], 0, "is not a literal"),
    (["-D1X=2"], 0, "is not an identifier"),
    (["-GW=$(id)"], 0, "is not a literal"),
    (["-Wno-fatal", "--no-timing; rm"], 1, "not one of the options"),
])
def test_verilator_args_outside_the_allow_list_are_located_errors(place, args, index, why):
    folder, _ = place
    text = spec_error(scenario(folder, lambda b: b.update(verilator_args=args)))
    assert f"{BLOCK}.verilator_args[{index}]" in text and why in text, text


def test_allowed_arguments_reach_the_block(place):
    """What the library scenarios and the open RBE's build pass stays accepted; -D and -G
    items join the defines and parameters the build passes itself."""
    from cosim.rtl.spec import block_spec
    from tests.rtl.rbe_open import BUILD_ARGS as RBE_OPEN_ARGS
    folder, _ = place
    args = ["--no-timing", "-Wno-BLKANDNBLK", "--unroll-count", "256", *RBE_OPEN_ARGS,
            "-DFAST", "-DW=32'h10", "-GID_VALUE=5", "-Werror-LATCH", "-O3", "--assert"]
    sc = load_scenario(str(scenario(folder, lambda b: b.update(verilator_args=args))))
    block = block_spec(sc, BLOCK, sc.rtl_blocks[BLOCK]).block
    assert block.defines == {"FAST": None, "W": "32'h10"}
    assert block.parameters == {"ID_VALUE": "5"}
    assert not any(a.startswith(("-D", "-G")) for a in block.build_args)
    assert {"-DFAST", "-DW=32'h10", "--unroll-count", "-Wno-BLKANDNBLK"} <= set(block.verilator_args())


@pytest.mark.parametrize("field, value, why", [
    ("defines", {"F": "\"/etc/passwd\""}, "is not a literal"),
    ("defines", {"F": "`include"}, "is not a literal"),
    ("parameters", {"ID_VALUE": "1; rm -rf ~"}, "is not a literal"),
    ("parameters", {"ID_VALUE": "a" * 200}, "is not a literal"),
])
def test_define_and_parameter_values_are_bounded_literals(place, field, value, why):
    folder, _ = place
    text = spec_error(scenario(folder, lambda b: b.update({field: value})))
    assert f"{BLOCK}.{field}.{next(iter(value))}" in text and why in text, text


# ------------------------------------------------------------------ includes
@pytest.mark.parametrize("directive, why", [
    ('`include "{canary}"', "without '..' or an absolute path"),
    ('`include "../outside/canary.sv"', "without '..' or an absolute path"),
    ('`define F "{canary}"\n`include `F', "must name its file in quotes"),
    ('`define INC(f) `include f\n`INC("{canary}")', "must name its file in quotes"),
])
def test_includes_cannot_name_outside_files(place, directive, why):
    folder, canary = place
    src = directive.format(canary=canary) + "\n" + APB.read_text()
    text = spec_error(scenario(folder, lambda b: b.update(sources=["top.sv"]), {"top.sv": src}))
    assert f"{BLOCK}.sources[0]" in text and "top.sv:" in text and why in text, text


def test_an_include_folder_cannot_lead_outside(place):
    """A symlink in a checked include folder to a file outside, and an include folder
    outside: both refused before Verilator runs."""
    folder, canary = place
    (folder / "inc").mkdir()
    (folder / "inc" / "defs.svh").symlink_to(canary)
    src = '`include "defs.svh"\n' + APB.read_text()
    text = spec_error(scenario(folder, lambda b: b.update(sources=["top.sv"],
                                                          include_dirs=["inc"]),
                               {"top.sv": src}))
    assert 'top.sv:1: `include "defs.svh" reaches' in text and "not a regular file inside" in text
    assert "--allow-path" in text
    text = spec_error(scenario(folder, lambda b: b.update(include_dirs=["../outside"])))
    assert f"{BLOCK}.include_dirs[0]" in text and "outside the folder of the file naming it" in text


def test_includes_inside_the_scenario_work(place):
    """The checked path: an include folder of the scenario, an include in a comment and
    one in a string are no directives."""
    from cosim.rtl.spec import block_spec
    folder, _ = place
    (folder / "inc").mkdir()
    (folder / "inc" / "defs.svh").write_text("`define ID_DEFAULT 32'hA9B00001\n")
    src = ('`include "defs.svh"\n// `include "/etc/passwd"\n/* `include `X */\n'
           + APB.read_text())
    sc = load_scenario(str(scenario(folder, lambda b: b.update(sources=["top.sv"],
                                                               include_dirs=["inc"]),
                                    {"top.sv": src})))
    spec = block_spec(sc, BLOCK, sc.rtl_blocks[BLOCK])
    assert [Path(i).name for i in spec.block.includes] == ["inc"]


# ------------------------------------------------------------------ what the model may do
@pytest.mark.parametrize("body, what", [
    ('initial $system("touch /tmp/pwned");', "$system"),
    ('initial begin int r; r = $system("id"); end', "$system"),
    ('`define SYS $sys``tem\ninitial `SYS("id");', "$system"),          # hidden by a macro
    ('initial $c("system(\\"id\\");");', "$c (inline C++)"),
    ('`systemc_imp_header\nstatic int x = system("id");\n`verilog', "systemc"),
    ('logic [7:0] m [4];\ninitial $readmemh("/etc/passwd", m);', "$readmemh"),
    ('logic [7:0] m [4];\ninitial $writememh("/tmp/x", m);', "$writememh"),
    ('int fd;\ninitial fd = $fopen("/tmp/x", "w");', "$fopen"),
    ('initial $dumpfile("/tmp/x.vcd");', "$dumpfile"),
])
def test_rtl_that_runs_code_or_touches_files_is_refused(place, body, what):
    folder, _ = place
    text = spec_error(scenario(folder, lambda b: b.update(sources=["top.sv"]),
                               {"top.sv": with_body(body)}))
    assert f"{BLOCK}.sources[0]" in text and what in text and "top.sv:" in text, text
    assert "is not allowed in the RTL of a scenario" in text


def test_dpi_import_is_refused(place):
    folder, _ = place
    src = 'import "DPI-C" function int system(input string c);\n' + with_body(
        "initial void'(system(\"id\"));")
    text = spec_error(scenario(folder, lambda b: b.update(sources=["top.sv"]), {"top.sv": src}))
    assert 'import "DPI-C" system' in text and "top.sv:1" in text, text


# ------------------------------------------------------------------ manifests
def test_manifest_entries_are_confined_and_located(place):
    folder, canary = place
    (folder / "pkg").mkdir()
    for entry, why in ((str(canary), "outside the folder of the manifest"),
                       ("../../outside/canary.sv", "outside the folder of the manifest")):
        (folder / "pkg" / "Bender.yml").write_text(
            f"package: {{name: p}}\nsources:\n  - ../apb_regs.sv\n  - files: [{entry}]\n")
        text = spec_error(scenario(folder, lambda b: b.update(
            sources=None, manifests=[{"file": "pkg/Bender.yml"}])))
        assert "Bender.yml: sources[1].files[0]" in text and why in text, text
        assert f"{BLOCK}.manifests[0]" in text, text
    (folder / "pkg" / "Bender.yml").write_text(
        "package: {name: p}\nexport_include_dirs: [../../outside]\nsources: [../apb_regs.sv]\n")
    text = spec_error(scenario(folder, lambda b: b.update(
        sources=None, manifests=[{"file": "pkg/Bender.yml"}])))
    assert "export_include_dirs: include directory ../../outside is outside" in text, text


def test_a_verilator_error_names_the_manifest_entry(place):
    """A file of the third manifest that does not compile is located at manifests[2], with
    the manifest and its entry (it was reported at '...sources')."""
    folder, _ = place
    for k in range(3):
        (folder / f"p{k}").mkdir()
        (folder / f"p{k}" / f"m{k}.sv").write_text(f"module m{k}; endmodule\n")
        body = f"[m{k}.sv]" if k < 2 else "[m2.sv, {files: [bad.sv]}]"
        (folder / f"p{k}" / "Bender.yml").write_text(f"package: {{name: p{k}}}\nsources: {body}\n")
    (folder / "p2" / "bad.sv").write_text("module bad; import missing_pkg::*; endmodule\n")
    path = scenario(folder, lambda b: b.update(
        manifests=[{"file": f"p{k}/Bender.yml"} for k in range(3)]))
    text = spec_error(path)
    assert f"{BLOCK}.manifests[2]" in text and "missing_pkg" in text, text
    assert "p2/Bender.yml: sources[1].files[0]" in text, text


BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi")) + "sources: *i\n")


@pytest.mark.parametrize("text", [BOMB, pytest.param(
    "sources: " + "[" * 20000 + "]" * 20000 + "\n",
    marks=pytest.mark.slow(reason="the hostile corpus's files:manifest-deep-nesting in the default set"))],
    ids=["alias_bomb", "deep_20000"])
def test_a_hostile_manifest_is_a_located_error_at_once(place, text):
    """The issue's rows: a Bender manifest with an alias bomb or 20 000-deep nesting hung
    or raised RecursionError; now a located error at the manifest, quickly."""
    import time
    folder, _ = place
    (folder / "Bender.yml").write_text(text)
    t = time.perf_counter()
    err = spec_error(scenario(folder, lambda b: b.update(sources=None,
                                                         manifests=[{"file": "Bender.yml"}])))
    assert time.perf_counter() - t < 30
    assert f"{BLOCK}.manifests[0]" in err and "cannot read the manifest" in err, err


@pytest.mark.parametrize("text, why", [
    ("sources:\n" + "".join("  " * (k + 1) + "- files:\n" for k in range(20))
     + "  " * 21 + "- a.sv\n", "nested deeper than 32"),
    ("sources:\n  - target: " + "not(" * 50 + "rtl" + ")" * 50 + "\n    files: [a.sv]\n",
     "nested deeper than 32"),
    ("sources:\n  - target: " + "x" * 2000 + "\n    files: [a.sv]\n", "at most 1024"),
    ("sources:\n  - defines: {'bad name': 1}\n    files: [a.sv]\n", "is not an identifier"),
    ("sources:\n  - defines: {X: '/etc/passwd'}\n    files: [a.sv]\n", "is not a literal"),
])
def test_manifest_semantics_are_bounded(tmp_path, text, why):
    from cosim.rtl.manifest import ManifestError, read_manifest
    (tmp_path / "a.sv").write_text("module a; endmodule\n")
    m = tmp_path / "Bender.yml"
    m.write_text(text)
    with pytest.raises(ManifestError) as e:
        read_manifest(m)
    assert str(m) in str(e.value) and why in str(e.value), str(e.value)


# ------------------------------------------------------------------ build logs
def test_diagnostics_are_quoted_only_for_named_files(tmp_path):
    named = tmp_path / "top.sv"
    named.write_text("module top; endmodule\n")
    log = "\n".join([
        "- V e r i l a t i o n   R e p o r t",
        f"%Error: {named}:2:3: syntax error, unexpected IDENTIFIER",
        "    2 | wire x",
        "      |   ^",
        "%Error: /elsewhere/secret.txt:1:1: syntax error, unexpected IDENTIFIER",
        f"    1 | {CANARY}",
        "In file included from <command-line>:",
        f"/elsewhere/secret.txt:1:1: error: '{CANARY}' does not name a type",
        f"    1 | {CANARY}",
        f"../../secret.txt:1:1: error: '{CANARY}' does not name a type",
        "%Error: Exiting due to 2 error(s)",
    ])
    msg = compiler_message(log, DiagnosticFilter([named], cwd=tmp_path), log_path=tmp_path / "build.log")
    assert CANARY not in msg, msg
    assert f"{named}:2:3: syntax error" in msg and "    2 | wire x" in msg
    assert "Exiting due to 2 error(s)" in msg and msg.endswith("(7 more lines in build.log)")


def test_a_failed_build_quotes_no_other_file_and_keeps_its_log_private(tmp_path):
    """The one real build: the C++ compiler fails on a file given with -CFLAGS -include
    (Python API: a scenario cannot pass it any more); the error holds the compiler's
    words about named files only, the log is 0600 and the build folders 0700."""
    canary = tmp_path / "canary.h"
    canary.write_text(f"{CANARY} secret\n")
    src = tmp_path / "ok.sv"
    src.write_text("module ok(input logic clk_i, output logic q_o);\n assign q_o = clk_i;\nendmodule\n")
    cache = tmp_path / "cache"
    blk = RtlBlock.make("okcanary", [src], "ok", build_args=["-CFLAGS", f"-include {canary}"])
    with pytest.raises(RtlBuildError) as e:
        build(blk, cache_dir=cache)
    msg = str(e.value)
    assert CANARY not in msg and "more lines in build.log" in msg, msg
    log = e.value.build_dir / "build.log"
    assert CANARY in log.read_text()          # the full log has it, for its owner only
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    for d in (cache, e.value.build_dir):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    assert os.access(log, os.R_OK)
