"""docs/scenarios.md and docs/scenario.schema.json cannot drift from the code.

(a) the committed JSON Schema is exactly what ``cosim.scenario.schema.export()`` writes;
(b) every task op and every check kind is documented; (c) every report key of
``cosim/report.py``'s docstring is documented; (d) every library scenario loads and is
listed; (e) every platform parameter path is in the parameter table.
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

import cosim.report
from cosim.scenario import load_scenario
from cosim.scenario.loader import SCENARIO_DIR, TOP_LEVEL
from cosim.scenario.schema import CHECK, OPS, SCENARIO, export

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scenarios.md"
SCHEMA_JSON = ROOT / "docs" / "scenario.schema.json"
LIBRARY = sorted(SCENARIO_DIR.glob("*.yaml"))


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_schema_file_is_the_export():
    assert SCHEMA_JSON.read_text(encoding="utf-8") == export(), (
        "docs/scenario.schema.json is stale: run `cosim schema --out docs/scenario.schema.json`")


@pytest.mark.parametrize("op", sorted(OPS))
def test_every_op_is_documented(doc, op):
    assert f"`{op}`" in doc, f"task op {op!r} is not mentioned in docs/scenarios.md"


@pytest.mark.parametrize("op", sorted(OPS))
def test_every_op_field_is_documented(doc, op):
    for field in OPS[op]["properties"]:
        assert f"`{field}`" in doc or re.search(rf"\b{re.escape(field)}:", doc), (
            f"field {field!r} of op {op!r} is not mentioned in docs/scenarios.md")


@pytest.mark.parametrize("kind", sorted(CHECK["properties"]))
def test_every_check_kind_is_documented(doc, kind):
    assert f"`{kind}`" in doc, f"check kind {kind!r} is not mentioned in docs/scenarios.md"


def test_every_top_level_key_is_documented(doc):
    assert set(TOP_LEVEL) == set(SCENARIO["properties"])
    for key in TOP_LEVEL:
        assert f"| `{key}` |" in doc, f"top-level key {key!r} is not in the table of docs/scenarios.md"


def _report_keys() -> list[str]:
    text = cosim.report.__doc__ or ""
    keys = re.findall(r"``([a-z_]+)``", text.split("Report keys", 1)[1])
    assert len(keys) >= 15, "could not read the report keys from cosim/report.py's docstring"
    return keys


@pytest.mark.parametrize("key", _report_keys())
def test_every_report_key_is_documented(doc, key):
    assert f"| `{key}` |" in doc, f"report key {key!r} is not in the report.json table of docs/scenarios.md"


def test_report_docstring_lists_every_key_the_report_writes():
    rep = cosim.report.Report(scenario={}, hash={}, manifest={}, stopped={})
    assert set(rep.as_dict()) == set(_report_keys())


@pytest.mark.parametrize("path", LIBRARY, ids=[p.stem for p in LIBRARY])
def test_library_scenario_validates_and_is_listed(doc, path):
    sc = load_scenario(path)
    assert sc.description, f"{path.name} has no description (cosim list scenarios shows it)"
    assert f"[`{path.stem}`](../scenarios/{path.name})" in doc, (
        f"{path.name} is not listed in the scenario library of docs/scenarios.md")


def test_library_is_not_empty():
    assert {p.stem for p in LIBRARY} >= {"quickstart", "resnet20_cifar"}


def test_every_parameter_path_is_in_the_table(doc):
    from components.marsellus.platform import PARAMS
    missing = [f"{path}.{f.name}" for path, cls in PARAMS.items() for f in dataclasses.fields(cls)
               if f"| `{path}.{f.name}` |" not in doc]
    missing += [path for path in PARAMS if f"| `{path}` |" not in doc]
    assert not missing, f"parameters missing from docs/scenarios.md: {', '.join(missing)}"


def test_the_parameter_tables_are_the_generated_ones(doc):
    from cosim.platforms.parameters import platform_tables
    base, firmware = platform_tables("marsellus")
    assert base in doc and firmware in doc, (
        "docs/scenarios.md's parameter tables are stale: paste `cosim list parameters`")


_BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)
_SESSION = re.compile(r"```yaml\n# (\S+\.yaml)\n(.*?)```\n```\n\$ cosim validate (\S+)\n(.*?)```", re.S)


def test_documented_validate_sessions_print_what_the_docs_show(doc, tmp_path):
    """Each '# NAME.yaml' example followed by '$ cosim validate NAME.yaml' gives exactly the
    lines the docs show."""
    import subprocess
    import sys
    sessions = _SESSION.findall(doc)
    assert len(sessions) >= 3
    for name, body, arg, shown in sessions:
        assert arg == name
        (tmp_path / name).write_text(body)
        r = subprocess.run([sys.executable, "-m", "cosim.cli", "validate", name], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120, env={**os.environ, "COLUMNS": "400",
                                                        "PYTHONPATH": str(ROOT)})
        assert r.stdout.strip().splitlines() == shown.strip().splitlines(), (name, r.stdout, r.stderr)


def test_scenario_fragments_in_the_docs_are_valid(doc):
    """Every YAML example made of top-level scenario keys validates (on a minimal scenario
    for the keys it does not give); the error examples are checked above."""
    import yaml
    from cosim.scenario import load_scenario_text
    base = {"name": "doc", "platform": "marsellus", "workload": {"tasks": [{"op": "wait", "time": "1 ns"}]}}
    checked = 0
    for block in _BLOCK.findall(doc):
        if "..." in block or block.startswith("# "):
            continue               # an outline, or an error example (checked above)
        frag = yaml.safe_load(block)
        if not isinstance(frag, dict) or not set(frag) <= set(TOP_LEVEL):
            continue               # a task list or a network, shown inside the op reference
        load_scenario_text(yaml.safe_dump({**base, **frag}, sort_keys=False), ROOT / "docs" / "example.yaml")
        checked += 1
    assert checked >= 5
