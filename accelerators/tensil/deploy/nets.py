"""The networks of Tensil's published evaluation, built from their published layer shapes
as our network description (cosim/deploy/network.py, Tensil layer types) with seeded
random weights (docs/tensil.md, "Networks"):

* ``resnet20v2_cifar``: Keras' CIFAR-10 ResNet v2 of depth 20 (the model Tensil compiles):
  a 3x3 conv (BN, ReLU), three stages of two pre-activation bottleneck blocks (BN-ReLU,
  1x1, 3x3, 1x1 with 4x / 2x channels, a 1x1 projection shortcut in each stage's first
  block, stride 2 in the first block of stages 2 and 3), BN-ReLU, 8x8 average pool, 10-way FC;
* ``resnet50v2_imagenet``: Keras' ResNet50V2: 7x7/2 conv, 3x3/2 max-pool (after zero
  padding), stacks of 3, 4, 6, 3 pre-activation bottlenecks (64..512 filters, 4x outputs; a
  1x1 projection in each stack's first block, stride 2 in the last block of the first
  three stacks with a 1x1/2 max-pool shortcut), BN-ReLU, global pool, 1000-way FC;
* ``yolov4_tiny``: darknet's yolov4-tiny.cfg at 416x416: 3x3 convs with leaky ReLU (0.1),
  three CSP blocks (route groups = channel split, route = concat), 2x2/2 max-pools, two
  YOLO heads (13x13 and 26x26, 255 channels, linear) joined by a nearest 2x upsample. The
  heads' decode (sigmoid, anchors, NMS) stays on the host and is not modelled.

Batch normalisations after a convolution are folded into its weights and bias (as
Tensil's compiler does); a pre-activation (BN-ReLU before a convolution, its input also
read by the shortcut) is a ``bn`` layer.
"""
from __future__ import annotations

from typing import Any, Callable


def resnet20v2_cifar(input_hw: int = 32, width: int = 16, blocks: int = 2,
                     classes: int = 10) -> dict[str, Any]:
    """ResNet-20 v2 (``blocks`` = 2 bottlenecks per stage: depth 9 * blocks + 2)."""
    layers: list[dict[str, Any]] = [{"name": "conv1", "type": "conv3x3", "out": width}]
    x, fin = "conv1", width
    for stage in range(3):
        fout = fin * 4 if stage == 0 else fin * 2
        for b in range(blocks):
            tag = f"s{stage + 1}b{b + 1}"
            stride = 2 if stage > 0 and b == 0 else 1
            src = x
            if not (stage == 0 and b == 0):      # the stem's BN-ReLU serves the first block
                layers.append({"name": f"{tag}_pre", "type": "bn", "inputs": [x]})
                src = f"{tag}_pre"
            layers += [{"name": f"{tag}_c1", "type": "conv1x1", "out": fin, "stride": stride, "inputs": [src]},
                       {"name": f"{tag}_c2", "type": "conv3x3", "out": fin},
                       {"name": f"{tag}_c3", "type": "conv1x1", "out": fout, "relu": False}]
            short = x
            if b == 0:
                layers.append({"name": f"{tag}_sc", "type": "conv1x1", "out": fout, "stride": stride,
                               "inputs": [x], "relu": False})
                short = f"{tag}_sc"
            layers.append({"name": f"{tag}_add", "type": "add", "inputs": [f"{tag}_c3", short], "relu": False})
            x = f"{tag}_add"
        fin = fout
    layers += [{"name": "post", "type": "bn", "inputs": [x]}, {"name": "pool", "type": "avgpool"},
               {"name": "fc", "type": "fc", "out": classes}]
    return {"name": "resnet20v2_cifar", "input": {"h": input_hw, "w": input_hw, "c": 3}, "layers": layers}


