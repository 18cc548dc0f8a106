"""FlexiSAGA on the common accelerator interface: the library scenario flexisaga_gemm
(host programs the job registers, the output is checked against numpy), its data files
reproducible from their seed, register programming, timing, and refused jobs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from accelerators.flexisaga.model.config import ArrayConfig  # noqa: E402
from accelerators.flexisaga.model.cycles import estimate  # noqa: E402
from accelerators.flexisaga.model.pruning import prune_group  # noqa: E402
from accelerators.flexisaga.model.tiles import pack  # noqa: E402

DATA = ROOT / "scenarios" / "data" / "flexisaga"
GRID = ArrayConfig(rows=4, cols=4)
M, K, N = 24, 40, 16


def make_data() -> dict[str, np.ndarray]:
    """The scenario's operands: small-integer fp32 (so numpy's matmul is exact), W pruned
    in column vectors of length R (zero columns for sOS to skip), sOS tiles + table."""
    rng = np.random.default_rng(2024)
    w = rng.integers(-8, 9, (M, K)).astype(np.float32)
    (w,) = prune_group([w], 0.6, GRID.rows, "col")
    i = rng.integers(-8, 9, (K, N)).astype(np.float32)
    image, table = pack("sOS", w, GRID)
    return {"input": i, "tiles": image, "table": table, "expected": (w @ i).astype(np.float32),
            "weights": w}


def test_data_files_are_reproducible() -> None:
    d = make_data()
    for name in ("input", "tiles", "table", "expected"):
        assert np.array_equal(np.load(DATA / f"{name}.npy"), d[name]), name
    # numpy's own matmul is exact here (integers below 2^24): the check is against numpy
    assert np.array_equal(d["expected"], np.matmul(d["weights"].astype(np.float64),
                                                   d["input"].astype(np.float64)).astype(np.float32))


def test_library_scenario_runs_and_checks(tmp_path: Path) -> None:
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario("flexisaga_gemm"), out_dir=tmp_path, plots=False)
    assert rep.status == "passed" and len(rep.checks) == 4, (rep.error, rep.checks)
    e = rep.extra["accelerators"]["soc.flexisaga"]
    assert e["kind"] == "flexisaga" and e["jobs"] == 1 and e["errors"] == 0
    fast = estimate("sOS", make_data()["weights"], N, GRID)
    assert e["cycles"] >= fast.cycles + 2   # setup + the cycle model (bursts may be slower)
    assert e["ops"] == 2 * fast.macs


def _platform():
    from tlm import Clock, InitiatorSocket, Memory, Module, Region, Simulator
    from accelerators.flexisaga.model.peripheral import FlexiSaga, FlexiSagaParams
    sim = Simulator()
    clock = Clock(sim, "clk", 100e6)
    mem = Memory(sim, "mem", 0x10000)
    fs = FlexiSaga(sim, "fs", clock=clock, region=Region("regs", 0, 0x100, "soc", "regs", ""),
                   mem_region=Region("mem", 0, 0x10000, "soc", "memory", ""),
                   params=FlexiSagaParams(rows=4, cols=4))
    fs.mem.bind(mem.socket)
    host = Module(sim, "host")
    fs.host = InitiatorSocket(host, "bus")
    fs.host.bind(fs.regs.socket)
    return sim, mem, fs


def _program(fs, job) -> None:
    """The host writes the job registers and CTRL.START over the bus."""
    from tlm import GenericPayload
    from tlm.payload import WRITE
    from accelerators.flexisaga.model.peripheral import encode_job

    async def host() -> None:
        for off, v in encode_job(job) + [(0, 1)]:
            await fs.host.b_transport(GenericPayload(WRITE, off, bytearray(v.to_bytes(4, "little"))), 0)
    fs.sim.spawn(host(), "host")


@pytest.mark.parametrize("dataflow", ["dOS", "sWS", "csOS", "sIS"])
def test_register_programmed_job_matches_numpy(dataflow: str) -> None:
    from accelerators.flexisaga.model.config import DATAFLOWS, SPARSE
    from accelerators.flexisaga.model.peripheral import FlexiSagaJob
    sim, mem, fs = _platform()
    d = make_data()
    w, i = d["weights"], d["input"]
    mem.array[0:i.nbytes] = np.frombuffer(i.tobytes(), np.uint8)
    if dataflow in SPARSE:
        image, table = pack(dataflow, w, GRID)
        mem.array[0x4000:0x4000 + image.nbytes] = np.frombuffer(image.tobytes(), np.uint8)
        mem.array[0x8000:0x8000 + table.nbytes] = np.frombuffer(table.tobytes(), np.uint8)
    else:
        mem.array[0x4000:0x4000 + w.nbytes] = np.frombuffer(w.tobytes(), np.uint8)
    job = FlexiSagaJob(DATAFLOWS.index(dataflow), M, K, N, 0x4000, 0x8000, 0, N, 0xA000, N)
    _program(fs, job)
    sim.run()
    out = np.frombuffer(bytes(mem.array[0xA000:0xA000 + M * N * 4]), np.float32).reshape(M, N)
    assert np.array_equal(out, d["expected"])
    assert fs.regs.read_reg(fs.regs["STATUS"]) == 0b10      # DONE, not busy, no error
    rec = fs.jobs[0]
    assert rec.end - rec.start >= (2 + estimate(dataflow, w, N, GRID).cycles) * fs.clock.period


@pytest.mark.parametrize("change,code", [
    ({"dataflow": 9}, 1), ({"n": 0}, 2), ({"o_base": 0xFFF0}, 3), ({"accumulate": True}, 5),
    ({"w_tile_table": 0x9000}, 4)])
def test_bad_jobs_are_refused_with_a_code(change: dict, code: int) -> None:
    from dataclasses import replace

    from accelerators.flexisaga.model.peripheral import FlexiSagaJob
    sim, mem, fs = _platform()
    d = make_data()
    image, table = pack("sOS", d["weights"], GRID)
    mem.array[0x4000:0x4000 + image.nbytes] = np.frombuffer(image.tobytes(), np.uint8)
    mem.array[0x8000:0x8000 + table.nbytes] = np.frombuffer(table.tobytes(), np.uint8)
    # at 0x9000 a table naming, for every tile, an image at 0x6000 whose column 0 is marked
    # non-zero in all four rows but whose values are zero: not a two-stage bitmap of W
    bad = np.array([1, 0xF, 0, 0, 0, 0], dtype=np.uint32)
    mem.array[0x6000:0x6000 + bad.nbytes] = np.frombuffer(bad.tobytes(), np.uint8)
    tab = np.full(6, (0x6000 - 0x4000) // 4, dtype=np.uint32)
    mem.array[0x9000:0x9000 + tab.nbytes] = np.frombuffer(tab.tobytes(), np.uint8)
    job = replace(FlexiSagaJob(3, M, K, N, 0x4000, 0x8000, 0, N, 0xA000, N), **change)
    _program(fs, job)
    sim.run()
    status = fs.regs.read_reg(fs.regs["STATUS"])
    assert status & 0b110 == 0b110 and (status >> 8) & 0xFF == code, fs.reason
    assert fs.jobs[0].error == code
    assert not mem.array[0xA000:0xA000 + M * N * 4].any()   # nothing written


if __name__ == "__main__":  # regenerate the scenario's data files
    DATA.mkdir(parents=True, exist_ok=True)
    for k, v in make_data().items():
        if k != "weights":
            np.save(DATA / f"{k}.npy", v)


def test_csos_refuses_a_column_index_its_csb_entries_cannot_hold():
    """A csOS strip wider than a signed CSB index reaches is refused, not wrapped."""
    from accelerators.flexisaga.model.tiles import TileFormatError
    w = np.zeros((4, 200), dtype=np.float32)
    w[:, 150] = 1.0                       # column 150 > 127, the largest signed 8-bit index
    with pytest.raises(TileFormatError, match="column index 150 does not fit a signed 8-bit"):
        pack("csOS", w, ArrayConfig(rows=4, cols=4))
    image, _ = pack("csOS", w, ArrayConfig(rows=4, cols=4, csb_index_bits=9))
    assert image.size > 0
