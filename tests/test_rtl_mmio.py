"""``mmio`` writes without a generator script (issue 22): integer expressions over
constants and earlier reads, and register images from .npy/.bin files (cosim/mmio.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rtl_scenario_support import _isolated  # noqa: F401
from cosim.mmio import ExprError, evaluate, image_words

ROOT = Path(__file__).resolve().parents[1]
APB = 0x1A120000          # rtl_peripherals' APB register file: REG0..REG7, ID at 0x20
ID_VALUE = 0xA9B00001


@pytest.mark.parametrize("text, env, want", [
    ("(3 << 16) | 0x40", {}, 0x30040),
    ("N - 1", {"N": 16}, 15),
    ("~0", {}, 0xFFFFFFFF),
    ("-1", {}, 0xFFFFFFFF),
    ("A // 3 + A % 3 * 0x100", {"A": 17}, 5 + 2 * 256),
    ("(ID >> 16) ^ 0xFF & 0x0F", {"ID": ID_VALUE}, 0xA9B0 ^ 0x0F),
    ("0b1010 << 28 >> 4", {}, 0x0A000000),
])
def test_expressions_follow_integer_arithmetic(text, env, want):
    assert evaluate(text, env) == want


@pytest.mark.parametrize("text, message", [
    ("__import__('os').system('true')", "is not allowed"),
    ("N.real", "'N.real' is not allowed"),
    ("2 ** 8", "the operator in '2 ** 8' is not allowed"),
    ("1 if N else 2", "is not allowed"),
    ("1.5", "the literal 1.5 is not allowed"),
    ("True", "the literal True is not allowed"),
    ("[1][0]", "is not allowed"),
    ("1 << 100000", "shift by 100000"),
    ("N // 0", "division by zero in 'N // 0'"),
    ("0xFFFFFFFF * 0xFFFFFFFF * 0xFFFFFFFF", "exceeds 2**64"),
    ("1 << 32", "does not fit a 32-bit register"),
    ("M + 1", "'M' is neither a constant"),
    ("N +", "is not valid"),
])
def test_anything_else_is_refused(text, message):
    with pytest.raises(ExprError) as e:
        evaluate(text, {"N": 4})
    assert message in str(e.value)


def test_image_words_from_npy_and_bin(tmp_path):
    rng = np.random.default_rng(5)
    a = rng.integers(-2**31, 2**31, size=(3, 5), dtype=np.int64).astype(np.int32)
    np.save(tmp_path / "a.npy", a)
    assert image_words(tmp_path / "a.npy", None) == [int(v) % 2**32 for v in a.ravel()]
    b = rng.integers(0, 2**16, size=7, dtype=np.int64).astype("<u2")
    (tmp_path / "b.bin").write_bytes(b.tobytes())
    assert image_words(tmp_path / "b.bin", "uint16") == [int(v) for v in b]
    with pytest.raises(ExprError, match="holds int32, but dtype says uint32"):
        image_words(tmp_path / "a.npy", "uint32")
    with pytest.raises(ExprError, match="14 bytes, not a whole number of uint32"):
        image_words(tmp_path / "b.bin", None)
    np.save(tmp_path / "f.npy", np.zeros(3))
    with pytest.raises(ExprError, match="holds float64"):
        image_words(tmp_path / "f.npy", None)


def periph(tmp_path: Path, accesses: list, constants: dict | None = None):
    """rtl_peripherals' APB block alone, with one mmio task (the scenario file sits in
    tmp_path, so relative image files are looked up there)."""
    from cosim.scenario import load_scenario_text
    data = yaml.safe_load((ROOT / "scenarios" / "rtl_peripherals.yaml").read_text())
    blk = data["platform"]["rtl_blocks"]["soc.apb_regs"]
    blk["sources"] = [str(ROOT / "rtl" / "bus" / "apb_regs.sv")]
    data["platform"]["rtl_blocks"] = {"soc.apb_regs": blk}
    task = {"op": "mmio", "id": "prog", "accesses": accesses}
    if constants:
        task["constants"] = constants
    data["workload"] = {"tasks": [task]}
    data["checks"] = [{"no_tlm_errors": True}]
    text = yaml.safe_dump(data, sort_keys=False)
    (tmp_path / "mmio.yaml").write_text(text)
    return load_scenario_text(text, tmp_path / "mmio.yaml")


def test_image_and_expressions_program_an_rtl_block(tmp_path):
    """Seven registers from a .npy image, the eighth from an expression over a constant and
    the block's ID read back with 'as'; every register reads back what numpy and Python
    integer arithmetic say it must hold."""
    from cosim.launch import run_scenario
    image = np.random.default_rng(22).integers(0, 2**32, size=7, dtype=np.uint64).astype(np.uint32)
    np.save(tmp_path / "regs.npy", image)
    k = 0x5A
    reg7 = ((ID_VALUE >> 16) | (k << 24)) ^ int(image[0])
    accesses = [{"read": APB + 0x20, "as": "ID"},
                {"write": APB, "values": {"file": "regs.npy", "dtype": "uint32"}},
                {"read": APB, "as": "R0"},
                {"write": APB + 0x1C, "value": {"expr": "((ID >> 16) | (K << 24)) ^ R0"}}]
    accesses += [{"read": APB + 4 * r, "expect": int(v)} for r, v in enumerate(image)]
    accesses += [{"read": APB + 0x1C, "expect": reg7}]
    rep = run_scenario(periph(tmp_path, accesses, {"K": k}), out_dir=tmp_path / "out",
                       plots=False)
    assert rep.status == "passed", (rep.error, rep.checks)
    blk = rep.extra["rtl"]["blocks"]["soc.apb_regs"]
    assert blk["writes"] == 8 and blk["reads"] == 2 + 8


@pytest.mark.parametrize("access, constants, key, message", [
    ({"write": APB, "value": {"expr": "(1 << "}}, None, "accesses[0].value.expr", "is not valid"),
    ({"write": APB, "value": {"expr": "open('x')"}}, None, "accesses[0].value.expr",
     "'open('x')' is not allowed"),
    ({"write": APB, "value": {"expr": "N + LATER"}}, {"N": 1}, "accesses[0].value.expr",
     "'LATER' is neither a constant"),
    ({"write": APB, "values": {"file": "missing.npy"}}, None, "accesses[0].values.file",
     "file not found: missing.npy"),
    ({"write": APB, "values": {"file": "regs.bin", "dtype": "uint32"}}, None, "accesses[0].values",
     "regs.bin has 6 bytes, not a whole number of uint32"),
    ({"write": APB, "values": {"file": "regs.bin", "dtype": "float32"}}, None,
     "accesses[0]", "'dtype': 'float32'}} is not valid"),       # the schema's enum
    ({"read": APB, "as": "N"}, {"N": 1}, "accesses[0].as", "hides the task's constant"),
])
def test_bad_values_are_located_errors(tmp_path, access, constants, key, message):
    from cosim.scenario import ScenarioError
    (tmp_path / "regs.bin").write_bytes(bytes(6))
    with pytest.raises(ScenarioError) as e:
        periph(tmp_path, [access, {"read": APB, "as": "LATER"}], constants)
    text = str(e.value)
    assert message in text and f"workload.tasks[0].{key}" in text and "mmio.yaml:" in text, text