def resnet50v2_imagenet(input_hw: int = 224, width: int = 64, stacks: tuple[int, ...] = (3, 4, 6, 3),
                        classes: int = 1000) -> dict[str, Any]:
    """ResNet-50 v2 (``stacks``: bottlenecks per stack; ``width``: the first stack's filters)."""
    layers: list[dict[str, Any]] = [
        {"name": "conv1", "type": "conv", "kernel": 7, "stride": 2, "out": width, "relu": False},
        {"name": "pool1", "type": "maxpool", "kernel": 3, "stride": 2}]
    x = "pool1"
    for s, count in enumerate(stacks):
        f = width << s
        for b in range(count):
            tag = f"s{s + 2}b{b + 1}"
            stride = 2 if b == count - 1 and s < len(stacks) - 1 else 1
            layers.append({"name": f"{tag}_pre", "type": "bn", "inputs": [x]})
            if b == 0:
                layers.append({"name": f"{tag}_sc", "type": "conv1x1", "out": 4 * f, "relu": False,
                               "stride": stride, "inputs": [f"{tag}_pre"]})
                short = f"{tag}_sc"
            elif stride > 1:
                layers.append({"name": f"{tag}_sc", "type": "maxpool", "kernel": 1, "stride": stride, "inputs": [x]})
                short = f"{tag}_sc"
            else:
                short = x
            layers += [{"name": f"{tag}_c1", "type": "conv1x1", "out": f, "inputs": [f"{tag}_pre"]},
                       {"name": f"{tag}_c2", "type": "conv", "kernel": 3, "stride": stride, "out": f},
                       {"name": f"{tag}_c3", "type": "conv1x1", "out": 4 * f, "relu": False},
                       {"name": f"{tag}_add", "type": "add", "inputs": [short, f"{tag}_c3"], "relu": False}]
            x = f"{tag}_add"
    layers += [{"name": "post", "type": "bn", "inputs": [x]}, {"name": "pool", "type": "avgpool"},
               {"name": "fc", "type": "fc", "out": classes}]
    return {"name": "resnet50v2_imagenet", "input": {"h": input_hw, "w": input_hw, "c": 3}, "layers": layers}


