"""Network presets (generated descriptions, no downloads): ours, and those accelerator
families declare (:func:`presets`)."""
from __future__ import annotations

from typing import Any, Callable


def resnet20_cifar(stage_w_bits: tuple[int, int, int] = (6, 3, 2), first_w_bits: int = 8,
                   shortcut_w_bits: int = 8, inner_bits: int = 4, block_bits: int = 8,
                   width: int = 16, blocks: int = 3, input_hw: int = 32) -> dict[str, Any]:
    """ResNet-20 for CIFAR-10 (32x32x3; 3 stages of 16/32/64 channels, 3 basic blocks each;
    3x3 convs, 1x1 stride-2 shortcuts where the shape changes; global average pool; 10-way
    FC). Mixed precision: weights ``first_w_bits`` / per stage ``stage_w_bits`` /
    ``shortcut_w_bits``; activations ``inner_bits`` inside a block and ``block_bits`` on
    block outputs. ``width``/``blocks``/``input_hw`` shrink it for quick runs."""
    layers: list[dict[str, Any]] = [
        {"name": "conv1", "type": "conv3x3", "out": width, "w_bits": first_w_bits, "o_bits": block_bits}]
    prev = "conv1"
    for s in range(3):
        ch = width << s
        for b in range(blocks):
            down = s > 0 and b == 0
            tag = f"s{s + 1}b{b + 1}"
            layers.append({"name": f"{tag}_c1", "type": "conv3x3", "out": ch, "inputs": [prev],
                           "stride": 2 if down else 1, "w_bits": stage_w_bits[s], "o_bits": inner_bits})
            layers.append({"name": f"{tag}_c2", "type": "conv3x3", "out": ch,
                           "w_bits": stage_w_bits[s], "o_bits": block_bits})
            shortcut = prev
            if down:
                layers.append({"name": f"{tag}_sc", "type": "conv1x1", "out": ch, "inputs": [prev],
                               "stride": 2, "w_bits": shortcut_w_bits, "o_bits": block_bits})
                shortcut = f"{tag}_sc"
            layers.append({"name": f"{tag}_add", "type": "add", "inputs": [f"{tag}_c2", shortcut],
                           "o_bits": block_bits})
            prev = f"{tag}_add"
    layers.append({"name": "pool", "type": "avgpool", "inputs": [prev]})
    layers.append({"name": "fc", "type": "fc", "out": 10})
    return {"name": "resnet20_cifar", "input": {"h": input_hw, "w": input_hw, "c": 3, "bits": 8},
            "layers": layers}


PRESETS: dict[str, Callable[..., dict[str, Any]]] = {"resnet20_cifar": resnet20_cifar}


def _bits(lo: int = 2) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": 8}


#: each preset's ``options`` as a JSON Schema (checked with the scenario, line by line)
PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "resnet20_cifar": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "stage_w_bits": {"type": "array", "items": _bits(), "minItems": 3, "maxItems": 3},
            "first_w_bits": _bits(), "shortcut_w_bits": _bits(), "inner_bits": _bits(),
            "block_bits": _bits(),
            "width": {"type": "integer", "minimum": 1, "maximum": 1024,
                      "description": "channels of the first stage (x2, x4 in the next)"},
            "blocks": {"type": "integer", "minimum": 1, "maximum": 64},
            "input_hw": {"type": "integer", "minimum": 4, "maximum": 4096},
        }},
}


def presets() -> tuple[dict[str, Callable[..., dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Every network preset: the generated networks here and those accelerator families
    declare (``presets`` in their declaration: builders and option schemas; a family's
    networks may use layer types only its own deployer runs), as (builders, option schemas).
    The families' are read on the first call, not at import: their builders import the
    network parser, which imports this module."""
    if not _FAMILIES_READ:
        from components.plugins import PluginError, families
        for fam in families().values():
            if fam.presets is None:
                continue
            builders, options = fam.presets.load()
            for name in builders:
                if name in PRESETS:
                    raise PluginError(f"network preset {name!r} of family {fam.name!r} is already taken")
            PRESETS.update(builders)
            PRESET_OPTIONS.update(options)
        _FAMILIES_READ.append(True)
    return PRESETS, PRESET_OPTIONS


_FAMILIES_READ: list[bool] = []
