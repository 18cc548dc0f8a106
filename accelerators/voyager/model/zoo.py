"""Layer shapes of the models Voyager is evaluated on (docs/voyager.md, "Workloads"):
ResNet-18, ResNet-50, MobileNetV2 (ImageNet, 224x224), ViT-Base/16, MobileBERT-tiny and
BERT-Base (sequence 128). Batch 1. Only shapes: weights are drawn (seeded) by whoever
needs data.

A model is a list of :class:`Layer` in execution order. Element-wise layers (``relu``,
``gelu``, ``silu``, ``add``) and reshapes (``transpose``, ``reshape``) follow the layer they
apply to; the compiler fuses them (:mod:`accelerators.voyager.model.compiler`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import VoyagerError

#: layer kinds the matrix unit runs
MATRIX_OPS = ("conv", "gemm")
#: element-wise kinds the vector pipeline fuses onto its producer
ELEMENTWISE = ("relu", "gelu", "silu", "sigmoid", "tanh", "add", "quantize", "dequantize")
#: reshapes folded into address generators
RESHAPES = ("transpose", "reshape")
#: layers the vector unit runs on its own
VECTOR_OPS = ("dwconv", "maxpool", "avgpool", "softmax", "layernorm")
KINDS = MATRIX_OPS + ELEMENTWISE + RESHAPES + VECTOR_OPS


@dataclass(frozen=True)
class Layer:
    """One layer. conv/dwconv/pools: input ``h x w x c``, ``k`` outputs, ``f x f`` window,
    ``stride``, ``pad``. gemm: ``m`` rows (tokens) x ``c`` reduction x ``k`` outputs, repeated
    ``batch`` times (attention heads). Vector ops: ``m`` rows of ``c`` elements."""

    name: str
    kind: str
    h: int = 1
    w: int = 1
    c: int = 1
    k: int = 1
    f: int = 1
    stride: int = 1
    pad: int = 0
    m: int = 1
    batch: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise VoyagerError(f"layer {self.name}", f"unknown layer kind {self.kind!r} (known: {', '.join(KINDS)})")

    @property
    def out_hw(self) -> tuple[int, int]:
        return ((self.h + 2 * self.pad - self.f) // self.stride + 1,
                (self.w + 2 * self.pad - self.f) // self.stride + 1)

    @property
    def rows(self) -> int:
        """Streamed input vectors per weight tile: output pixels or tokens."""
        if self.kind in ("conv", "dwconv", "maxpool", "avgpool"):
            ho, wo = self.out_hw
            return ho * wo
        return self.m

    @property
    def macs(self) -> int:
        if self.kind == "conv":
            return self.rows * self.c * self.f * self.f * self.k
        if self.kind == "gemm":
            return self.batch * self.m * self.c * self.k
        if self.kind == "dwconv":
            return self.rows * self.c * self.f * self.f
        return 0

    @property
    def out_elems(self) -> int:
        if self.kind in ("conv", "gemm"):
            return self.batch * self.rows * self.k
        return self.batch * self.rows * self.c


class _Builder:
    def __init__(self) -> None:
        self.layers: list[Layer] = []

    def add(self, name: str, kind: str, **kw: int) -> None:
        self.layers.append(Layer(name, kind, **kw))

    def conv(self, name: str, h: int, c: int, k: int, f: int, s: int, act: str | None = "relu") -> int:
        pad = f // 2
        self.add(name, "conv", h=h, w=h, c=c, k=k, f=f, stride=s, pad=pad)
        if act:
            self.add(name + ".act", act)
        return (h + 2 * pad - f) // s + 1


def resnet(depth: int) -> list[Layer]:
    """ResNet-18 (basic blocks) or ResNet-50 (bottlenecks), 224x224 input."""
    b = _Builder()
    h = b.conv("conv1", 224, 3, 64, 7, 2)
    b.add("maxpool", "maxpool", h=h, w=h, c=64, f=3, stride=2, pad=1)
    h = (h + 2 - 3) // 2 + 1
    c = 64
    blocks = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}[depth]
    for stage, (n, width) in enumerate(zip(blocks, [64, 128, 256, 512])):
        for i in range(n):
            s = 2 if (i == 0 and stage > 0) else 1
            p = f"layer{stage + 1}.{i}"
            out = width if depth == 18 else width * 4
            if depth == 18:
                ho = b.conv(p + ".conv1", h, c, width, 3, s)
                b.conv(p + ".conv2", ho, width, width, 3, 1, act=None)
            else:
                b.conv(p + ".conv1", h, c, width, 1, 1)
                ho = b.conv(p + ".conv2", h, width, width, 3, s)
                b.conv(p + ".conv3", ho, width, out, 1, 1, act=None)
            if s != 1 or c != out:
                b.conv(p + ".downsample", h, c, out, 1, s, act=None)
            b.add(p + ".add", "add")
            b.add(p + ".relu", "relu")
            h, c = ho, out
    b.add("avgpool", "avgpool", h=h, w=h, c=c, f=h, stride=h)
    b.add("fc", "gemm", m=1, c=c, k=1000)
    return b.layers


def mobilenet_v2(size: int = 224) -> list[Layer]:
    """MobileNetV2 (width 1.0, ``size`` x ``size`` input, 224 as published): inverted
    residuals, depthwise 3x3 on the vector unit (or a DWC extension)."""
    b = _Builder()
    h = b.conv("conv1", size, 3, 32, 3, 2, act="relu")
    c = 32
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    idx = 0
    for t, out, n, s0 in cfg:
        for i in range(n):
            s = s0 if i == 0 else 1
            p = f"block{idx}"
            hid = c * t
            if t != 1:
                b.conv(p + ".expand", h, c, hid, 1, 1)
            b.add(p + ".dw", "dwconv", h=h, w=h, c=hid, k=hid, f=3, stride=s, pad=1)
            b.add(p + ".dw.act", "relu")
            ho = (h + 2 - 3) // s + 1
            b.conv(p + ".project", ho, hid, out, 1, 1, act=None)
            if s == 1 and c == out:
                b.add(p + ".add", "add")
            h, c = ho, out
            idx += 1
    b.conv("conv_last", h, c, 1280, 1, 1)
    b.add("avgpool", "avgpool", h=h, w=h, c=1280, f=h, stride=h)
    b.add("fc", "gemm", m=1, c=1280, k=1000)
    return b.layers


def _encoder(b: _Builder, p: str, seq: int, hidden: int, heads: int, ffn: int, act: str) -> None:
    dh = hidden // heads
    b.add(p + ".ln1", "layernorm", m=seq, c=hidden)
    b.add(p + ".qkv", "gemm", m=seq, c=hidden, k=3 * hidden)
    b.add(p + ".split_heads", "reshape")
    b.add(p + ".k_t", "transpose")
    b.add(p + ".qk", "gemm", m=seq, c=dh, k=seq, batch=heads)
    b.add(p + ".softmax", "softmax", m=seq * heads, c=seq)
    b.add(p + ".av", "gemm", m=seq, c=seq, k=dh, batch=heads)
    b.add(p + ".merge_heads", "reshape")
    b.add(p + ".proj", "gemm", m=seq, c=hidden, k=hidden)
    b.add(p + ".add1", "add")
    b.add(p + ".ln2", "layernorm", m=seq, c=hidden)
    b.add(p + ".fc1", "gemm", m=seq, c=hidden, k=ffn)
    b.add(p + ".fc1.act", act)
    b.add(p + ".fc2", "gemm", m=seq, c=ffn, k=hidden)
    b.add(p + ".add2", "add")


def vit_base() -> list[Layer]:
    """ViT-Base/16: 16x16 patch embedding (196 patches + class token = 197 tokens), 12
    pre-norm encoders (768 hidden, 12 heads, MLP 3072 with GELU), head on the class token."""
    b = _Builder()
    b.add("patch_embed", "conv", h=224, w=224, c=3, k=768, f=16, stride=16)
    for i in range(12):
        _encoder(b, f"encoder{i}", 197, 768, 12, 3072, "gelu")
    b.add("ln_final", "layernorm", m=197, c=768)
    b.add("head", "gemm", m=1, c=768, k=1000)
    return b.layers


def bert_base(seq: int = 128) -> list[Layer]:
    """BERT-Base encoder stack (12 layers, 768 hidden, 12 heads, FFN 3072, GELU) and the
    pooler + 2-way classifier (SST-2)."""
    b = _Builder()
    for i in range(12):
        _encoder(b, f"encoder{i}", seq, 768, 12, 3072, "gelu")
    b.add("pooler", "gemm", m=1, c=768, k=768)
    b.add("classifier", "gemm", m=1, c=768, k=2)
    return b.layers


def mobilebert_tiny(seq: int = 128) -> list[Layer]:
    """MobileBERT-tiny: 24 layers, 512 inter-block / 128 intra-block hidden, 4 heads, shared
    query/key bottleneck, 2 stacked FFNs of 512, ReLU, element-wise NoNorm (an affine
    vector op, modelled as a 1-pass layernorm-sized vector op)."""
    b = _Builder()
    for i in range(24):
        p = f"layer{i}"
        b.add(p + ".bottleneck_in", "gemm", m=seq, c=512, k=128)
        b.add(p + ".bottleneck_qk", "gemm", m=seq, c=512, k=128)
        b.add(p + ".q", "gemm", m=seq, c=128, k=128)
        b.add(p + ".k", "gemm", m=seq, c=128, k=128)
        b.add(p + ".v", "gemm", m=seq, c=512, k=128)
        b.add(p + ".split_heads", "reshape")
        b.add(p + ".k_t", "transpose")
        b.add(p + ".qk", "gemm", m=seq, c=32, k=seq, batch=4)
        b.add(p + ".softmax", "softmax", m=seq * 4, c=seq)
        b.add(p + ".av", "gemm", m=seq, c=seq, k=32, batch=4)
        b.add(p + ".merge_heads", "reshape")
        b.add(p + ".attn_out", "gemm", m=seq, c=128, k=128)
        b.add(p + ".add1", "add")
        for j in range(2):
            b.add(p + f".ffn{j}.fc1", "gemm", m=seq, c=128, k=512)
            b.add(p + f".ffn{j}.act", "relu")
            b.add(p + f".ffn{j}.fc2", "gemm", m=seq, c=512, k=128)
            b.add(p + f".ffn{j}.add", "add")
        b.add(p + ".bottleneck_out", "gemm", m=seq, c=128, k=512)
        b.add(p + ".add2", "add")
    b.add("pooler", "gemm", m=1, c=512, k=512)
    b.add("classifier", "gemm", m=1, c=512, k=2)
    return b.layers


MODELS: dict[str, Callable[[], list[Layer]]] = {
    "resnet18": lambda: resnet(18),
    "resnet50": lambda: resnet(50),
    "mobilenetv2": mobilenet_v2,
    "vit_base": vit_base,
    "mobilebert_tiny": mobilebert_tiny,
    "bert_base": bert_base,
}


def model(name: str) -> list[Layer]:
    """The layers of model ``name`` (a key of :data:`MODELS`)."""
    if name not in MODELS:
        raise VoyagerError("model", f"unknown model {name!r} (known: {', '.join(MODELS)})")
    return MODELS[name]()
