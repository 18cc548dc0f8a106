"""One ONNX model on MARSELLUS with its RBE and a FlexiSAGA (cosim/onnx/units.py with the
pipeline's placement, docs/onnx.md "Other units on MARSELLUS"): every Conv/Gemm on the unit
whose cycle model is fastest among the cores, the RBE and FlexiSAGA, the choice and every
candidate's figures in the report; every tensor and every FlexiSAGA accumulator bit for bit
against the integer reference and onnxruntime; a unit whose operands do not fit the TCDM
refuses the node with its reason; without an extra unit the placement is today's."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "marsellus_onnx_units.yaml"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario(SCENARIO), out_dir=tmp_path_factory.mktemp("out"), plots=False)
    return {**rep.as_dict(), "stats": rep.stats}


def _argmin(cands: dict) -> str:
    costs = {n: f["time_ps"] for n, f in cands.items() if "refused" not in f}
    return min(costs, key=lambda n: costs[n])      # the first of equals, as the placement


def test_each_gemm_runs_on_the_fastest_candidate_and_several_units_win(report: dict) -> None:
    assert report["status"] == "passed", report["checks"]
    rows = [r for r in report["extra"]["layers"]["rows"] if "candidates" in r]
    assert len(rows) == 8          # the model's 7 Conv and 1 Gemm (pooling is not a GEMM)
    for r in rows:
        assert set(r["candidates"]) == {"cores", "rbe", "flexisaga"}
        assert r["placement"] == _argmin(r["candidates"]), r
        assert r["reason"].startswith(f"fastest of: {r['placement']} ")
    won = {r["placement"] for r in rows}
    assert won == {"cores", "rbe", "flexisaga"}
    on = [row[-1] for row in report["extra"]["layers"]["table"]["rows"]]
    n_fs = sum(1 for r in rows if r["placement"] == "flexisaga")
    assert on.count("flexisaga") == n_fs and report["stats"]["cluster.flexisaga"]["jobs"] == n_fs


def test_tensors_and_unit_accumulators_match_reference_and_onnxruntime(report: dict) -> None:
    res = {c["name"]: c for c in report["checks"]}
    ref, ort = res["network == numpy reference"], res["network == onnxruntime (bit for bit)"]
    assert ref["passed"] and ort["passed"]
    n_fs = sum(1 for r in report["extra"]["layers"]["rows"] if r.get("placement") == "flexisaga")
    # the 10 int8 tensors of the model plus one accumulator per FlexiSAGA job (numpy); every
    # tensor but the input plus the same accumulators of onnxruntime's own tensors
    assert ref["detail"] == f"{10 + n_fs} tensors identical"
    assert ort["detail"] == f"{9 + n_fs} tensors identical"


def _deployment(text: str, tmp_path: Path):
    from cosim.deploy import deploy_network
    from cosim.scenario import load_scenario
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "onnx_mobilenet.onnx").write_bytes((ROOT / "scenarios/data/onnx_mobilenet.onnx").read_bytes())
    (tmp_path / "sc.yaml").write_text(text)
    return deploy_network(load_scenario(tmp_path / "sc.yaml"))


def test_without_an_extra_unit_the_placement_is_the_rbe_or_cores_one(tmp_path: Path) -> None:
    text = SCENARIO.read_text().replace("    cluster.flexisaga.enabled: true\n", "")
    dep = _deployment(text, tmp_path)
    infos = [i for n, i in dep.layer_info.items() if not n.startswith("_")]
    assert not any("candidates" in i for i in infos)
    assert {i["runs_on"] for i in infos} == {"cores", "RBE"}
    assert all(i["reason"] == i["where"] for i in infos)     # place.py's own sentence, as before


def test_a_unit_whose_operands_do_not_fit_the_tcdm_refuses_with_its_reason(tmp_path: Path) -> None:
    from accelerators.cores.deployer import SITES
    from cosim.onnx.deploy import prepare
    from cosim.onnx.place import place_ops
    from cosim.onnx.reference import forward
    from cosim.onnx.units import cluster_hz, place_units, preset_units
    from cosim.scenario import load_scenario
    sc = load_scenario(SCENARIO)
    units = preset_units(sc, SITES)
    assert [u.name for u in units] == ["flexisaga"]
    _, net, x, _ = prepare(str(ROOT / "scenarios/data/onnx_mobilenet.onnx"), sc.seed)
    place_ops(net)
    vals = forward(net, x)
    place_units(net, vals, units, cluster_hz(sc), (0x10000000, 2048))      # a 2 KiB TCDM
    refused = {op.name: op.candidates["flexisaga"]["refused"] for op in net.ops
               if "refused" in op.candidates.get("flexisaga", {})}
    assert refused, "some layer's operands exceed 2 KiB"
    for name, why in refused.items():
        assert "does not fit the TCDM (2048 B" in why and name in why
    for op in net.ops:
        if op.candidates:
            assert op.target != "unit" or op.name not in refused
            assert op.reason.startswith("fastest of: ")
