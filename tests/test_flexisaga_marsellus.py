"""FlexiSAGA inside MARSELLUS' cluster (``cluster.flexisaga.enabled``): the library scenario's
outputs against numpy computed here (conv by direct loops, not im2col), the pruning the
scenario asks for, both TCDM branches contending, the ``flexisaga`` task's keys and their
located errors, and nothing of it unless enabled."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from components.marsellus.facts import MEMORY_MAP
from components.marsellus.platform import Marsellus
from accelerators.flexisaga.task import gemm_shape, im2col, make_layer
from cosim.runner import run_here
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text
from tlm import Simulator

TCDM = MEMORY_MAP["tcdm"].base


def _conv_direct(w: np.ndarray, x: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """(C_out, H_out*W_out) of a convolution by explicit loops, in float64."""
    co, ci, k, _ = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad)))
    ho = (x.shape[1] + 2 * pad - k) // stride + 1
    out = np.zeros((co, ho, ho))
    for oy in range(ho):
        for ox in range(ho):
            patch = xp[:, oy * stride:oy * stride + k, ox * stride:ox * stride + k]
            out[:, oy, ox] = np.tensordot(w.astype(np.float64), patch, axes=3)
    return out.reshape(co, -1)


@pytest.mark.parametrize("stride,pad,kernel", [(1, 1, 3), (2, 0, 3), (1, 0, 1)])
def test_im2col_product_equals_direct_convolution(stride, pad, kernel):
    rng = np.random.default_rng(5)
    w = rng.integers(-3, 4, size=(4, 3, kernel, kernel))
    x = rng.integers(-3, 4, size=(3, 7, 7))
    got = w.reshape(4, -1) @ im2col(x, kernel, stride, pad)
    assert np.array_equal(got, _conv_direct(w, x, stride, pad))


def test_marsellus_flexisaga_scenario_is_bit_exact_and_contends(tmp_path: Path) -> None:
    sc = load_scenario("marsellus_flexisaga")
    rep, run, _ = run_here(sc, tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed" and all(c["passed"] for c in d["checks"]), d["checks"]
    plat = run.platform
    cfg = plat.flexisaga.cfg
    tasks = {t["id"]: t for t in sc.tasks}
    # the group defaults reached the tasks; the FC layer's own sparsity won
    conv = tasks["fs_conv"]
    assert (conv["sparsity"], conv["vector"], conv["orientation"]) == (0.7, 8, "col")
    assert (tasks["fs_fc"]["sparsity"], tasks["fs_fc"]["orientation"]) == (0.8, "row")
    for tid in ("fs_conv", "fs_fc"):
        t = tasks[tid]
        m, k, n = gemm_shape(t)
        layer = make_layer(t, sc.seed, cfg)
        detail = d["tasks"][tid]
        # O follows W's image, its table and I
        o_at = TCDM + int(t["at"].split("+")[1], 16) + 4 * (layer.image.size + layer.table.size + k * n)
        got = np.frombuffer(plat.dump("soc", o_at, 4 * m * n), dtype=np.float32).reshape(m, n)
        want = layer.w.astype(np.float64) @ layer.i.astype(np.float64)
        assert np.array_equal(got, want.astype(np.float32))
        # the pruning: the requested fraction of the vectors are all zero
        vec, orient = t["vector"], t["orientation"]
        mat = layer.w if orient == "col" else layer.w.T
        rows = -(-mat.shape[0] // vec)
        padded = np.zeros((rows * vec, mat.shape[1]), dtype=np.float32)
        padded[:mat.shape[0]] = mat
        zero_vecs = np.count_nonzero(~padded.reshape(rows, vec, -1).any(axis=1))
        assert zero_vecs >= int(np.floor(t["sparsity"] * rows * mat.shape[1]))
        assert detail["m"] == m and detail["k"] == k and detail["n"] == n
        assert detail["dataflow"] == layer.dataflow and detail["cycles"] > 0
    assert tasks["fs_conv"]["conv"]["c_in"] * 9 == gemm_shape(tasks["fs_conv"])[1]
    # both branches moved their words and waited for banks the other one held
    st = rep.stats["cluster.tcdm"]
    assert st["accel1.conflicts"] > 0 and st["rbe.conflicts"] > 0
    assert st["accel1.words"] * 4 == st["accel1.bytes"]
    acc = d["extra"]["accelerators"]["cluster.flexisaga"]
    assert acc["jobs"] == 2 and acc["errors"] == 0


def test_flexisaga_alone_has_no_accelerator_conflicts(tmp_path: Path) -> None:
    text = (Path(load_scenario("marsellus_flexisaga").file)).read_text()
    keep = text.splitlines(keepends=True)
    # drop the RBE task and the RBE checks: FlexiSAGA alone on the TCDM
    start = next(i for i, ln in enumerate(keep) if "- id: rbe_conv" in ln)
    end = next(i for i, ln in enumerate(keep) if "- id: fs_conv" in ln)
    body = keep[:start] + keep[end:]
    cut = next(i for i, ln in enumerate(body) if ln.startswith("checks:"))
    body = body[:cut] + ["checks:\n", "  - no_tlm_errors: true\n"]
    sc = load_scenario_text("".join(body), file=Path(load_scenario("marsellus_flexisaga").file))
    rep, _, _ = run_here(sc, tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed", d["checks"]
    st = rep.stats["cluster.tcdm"]
    assert st["accel1.conflicts"] == 0 and "rbe.conflicts" not in st


BASE = """name: t
platform:
  preset: marsellus
  overrides: {cluster.flexisaga.enabled: true}
