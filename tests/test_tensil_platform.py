"""The Tensil TCU on the common accelerator interface and the standalone ``tensil``
platform: the library example bit-exact against the numpy reference, timing-only mode,
the AXI link, registers, and located errors in a run."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.boards import board_arch, board_names
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.isa import NoOp, assemble_binary, words_of
from accelerators.tensil.model.machine import TensilMachine
from accelerators.tensil.deploy.example import (
    DATA_DIR, INPUT_AT, NET_DIR, OUTPUT_AT, dense_relu_files, network_files,
)
from accelerators.tensil.deploy.reference import dense
from cosim.launch import run_scenario
from cosim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "tensil_dense.yaml"


def test_example_files_are_fresh() -> None:
    for where, files in ((DATA_DIR, dense_relu_files(TensilArch())), (NET_DIR, network_files(TensilArch()))):
        for name, data in files.items():
            assert (where / name).read_bytes() == data, f"{name} is stale: python -m accelerators.tensil.deploy.example"


def test_compiled_network_in_the_platform(tmp_path: Path) -> None:
    rep = run_scenario(load_scenario(ROOT / "scenarios" / "tensil_resnet_small.yaml"),
                       out_dir=tmp_path, plots=False)
    assert all(c["passed"] for c in rep.as_dict()["checks"])
    st = rep.stats["soc.tcu"]
    assert st["instructions"] == len((NET_DIR / "program.tprog").read_bytes()) // 9 and st["hazards"] == 0


def test_reference_dense_against_float_when_exact() -> None:
    # multiples of 1/16 with |x| < 1: every product is exact, so the reference is numpy's matmul
    rng = np.random.default_rng(5)
    x = rng.integers(-16, 16, (7, 20)) * 16
    w = rng.integers(-16, 16, (12, 20)) * 16
    b = rng.integers(-64, 64, 12)
    got = dense(x, w, b, 8, 16, 8)
    assert np.array_equal(got, (x @ w.T) // 256 + b)


@pytest.mark.parametrize("name", ["arty_a7_35", "pynq_z1", "ultra96_v2"])
def test_example_on_each_board_machine_vs_reference(name: str) -> None:
    arch = board_arch(name)
    n = arch.array_size
    files = dense_relu_files(arch, m=5, k=2 * n, o=2 * n, seed=3)
    m = TensilMachine(arch)
    m.dram[0].write(INPUT_AT * arch.vector_bytes, files["input.bin"])
    m.dram[1].write(0, files["consts.bin"])
    m.run(files["program.tprog"])
    out = m.dram[0].read(OUTPUT_AT * arch.vector_bytes, len(files["expected.bin"]))
    assert out == files["expected.bin"] and not m.hazards


def test_boards_table() -> None:
    assert board_names() == ["arty_a7_35", "pynq_z1", "ultra96_v2"]
    sizes = {b: (board_arch(b).array_size, board_arch(b).clock_hz) for b in board_names()}
    assert sizes == {"arty_a7_35": (8, 150e6), "pynq_z1": (12, 150e6), "ultra96_v2": (16, 300e6)}


def _run(tmp_path: Path, *sets: tuple[str, object], program: bytes | None = None) -> object:
    sc = yaml.safe_load(SCENARIO.read_text())
    data = tmp_path / "data" / "tensil_dense"
    data.mkdir(parents=True, exist_ok=True)
    for f in DATA_DIR.iterdir():
        (data / f.name).write_bytes(f.read_bytes())
    if program is not None:
        (data / "program.tprog").write_bytes(program)
    if sets:
        sc["platform"] = {"preset": "tensil", "overrides": dict(sets)}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(sc))
    return run_scenario(load_scenario(path), out_dir=tmp_path / "out", plots=False)


def test_library_scenario_bit_exact_and_reported(tmp_path: Path) -> None:
    rep = _run(tmp_path)
    assert all(c["passed"] for c in rep.as_dict()["checks"])
    e = rep.extra["accelerators"]["soc.tcu"]
    assert e["kind"] == "tensil" and e["jobs"] == 1 and e["errors"] == 0
    prog = (DATA_DIR / "program.tprog").read_bytes()
    assert e["bytes"] == {"fetch": len(prog), "dram0": 2 * 512, "dram1": 576}
    st = rep.stats["soc.tcu"]
    assert st["instructions"] == len(words_of(prog, TensilArch())) == 51
    assert st["instructions.MatMul"] == 4 and st["macs"] == 4 * 16 * 64
    # the run takes at least the latency model's compute cycles plus the link's DRAM time
    standalone = TensilMachine(TensilArch())
    standalone.run(prog)
    dram = sum(v for k, v in standalone.stats.cycles_by_opcode.items() if k == "DataMove")
    assert e["cycles"] >= standalone.stats.cycles - dram
    assert 0 < st["dram_ps"] < e["busy_ps"]


def test_timing_only_mode_same_time(tmp_path: Path) -> None:
    a = _run(tmp_path / "a")
    b = _run(tmp_path / "b", ("soc.tcu.data", False))
    ea, eb = a.extra["accelerators"]["soc.tcu"], b.extra["accelerators"]["soc.tcu"]
    assert (ea["cycles"], ea["busy_ps"], ea["bytes"]) == (eb["cycles"], eb["busy_ps"], eb["bytes"])
    checks = {c["name"]: c["passed"] for c in b.as_dict()["checks"]}
    assert not checks["dense + ReLU output matches the numpy fixed-point reference"]


def test_axi_latency_and_width_change_the_dram_time(tmp_path: Path) -> None:
    base = _run(tmp_path / "a").stats["soc.tcu"]["dram_ps"]
    slow = _run(tmp_path / "b", ("soc.tcu.axi_latency", 200)).stats["soc.tcu"]["dram_ps"]
    narrow = _run(tmp_path / "c", ("soc.tcu.axi_width", 1)).stats["soc.tcu"]["dram_ps"]
    assert slow > base and narrow > base


def test_bad_program_is_a_located_run_error(tmp_path: Path) -> None:
    arch = TensilArch()
    bad = assemble_binary([NoOp()] * 3, arch) + (0x9 << (arch.instruction_bits - 4)).to_bytes(9, "little")
    bad += bytes((51 - 4) * 9)
    rep = _run(tmp_path, program=bad)
    err = rep.as_dict()["error"]
    assert err and "pc 3" in err and "opcode: undefined opcode 0x9" in err and "soc.tcu" in err


def test_fixed_format_of_the_platform_example() -> None:
    fmt = FixedFormat.named("FP16BP8")
    y = fmt.from_bytes((DATA_DIR / "expected.bin").read_bytes())
    assert (y >= 0).all() and (y > 0).any()   # ReLU output, not all zero


class _Recorder:
    """A byte memory target that records every timed burst (address, length, command,
    AxCACHE extension) and answers after ``delay`` ps."""

    def __init__(self, parent: object, size: int, delay: int = 0):
        from tlm import Module
        from tlm.sockets import TargetSocket
        self.mod = Module(parent, "mem")  # type: ignore[arg-type]
        self.data = bytearray(size)
        self.bursts: list[tuple[int, int, bool, object]] = []
        self.delay = delay
        self.socket = TargetSocket(self.mod, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.dbg, max_bindings=4)

    def dbg(self, p: object) -> int:
        from tlm.payload import READ
        a, n = p.address, p.length  # type: ignore[attr-defined]
        if p.command == READ:  # type: ignore[attr-defined]
            p.data[:] = self.data[a:a + n]  # type: ignore[attr-defined]
        else:
            self.data[a:a + n] = p.data  # type: ignore[attr-defined]
        return n

    async def b_transport(self, p: object, delay: int) -> int:
        from tlm.payload import OK, WRITE
        self.bursts.append((p.address, p.length, p.command == WRITE,  # type: ignore[attr-defined]
                            p.get_extension("axcache")))  # type: ignore[attr-defined]
        self.dbg(p)
        p.status = OK  # type: ignore[attr-defined]
        return delay + self.delay


def test_axi_bursts_split_at_max_burst_and_4k_and_carry_axcache() -> None:
    from accelerators.tensil.model.accelerator import TensilJob, TensilParams, TensilTcu
    from accelerators.tensil.model.isa import ConfigReg, Configure, DataFlow, DataMove
    from tlm import Clock, Simulator
    sim = Simulator()
    clock = Clock(sim, "clk", 100e6)
    mem = _Recorder(sim, 1 << 20)
    tcu = TensilTcu(sim, "tcu", clock=clock, params=TensilParams(axi_width=16, axi_max_burst=8,
                                                                 axi_latency=3))
    for port in tcu.ports.values():
        port.bind(mem.socket)
    arch = tcu.arch
    vb = arch.vector_bytes                                   # 16 bytes
    prog = [Configure(ConfigReg.DRAM0_CACHE, 0b0011),
            DataMove(DataFlow.DRAM0_TO_LOCAL, 0, 250, 20),   # bytes 0x10FA0.. cross 4 KiB
            DataMove(DataFlow.LOCAL_TO_DRAM1, 0, 0, 3, stride=2)]
    binary = assemble_binary(prog, arch)
    mem.data[0:len(binary)] = binary
    src = np.arange(20 * 8, dtype=np.int64)
    mem.data[0x10000 + 250 * vb:0x10000 + 270 * vb] = FixedFormat.named("FP16BP8").to_bytes(src)
    tcu.submit(TensilJob(program=0, count=3, dram0=0x10000, dram1=0x40000))
    sim.run()
    fetch, dram = mem.bursts[0], mem.bursts[1:]
    assert fetch[:3] == (0, 3 * arch.instruction_bytes, False)
    # 320 bytes from 0x10FA0: 96 up to the 4 KiB line, then bursts of at most 8 beats * 16 B
    reads = [(a, n) for a, n, w, _ in dram if not w]
    assert reads == [(0x10FA0, 96), (0x11000, 128), (0x11080, 96)]
    assert all(c == 0b0011 for a, n, w, c in dram if not w)
    writes = [(a, n) for a, n, w, _ in dram if w]
    assert writes == [(0x40000, vb), (0x40000 + 2 * vb, vb), (0x40000 + 4 * vb, vb)]
    assert mem.data[0x40000 + 2 * vb:0x40000 + 3 * vb] == FixedFormat.named("FP16BP8").to_bytes(src[8:16])
    rec = tcu.jobs[0]
    assert rec.error == 0 and rec.cycles == 3
    # each burst lasts its link time: latency 3 + beats
    link = sum(3 + -(-n // 16) for _, n, _, _ in dram)
    assert tcu.dram_time_ps == link * clock.period


@pytest.mark.parametrize("setting,where", [
    ("soc.tcu.stride0_depth=6", "stride0_depth = 6 is not a power of two"),
    ("soc.tcu.local_depth=1", "out of range"), ("soc.tcu.board=nope", "expected one of"),
])
def test_bad_parameters_are_scenario_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            setting: str, where: str) -> None:
    from cosim.cli import main
    code = main(["run", "tensil_dense", "--set", setting, "--out", str(tmp_path), "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and setting.split("=")[0] in err.replace("\n", "") and where in err.replace("\n", "")


def test_status_register_shows_timeout_tracepoint_and_error() -> None:
    from accelerators.tensil.model.accelerator import TensilJob, TensilTcu
    from accelerators.tensil.model.isa import ConfigReg, Configure, MatMul
    from tlm import Clock, Simulator
    sim = Simulator()
    mem = _Recorder(sim, 1 << 16)
    tcu = TensilTcu(sim, "tcu", clock=Clock(sim, "clk", 100e6))
    for port in tcu.ports.values():
        port.bind(mem.socket)
    arch = tcu.arch
    prog = assemble_binary([Configure(ConfigReg.TIMEOUT, 4), Configure(ConfigReg.TRACEPOINT, 3),
                            MatMul(0, 0, 10, zeroes=True)], arch)
    mem.data[:len(prog)] = prog
    tcu.submit(TensilJob(0, 3, 0x8000, 0xC000))
    sim.run()
    status = tcu.regs.read_reg(tcu.regs["STATUS"])
    assert status == 0b1100 and sim.stats.as_dict()["tcu"]["timeouts"] == 1
    # an undefined opcode: the run stops with a located error; ERROR_PC and STATUS say so
    mem.data[:9] = (0x6 << 68).to_bytes(9, "little")
    tcu.submit(TensilJob(0, 1, 0x8000, 0xC000))
    with pytest.raises(Exception, match="pc 0"):
        sim.run()
    assert tcu.error_pc == 0 and tcu._status() & 0b10


def test_compiled_network_cosimulated_on_a_board(tmp_path: Path) -> None:
    from accelerators.tensil.deploy.cosim_boards import write_board_scenario
    path = write_board_scenario(tmp_path, "pynq_z1")          # 12 lanes, 150 MHz
    rep = run_scenario(load_scenario(path), out_dir=tmp_path / "out", plots=False)
    assert rep.as_dict()["status"] == "passed" and all(c["passed"] for c in rep.as_dict()["checks"])
    e = rep.extra["accelerators"]["soc.tcu"]
    assert e["busy_ps"] == pytest.approx(e["cycles"] * 1e12 / 150e6, rel=1e-3)
    timing = write_board_scenario(tmp_path / "t", "pynq_z1", data=False)
    rt = run_scenario(load_scenario(timing), out_dir=tmp_path / "t" / "out", plots=False)
    assert rt.extra["accelerators"]["soc.tcu"]["cycles"] == e["cycles"]
