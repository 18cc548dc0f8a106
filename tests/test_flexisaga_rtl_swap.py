"""The FlexiSAGA RTL swapped into a scenario: the composed flexisaga platform's
``soc.flexisaga`` run with ``--set soc.flexisaga.model=rtl | shadow`` on an integer GEMM
(dOS and sOS), the output checked against numpy, the RTL's cycles against the cycle model,
shadow mode's comparison (and a located divergence under fault injection), and the
located errors of what the RTL does not do (fp32 PEs, other dataflows)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rtl_scenario_support import _isolated, options  # noqa: F401

from accelerators.flexisaga.model.config import ArrayConfig  # noqa: E402
from accelerators.flexisaga.model.cycles import estimate  # noqa: E402
from accelerators.flexisaga.model.pruning import prune_group  # noqa: E402
from accelerators.flexisaga.model.tiles import pack  # noqa: E402
from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import load_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "scenarios" / "platforms" / "flexisaga.yaml"
GRID = ArrayConfig(rows=4, cols=4, pe_dtype="int")     # the platform's array, integer PEs
M, K, N = 10, 24, 6
DATAFLOW = {"dOS": 0, "dIS": 2, "sOS": 3, "sWS": 4}


def operands(m: int = M, k: int = K) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    w = rng.integers(-100, 101, (m, k)).astype(np.float64)
    (w,) = prune_group([w], 0.5, GRID.rows, "col")
    return w.astype(np.int64), rng.integers(-100, 101, (k, N)).astype(np.int64)


DATA = ROOT / "scenarios" / "data" / "flexisaga_int"
LIB = (24, 40, 16)   # the library scenario flexisaga_gemm_int


def make_library_data() -> dict[str, np.ndarray]:
    """flexisaga_gemm_int's operands: int32 words, W pruned in column vectors of length R
    (zero columns for sOS to skip), sOS tiles + table, numpy's product."""
    m, k, n = LIB
    rng = np.random.default_rng(2025)
    w = rng.integers(-1000, 1001, (m, k)).astype(np.float64)
    (w,) = prune_group([w], 0.6, GRID.rows, "col")
    w = w.astype(np.int64)
    i = rng.integers(-1000, 1001, (k, n))
    tiles, table = pack("sOS", w, GRID)
    return {"input": u32(i), "tiles": tiles, "table": table, "expected": u32(w @ i), "weights": w}


