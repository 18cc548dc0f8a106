"""Build small QDQ ONNX models in code (tests, the library scenario's model, examples).

Every op is written the way onnxruntime's static quantiser writes it: DequantizeLinear of
int8 weights (per output channel) and of the int32 bias, the float op, QuantizeLinear,
DequantizeLinear. Scales are powers of two and biases odd multiples of half of input scale
x weight scale, the form whose integer requantisation on the cores is provably bit-exact
against onnxruntime (docs/onnx.md, "Quantisation mapping").
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

OPSET = 17


class _GraphBuilder:
    """What both builders share: the onnx modules, the seeded weights, the node and
    initializer lists, unique names, the float input and the checked model at the end."""

    def __init__(self, name: str, shape: tuple[int, int, int], seed: int):
        import onnx
        from onnx import TensorProto, helper
        self.onnx, self.helper, self.TP = onnx, helper, TensorProto
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.n = 0
        self.input = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, *shape])
        self.shape: dict[str, tuple[int, ...]] = {}

    def _id(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def _model(self, out: str, shape: list[int]) -> Any:
        """The model of the nodes so far with output ``out`` (float, ``shape``), checked."""
        h = self.helper
        y = h.make_tensor_value_info(out, self.TP.FLOAT, shape)
        g = h.make_graph(self.nodes, self.name, [self.input], [y], initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)], producer_name="cosim.onnx.builders")
        m.ir_version = 8
        self.onnx.checker.check_model(m)
        return m


class QdqBuilder(_GraphBuilder):
    """Add ops one by one (each returns the name of its dequantised float output)."""

    def __init__(self, name: str, shape: tuple[int, int, int], seed: int = 0, in_exp: int = -4,
                 in_unsigned: bool = False):
        super().__init__(name, shape, seed)
        self.scale: dict[str, float] = {}
        self.unsigned: dict[str, bool] = {}
        x = self._qdq("input", 2.0 ** in_exp, in_unsigned, "in")
        self.shape[x] = shape
        self.x = x

    # ----- plumbing ------------------------------------------------------------------------
    def _init(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(self.onnx.numpy_helper.from_array(arr, name))
        return name

    def _qdq(self, x: str, scale: float, unsigned: bool, base: str) -> str:
        s = self._init(self._id(base + "_s"), np.array(scale, np.float32))
        z = self._init(self._id(base + "_z"), np.array(0, np.uint8 if unsigned else np.int8))
        q, d = self._id(base + "_q"), self._id(base + "_dq")
        self.nodes.append(self.helper.make_node("QuantizeLinear", [x, s, z], [q], name=self._id("Q_" + base)))
        self.nodes.append(self.helper.make_node("DequantizeLinear", [q, s, z], [d], name=self._id("DQ_" + base)))
        self.scale[d] = scale
        self.unsigned[d] = unsigned
        return d

    def _dq_const(self, vals: np.ndarray, scales: np.ndarray, base: str, axis: int = 0) -> str:
        v = self._init(self._id(base), vals)
        s = self._init(self._id(base + "_s"), scales.astype(np.float32))
        z = self._init(self._id(base + "_z"), np.zeros(scales.shape, vals.dtype))
        out = self._id(base + "_dq")
        self.nodes.append(self.helper.make_node("DequantizeLinear", [v, s, z], [out], axis=axis,
                                                name=self._id("DQ_" + base)))
        return out

    def _out_scale(self, sx: float, sw: float, terms: int, gain: float = 1.0) -> float:
        """A power-of-two output scale giving outputs of roughly the inputs' spread."""
        m = 1.0 / (math.sqrt(terms) * 80.0 * gain)
        return sx * sw / 2.0 ** round(math.log2(m))

    # ----- ops -----------------------------------------------------------------------------
    def conv(self, x: str, cout: int, k: int = 3, stride: int = 1, pad: int | None = None,
             groups: int = 1, relu: bool = True, act: str = "Relu", out_scale: float | None = None) -> str:
        c, h, w = self.shape[x]
        pad = k // 2 if pad is None else pad
        cin_g = c // groups
        wq = self.rng.integers(-64, 64, size=(cout, cin_g, k, k)).astype(np.int8)
        w_exp = self.rng.integers(-8, -5, size=cout)
        ws = (2.0 ** w_exp).astype(np.float32)
        sx = self.scale[x]
        wn = self._dq_const(wq, ws, "w")
        bq = (2 * self.rng.integers(-2000, 2000, size=cout) + 1).astype(np.int32)   # odd: half units
        bn = self._dq_const(bq, (sx * ws / 2).astype(np.float32), "b")
        y = self._id("conv")
        self.nodes.append(self.helper.make_node("Conv", [x, wn, bn], [y], kernel_shape=[k, k],
                                                strides=[stride, stride], pads=[pad] * 4, group=groups,
                                                name=self._id("Conv")))
        if relu:
            r = self._id("relu")
            if act == "Clip":
                lo = self._init(self._id("clip_lo"), np.array(0.0, np.float32))
                hi = self._init(self._id("clip_hi"), np.array(1e4, np.float32))
                self.nodes.append(self.helper.make_node("Clip", [y, lo, hi], [r], name=self._id("Clip")))
            else:
                self.nodes.append(self.helper.make_node("Relu", [y], [r], name=self._id("Relu")))
            y = r
        sy = out_scale or self._out_scale(sx, float(2.0 ** -7), cin_g * k * k)
        d = self._qdq(y, sy, relu, "a")
        self.shape[d] = (cout, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1)
        return d

    def add(self, a: str, b: str, relu: bool = True) -> str:
        y = self._id("add")
        self.nodes.append(self.helper.make_node("Add", [a, b], [y], name=self._id("Add")))
        if relu:
            r = self._id("relu")
            self.nodes.append(self.helper.make_node("Relu", [y], [r], name=self._id("Relu")))
            y = r
        d = self._qdq(y, max(self.scale[a], self.scale[b]), relu, "s")
        self.shape[d] = self.shape[a]
        return d

    def gap(self, x: str) -> str:
        c, h, w = self.shape[x]
        y = self._id("gap")
        self.nodes.append(self.helper.make_node("GlobalAveragePool", [x], [y], name=self._id("GlobalAveragePool")))
        # scale x (n-1)/n with n = h*w a power of two: the averaging ratio 1/(n-1) has an odd
        # denominator, so no rounding tie can occur (docs/onnx.md)
        d = self._qdq(y, self.scale[x] * (h * w - 1) / (h * w), self.unsigned[x], "p")
        self.shape[d] = (c, 1, 1)
        return d

    def avgpool(self, x: str, k: int = 2) -> str:
        c, h, w = self.shape[x]
        y = self._id("avg")
        self.nodes.append(self.helper.make_node("AveragePool", [x], [y], kernel_shape=[k, k], strides=[k, k],
                                                name=self._id("AveragePool")))
        d = self._qdq(y, self.scale[x] * (k * k - 1) / (k * k), self.unsigned[x], "p")
        self.shape[d] = (c, h // k, w // k)
        return d

    def maxpool(self, x: str, k: int = 2, stride: int | None = None, pad: int = 0) -> str:
        c, h, w = self.shape[x]
        st = stride or k
        y = self._id("max")
        self.nodes.append(self.helper.make_node("MaxPool", [x], [y], kernel_shape=[k, k], strides=[st, st],
                                                pads=[pad] * 4, name=self._id("MaxPool")))
        d = self._qdq(y, self.scale[x], self.unsigned[x], "m")
        self.shape[d] = (c, (h + 2 * pad - k) // st + 1, (w + 2 * pad - k) // st + 1)
        return d

    def leaky(self, x: str, alpha: float = 0.1, out_scale: float | None = None) -> str:
        """DequantizeLinear -> LeakyRelu -> QuantizeLinear (int8), the input's scale by default."""
        y = self._id("leaky")
        self.nodes.append(self.helper.make_node("LeakyRelu", [x], [y], alpha=alpha, name=self._id("LeakyRelu")))
        d = self._qdq(y, out_scale or self.scale[x], False, "l")
        self.shape[d] = self.shape[x]
        return d

    def concat(self, xs: list[str]) -> str:
        y = self._id("cat")
        self.nodes.append(self.helper.make_node("Concat", xs, [y], axis=1, name=self._id("Concat")))
        d = self._qdq(y, self.scale[xs[0]], self.unsigned[xs[0]], "c")
        c = sum(self.shape[x][0] for x in xs)
        self.shape[d] = (c, *self.shape[xs[0]][1:])
        return d

    def flatten(self, x: str) -> str:
        y = self._id("flat")
        self.nodes.append(self.helper.make_node("Flatten", [x], [y], axis=1, name=self._id("Flatten")))
        self.scale[y], self.unsigned[y] = self.scale[x], self.unsigned[x]
        self.shape[y] = (int(np.prod(self.shape[x])),)
        return y

    def gemm(self, x: str, n: int) -> str:
        k = self.shape[x][0]
        wq = self.rng.integers(-64, 64, size=(n, k)).astype(np.int8)
        ws = np.full(n, 2.0 ** -7, np.float32)
        sx = self.scale[x]
        wn = self._dq_const(wq, ws, "fw")
        bq = (2 * self.rng.integers(-2000, 2000, size=n) + 1).astype(np.int32)
        bn = self._dq_const(bq, (sx * ws / 2).astype(np.float32), "fb")
        y = self._id("gemm")
        self.nodes.append(self.helper.make_node("Gemm", [x, wn, bn], [y], transB=1, name=self._id("Gemm")))
        d = self._qdq(y, self._out_scale(sx, 2.0 ** -7, k), False, "g")
        self.shape[d] = (n,)
        return d

    def build(self, out: str) -> Any:
        return self._model(out, [1, *self.shape[out]])


def resnet20(seed: int = 0, hw: int = 32, width: int = 16, classes: int = 10) -> Any:
    """ResNet-20 for CIFAR (3 stages of 3 basic blocks, 1x1 stride-2 shortcuts), QDQ int8."""
    b = QdqBuilder("resnet20", (3, hw, hw), seed)
    x = b.conv(b.x, width)
    for stage in range(3):
        for blk in range(3):
            cout = width << stage
            st = 2 if stage and not blk else 1
            sc = b.conv(x, cout, k=1, stride=st, pad=0, relu=False) if st == 2 else x
            y = b.conv(x, cout, stride=st)
            y = b.conv(y, cout, relu=False, out_scale=b.scale[sc])   # equal scales: an exact add
            x = b.add(y, sc)
    return b.build(b.gemm(b.flatten(b.gap(x)), classes))


def mobilenet(seed: int = 0, hw: int = 16, classes: int = 10) -> Any:
    """A small MobileNet-style network: depthwise-separable blocks, ReLU6-like Clip,
    a max-pooling-free head (GlobalAveragePool, Gemm)."""
    b = QdqBuilder("mobilenet", (3, hw, hw), seed)
    x = b.conv(b.x, 8, stride=2, act="Clip")
    for cout, st in ((16, 1), (16, 2), (32, 1)):
        c = b.shape[x][0]
        x = b.conv(x, c, groups=c, stride=st, act="Clip")       # depthwise 3x3
        x = b.conv(x, cout, k=1, pad=0, act="Clip")              # pointwise 1x1
    return b.build(b.gemm(b.flatten(b.gap(x)), classes))


def tiny(seed: int = 0) -> Any:
    """The library scenario's model: conv, depthwise conv, residual add, concat, average
    pooling, flatten and a classifier on an 8x8x4 input (a few kB)."""
    b = QdqBuilder("onnx_tiny", (4, 8, 8), seed)
    x = b.conv(b.x, 8)
    y = b.conv(x, 8, groups=8)
    y = b.conv(y, 8, k=1, pad=0, relu=False, out_scale=b.scale[x])
    x = b.add(y, x)
    x = b.concat([x, b.conv(x, 8, k=1, pad=0, out_scale=b.scale[x])])
    x = b.avgpool(x, 2)
    return b.build(b.gemm(b.flatten(x), 10))


def darknet(seed: int = 0, hw: int = 16, classes: int = 10) -> Any:
    """A small YOLO/Darknet-style backbone: convolutions, each followed by a quantised
    LeakyRelu (slope 0.1, then 0.125), and 3x3 stride-2 max pooling with padding, then the
    usual head."""
    b = QdqBuilder("darknet", (3, hw, hw), seed)
    x = b.x
    for cout in (8, 16):
        x = b.leaky(b.conv(x, cout, relu=False), 0.1)
        x = b.maxpool(x, 3, stride=2, pad=1)
    x = b.leaky(b.conv(x, 32, relu=False), 0.125)
    return b.build(b.gemm(b.flatten(b.gap(x)), classes))


def wide(seed: int = 0, hw: int = 48, classes: int = 10) -> Any:
    """A model whose layers exceed the TCDM (48x48x32 int8 tensors, 72 KiB each: a layer's
    input and output together do not fit), so they run in bands of rows: conv, LeakyRelu,
    conv, residual add, concat, LeakyRelu (on 144 KiB), padded max pooling, then a small
    head."""
    b = QdqBuilder("wide", (3, hw, hw), seed)
    x = b.leaky(b.conv(b.x, 32, relu=False), 0.125)
    s = b.add(b.conv(x, 32, relu=False, out_scale=b.scale[x]), x, relu=False)
    m = b.maxpool(b.leaky(b.concat([s, x]), 0.1), 3, stride=2, pad=1)
    y = b.conv(b.maxpool(m, 2), 16)
    return b.build(b.gemm(b.flatten(b.gap(y)), classes))


class FloatBuilder(_GraphBuilder):
    """Float models (Conv + BatchNormalization + Relu/Clip, Add, pooling, Gemm)."""

    def __init__(self, name: str, shape: tuple[int, int, int], seed: int = 0):
        super().__init__(name, shape, seed)
        self.shape["input"] = shape
        self.x = "input"

    def _init(self, base: str, arr: np.ndarray) -> str:
        name = self._id(base)
        self.inits.append(self.onnx.numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def _node(self, op: str, ins: list[str], **attrs: Any) -> str:
        y = self._id(op.lower())
        self.nodes.append(self.helper.make_node(op, ins, [y], name=self._id(op), **attrs))
        return y

    def conv(self, x: str, cout: int, k: int = 3, stride: int = 1, groups: int = 1, relu: bool = True,
             bn: bool = True, act: str = "Relu") -> str:
        c, h, w = self.shape[x]
        pad = k // 2
        fan = c // groups * k * k
        wt = self.rng.normal(0, math.sqrt(2.0 / fan), size=(cout, c // groups, k, k))
        y = self._node("Conv", [x, self._init("w", wt), self._init("b", self.rng.normal(0, 0.1, cout))],
                       kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=groups)
        if bn:
            y = self._node("BatchNormalization", [y, self._init("g", self.rng.uniform(0.5, 1.5, cout)),
                                                  self._init("beta", self.rng.normal(0, 0.1, cout)),
                                                  self._init("mean", self.rng.normal(0, 0.1, cout)),
                                                  self._init("var", self.rng.uniform(0.5, 1.5, cout))])
        if relu:
            if act == "Clip":
                y = self._node("Clip", [y, self._init("lo", np.array(0.0)), self._init("hi", np.array(6.0))])
            else:
                y = self._node("Relu", [y])
        self.shape[y] = (cout, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1)
        return y

    def add(self, a: str, b: str) -> str:
        y = self._node("Relu", [self._node("Add", [a, b])])
        self.shape[y] = self.shape[a]
        return y

    def head(self, x: str, classes: int) -> Any:
        c = self.shape[x][0]
        y = self._node("Flatten", [self._node("GlobalAveragePool", [x])], axis=1)
        wt = self.rng.normal(0, math.sqrt(1.0 / c), size=(classes, c))
        y = self._node("Gemm", [y, self._init("fw", wt), self._init("fb", self.rng.normal(0, 0.1, classes))],
                       transB=1)
        return self._model(y, [1, classes])


def resnet20_float(seed: int = 0, hw: int = 32, width: int = 16, classes: int = 10) -> Any:
    """ResNet-20 in float with BatchNormalization after every convolution."""
    b = FloatBuilder("resnet20_float", (3, hw, hw), seed)
    x = b.conv(b.x, width)
    for stage in range(3):
        for blk in range(3):
            cout = width << stage
            st = 2 if stage and not blk else 1
            sc = b.conv(x, cout, k=1, stride=st, relu=False) if st == 2 else x
            y = b.conv(b.conv(x, cout, stride=st), cout, relu=False)
            x = b.add(y, sc)
    return b.head(x, classes)


def mobilenet_float(seed: int = 0, hw: int = 16, classes: int = 10) -> Any:
    """The MobileNet-style network in float (depthwise-separable blocks, ReLU6 as Clip)."""
    b = FloatBuilder("mobilenet_float", (3, hw, hw), seed)
    x = b.conv(b.x, 8, stride=2, act="Clip")
    for cout, st in ((16, 1), (16, 2), (32, 1)):
        c = b.shape[x][0]
        x = b.conv(x, c, groups=c, stride=st, act="Clip")
        x = b.conv(x, cout, k=1, act="Clip")
    return b.head(x, classes)


def model_file_main(make: Any, out: Any, doc: str | None, argv: list[str] | None = None) -> int:
    """The command line of a script that makes a committed model file (scenarios/data/
    onnx_*_make.py): write ``make()``'s bytes to ``out`` (a Path), or with ``--check`` exit
    1 when the committed file differs from them."""
    import argparse
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead")
    args = ap.parse_args(argv)
    data = make()
    if args.check:
        from tlm.files import read_bytes
        same = out.exists() and read_bytes(out, "onnx") == data
        print(f"{out.name}: {'up to date' if same else 'differs from what this script makes'}")
        return 0 if same else 1
    out.write_bytes(data)
    print(f"wrote {out} ({len(data)} bytes)")
    return 0
