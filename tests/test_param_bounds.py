"""Every numeric component parameter is bounded (issue 16: no accepted number may make a
model allocate or loop without limit), its default lies within its bounds, and a value
outside them is refused with the parameter's full path."""
from __future__ import annotations

import dataclasses
import typing

import pytest

from cosim.platforms import PLATFORMS
from cosim.platforms.composed import BLOCK_TYPES
from tlm.params import ParameterError, bounds, resolve


def _params_classes() -> list[type]:
    """Every class a registered platform or a composed platform's block type resolves user
    overrides into."""
    found: dict[str, type] = {}
    for entry in PLATFORMS.values():
        for with_firmware in (False, True):
            for cls in entry.params(with_firmware).values():
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    for block in BLOCK_TYPES.values():
        if block.params is not None:
            cls = block.params()
            found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[k] for k in sorted(found)]


def _is_number(hint: typing.Any) -> bool:
    args = typing.get_args(hint) or (hint,)
    return any(a in (int, float) for a in args)


CLASSES = _params_classes()


def test_the_walk_finds_the_parameter_classes():
    names = {c.__name__ for c in CLASSES}
    assert {"TcdmParams", "PmuParams", "HyperRamParams", "DmaParams", "SocCoreParams"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_numeric_field_is_bounded_and_its_default_within(cls):
    hints = typing.get_type_hints(cls)
    unbounded = []
    for f in dataclasses.fields(cls):
        if not _is_number(hints[f.name]):
            continue
        lo, hi = bounds(f)
        if lo is None or hi is None:
            unbounded.append(f.name)
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        if default is not None:
            assert lo <= default <= hi, f"{cls.__name__}.{f.name}: default {default} outside [{lo}, {hi}]"
    assert not unbounded, f"{cls.__name__}: numeric parameters without lo/hi bounds: {unbounded}"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_a_value_beyond_a_bound_is_refused_with_its_path(cls):
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not _is_number(hints[f.name]):
            continue
        lo, hi = bounds(f)
        too_big = hi * 2 + 1 if hi > 0 else hi + 1
        if int in (typing.get_args(hints[f.name]) or (hints[f.name],)) and float not in (
                typing.get_args(hints[f.name]) or (hints[f.name],)):
            too_big = int(too_big)
        with pytest.raises(ParameterError) as e:
            resolve(cls, {f.name: too_big}, "blk")
        assert e.value.path == f"blk.{f.name}" and "out of range" in str(e.value)


def test_out_of_range_message_uses_units():
    from components.pmu.pmu import PmuParams
    with pytest.raises(ParameterError, match=r"pmu.sample_period.*1 ps is out of range \[1 ns"):
        resolve(PmuParams, {"sample_period": 1}, "pmu")


def test_ready_made_parameters_are_checked_by_the_component_too():
    from components.l2 import BankedMemory, BankedMemoryParams
    from tlm import Clock, Simulator
    from tlm.address_map import Region
    from tlm.module import Module
    sim = Simulator()
    top = Module(sim, "soc")
    region = Region("l2", 0x1C000000, 1024, "soc", "memory", "")
    with pytest.raises(ParameterError) as e:
        BankedMemory(top, "l2", region, Clock(sim, "c", 100e6), BankedMemoryParams(banks=0))
    assert e.value.path == "soc.l2.banks" and "0 is out of range [1, 1024]" in str(e.value)
