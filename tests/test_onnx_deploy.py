"""ONNX deployment: the library scenario's model regenerates byte for byte, scenarios with
``network: {onnx: ...}`` run on MARSELLUS and pass the onnxruntime checks, the report says
per ONNX node where it ran, `cosim import` writes the description, bad input is located."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import yaml

from cosim import checks
from cosim.onnx import builders

ROOT = Path(__file__).resolve().parents[1]


def cosim(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def _run(tmp_path: Path, scenario: Path) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "out"
    r = cosim("run", str(scenario), "--out", str(out), "--quiet", "--no-plots")
    rep = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return r, rep


def test_the_library_model_regenerates_byte_for_byte():
    r = subprocess.run([sys.executable, "scenarios/data/onnx_tiny_make.py", "--check"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_library_scenario_matches_onnxruntime_and_reports_every_node(tmp_path):
    r, rep = _run(tmp_path, ROOT / "scenarios" / "onnx_tiny.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    res = {c["name"]: c for c in rep["checks"]}
    assert res["network == onnxruntime (bit for bit)"]["passed"]
    assert res["network == numpy reference"]["passed"] and res["tasks"]["passed"]
    layers = rep["extra"]["layers"]
    model = onnx.load(str(ROOT / "scenarios" / "data" / "onnx_tiny.onnx"))
    placed = {row[0]: row for row in layers["placement"]["rows"]}
    assert set(placed) == {n.name for n in model.graph.node}
    assert all(row[3] for row in placed.values())                  # each says where / why
    assert {row["layer"] for row in layers["rows"]} >= {"Conv18", "Add66", "Concat96", "Gemm124"}
    assert layers["table"]["columns"][-2:] == ["ONNX ops", "runs on"]
    concat = next(r for r in layers["table"]["rows"] if r[0] == "Concat96")
    assert concat[-1] == "DMA" and float(concat[4]) == 0.0         # no compute: DMA only


def test_qdq_resnet20_runs_on_rbe_and_cores_bit_for_bit(tmp_path):
    onnx.save(builders.resnet20(0), str(tmp_path / "r20.onnx"))
    sc = tmp_path / "r20.yaml"
    sc.write_text("name: r20\nseed: 1\nplatform: {preset: marsellus}\nworkload:\n  network: {onnx: r20.onnx}\n")
    r, rep = _run(tmp_path, sc)
    assert r.returncode == 0, r.stdout + r.stderr
    res = {c["name"]: c for c in rep["checks"]}
    assert res["network == onnxruntime (bit for bit)"]["passed"]
    assert res["network == onnxruntime (bit for bit)"]["detail"] == "32 tensors identical"
    rows = rep["extra"]["layers"]["rows"]
    assert len(rows) == 32 and all(r["compute_ps"] > 0 for r in rows)
    # by the cycle models (tests/test_onnx_rbe.py checks each choice): some convolutions on
    # the RBE, every other layer on the cores
    runs = [r[-1] for r in rep["extra"]["layers"]["table"]["rows"]]
    assert 0 < runs.count("RBE") < 21 and runs.count("RBE") + runs.count("cores") == 32


def test_float_model_scenario_passes_its_tolerance_check(tmp_path):
    b = builders.FloatBuilder("f", (3, 8, 8), seed=1)
    x = b.conv(b.x, 8)
    y = b.conv(b.conv(x, 8, groups=8), 8, k=1, relu=False)
    model = b.head(b.add(y, x), 5)
    onnx.save(model, str(tmp_path / "f.onnx"))
    sc = tmp_path / "f.yaml"
    sc.write_text("name: f\nseed: 2\nplatform: {preset: marsellus}\nworkload:\n  network: {onnx: f.onnx}\n")
    r, rep = _run(tmp_path, sc)
    assert r.returncode == 0, r.stdout + r.stderr
    names = {c["name"]: c["passed"] for c in rep["checks"]}
    floats = [n for n in names if n.startswith("network ~ onnxruntime float")]
    assert floats and names[floats[0]] and names["network == onnxruntime (bit for bit)"]


class _Memory:
    """The outcome's memory interface over a bytearray (to feed the check a corrupted tensor)."""

    def __init__(self, base: int, data: bytearray):
        self.base, self.data = base, data

    def memory(self, space: str, addr: int, size: int) -> bytes:
        return bytes(self.data[addr - self.base: addr - self.base + size])


def test_the_onnxruntime_check_fails_on_one_wrong_byte():
    goldens = {"t": (100, bytes(range(16)))}
    ok = checks._onnxruntime(_Memory(100, bytearray(range(16))), {"goldens": goldens})
    bad = bytearray(range(16))
    bad[5] ^= 1
    nok = checks._onnxruntime(_Memory(100, bad), {"goldens": goldens})
    assert ok.passed and not nok.passed and "+0x5" in nok.detail and "docs/onnx.md" not in nok.detail
    unproven = checks._onnxruntime(_Memory(100, bad), {"goldens": goldens, "proven": False})
    assert "outside the provably exact form" in unproven.detail