workload:
  tasks:
"""


@pytest.mark.parametrize("task,key,message", [
    ("{id: a, op: flexisaga, kind: fc, m: 4, k: 4, at: tcdm, sparsity: 1.0}",
     "workload.tasks[0].sparsity", "exclusiveMaximum"),
    ("{id: a, op: flexisaga, kind: fc, m: 4, k: 4, at: tcdm, sparsity: -0.1}",
     "workload.tasks[0].sparsity", "minimum"),
    ("{id: a, op: flexisaga, kind: conv, m: 4, k: 4, at: tcdm}",
     "workload.tasks[0].kind", "conv"),
    ("{id: a, op: flexisaga, kind: fc, m: 4, at: tcdm}", "workload.tasks[0].kind", "m and k"),
])
def test_bad_flexisaga_tasks_are_located(task, key, message):
    text = BASE + "    - " + task + "\n"
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(text, file=Path("/scen/t.yaml"))
    s = str(e.value)
    assert key in s and message in s and "t.yaml:7" in s, s


def test_group_sparsity_out_of_range_is_located():
    text = BASE.replace("workload:\n", "workload:\n  flexisaga:\n    conv: {sparsity: 1.5}\n") + \
        "    - {id: a, op: flexisaga, kind: fc, m: 4, k: 4, at: tcdm}\n"
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(text, file=Path("/scen/t.yaml"))
    s = str(e.value)
    assert "workload.flexisaga.conv.sparsity" in s and "t.yaml:7" in s and "1.5" in s, s


def test_task_without_flexisaga_fails_and_says_how(tmp_path: Path) -> None:
    text = BASE.replace("  overrides: {cluster.flexisaga.enabled: true}\n", "") + \
        "    - {id: a, op: flexisaga, kind: fc, m: 4, k: 4, at: tcdm}\n"
    rep, _, _ = run_here(load_scenario_text(text), tmp_path)
    d = rep.as_dict()
    bad = [c for c in d["checks"] if c["name"] == "tasks"][0]
    assert not bad["passed"] and "cluster.flexisaga.enabled" in bad["detail"]


def test_no_flexisaga_unless_enabled() -> None:
    sim = Simulator()
    plat = Marsellus(sim, {})
    assert plat.flexisaga is None and "flexisaga" not in plat.irq
    assert "accel1" not in plat.ms.tcdm.ports
    assert not any(p.startswith("cluster.flexisaga") for p in sim.modules)


def test_enabled_flexisaga_gets_a_branch_as_wide_as_its_decu() -> None:
    plat = Marsellus(Simulator(), {"cluster.flexisaga.enabled": True, "cluster.flexisaga.mem_ports": 4})
    assert plat.ms.tcdm.ports["accel1"].width == 16 and plat.params["cluster.tcdm"].accel_ports == 2
    plat = Marsellus(Simulator(), {"cluster.flexisaga.enabled": True,
                                   "cluster.tcdm": {"accel_ports": 3, "accel_port_bytes": 64}})
    assert plat.ms.tcdm.ports["accel1"].width == 64 and "accel2" in plat.ms.tcdm.ports


def test_flexisaga_is_a_registered_platform(tmp_path: Path) -> None:
    from cosim.platforms import PLATFORMS
    from cosim.platforms.parameters import platform_tables
    assert "flexisaga" in PLATFORMS and "`soc.flexisaga.rows`" in platform_tables("flexisaga")[0]
    gemm = load_scenario("flexisaga_gemm")
    text = Path(gemm.file).read_text().replace("file: platforms/flexisaga.yaml", "preset: flexisaga")
    by_name, _, _ = run_here(load_scenario_text(text, file=Path(gemm.file)), tmp_path / "a")
    by_file, _, _ = run_here(gemm, tmp_path / "b")
    a, b = by_name.as_dict(), by_file.as_dict()
    assert a["status"] == "passed" and a["sim_time_ps"] == b["sim_time_ps"]
    assert [c["passed"] for c in a["checks"]] == [c["passed"] for c in b["checks"]]


def test_flexisaga_task_on_the_standalone_platform(tmp_path: Path) -> None:
    text = ("name: t\nplatform: flexisaga\nworkload:\n  flexisaga: {fc: {sparsity: 0.5}}\n  tasks:\n"
            "    - {id: a, op: flexisaga, kind: fc, m: 12, k: 20, n: 3, dataflow: csOS, at: tcdm}\n"
            "    - {id: b, op: flexisaga, kind: conv, conv: {c_in: 2, c_out: 5, size: 5, stride: 2},"
            " dataflow: dWS, sparsity: 0.3, vector: 1, at: tcdm+0x2000}\n")
    rep, run, _ = run_here(load_scenario_text(text), tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed", d["checks"]
    assert d["tasks"]["a"]["dataflow"] == "csOS" and d["tasks"]["b"]["dataflow"] == "dWS"
    assert run.platform.blocks["flexisaga"].cfg.rows == 4


def test_flexisaga_task_on_integer_pes(tmp_path: Path) -> None:
    """With ``pe_dtype: int`` the task writes I as integer words and compares O as the
    integer product wrapped to the PE word (it used to write and read fp32 patterns)."""
    plat = Path(__file__).resolve().parents[1] / "scenarios" / "platforms" / "flexisaga_onnx.yaml"
    text = (f"name: t\nplatform: {{file: {plat}}}\nworkload:\n  tasks:\n"
            "    - {id: a, op: flexisaga, kind: fc, m: 12, k: 20, n: 3, dataflow: sOS, sparsity: 0.5, at: tcdm}\n"
            "    - {id: b, op: flexisaga, kind: conv, conv: {c_in: 2, c_out: 5, size: 5}, dataflow: dOS,"
            " values: 64, at: tcdm+0x4000}\n")
    rep, run, _ = run_here(load_scenario_text(text), tmp_path)
    d = rep.as_dict()
    assert run.platform.blocks["flexisaga"].cfg.pe_dtype == "int"
    assert d["status"] == "passed", (d["checks"], d["tasks"])


def test_scenario_groups_drive_the_workload_pruning() -> None:
    from accelerators.flexisaga.model.config import ArrayConfig
    from accelerators.flexisaga.model.workloads import Operator, from_groups, prune
    ops = [Operator("c", "conv", 16, 36, 9), Operator("f", "fc", 12, 40, 1)]
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal((op.m, op.k)).astype(np.float32) + 5 for op in ops]  # no zeros
    v = from_groups("s", {"conv": {"sparsity": 0.5, "vector": 4, "orientation": "col"},
                          "fc": {"sparsity": 0.75, "orientation": "row"}})
    cfg = ArrayConfig(rows=4, cols=5)
    conv, fc = prune(ops, ws, v, cfg)
    # CONV: half of the 4-tall column vectors (16 rows -> 4 per column, 36 columns) are zero
    blocks = conv.reshape(4, 4, 36)
    assert np.count_nonzero(~blocks.any(axis=1)) == 72 and np.count_nonzero(conv) == 16 * 36 // 2
    # FC: row vectors as wide as the grid's 5 columns, 3/4 of the 12 x 8 of them zero
    rows = fc.reshape(12, 8, 5)
    assert np.count_nonzero(~rows.any(axis=2)) == 72
    assert np.all((rows == 0).all(axis=2) | (rows != 0).all(axis=2))


def test_bench_refuses_a_scenario_with_a_bad_sparsity(tmp_path: Path) -> None:
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE.replace("workload:\n", "workload:\n  flexisaga:\n    fc: {sparsity: 1.0}\n")
                   + "    - {id: a, op: flexisaga, kind: fc, m: 4, k: 4, at: tcdm}\n")
    r = subprocess.run([sys.executable, str(root / "bench" / "flexisaga.py"), "--scenario", str(bad)],
                       capture_output=True, text=True, cwd=root, timeout=120)
    assert r.returncode == 2 and "bad.yaml:7" in r.stderr and "workload.flexisaga.fc.sparsity" in r.stderr


def test_flexisaga_energy_is_the_formula_over_its_executed_macs(tmp_path: Path) -> None:
    """power.yaml's ``flexisaga`` class (the RBE-derived coefficients, docs/power.md): per
    job, executed MACs x (mac + W^2 bitop) + (setup + compute cycles) x rows x cols x
    pe_cycle, W = the PE word width, scaled by the cluster's (V/Vref)^2."""
    rep, run, _ = run_here(load_scenario("marsellus_flexisaga"), tmp_path)
    assert rep.status == "passed"
    plat = run.platform
    acc = plat.flexisaga
    e = plat.pmu.model.energy_per
    c = {k: e("flexisaga", k) for k in ("mac", "bitop", "pe_cycle")}
    assert c == pytest.approx({"mac": 2 * e("rbe", "op"), "bitop": e("rbe", "bitop"),
                               "pe_cycle": e("rbe", "cycle") / 805}, rel=2e-3)
    jobs = [j for j in acc.jobs if not j.error]
    assert len(jobs) == 2
    macs = sum(j.cycles.macs for j in jobs)
    cycles = sum(acc.params.setup + j.cycles.cycles for j in jobs)
    w, pes = acc.cfg.word_bits, acc.cfg.rows * acc.cfg.cols
    # the pruned conv skips weights: fewer MACs executed than the dense product has
    assert macs < sum(j.cycles.dense_macs for j in jobs)
    vdd, vref = plat.pmu.domains["cluster"].vdd, plat.pmu.model.vref
    want_pj = (macs * (c["mac"] + w * w * c["bitop"]) + cycles * pes * c["pe_cycle"]) * (vdd / vref) ** 2
    assert rep.energy["per_class_j"]["flexisaga"] == pytest.approx(want_pj * 1e-12, rel=1e-9)
    assert rep.energy["per_component_j"]["cluster.flexisaga"] == pytest.approx(want_pj * 1e-12, rel=1e-9)
