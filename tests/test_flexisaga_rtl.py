"""The FlexiSAGA RTL (rtl/flexisaga, Amaranth -> Verilog -> Verilator) against the step model
(accelerators/flexisaga/model/array.py) on small integer GEMMs: dOS, dWS, dIS and sOS, several
shapes (edge tiles, several K blocks for WS/IS, K over 32 columns, all-zero strips,
full-range values that wrap), sparsities and two array configurations (generator
parameters). Output words bit-exact (and equal to numpy's
wrapped integer product), cycles, MACs and DecU words equal. One simulation per array."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rtl_scenario_support import _isolated  # noqa: F401

from accelerators.flexisaga.model.array import run_gemm  # noqa: E402
from accelerators.flexisaga.model.config import ArrayConfig  # noqa: E402
from accelerators.flexisaga.model.tiles import pack  # noqa: E402
from cosim.rtl import build, run_tests  # noqa: E402
from accelerators.flexisaga.rtl.transactor import array_block  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: (rows, cols, mem_ports, mem_latency); the first is the flexisaga platform's array
ARRAYS = [(4, 4, 8, 1), (3, 2, 3, 0)]
#: (dataflow, M, K, N, zero fraction, value bound, seed)
CASES = {
    (4, 4, 8, 1): [("dOS", 6, 10, 5, 0.0, 100, 1), ("dOS", 4, 4, 4, 0.3, 2 ** 31, 2),
                   ("sOS", 9, 40, 7, 0.6, 1000, 3), ("sOS", 10, 12, 6, 0.5, 100, 4),
                   ("sOS", 5, 6, 3, 0.0, 2 ** 31, 5), ("sOS", 4, 8, 4, 1.0, 100, 6),
                   ("dWS", 9, 10, 5, 0.3, 100, 11), ("dIS", 6, 9, 7, 0.3, 2 ** 31, 12)],
    (3, 2, 3, 0): [("dOS", 5, 7, 3, 0.2, 100, 7), ("sOS", 7, 33, 5, 0.7, 2 ** 20, 8),
                   ("sOS", 3, 1, 1, 0.0, 100, 9), ("dOS", 1, 1, 1, 0.0, 2 ** 31, 10),
                   ("dWS", 5, 7, 3, 0.2, 2 ** 31, 13), ("dIS", 7, 4, 5, 0.0, 100, 14), ("dWS", 1, 1, 1, 0.0, 100, 15)],
}


def u32(a: np.ndarray) -> np.ndarray:
    return (np.asarray(a, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def operands(case: tuple, cfg: ArrayConfig) -> tuple[np.ndarray, np.ndarray]:
    df, m, k, n, zeros, bound, seed = case
    rng = np.random.default_rng(seed)
    w = rng.integers(-bound, bound, (m, k))
    w[rng.random((m, k)) < zeros] = 0
    if zeros and k > 2:
        w[:, rng.permutation(k)[:k // 3]] = 0          # whole zero columns for sOS to skip
        if m > cfg.rows:
            w[cfg.rows:2 * cfg.rows] = 0                # an all-zero strip (no column at all)
    return w, rng.integers(-bound, bound, (k, n))


def job(case: tuple, cfg: ArrayConfig) -> dict:
    """The handler's job: image (tile table, W, I with a row pitch > N) and job ports."""
    df, m, k, n = case[:4]
    w, i = operands(case, cfg)
    if df == "sOS":
        tiles, table = pack("sOS", w, cfg)
    else:
        tiles, table = u32(w).reshape(-1), np.zeros(0, dtype=np.uint32)
    ldi, ldo = n + 1, n + 2
    ipad = np.zeros((k, ldi), dtype=np.uint32)
    ipad[:, :n] = u32(i)
    wb, ib = table.size, table.size + tiles.size
    ob = ib + ipad.size
    image = np.concatenate([table, tiles, ipad.reshape(-1)]).astype("<u4").tobytes()
    regs = {"dataflow": {"dOS": 0, "dWS": 1, "dIS": 2, "sOS": 3}[df], "m": m, "k": k, "n": n, "w_base": wb,
            "w_table": 0, "i_base": ib, "ldi": ldi, "o_base": ob, "ldo": ldo}
    return {"image": image.hex(), "regs": regs, "out": [[ob + r * ldo, n] for r in range(m)]}


@pytest.mark.timeout(900)   # a cold Verilator build of one array takes 1.5-4 min on 2 busy vCPUs
@pytest.mark.parametrize("array", [pytest.param(a, marks=pytest.mark.slow) if a[:2] == (4, 4) else a
                                   for a in ARRAYS], ids=lambda a: "x".join(map(str, a[:2])) + f"-P{a[2]}-L{a[3]}")
def test_rtl_equals_step_model(tmp_path: Path, array: tuple) -> None:
    rows, cols, ports, lat = array
    cfg = ArrayConfig(rows=rows, cols=cols, mem_ports=ports, mem_latency=lat, pe_dtype="int")
    cases = CASES[array]
    built = build(array_block(rows, cols, ports, 32, lat))
    report = tmp_path / "report.json"
    run = run_tests(built, "tests.rtl.flexisaga_tb", python_paths=[ROOT], test_dir=tmp_path / "run",
                    extra_env={"TB_CASES": json.dumps([job(c, cfg) for c in cases]), "TB_REPORT": str(report)})
    assert run.passed, run.failures()
    got = json.loads(report.read_text())
    assert len(got) == len(cases)
    for case, rtl in zip(cases, got):
        df, m, k, n = case[:4]
        w, i = operands(case, cfg)
        ref = run_gemm(df, w, i, cfg)
        out = np.array(rtl["out"], dtype=np.uint32).reshape(m, n)
        assert np.array_equal(out, u32(w @ i)), case          # numpy's product, wrapped to 32 bit
        assert np.array_equal(out, u32(ref.out)), case        # bit-exact with the step model
        assert (rtl["cycles"], rtl["macs"], rtl["reads"], rtl["writes"], rtl["error"]) == \
            (ref.cycles, ref.macs, ref.reads, ref.writes, 0), case
        if df == "sOS" and case[4]:
            assert ref.macs < m * k * n                       # zero columns were skipped


def test_generator_is_deterministic_and_keyed_by_parameters(monkeypatch, tmp_path: Path) -> None:
    """The Verilog is generated in a subprocess, lands in the cache keyed by sources +
    parameters, and is byte-identical when regenerated."""
    from accelerators.flexisaga.rtl.transactor import generated_verilog
    files = []
    for d in ("a", "b"):
        monkeypatch.setenv("TLM_COSIM_RTL_CACHE", str(tmp_path / d))
        files.append(generated_verilog(2, 2, 2, 16, 0, mem_words=256, max_k=32))
    assert files[0] != files[1] and files[0].read_bytes() == files[1].read_bytes()
    text = files[0].read_text()
    assert "module flexisaga_array(" in text
    # another parameter set is another file; the same one is reused, not regenerated
    other = generated_verilog(2, 2, 2, 16, 1, mem_words=256, max_k=32)
    assert other.parent != files[1].parent
    stamp = files[1].stat().st_mtime_ns
    assert generated_verilog(2, 2, 2, 16, 0, mem_words=256, max_k=32).stat().st_mtime_ns == stamp