def test_cosim_import_writes_the_description(tmp_path):
    out = tmp_path / "net.yaml"
    r = cosim("import", "scenarios/data/onnx_tiny.onnx", "-o", str(out))
    assert r.returncode == 0, r.stderr
    d = yaml.safe_load(out.read_text())
    assert d["input"] == {"name": d["input"]["name"], "h": 8, "w": 8, "c": 4, "scale": 0.0625,
                          "zero_point": 0, "type": "int8"}
    assert [ly["type"] for ly in d["layers"]] == ["conv", "conv", "conv", "add", "conv", "concat", "pool", "fc"]
    dw = d["layers"][1]
    assert dw["groups"] == 8 and dw["weights"]["shape"] == [8, 3, 3, 8] and len(dw["requant"]["scale"]) == 8
    assert all(ly["exact_vs_onnxruntime"] for ly in d["layers"])
    assert len(d["placement"]) == len(onnx.load(str(ROOT / "scenarios/data/onnx_tiny.onnx")).graph.node)


def test_cosim_import_quantises_a_float_model(tmp_path):
    onnx.save(builders.mobilenet_float(0), str(tmp_path / "f.onnx"))
    r = cosim("import", str(tmp_path / "f.onnx"), "--seed", "3")
    assert r.returncode == 0, r.stderr
    d = yaml.safe_load(r.stdout)
    assert d["quantised_on_import"] is True
    assert [ly["groups"] for ly in d["layers"] if ly["type"] == "conv"] == [1, 8, 1, 16, 1, 16, 1]
    bns = [p for p in d["placement"] if p["op"] == "BatchNormalization"]
    convs = {ly["name"] for ly in d["layers"] if ly["type"] == "conv"}
    assert len(bns) == 7 and all(p["layer"] in convs and "folded into" in p["how"] for p in bns)


def test_cosim_import_bad_input_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "x.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    r = cosim("import", str(bad))
    assert r.returncode == 2 and "x.onnx" in r.stderr and "Traceback" not in r.stderr
    r = cosim("import", "scenarios/data/onnx_tiny.onnx", "--input-shape", "1,x")
    assert r.returncode == 2 and "--input-shape" in r.stderr


def test_scenario_errors_are_located(tmp_path):
    head = "name: s\nplatform: {preset: marsellus}\nworkload:\n  network:\n"
    (tmp_path / "bad.onnx").write_bytes(b"\x01\x02\x03")
    sc = tmp_path / "s.yaml"
    sc.write_text(head + "    onnx: bad.onnx\n")
    r = cosim("run", str(sc), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "s.yaml:5" in r.stderr and "not an ONNX model" in r.stderr
    # one `cosim validate` of four files (one process): each refused at its own line
    cases = {"missing": ("    onnx: nope.onnx\n", ":5:", "nope.onnx"),
             "layers": ("    onnx: bad.onnx\n    layers: []\n", ":6:", "layers"),
             "convs": ("    onnx: bad.onnx\n    convs_on: gpu\n", ":6:", "convs_on"),
             "preset": ("    preset: resnet20_cifar\n    convs_on: rbe\n", ":4:", "unknown key(s) convs_on")}
    for name, (body, _, _) in cases.items():
        (tmp_path / f"{name}.yaml").write_text(head + body)
    r = cosim("validate", *(str(tmp_path / f"{name}.yaml") for name in cases))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = (r.stdout + r.stderr).splitlines()
    for name, (_, line, words) in cases.items():
        mine = [ln for ln in lines if f"{name}.yaml{line}" in ln]
        assert len(mine) == 1 and words in mine[0], (name, lines)


def test_dynamic_input_shape_given_in_the_scenario(tmp_path):
    m = builders.tiny(1)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(m, str(tmp_path / "d.onnx"))
    sc = tmp_path / "d.yaml"
    base = "name: d\nplatform: {preset: marsellus}\nworkload:\n  network:\n    onnx: d.onnx\n"
    sc.write_text(base)
    r = cosim("validate", str(sc))
    assert r.returncode == 2 and "d.yaml:5" in r.stdout and "dynamic shape" in r.stdout and "'N'" in r.stdout
    sc.write_text(base + "    input_shape: [1, 4, 8, 8]\n")
    r = cosim("validate", str(sc))
    assert r.returncode == 0, r.stdout + r.stderr


def test_float_model_with_an_unsupported_op_is_named_before_calibration(tmp_path):
    b = builders.FloatBuilder("s", (3, 8, 8), seed=0)
    x = b.conv(b.x, 4)
    b.nodes[-1].op_type = "Sigmoid"
    onnx.save(b.head(x, 3), str(tmp_path / "s.onnx"))
    r = cosim("import", str(tmp_path / "s.onnx"))
    assert r.returncode == 2 and "(Sigmoid)" in r.stderr and "nearest supported: Relu" in r.stderr
