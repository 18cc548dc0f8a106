"""Quantised network descriptions: layers with shapes and W/I/O precisions.

A network is a list of layers in execution order; each layer names its input(s) (default:
the previous layer; ``input`` is the network input). Layer types:

* ``conv3x3`` / ``conv1x1``: ``out`` channels, ``stride`` 1 or 2, ``w_bits``, ``o_bits``,
  ``relu`` (default true) — run on the RBE;
* ``add``: element-wise sum of two tensors of the same shape, requantised to ``o_bits`` —
  run on the cluster cores;
* ``avgpool``: global average pooling to one value per channel (8-bit) — cores;
* ``fc``: fully connected with int8 weights, ``out`` int32 logits — cores.

Accelerator families add layer types their deployer runs (``layer_types`` in their
declaration, docs/plugins.md; ``parse_network(..., types=...)`` names the types a target
takes), named after the ONNX operators they come from (``conv`` with a ``kernel``,
``maxpool``, ``concat``, ``split`` with ``groups``/``group``, ``upsample``, ``bn``; ``alpha``
a leaky ReLU slope); ``cosim list accelerators`` says which family declares them.

Activations are unsigned (``bits`` of the producer); the input precision of a layer is the
output precision of its producer. Channel counts need not be multiples of 32: the
deployment pads them for the RBE (zero weights, zero outputs), exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from .presets import presets

CONV_TYPES = ("conv3x3", "conv1x1")
LAYER_TYPES = CONV_TYPES + ("add", "avgpool", "fc")
_KEYS = {"name", "type", "inputs", "out", "stride", "w_bits", "o_bits", "relu", "kernel", "alpha",
         "groups", "group"}


#: ``infer(net, layer, where, h, w, k)``: a family layer type's shape inference (fills the
#: layer's h, w, k from its input's h, w, k; NetworkError naming ``where`` otherwise)
InferFn = Callable[["Network", "Layer", str, int, int, int], None]


@lru_cache(maxsize=1)
def family_layer_types() -> dict[str, tuple[str, InferFn]]:
    """Layer types the accelerator families add: type -> (family, shape inference)."""
    from components.plugins import PluginError, families
    out: dict[str, tuple[str, InferFn]] = {}
    for fam in families().values():
        if fam.layer_types is None:
            continue
        for t, fn in fam.layer_types.load().items():
            if t in LAYER_TYPES or t in out:
                raise PluginError(f"layer type {t!r} of family {fam.name!r} is already taken")
            out[t] = (fam.name, fn)
    return out


def family_types(family: str) -> tuple[str, ...]:
    """The layer types a family's deployer takes: the common ones and the family's own."""
    return LAYER_TYPES + tuple(t for t, (f, _) in family_layer_types().items() if f == family)


class NetworkError(ValueError):
    """A malformed network description; the message names the layer and the key."""


@dataclass
class Layer:
    name: str
    type: str
    inputs: list[str]
    out: int = 0                # output channels (conv, fc)
    stride: int = 1
    w_bits: int = 8
    o_bits: int = 8
    relu: bool = True
    kernel: int = 0             # conv / maxpool window
    alpha: float = 0.0          # leaky ReLU slope (0: plain ReLU)
    groups: int = 1             # split: channel groups
    group: int = 0              # split: the group kept
    # filled in by shape inference
    h: int = 0                  # output height
    w: int = 0                  # output width
    k: int = 0                  # output channels
    i_bits: int = 8             # precision of the (first) input
    in_shape: tuple[int, int, int] = (0, 0, 0)

    @property
    def on_rbe(self) -> bool:
        return self.type in CONV_TYPES


@dataclass
class Network:
    name: str
    input_shape: tuple[int, int, int]     # (H, W, C)
    input_bits: int
    layers: list[Layer] = field(default_factory=list)

    def layer(self, name: str) -> Layer:
        for ly in self.layers:
            if ly.name == name:
                return ly
        raise KeyError(name)

    def shape_of(self, name: str) -> tuple[int, int, int, int]:
        """(H, W, K, bits) of a tensor: 'input' or a layer's output."""
        if name == "input":
            return (*self.input_shape, self.input_bits)
        ly = self.layer(name)
        return ly.h, ly.w, ly.k, (32 if ly.type == "fc" else ly.o_bits)


