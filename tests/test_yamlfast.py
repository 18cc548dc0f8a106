"""tlm/yamlfast.py: the package's data files parse to the same values through libyaml as
through the pure-Python parser, and a broken document gives the pure-Python error."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tlm import yamlfast
from tlm.regmap import RegMapError, parse_regmap

ROOT = Path(__file__).resolve().parents[1]
DATA = sorted(p for pkg in ("tlm", "components", "accelerators") for p in (ROOT / pkg).rglob("*.yaml"))


def test_libyaml_is_used_when_pyyaml_has_it():
    assert (yamlfast.SafeLoader is yaml.CSafeLoader) == yaml.__with_libyaml__


@pytest.mark.parametrize("path", DATA, ids=lambda p: str(p.relative_to(ROOT)))
def test_data_files_parse_as_with_the_pure_python_parser(path):
    text = path.read_text()
    assert yamlfast.safe_load(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", ["a: [1, 2\nb: 3\n", "a: 1\n\tb: 2\n", "a: !!python/name:os.system x\n"])
def test_errors_are_the_pure_python_parsers(text):
    with pytest.raises(yaml.YAMLError) as want:
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as got:
        yamlfast.safe_load(text)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_regmap_syntax_error_names_the_line():
    with pytest.raises(RegMapError) as e:
        parse_regmap("block: x\nregisters:\n  - name: A\n    offset: [0\n", "x.yaml")
    assert "x.yaml" in str(e.value)
    want = None
    try:
        yaml.safe_load("block: x\nregisters:\n  - name: A\n    offset: [0\n")
    except yaml.MarkedYAMLError as err:
        want = err
    assert want is not None and str(want.problem) in str(e.value)