def u32(a: np.ndarray) -> np.ndarray:
    return (np.asarray(a, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def test_library_data_files_are_reproducible() -> None:
    d = make_library_data()
    for name in ("input", "tiles", "table", "expected"):
        assert np.array_equal(np.load(DATA / f"{name}.npy"), d[name]), name


#: the 4x4 array with 16 Ki words per port: its cold build (Amaranth, then Verilator) takes minutes,
#: so the tests that build it are the slow set (tests/test_flexisaga_rtl.py keeps a 3x2 array fast)
BIG_BUILD = pytest.mark.slow


@pytest.mark.parametrize("model", ["tlm", pytest.param("rtl", marks=BIG_BUILD)])
def test_library_scenario_with_the_rtl_swapped_in(tmp_path: Path, model: str) -> None:
    rep = run_scenario(load_scenario("flexisaga_gemm_int", [f"soc.flexisaga.model={model}"]),
                       out_dir=tmp_path, plots=False).as_dict()
    assert rep["status"] == "passed" and len(rep["checks"]) == 4, (rep["error"], rep["checks"])
    d = make_library_data()
    fast = estimate("sOS", d["weights"], LIB[2], GRID)
    acc = rep["extra"]["accelerators"]["soc.flexisaga"]
    assert acc["jobs"] == 1 and acc["ops"] == 2 * fast.macs
    if model == "rtl":
        job = rep["extra"]["rtl"]["blocks"]["soc.flexisaga"]["jobs"][0]
        assert (job["rtl_cycles"], job["model_cycles"]) == (fast.cycles, fast.cycles)
        assert acc["cycles"] == fast.cycles + 2          # setup + the RTL's cycles


def scenario(tmp_path: Path, model: str, dataflow: str = "sOS", pe_dtype: str = "int",
             m: int = M, k: int = K) -> object:
    w, i = operands(m, k)
    np.save(tmp_path / "input.npy", u32(i))
    if dataflow == "sOS":
        tiles, table = pack("sOS", w, GRID)
    else:
        tiles, table = u32(w), np.zeros(1, dtype=np.uint32)
    np.save(tmp_path / "tiles.npy", tiles)
    np.save(tmp_path / "table.npy", table)
    np.save(tmp_path / "expected.npy", u32(w @ i))  # numpy's integer matmul: exact
    regs = [(0x08, DATAFLOW[dataflow]), (0x0C, m), (0x10, k), (0x14, N), (0x18, 0x10001000),
            (0x1C, 0x10002000), (0x20, 0x10000000), (0x24, N), (0x28, 0x10003000), (0x2C, N),
            (0x30, 2 if pe_dtype == "int" else 0), (0x00, 1)]
    sc = {"name": "flexisaga_rtl", "seed": 1, "platform": {"file": str(PLATFORM)},
          "workload": {"tasks": [
              {"id": "load_i", "op": "load", "to": "tcdm", "data": {"file": "input.npy"}},
              {"id": "load_w", "op": "load", "to": "tcdm+0x1000", "data": {"file": "tiles.npy"}},
              {"id": "load_t", "op": "load", "to": "tcdm+0x2000", "data": {"file": "table.npy"}},
              {"id": "gemm", "op": "mmio", "after": ["load_i", "load_w", "load_t"],
               "accesses": [{"write": f"flexisaga+0x{o:02x}", "value": v} for o, v in regs]
               + [{"read": "flexisaga+0x04", "until": 2, "mask": 7}]}]},
          "checks": [{"name": "output equals numpy's W @ I",
                      "memory": {"at": "tcdm+0x3000", "size": 4 * m * N, "equals_file": "expected.npy"}},
                     {"no_tlm_errors": True}]}
    path = tmp_path / "flexisaga_rtl.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    return load_scenario(path, [f"soc.flexisaga.pe_dtype={pe_dtype}", f"soc.flexisaga.model={model}"])


@BIG_BUILD
@pytest.mark.parametrize("model,dataflow", [("shadow", "sOS"), ("rtl", "dOS"), ("rtl", "dIS")])
def test_swapped_array_computes_numpy_result_in_model_cycles(tmp_path: Path, model: str, dataflow: str) -> None:
    rep = run_scenario(scenario(tmp_path, model, dataflow), out_dir=tmp_path / "out", plots=False).as_dict()
    assert rep["status"] == "passed", (rep["error"], rep["checks"])
    blk = rep["extra"]["rtl"]["blocks"]["soc.flexisaga"]
    assert blk["model"] == model and blk["block"] == "flexisaga_array" and blk["count"] == 1
    job = blk["jobs"][0]
    w, i = operands()
    fast = estimate(dataflow, w, N, GRID)
    # the RTL takes the cycle model's cycles exactly and issues its MACs and DecU words
    assert (job["rtl_cycles"], job["macs"], job["reads"], job["writes"]) == \
        (fast.cycles, fast.macs, fast.reads, fast.writes)
    assert job["model_cycles"] == fast.cycles and job["rel_diff"] == 0
    if dataflow == "sOS":   # zero columns skipped: fewer MACs than dense
        assert fast.macs < M * K * N
    if model == "shadow":
        assert blk["divergence"] is None and blk["compared"] == M * N + 4
    acc = rep["extra"]["accelerators"]["soc.flexisaga"]
    assert acc["jobs"] == 1 and acc["errors"] == 0 and acc["ops"] == 2 * fast.macs


@BIG_BUILD
def test_shadow_locates_a_wrong_output_word(monkeypatch, tmp_path: Path) -> None:
    options(monkeypatch, inject={"soc.flexisaga": {"flip": {"word": 2 * N + 3, "bit": 4}}})
    rep = run_scenario(scenario(tmp_path, "shadow"), out_dir=tmp_path / "out", plots=False).as_dict()
    assert rep["status"] == "passed"        # the data are the model's
    w, i = operands()
    div = rep["extra"]["rtl"]["blocks"]["soc.flexisaga"]["divergence"]
    good = int((w @ i)[2, 3]) & 0xFFFFFFFF
    addr = 0x10003000 + 4 * (2 * N + 3)
    assert (div["at"], div["address"], div["word_address"]) == ("job 1", "O[2,3]", f"0x{addr:08x}")
    assert (div["expected"], div["actual"]) == (f"0x{good:08x}", f"0x{good ^ 16:08x}")
    assert div["mismatched_words"] == 1 and div["mismatched_counters"] == []


@BIG_BUILD
def test_shadow_locates_a_cycle_mismatch(monkeypatch, tmp_path: Path) -> None:
    options(monkeypatch, inject={"soc.flexisaga": {"extra_cycles": 3}})
    rep = run_scenario(scenario(tmp_path, "shadow", "dOS"), out_dir=tmp_path / "out", plots=False).as_dict()
    div = rep["extra"]["rtl"]["blocks"]["soc.flexisaga"]["divergence"]
    fast = estimate("dOS", operands()[0], N, GRID)
    assert (div["address"], div["expected"], div["actual"]) == ("cycles", str(fast.cycles), str(fast.cycles + 3))


def test_what_the_rtl_does_not_do_is_a_located_error(tmp_path: Path) -> None:
    rep = run_scenario(scenario(tmp_path, "rtl", "sWS"), out_dir=tmp_path / "out", plots=False).as_dict()
    assert rep["status"] != "passed"
    assert "soc.flexisaga" in rep["error"] and "sWS is not in the RTL" in rep["error"]
    rep = run_scenario(scenario(tmp_path, "shadow", m=2, k=130), out_dir=tmp_path / "out2", plots=False).as_dict()
    assert "soc.flexisaga" in rep["error"] and "K = 130 exceeds the RTL's sOS limit of 128" in rep["error"]
    with pytest.raises(Exception, match=r"soc\.flexisaga.*integer PEs only.*pe_dtype: int"):
        from cosim.runner import build
        build(scenario(tmp_path, "rtl", pe_dtype="fp32"))



def marsellus(tmp_path: Path, model: str, dataflow: str = "sOS", enabled: bool = True) -> object:
    """The same job on MARSELLUS' cluster.flexisaga (4x4, integer PEs, beside the RBE; the
    host programs it across the crossing)."""
    scenario(tmp_path, model, dataflow)      # writes the data files and the composed scenario
    raw = yaml.safe_load((tmp_path / "flexisaga_rtl.yaml").read_text())
    raw["platform"] = {"preset": "marsellus", "overrides": {
        "cluster.flexisaga.enabled": enabled, "cluster.flexisaga.pe_dtype": "int",
        "cluster.flexisaga.rows": 4, "cluster.flexisaga.cols": 4},
        "models": {"cluster.flexisaga": model}}
    path = tmp_path / "marsellus_flexisaga_rtl.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return load_scenario(path)


@BIG_BUILD
@pytest.mark.parametrize("model,dataflow", [("shadow", "sOS"), ("rtl", "dIS")])
def test_marsellus_cluster_flexisaga_swapped_for_the_rtl(tmp_path: Path, model: str, dataflow: str) -> None:
    rep = run_scenario(marsellus(tmp_path, model, dataflow), out_dir=tmp_path / "out", plots=False).as_dict()
    assert rep["status"] == "passed", (rep["error"], rep["checks"])   # O equals numpy's W @ I
    blk = rep["extra"]["rtl"]["blocks"]["cluster.flexisaga"]
    fast = estimate(dataflow, operands()[0], N, GRID)
    assert blk["model"] == model and blk["count"] == 1
    assert (blk["jobs"][0]["rtl_cycles"], blk["jobs"][0]["model_cycles"]) == (fast.cycles, fast.cycles)
    if model == "shadow":
        assert blk["divergence"] is None


def test_marsellus_without_its_flexisaga_is_a_located_error(tmp_path: Path) -> None:
    from cosim.runner import build
    from cosim.scenario import ScenarioError
    with pytest.raises(ScenarioError, match=r"platform\.models\.cluster\.flexisaga: .*cluster\.flexisaga\.enabled"):
        build(marsellus(tmp_path, "rtl", enabled=False))