def parse_network(spec: dict[str, Any], where: str = "network",
                  types: tuple[str, ...] = LAYER_TYPES) -> Network:
    """Build and shape-check a network from its scenario mapping (or a preset name);
    ``types``: the layer types the target runs."""
    if "preset" in spec:
        name = spec["preset"]
        known = presets()[0]
        if name not in known:
            raise NetworkError(f"{where}.preset: unknown network preset {name!r}; known: "
                               f"{', '.join(sorted(known))}")
        spec = {**known[name](**spec.get("options", {})), **{k: v for k, v in spec.items()
                                                               if k not in ("preset", "options")}}
    for key in ("input", "layers"):
        if key not in spec:
            raise NetworkError(f"{where}: missing {key!r}")
    unknown = set(spec) - {"name", "input", "layers"}
    if unknown:
        raise NetworkError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (expected name, "
                           "input, layers, and preset/options/weights)")
    inp = spec["input"]
    if not isinstance(inp, dict) or set(inp) - {"h", "w", "c", "bits"}:
        raise NetworkError(f"{where}.input: expected a mapping of h, w, c and bits")
    try:
        shape = (int(inp["h"]), int(inp["w"]), int(inp["c"]))
        in_bits = int(inp.get("bits", 8))
    except (KeyError, TypeError, ValueError):
        raise NetworkError(f"{where}.input: expected h, w, c (and bits)") from None
    net = Network(spec.get("name", "network"), shape, in_bits)
    prev = "input"
    seen = {"input"}
    for i, d in enumerate(spec["layers"]):
        lw = f"{where}.layers[{i}]"
        try:
            ly = Layer(name=str(d["name"]), type=str(d["type"]),
                       inputs=list(d.get("inputs", [prev])), out=int(d.get("out", 0)),
                       stride=int(d.get("stride", 1)), w_bits=int(d.get("w_bits", 8)),
                       o_bits=int(d.get("o_bits", 8)), relu=bool(d.get("relu", True)),
                       kernel=int(d.get("kernel", 0)), alpha=float(d.get("alpha", 0.0)),
                       groups=int(d.get("groups", 1)), group=int(d.get("group", 0)))
        except KeyError as e:
            raise NetworkError(f"{lw}: missing {e.args[0]!r}") from None
        unknown = set(d) - _KEYS
        if unknown:
            raise NetworkError(f"{lw}: unknown key(s) {', '.join(sorted(unknown))}")
        if ly.type not in types:
            owner = family_layer_types().get(ly.type)
            if owner is not None:
                raise NetworkError(f"{lw}.type: {ly.type!r} runs on the {owner[0]} deployment only "
                                   f"(docs/plugins.md); this target takes {', '.join(types)}")
            raise NetworkError(f"{lw}.type: {ly.type!r} is not one of {', '.join(types)}")
        if ly.name in seen:
            raise NetworkError(f"{lw}.name: duplicate layer name {ly.name!r}")
        for src in ly.inputs:
            if src not in seen:
                raise NetworkError(f"{lw}.inputs: {src!r} is not the input or an earlier layer")
        _infer(net, ly, lw)
        net.layers.append(ly)
        seen.add(ly.name)
        prev = ly.name
    if not net.layers:
        raise NetworkError(f"{where}.layers: the network has no layers")
    for i, ly in enumerate(net.layers):  # pooling runs fused with the classifier after it
        nxt = net.layers[i + 1] if i + 1 < len(net.layers) else None
        if ly.type == "avgpool" and (nxt is None or nxt.type != "fc" or nxt.inputs != [ly.name]):
            raise NetworkError(f"{where}.layers[{i}]: an avgpool must be followed by the fc that reads it")
        if ly.type == "fc" and (i == 0 or net.layers[i - 1].type != "avgpool"):
            raise NetworkError(f"{where}.layers[{i}]: an fc must follow an avgpool (they run fused on the cores)")
    return net


def _infer(net: Network, ly: Layer, where: str) -> None:
    h, w, k, bits = net.shape_of(ly.inputs[0])
    ly.in_shape = (h, w, k)
    ly.i_bits = bits
    if ly.type in CONV_TYPES:
        if len(ly.inputs) != 1:
            raise NetworkError(f"{where}: a convolution takes one input")
        if ly.stride not in (1, 2):
            raise NetworkError(f"{where}.stride: 1 or 2, got {ly.stride}")
        if ly.out <= 0:
            raise NetworkError(f"{where}.out: output channels must be > 0")
        for key in ("w_bits", "o_bits"):
            if not 2 <= getattr(ly, key) <= 8:
                raise NetworkError(f"{where}.{key}: the RBE supports 2..8 bits, got {getattr(ly, key)}")
        if not 2 <= bits <= 8:
            raise NetworkError(f"{where}: input precision {bits} bits is outside the RBE's 2..8")
        if ly.stride == 2 and (h % 2 or w % 2):
            raise NetworkError(f"{where}: stride 2 needs an even input size, got {h}x{w}")
        ly.h, ly.w, ly.k = h // ly.stride, w // ly.stride, ly.out
    elif ly.type in family_layer_types():
        family_layer_types()[ly.type][1](net, ly, where, h, w, k)
    elif ly.type == "add":
        if len(ly.inputs) != 2:
            raise NetworkError(f"{where}: add takes two inputs")
        h2, w2, k2, _ = net.shape_of(ly.inputs[1])
        if (h2, w2, k2) != (h, w, k):
            raise NetworkError(f"{where}: add of different shapes {(h, w, k)} and {(h2, w2, k2)}")
        ly.h, ly.w, ly.k = h, w, k
    elif ly.type == "avgpool":
        ly.h, ly.w, ly.k = 1, 1, k
        ly.o_bits = 8
    elif ly.type == "fc":
        if ly.out <= 0:
            raise NetworkError(f"{where}.out: output features must be > 0")
        ly.h, ly.w, ly.k = 1, 1, ly.out
        ly.o_bits = 32
