"""The sweep constraint language (cosim/sweep/expr.py, docs/sweeps.md "Constraints"): every
constraint the library and the docs use still works; what could grow without bound (text
formatting, repetition, concatenation, ``**``, huge literals, deep nesting) is refused with
a message, and a sweep file with one is a located error (file, line, key) before any point
runs. No Dask needed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from cosim.scenario import ScenarioError
from cosim.sweep.expr import ConstraintError, compile_constraint, evaluate
from cosim.sweep.spec import load_sweep

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ["seed", "pmu.operating_point", "workload.network.options.stage_w_bits",
          "workload.network.options.inner_bits", "x"]
POINT = {"seed": 3, "pmu.operating_point": "low", "workload.network.options.stage_w_bits": [6, 3, 2],
         "workload.network.options.inner_bits": 4, "x": {"blocks": 1}}


def _truth(text: str, env: dict = POINT) -> bool:
    return evaluate(compile_constraint(text, PARAMS), env)


def _library_constraints() -> list[str]:
    """Every constraint of the library's sweep files and of docs/sweeps.md's examples."""
    found = []
    for f in sorted((ROOT / "scenarios" / "sweeps").glob("*.yaml")):
        found += yaml.safe_load(f.read_text()).get("constraints") or []
    doc = (ROOT / "docs" / "sweeps.md").read_text()
    found += re.findall(r'^\s+- "(.*)"$', doc.split("constraints:", 1)[1].split("metrics:", 1)[0], re.M)
    return found


def test_the_library_and_docs_constraints_compile():
    texts = _library_constraints()
    assert texts, "docs/sweeps.md shows at least one constraint"
    for text in texts:
        compile_constraint(text, PARAMS)
    assert _truth(texts[-1]) is True     # low, inner_bits 4: not excluded


@pytest.mark.parametrize("text, expected", [
    ("not (pmu.operating_point == 'low' and workload.network.options.inner_bits == 8)", True),
    ("seed % 2 == 1 and seed // 2 == 1 and seed / 2 == 1.5 and -seed < +seed", True),
    ("sum(workload.network.options.stage_w_bits) == 11 and len(workload.network.options.stage_w_bits) == 3", True),
    ("workload.network.options.stage_w_bits[0] * 2 == 12", True),
    ("'lo' in pmu.operating_point and pmu.operating_point in ['low', 'nominal']", True),
    ("x['blocks'] == 1 and len(x) == 1", True),
    ("max(seed, 5) == 5 and min([seed, 1]) == 1 and abs(-seed) == 3", True),
    ("seed if seed > 5 else 0", False),
    ("9223372036854775807 > seed * 1000", True),
])
def test_allowed_constraints_evaluate(text, expected):
    assert _truth(text) is expected


@pytest.mark.parametrize("text, message", [
    ("len('%01999999999d' % seed) > 0", "`%` takes numbers, not str"),      # issue 29: 2 GB
    ("pmu.operating_point * 100000000 == ''", "`*` takes numbers, not str"),
    ("[1] * 100000000 == []", "`*` takes numbers, not list"),
    ("pmu.operating_point + 'x' == ''", "`+` takes numbers, not str"),
    ("sum([[1]], []) == []", "sum takes one list of numbers"),
    ("seed * 9223372036854775807 > 0", "out of range: integers are bounded by |x| < 2^63"),
    ("1e308 * 10 > seed", "not a finite number"),
])
def test_growing_operations_are_refused_when_evaluated(text, message):
    tree = compile_constraint(text, PARAMS)
    with pytest.raises(ConstraintError, match=re.escape(message)):
        evaluate(tree, POINT)


@pytest.mark.parametrize("text, message", [
    ("seed < 1" + "0" * 400, "literal out of range"),          # issue 29: OverflowError traceback
    ("seed < 1e400", "literal is not a finite number"),
    ("seed ** 2 > 1", "Pow is not allowed"),
    ("f'{seed}' == '3'", "JoinedStr is not allowed"),
    ("seed[1:2] == 1", "Slice is not allowed"),
    ("b'x' == seed", "bytes literals are not allowed"),
    ("1j == seed", "complex literals are not allowed"),
    ("-" * 300 + "seed", "nests deeper than 64"),
    ("__import__('os')", "may be called"),
    ("(lambda: 1)()", "may be called"),
    ("seed.real > 0", "'seed.real' is not a parameter"),
    ("max(seed, key=abs) > 0", "may be called"),
])
def test_refused_constructs_at_compile_time(text, message):
    with pytest.raises(ConstraintError, match=re.escape(message)):
        compile_constraint(text, PARAMS)


@pytest.mark.parametrize("constraint, message", [
    ("len('%0199999d' % seed) > 0", "`%` takes numbers"),
    ("seed / 1" + "0" * 400 + " < 1", "literal out of range"),
    ("1" + "0" * 400 + " / seed < 1", "literal out of range"),
])
def test_a_sweep_file_with_a_refused_constraint_is_a_located_error(tmp_path, constraint, message):
    f = tmp_path / "sweep.yaml"
    f.write_text(f"scenario: quickstart\nspace:\n  grid: {{seed: [1, 2]}}\nconstraints:\n  - seed > 0\n"
                 f"  - \"{constraint}\"\n")
    with pytest.raises(ScenarioError) as exc:
        load_sweep(f, check_keys=False).points()
    assert str(exc.value).startswith(f"{f}:6: constraints[1]: ") and message in str(exc.value)
