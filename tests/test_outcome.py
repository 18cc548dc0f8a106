"""cosim/outcome.py: plain_fields gives what dataclasses.asdict gives (the outcome's task
records and power samples go through it), with containers copied."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from components.pmu import PowerSample
from cosim.host import TaskRecord
from cosim.outcome import plain_fields


@dataclass
class _Inner:
    values: list
    pair: tuple


@dataclass
class _Outer:
    time: int
    table: dict
    inner: _Inner
    name: str = "x"
    none: None = None


def test_plain_fields_equals_asdict_and_copies_containers():
    obj = _Outer(1, {"a": 1.5, "b": [1, {"c": (2, 3)}]}, _Inner([1, 2], (3, "q")))
    d = plain_fields(obj)
    assert d == dataclasses.asdict(obj)
    assert d["table"] is not obj.table and d["table"]["b"] is not obj.table["b"]
    assert d["inner"]["values"] is not obj.inner.values
    obj.table["b"][1]["c"] = None           # the copy does not follow the original
    assert d["table"]["b"][1]["c"] == (2, 3)


def test_plain_fields_of_records_and_samples():
    rec = TaskRecord("t0", "dma", "conv1", "l2_l1", 10, 20, None, {"bytes": 3, "reads": ["0x1"]})
    sample = PowerSample(0, 5, {"soc": 1.0}, {"soc": 0.5}, {"soc": 0.5}, {"soc": 0.8},
                         {"soc": 0.0}, {"soc": "on"}, {"fll_soc": 1e8})
    for obj in (rec, sample):
        assert plain_fields(obj) == dataclasses.asdict(obj)
    assert TaskRecord(**plain_fields(rec)) == rec and PowerSample(**plain_fields(sample)) == sample