def yolov4_tiny(input_hw: int = 416, width: int = 32, classes: int = 80) -> dict[str, Any]:
    """YoloV4-tiny (``width``: the first conv's filters; heads 3 * (classes + 5) channels)."""
    w = width
    lk = {"alpha": 0.1}

    def conv(name: str, out: int, k: int = 3, stride: int = 1, src: str | None = None, **kw: Any) -> dict:
        d = {"name": name, "type": "conv", "kernel": k, "stride": stride, "out": out, **lk, **kw}
        if src:
            d["inputs"] = [src]
        return d

    layers: list[dict[str, Any]] = [conv("c0", w, stride=2), conv("c1", 2 * w, stride=2)]
    prev = "c1"
    for i, f in enumerate((2 * w, 4 * w, 8 * w)):   # three CSP blocks
        t = f"b{i + 1}"
        layers += [conv(f"{t}_c", f, src=prev),
                   {"name": f"{t}_split", "type": "split", "groups": 2, "group": 1},
                   conv(f"{t}_c2", f // 2), conv(f"{t}_c3", f // 2),
                   {"name": f"{t}_cat1", "type": "concat", "inputs": [f"{t}_c3", f"{t}_c2"]},
                   conv(f"{t}_c4", f, k=1),
                   {"name": f"{t}_cat2", "type": "concat", "inputs": [f"{t}_c", f"{t}_c4"]},
                   {"name": f"{t}_pool", "type": "maxpool", "kernel": 2, "stride": 2}]
        prev = f"{t}_pool"
    head = 3 * (classes + 5)
    layers += [conv("c26", 16 * w, src=prev), conv("c27", 8 * w, k=1), conv("c28", 16 * w),
               conv("head1", head, k=1, relu=False),
               conv("c32", 4 * w, k=1, src="c27"), {"name": "up", "type": "upsample"},
               {"name": "cat", "type": "concat", "inputs": ["up", "b3_c4"]},
               conv("c35", 8 * w), conv("head2", head, k=1, relu=False)]
    return {"name": "yolov4_tiny", "input": {"h": input_hw, "w": input_hw, "c": 3}, "layers": layers}


#: a small network with every Tensil layer type (tests, docs)
OPS_NET: dict[str, Any] = {"name": "tensil_ops", "input": {"h": 16, "w": 16, "c": 3}, "layers": [
    {"name": "c7", "type": "conv", "kernel": 7, "stride": 2, "out": 16, "alpha": 0.1},
    {"name": "mp", "type": "maxpool", "kernel": 3, "stride": 2},
    {"name": "sp", "type": "split", "groups": 2, "group": 1},
    {"name": "c3", "type": "conv3x3", "out": 8, "inputs": ["sp"]},
    {"name": "cat", "type": "concat", "inputs": ["c3", "sp"]},
    {"name": "c1", "type": "conv1x1", "out": 8},
    {"name": "c1b", "type": "conv", "kernel": 1, "out": 8, "relu": False, "inputs": ["cat"]},
    {"name": "cat2", "type": "concat", "inputs": ["c1", "c1b"]},
    {"name": "up", "type": "upsample"},
    {"name": "cat3", "type": "concat", "inputs": ["up", "c7"]},
    {"name": "pre", "type": "bn"},
    {"name": "mp1", "type": "maxpool", "kernel": 1, "stride": 2},
    {"name": "c5", "type": "conv", "kernel": 5, "stride": 2, "out": 32, "inputs": ["pre"], "relu": False},
    {"name": "ad", "type": "add", "inputs": ["mp1", "c5"], "alpha": 0.1},
    {"name": "pool", "type": "avgpool"},
    {"name": "fc", "type": "fc", "out": 10}]}


def tensil_ops(input_hw: int = 16) -> dict[str, Any]:
    """:data:`OPS_NET` (``input_hw`` a multiple of 8)."""
    return {**OPS_NET, "input": {"h": input_hw, "w": input_hw, "c": 3}}


NETS: dict[str, Callable[..., dict[str, Any]]] = {
    "resnet20v2_cifar": resnet20v2_cifar, "resnet50v2_imagenet": resnet50v2_imagenet,
    "yolov4_tiny": yolov4_tiny, "tensil_ops": tensil_ops}


def build(name: str, **options: Any) -> Any:
    """The parsed, shape-checked network ``name`` (KeyError listing the known ones)."""
    from cosim.deploy.network import family_types, parse_network
    if name not in NETS:
        raise KeyError(f"unknown Tensil network {name!r}; known: {', '.join(sorted(NETS))}")
    return parse_network(NETS[name](**options), name, types=family_types("tensil"))


def _int(lo: int, hi: int, doc: str = "") -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi, **({"description": doc} if doc else {})}


#: each network's ``options`` as a JSON Schema (a scenario's ``workload.network.options``)
NET_OPTIONS: dict[str, dict[str, Any]] = {
    "resnet20v2_cifar": {"type": "object", "additionalProperties": False, "properties": {
        "input_hw": _int(4, 4096, "input height and width (multiple of 4)"),
        "width": _int(1, 1024, "the stem's channels"), "blocks": _int(1, 64, "bottlenecks per stage"),
        "classes": _int(1, 100_000)}},
    "resnet50v2_imagenet": {"type": "object", "additionalProperties": False, "properties": {
        "input_hw": _int(32, 4096, "input height and width (multiple of 32)"),
        "width": _int(1, 1024, "the first stack's filters"),
        "stacks": {"type": "array", "items": _int(1, 64), "minItems": 1, "maxItems": 8},
        "classes": _int(1, 100_000)}},
    "yolov4_tiny": {"type": "object", "additionalProperties": False, "properties": {
        "input_hw": _int(32, 4096, "input height and width (multiple of 32)"),
        "width": _int(2, 1024, "the first conv's filters (even)"), "classes": _int(1, 10_000)}},
    "tensil_ops": {"type": "object", "additionalProperties": False, "properties": {
        "input_hw": _int(8, 4096, "input height and width (multiple of 8)")}},
}

#: the family's network presets, ``(builders, option schemas)`` (its declaration, plugin.py)
PRESETS = (NETS, NET_OPTIONS)
