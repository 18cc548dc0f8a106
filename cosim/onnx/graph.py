"""Translate a checked ONNX model (QDQ or QLinear form) into our integer network (QNet).

Walks the nodes in their (topological) order and keeps, per ONNX tensor, what it is:
a constant, a quantised tensor of ours (``q``), the dequantised view of one (``dq``), a
dequantised constant (``cdq``: integer values with scales), or a float result still
waiting for its QuantizeLinear (``pending``). A QuantizeLinear after a pending Conv, Gemm,
MatMul, Add, AveragePool or Concat (with a ReLU/Clip between) closes it into one integer op.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .errors import OnnxImportError
from .ir import QNet, QOp, QTensor
from .requant import add_requant, conv_requant, frac, leaky_requant

SUPPORTED = ("Conv", "Gemm", "MatMul", "Relu", "Clip", "LeakyRelu", "Add", "MaxPool", "AveragePool",
             "GlobalAveragePool", "Flatten", "Reshape", "Concat", "BatchNormalization",
             "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "Constant", "Identity")
#: the nearest supported op for ops we do not import
NEAREST = {"ConvTranspose": "Conv with stride 1 after an upsampling Resize is not supported either; "
                            "use a stride-1 Conv", "Sigmoid": "Relu", "Tanh": "Clip", "HardSigmoid": "Clip",
           "HardSwish": "Relu", "Softmax": "none: end the graph at the logits (Gemm) and apply "
                                          "Softmax on the host", "Mul": "Add", "Sub": "Add",
           "GlobalMaxPool": "GlobalAveragePool", "Gelu": "Relu", "PRelu": "LeakyRelu",
           "Elu": "Relu", "Selu": "Relu", "Transpose": "Flatten/Reshape", "Squeeze": "Flatten",
           "Unsqueeze": "Reshape", "Pad": "the pads attribute of Conv", "Resize": "none",
           "MatMulInteger": "QLinearMatMul", "ConvInteger": "QLinearConv", "Div": "Mul by a "
           "constant is not supported either; fold it into the scales", "Dropout": "Identity"}


@dataclass
class _Pending:
    kind: str                       # conv | add | concat | maxpool
    nodes: list[str]
    ops: list[str]
    inputs: list[str]               # our tensor names
    shape: tuple[int, int, int]     # output (H, W, C)
    w: np.ndarray | None = None     # (Cout, KH, KW, Cin_per_group) int
    w_scale: np.ndarray | None = None
    bias: list | None = None        # Fractions, in units of s_x * s_w
    stride: int = 1
    pad: int = 0
    groups: int = 1
    pool_div: int = 0               # AveragePool: window size (the divisor)
    act: tuple = ()                 # () | ("relu",) | ("clip", lo, hi)
    extra: dict[str, Any] = field(default_factory=dict)


def _attrs(node: Any) -> dict[str, Any]:
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _ident(s: str) -> str:
    v = re.sub(r"[^A-Za-z0-9_\-]", "_", s) or "node"
    return v if re.match(r"[A-Za-z_]", v) else "n" + v


class _Translator:
    def __init__(self, model: Any, file: str):
        import onnx.numpy_helper as nh
        self.file = file
        self.model = model
        self.g = model.graph
        self.val: dict[str, tuple] = {}
        for init in self.g.initializer:
            self.val[init.name] = ("const", nh.to_array(init))
        self.shapes: dict[str, tuple[int, ...]] = {}
        for vi in list(self.g.value_info) + list(self.g.input) + list(self.g.output):
            dims = vi.type.tensor_type.shape.dim
            self.shapes[vi.name] = tuple(int(d.dim_value) for d in dims)
        self.tensors: dict[str, QTensor] = {}
        self.ops: list[QOp] = []
        self.placement: dict[str, tuple[str, str, str]] = {}
        self.input: str | None = None
        self.names: set[str] = set()
        self.aliases: dict[str, str] = {}      # a flattened view -> the tensor holding its data
        self.inexact_bias = False              # set by _bias, read when the op closes

    # ----- helpers -----------------------------------------------------------------------
    def err(self, node: Any, msg: str, attribute: str | None = None) -> OnnxImportError:
        return OnnxImportError(self.file, msg, node.name or node.output[0], node.op_type, attribute)

    def _uniq(self, base: str) -> str:
        name, i = _ident(base), 1
        while name in self.names:
            i += 1
            name = f"{_ident(base)}_{i}"
        self.names.add(name)
        return name

    def const(self, node: Any, name: str, what: str) -> np.ndarray:
        v = self.val.get(name)
        if v is None or v[0] != "const":
            raise self.err(node, f"{what} ({name!r}) must be a constant initializer")
        return v[1]

    def get(self, node: Any, name: str, kinds: tuple[str, ...], what: str) -> tuple:
        v = self.val.get(name)
        if v is None:
            raise self.err(node, f"input {name!r} is not produced by a supported node")
        if v[0] not in kinds:
            want = {"dq": "a dequantised activation (DequantizeLinear of a QuantizeLinear output)",
                    "q": "a quantised activation", "pending": "a float result"}
            raise self.err(node, f"{what} {name!r} must be "
                                 + " or ".join(want.get(k, k) for k in kinds)
                                 + "; float (unquantised) activations are not deployed: quantise "
                                   "the model in QDQ form (onnxruntime.quantization.quantize_static)")
        return v

    def hwc(self, name: str) -> tuple[int, int, int]:
        s = self.shapes.get(name, ())
        if len(s) == 4:
            return (s[2], s[3], s[1])
        if len(s) == 2:
            return (1, 1, s[1])
        return (0, 0, 0)

    # ----- the walk ----------------------------------------------------------------------
    def run(self) -> QNet:
        inits = {i.name for i in self.g.initializer}
        gin = [i for i in self.g.input if i.name not in inits][0]
        self.val[gin.name] = ("input",)
        for node in self.g.node:
            op = node.op_type
            if node.domain not in ("", "ai.onnx"):
                raise self.err(node, f"custom-domain op {node.domain}.{op} is not supported")
            if op not in SUPPORTED:
                alt = NEAREST.get(op, "one of " + ", ".join(SUPPORTED[:14]))
                raise self.err(node, f"op {op} is not supported; nearest supported: {alt}")
            getattr(self, "_" + op)(node)
        outs = [o.name for o in self.g.output]
        if len(outs) != 1:
            raise OnnxImportError(self.file, f"the graph has {len(outs)} outputs; exactly one is supported")
        v = self.val.get(outs[0])
        if v is None or v[0] not in ("q", "dq"):
            raise OnnxImportError(self.file, f"the graph output {outs[0]!r} is not a quantised tensor "
                                             "(end the graph with QuantizeLinear/DequantizeLinear)")
        if self.input is None or not self.ops:
            raise OnnxImportError(self.file, "the graph input is never quantised or no op remains")
        name = _ident(self.g.name or "onnx")
        return QNet(name, self.file, self.tensors, self.ops, self.input, v[1], self.placement, self.aliases)

    def place(self, node: Any, op: str, how: str) -> None:
        self.placement[node.name or node.output[0]] = (node.op_type, op, how)

    # ----- constants and quantisation ---------------------------------------------------
    def _Constant(self, node: Any) -> None:
        import onnx.numpy_helper as nh
        a = _attrs(node)
        if "value" not in a:
            raise self.err(node, "only a tensor 'value' Constant is supported", "value")
        self.val[node.output[0]] = ("const", nh.to_array(a["value"]))
        self.place(node, "", "constant (folded)")

    def _Identity(self, node: Any) -> None:
        self.val[node.output[0]] = self.val.get(node.input[0], ("missing",))
        self.place(node, "", "identity (removed)")

    def _qparams(self, node: Any, scale_name: str, zp_name: str | None,
                 types: tuple = (np.int8, np.uint8)) -> tuple[np.ndarray, np.ndarray, Any]:
        scale = self.const(node, scale_name, "the scale")
        if zp_name:
            zp = self.const(node, zp_name, "the zero point")
        else:
            zp = np.zeros_like(scale, dtype=np.uint8)
        if zp.dtype not in types:
            raise self.err(node, f"zero point type {zp.dtype} is not supported (int8 or uint8 only)",
                           "y_zero_point" if node.op_type == "QuantizeLinear" else "x_zero_point")
        if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise self.err(node, f"scale {scale.reshape(-1)[:4].tolist()} must be positive and finite",
                           "y_scale" if node.op_type == "QuantizeLinear" else "x_scale")
        return scale.astype(np.float32), zp, zp.dtype

    def _QuantizeLinear(self, node: Any) -> None:
        a = _attrs(node)
        scale, zp, dt = self._qparams(node, node.input[1], node.input[2] if len(node.input) > 2 else None)
        if scale.size != 1:
            raise self.err(node, "per-channel activation quantisation is not supported", "axis")
        if a.get("saturate", 1) != 1 or a.get("block_size", 0):
            raise self.err(node, "only saturating, unblocked QuantizeLinear is supported", "block_size")
        off = 128 if dt == np.uint8 else 0
        zps = int(zp.reshape(-1)[0]) - off
        s = float(scale.reshape(-1)[0])
        src = self.val.get(node.input[0])
        out = node.output[0]
        name = self._uniq(out)
        if src is not None and src[0] == "input":
            self.tensors[name] = QTensor(name, out, self.hwc(node.input[0]), s, zps, off)
            self.input = name
            self.val[out] = ("q", name)
            self.place(node, name, "network input quantisation (the input is given as integers)")
            return
        if src is not None and src[0] == "dq":    # DQ -> (MaxPool/Flatten) -> Q: the same numbers
            xt = self.tensors[src[1]]
            if frac(xt.scale) != frac(s) or xt.zp != zps or xt.offset != off:
                raise self.err(node, "requantising a tensor without an op between is not supported "
                                     "(use the input's scale and zero point)", "y_scale")
            self.names.discard(name)
            if xt.onnx == node.input[0]:   # a MaxPool's float output: compare its quantised form
                xt.onnx = out
            self.val[out] = ("q", src[1])
            self.place(node, src[1], "same quantisation as its input (removed)")
            return
        p = self.get(node, node.input[0], ("pending",), "the quantised value")[1]
        t = QTensor(name, out, p.shape, s, zps, off)
        self.tensors[name] = t
        self.val[out] = ("q", name)
        self._close(node, p, t)

    def _DequantizeLinear(self, node: Any) -> None:
        a = _attrs(node)
        src = self.val.get(node.input[0])
        if src is not None and src[0] == "q":
            self.val[node.output[0]] = ("dq", src[1])
            self.place(node, "", f"dequantisation of {src[1]} (folded into its consumers)")
            return
        x = self.const(node, node.input[0], "the dequantised value")
        scale, zp, _ = self._qparams(node, node.input[1], node.input[2] if len(node.input) > 2 else None,
                                     (np.int8, np.uint8, np.int32))
        if x.dtype not in (np.int8, np.uint8, np.int32):
            raise self.err(node, f"constant of type {x.dtype} is not supported (int8, uint8, int32)")
        self.val[node.output[0]] = ("cdq", x.astype(np.int64), scale.reshape(-1), zp.astype(np.int64).reshape(-1),
                                    int(a.get("axis", 1)))
        self.place(node, "", "dequantisation of a constant (folded into its consumer)")

    def _wconst(self, node: Any, name: str, axis_out: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
        """Integer weights and per-output-channel float32 scales from a DQ'd constant."""
        v = self.val.get(name)
        if v is None or v[0] != "cdq":
            raise self.err(node, f"weights {name!r} must be a DequantizeLinear of a constant "
                                 "(float weights are not deployed: quantise the model in QDQ form)")
        _, w, scale, zp, axis = v
        if np.any(zp != 0):
            raise self.err(node, "weights with a non-zero zero point are not supported (the "
                                 "correction would vary per pixel): quantise weights symmetrically",
                           "w_zero_point")
        if w.min() < -128 or w.max() > 127:
            raise self.err(node, "weights outside int8 [-128, 127] (uint8 weights above 127) are not "
                                 "supported by the cores' int8 kernels")
        if scale.size == 1:
            scale = np.repeat(scale, n_out)
        elif axis % w.ndim != axis_out or scale.size != n_out:
            raise self.err(node, f"per-channel weight scales must run along the output channels "
                                 f"(axis {axis_out})", "axis")
        return w, scale

    def _bias(self, node: Any, name: str, sx: float, ws: np.ndarray) -> list[Fraction]:
        """Biases in units of ``s_x * s_w`` (integers, or halves: a half-unit breaks ties)."""
        v = self.val.get(name)
        want = [frac(sx) * frac(s) for s in ws]
        if v is not None and v[0] == "qbias":     # QLinearConv: int32 in units of s_x * s_w
            return [Fraction(int(b)) for b in v[1].reshape(-1)]
        if v is not None and v[0] == "cdq":
            _, b, bs, bz, _ = v
            bs = np.repeat(bs, b.size) if bs.size == 1 else bs
            if np.any(bz != 0):
                raise self.err(node, "the bias has a non-zero zero point", "zero_point")
            vals = [int(bi) * frac(si) for bi, si in zip(b, bs)]
        elif v is not None and v[0] == "const":
            vals = [frac(x) for x in v[1].reshape(-1)]
        else:
            raise self.err(node, f"the bias {name!r} must be a constant")
        out = []
        for val, m in zip(vals, want):
            q = val / m
            if q.denominator not in (1, 2):
                # a bias scale rounded to float32 (s_b = fl(s_x * s_w), as quantisers write
                # it): the nearest half unit; such a layer is not proven exact
                q = Fraction(round(q * 2), 2)
                self.inexact_bias = True
            out.append(q)
        return out

    # ----- compute ops (pending until their QuantizeLinear) ----------------------------
    def _Conv(self, node: Any) -> None:
        a = _attrs(node)
        x = self.get(node, node.input[0], ("dq",), "the input")[1]
        xt = self.tensors[x]
        ws = self.shapes.get(node.input[1]) or ()
        v = self.val.get(node.input[1])
        n_out = int(v[1].shape[0]) if v is not None and v[0] in ("cdq", "const") else 0
        w, scale = self._wconst(node, node.input[1], 0, n_out)
        if w.ndim != 4:
            raise self.err(node, f"only 2-D convolutions are supported (weights {tuple(ws)})")
        kh, kw = w.shape[2:]
        if list(a.get("dilations", [1, 1])) != [1, 1]:
            raise self.err(node, f"dilation {list(a['dilations'])} is not supported (1 only)", "dilations")
        st = list(a.get("strides", [1, 1]))
        if st[0] != st[1]:
            raise self.err(node, f"strides {st} differ per axis (equal strides only)", "strides")
        pads = list(a.get("pads", [0, 0, 0, 0]))
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise self.err(node, "auto_pad is not supported: give explicit pads", "auto_pad")
        if len(set(pads)) != 1:
            raise self.err(node, f"asymmetric pads {pads} are not supported (equal pads only)", "pads")
        if kh != kw:
            raise self.err(node, f"a {kh}x{kw} kernel is not supported (square kernels only)", "kernel_shape")
        groups = int(a.get("group", 1))
        if groups < 1 or xt.shape[2] != w.shape[1] * groups or w.shape[0] % groups:
            raise self.err(node, f"{xt.shape[2]} input channels do not match weights {tuple(w.shape)} "
                                 f"with {groups} group(s)", "group")
        self.inexact_bias = False
        b = self._bias(node, node.input[2], xt.scale, scale) if len(node.input) > 2 and node.input[2] \
            else [Fraction(0)] * w.shape[0]
        self.val[node.output[0]] = ("pending", _Pending(
            "conv", [node.name or node.output[0]], [node.op_type], [x], self.hwc(node.output[0]),
            w=w.transpose(0, 2, 3, 1), w_scale=scale, bias=b, stride=int(st[0]), pad=int(pads[0]),
            groups=groups, extra={"inexact_bias": self.inexact_bias}))

    def _Gemm(self, node: Any) -> None:
        a = _attrs(node)
        if a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
            raise self.err(node, "alpha and beta must be 1", "alpha" if a.get("alpha", 1.0) != 1.0 else "beta")
        if a.get("transA", 0):
            raise self.err(node, "transA is not supported", "transA")
        self._fc(node, trans_b=bool(a.get("transB", 0)))

    def _MatMul(self, node: Any) -> None:
        self._fc(node, trans_b=False)

    def _fc(self, node: Any, trans_b: bool) -> None:
        x = self.get(node, node.input[0], ("dq",), "the input")[1]
        xt = self.tensors[x]
        v = self.val.get(node.input[1])
        if v is None or v[0] != "cdq" or v[1].ndim != 2:
            raise self.err(node, "the second operand must be a DequantizeLinear of a 2-D constant")
        n_out = v[1].shape[0] if trans_b else v[1].shape[1]
        w, scale = self._wconst(node, node.input[1], 0 if trans_b else 1, n_out)
        w = w if trans_b else w.T                    # (N, K)
        c, h, wd = xt.flat_from or (xt.shape[2], 1, 1)
        if xt.flat_from is None and xt.shape[:2] != (1, 1):
            raise self.err(node, f"the input {xt.onnx!r} is a {xt.shape} feature map; Flatten it first")
        if w.shape[1] != c * h * wd:
            raise self.err(node, f"weights {w.shape} do not match the input's {c * h * wd} features")
        self.inexact_bias = False
        b = self._bias(node, node.input[2], xt.scale, scale) if len(node.input) > 2 and node.input[2] \
            else [Fraction(0)] * n_out
        # ONNX flattens (C, H, W); our tensors are HWC: the FC is a full-window convolution
        wk = w.reshape(n_out, c, h, wd).transpose(0, 2, 3, 1)
        self.val[node.output[0]] = ("pending", _Pending(
            "conv", [node.name or node.output[0]], [node.op_type], [x], (1, 1, n_out), w=wk,
            w_scale=scale, bias=b, extra={"fc": True, "inexact_bias": self.inexact_bias}))

    def _pool(self, node: Any, k: int, stride: int, pad: int) -> None:
        x = self.get(node, node.input[0], ("dq",), "the input")[1]
        c = self.tensors[x].shape[2]
        # a depthwise convolution with all-one windows: its sum, requantised by 1/k^2
        self.val[node.output[0]] = ("pending", _Pending(
            "conv", [node.name or node.output[0]], [node.op_type], [x], self.hwc(node.output[0]),
            w=np.ones((c, k, k, 1), np.int64), w_scale=np.ones(c, np.float32), bias=[Fraction(0)] * c,
            stride=stride, pad=pad, groups=c, pool_div=k * k))

    def _window(self, node: Any, pads_ok: bool = False) -> tuple[int, int, int]:
        a = _attrs(node)
        ks = list(a.get("kernel_shape", []))
        st = list(a.get("strides", [1, 1]))
        pads = list(a.get("pads", [0, 0, 0, 0]))
        for key, v in (("kernel_shape", ks), ("strides", st)):
            if len(set(v)) != 1:
                raise self.err(node, f"{key} {v} differ per axis (square windows only)", key)
        if any(pads) and not (pads_ok and len(set(pads)) == 1 and pads[0] < ks[0]):
            raise self.err(node, f"pads {pads} are not supported for " + (
                "max pooling (equal on every side, below the window size)" if pads_ok
                else "average pooling (0 only)"), "pads")
        if a.get("ceil_mode", 0):
            raise self.err(node, "ceil_mode is not supported", "ceil_mode")
        if list(a.get("dilations", [1, 1])) != [1, 1]:
            raise self.err(node, "dilations are not supported", "dilations")
        return int(ks[0]), int(st[0]), int(pads[0]) if pads else 0

    def _AveragePool(self, node: Any) -> None:
        self._pool(node, *self._window(node))

    def _GlobalAveragePool(self, node: Any) -> None:
        x = self.get(node, node.input[0], ("dq",), "the input")[1]
        h, w, _ = self.tensors[x].shape
        if h != w:
            raise self.err(node, f"a {h}x{w} input: square feature maps only")
        self._pool(node, h, 1, 0)

    def _MaxPool(self, node: Any) -> None:
        if len(node.output) > 1 and node.output[1]:
            raise self.err(node, "the Indices output is not supported", "Indices")
        k, st, pad = self._window(node, pads_ok=True)
        src = self.val.get(node.input[0])
        if src is None or src[0] not in ("dq", "q"):
            raise self.err(node, "the input must be a (de)quantised activation")
        # max commutes with the monotone dequantisation: it runs on the integers
        name = self._uniq(node.output[0])
        xt = self.tensors[src[1]]
        t = QTensor(name, node.output[0], self.hwc(node.output[0]), xt.scale, xt.zp, xt.offset)
        self.tensors[name] = t
        op = QOp(self._uniq(node.name or "MaxPool"), "maxpool", [node.name or node.output[0]],
                 ["MaxPool"], [src[1]], name, stride=st, kernel=k, pad=pad)
        self.ops.append(op)
        self.val[node.output[0]] = (src[0], name)
        self.place(node, op.name, "")

    def _Add(self, node: Any) -> None:
        xs = [self.get(node, n, ("dq",), "the addend")[1] for n in node.input]
        self.val[node.output[0]] = ("pending", _Pending(
            "add", [node.name or node.output[0]], ["Add"], xs, self.tensors[xs[0]].shape))

    def _Concat(self, node: Any) -> None:
        a = _attrs(node)
        if a.get("axis") not in (1, -3):
            raise self.err(node, f"concatenation along axis {a.get('axis')} is not supported (channels, axis 1)",
                           "axis")
        xs = [self.get(node, n, ("dq",), "the input")[1] for n in node.input]
        self.val[node.output[0]] = ("pending", _Pending(
            "concat", [node.name or node.output[0]], ["Concat"], xs, self.hwc(node.output[0])))

    def _act(self, node: Any, act: tuple) -> None:
        p = self.get(node, node.input[0], ("pending",), "the input")[1]
        if p.act:
            raise self.err(node, "two activations in a row are not supported")
        p.act = act
        p.nodes.append(node.name or node.output[0])
        p.ops.append(node.op_type)
        self.val[node.output[0]] = ("pending", p)

    def _Relu(self, node: Any) -> None:
        self._act(node, ("relu",))

    def _Clip(self, node: Any) -> None:
        lo = float(self.const(node, node.input[1], "min").reshape(-1)[0]) if len(node.input) > 1 and node.input[1] \
            else -np.inf
        hi = float(self.const(node, node.input[2], "max").reshape(-1)[0]) if len(node.input) > 2 and node.input[2] \
            else np.inf
        self._act(node, ("clip", lo, hi))

    def _LeakyRelu(self, node: Any) -> None:
        alpha = float(np.float32(_attrs(node).get("alpha", 0.01)))
        src = self.val.get(node.input[0])
        if src is None or src[0] != "dq":
            raise self.err(node, f"LeakyRelu (alpha {alpha:g}) on an unquantised value: the cores requantise a "
                                 "Conv with one multiplier per channel; quantise its input first "
                                 "(QuantizeLinear + DequantizeLinear before it, as onnxruntime.quantization "
                                 "writes it), or use Relu", "alpha")
        self.val[node.output[0]] = ("pending", _Pending(
            "leaky", [node.name or node.output[0]], ["LeakyRelu"], [src[1]], self.tensors[src[1]].shape,
            extra={"alpha": alpha}))

    def _BatchNormalization(self, node: Any) -> None:
        raise self.err(node, "BatchNormalization after a quantised Conv cannot be folded any more; "
                             "fold it before quantising (cosim.onnx.fold.fold_batchnorm does, on the "
                             "float model)")

    def _Flatten(self, node: Any) -> None:
        self._reshape(node)

    def _Reshape(self, node: Any) -> None:
        self._reshape(node)

    def _reshape(self, node: Any) -> None:
        src = self.val.get(node.input[0])
        if src is None or src[0] not in ("dq", "q"):
            raise self.err(node, "the input must be a (de)quantised activation")
        xt = self.tensors[src[1]]
        shape = self.shapes.get(node.output[0], ())
        if len(shape) != 2 or shape[1] != xt.size:
            raise self.err(node, f"only flattening to (1, {xt.size}) is supported, got {shape}")
        name = self._uniq(node.output[0])
        h, w, c = xt.shape
        self.tensors[name] = QTensor(name, node.output[0], (1, 1, xt.size), xt.scale, xt.zp, xt.offset,
                                     flat_from=(c, h, w) if (h, w) != (1, 1) else None)
        self.val[node.output[0]] = (src[0], name)
        self.aliases[name] = self.aliases.get(src[1], src[1])
        self.place(node, "", f"view of {src[1]} (no data moves: the next op reads it flattened)")

    def _QLinearConv(self, node: Any) -> None:
        i = list(node.input) + [""] * (9 - len(node.input))
        x = self.get(node, i[0], ("q",), "the input")[1]
        self.val[node.input[0] + "#dq"] = ("dq", x)
        wq = self.const(node, i[3], "the weights")
        ws, wz, _ = self._qparams(node, i[4], i[5])
        self.val[i[3] + "#cdq"] = ("cdq", wq.astype(np.int64), ws.reshape(-1), wz.astype(np.int64).reshape(-1), 0)
        inner = _Node(node, [node.input[0] + "#dq", i[3] + "#cdq"] + ([i[8] + "#b"] if i[8] else []))
        if i[8]:
            self.val[i[8] + "#b"] = ("qbias", self.const(node, i[8], "the bias").astype(np.int64))
        self._Conv(inner)
        self._quantise_to(node, i[6], i[7])

    def _QLinearMatMul(self, node: Any) -> None:
        i = list(node.input)
        x = self.get(node, i[0], ("q",), "the input")[1]
        self.val[i[0] + "#dq"] = ("dq", x)
        wq = self.const(node, i[3], "the weights")
        ws, wz, _ = self._qparams(node, i[4], i[5])
        self.val[i[3] + "#cdq"] = ("cdq", wq.astype(np.int64), ws.reshape(-1), wz.astype(np.int64).reshape(-1), 1)
        self._fc(_Node(node, [i[0] + "#dq", i[3] + "#cdq"]), trans_b=False)
        self._quantise_to(node, i[6], i[7])

    def _quantise_to(self, node: Any, scale: str, zp: str) -> None:
        q = _Node(node, [node.output[0], scale, zp], op_type="QuantizeLinear")
        self._QuantizeLinear(q)

    # ----- closing a pending op at its QuantizeLinear ---------------------------------
    def _close(self, qnode: Any, p: _Pending, y: QTensor) -> None:
        p.nodes.append(qnode.name or qnode.output[0])
        p.ops.append(qnode.op_type)
        lo, relu = self._act_bounds(qnode, p, y)
        try:
            if p.kind == "conv":
                op = self._close_conv(p, y, relu)
            elif p.kind == "add":
                op = self._close_add(p, y)
            elif p.kind == "leaky":
                op = self._close_leaky(p, y)
            else:
                op = self._close_concat(qnode, p, y)
        except ValueError as e:
            raise self.err(qnode, str(e)) from None
        if p.kind != "conv" and lo > -128:
            raise self.err(qnode, f"a {p.ops[0]} followed by {p.ops[1]} clips at {lo - y.zp} above the "
                                  "output zero point; the kernel cannot (use zero point -128 / 0 for uint8)")
        self.ops.append(op)
        for n, t in zip(p.nodes, p.ops):
            self.placement[n] = (t, op.name, "")

    def _act_bounds(self, qnode: Any, p: _Pending, y: QTensor) -> tuple[int, bool]:
        """The act's lower clip in int8 storage, and whether the kernel's ReLU gives it."""
        if not p.act:
            return -128, False
        lo_f, hi_f = (0.0, np.inf) if p.act[0] == "relu" else p.act[1:]
        s = frac(y.scale)

        def q(v: float) -> float:
            if np.isinf(v):
                return v
            return round(frac(v) / s) + y.zp
        lo, hi = q(lo_f), q(hi_f)
        if hi < 127:
            raise self.err(qnode, f"the Clip maximum {hi_f} maps to {hi} < 127 in the output "
                                  "quantisation; the cores only saturate at the int8 range: choose the "
                                  "output scale so that it saturates there", "max")
        if lo <= -128:
            return -128, False
        if lo == 0 and p.kind == "conv":
            return 0, True
        raise self.err(qnode, f"the {p.ops[1]} lower bound maps to {lo} in the int8 output; the "
                              "cores clip at 0 or -128 only (use output zero point 0 for int8, 0 for uint8)",
                       "y_zero_point")

    def _close_conv(self, p: _Pending, y: QTensor, relu: bool) -> QOp:
        xt = self.tensors[p.inputs[0]]
        w = p.w
        cout = w.shape[0]
        if p.groups > 1:          # grouped/depthwise: zeros outside the groups (exact, dense)
            cin = w.shape[3] * p.groups
            full = np.zeros((cout, w.shape[1], w.shape[2], cin), np.int64)
            og, ig = cout // p.groups, cin // p.groups
            for g in range(p.groups):
                full[g * og:(g + 1) * og, :, :, g * ig:(g + 1) * ig] = w[g * og:(g + 1) * og]
            w = full
        sx, sy = frac(xt.scale), frac(y.scale)
        if p.pool_div:
            ms = [sx / (sy * p.pool_div)] * cout
            units = [sx] * cout
        else:
            ms = [sx * frac(s) / sy for s in p.w_scale]
            units = [sx * frac(s) for s in p.w_scale]
        wsum = w.reshape(cout, -1).sum(axis=1)
        offsets = [b - xt.zp * int(s) for b, s in zip(p.bias, wsum)]
        bounds = [int(128 * int(a) + abs(o)) + 1 for a, o in zip(np.abs(w).reshape(cout, -1).sum(axis=1), offsets)]
        rq = conv_requant(ms, offsets, y.zp, bounds, units)
        proven = rq["proven"] and (not p.pool_div or p.pool_div & (p.pool_div - 1) == 0) \
            and not p.extra.get("inexact_bias")
        kind = "pool" if p.pool_div else ("fc" if p.extra.get("fc") else "conv")
        return QOp(self._uniq(p.nodes[0]), "conv", p.nodes, p.ops, p.inputs, y.name, weights=w.astype(np.int64),
                   stride=p.stride, pad=p.pad, pad_value=xt.zp, groups=p.groups, relu=relu,
                   requant={k: rq[k] for k in ("shift", "scale", "bias")}, exact=proven,
                   note=kind, terms={"ms": ms, "offsets": offsets, "zp_out": y.zp, "bounds": bounds,
                                     "units": units})

    def _close_add(self, p: _Pending, y: QTensor) -> QOp:
        a, b = (self.tensors[n] for n in p.inputs)
        if a.shape != b.shape:
            raise ValueError(f"Add of shapes {a.shape} and {b.shape}: broadcasting is not supported")
        sy = frac(y.scale)
        rq = add_requant(frac(a.scale) / sy, frac(b.scale) / sy, a.zp, b.zp, y.zp)
        return QOp(self._uniq(p.nodes[0]), "add", p.nodes, p.ops, p.inputs, y.name,
                   requant={k: rq[k] for k in ("shift", "m1", "m2", "bias")}, exact=rq["proven"])

    def _close_leaky(self, p: _Pending, y: QTensor) -> QOp:
        # exact either way: checked on all 256 int8 inputs, or a table of them
        rq = leaky_requant(self.tensors[p.inputs[0]], y, p.extra["alpha"])
        return QOp(self._uniq(p.nodes[0]), "leaky", p.nodes, p.ops, p.inputs, y.name, requant=rq)

    def _close_concat(self, qnode: Any, p: _Pending, y: QTensor) -> QOp:
        for n in p.inputs:
            t = self.tensors[n]
            if frac(t.scale) != frac(y.scale) or t.zp != y.zp or t.offset != y.offset:
                raise ValueError(f"Concat input {t.onnx!r} has scale {t.scale:g} / zero point {t.zp + t.offset}, "
                                 f"the output {y.scale:g} / {y.zp + y.offset}: give every input the "
                                 "output's quantisation (a requantising Concat is not supported)")
        return QOp(self._uniq(p.nodes[0]), "concat", p.nodes, p.ops, p.inputs, y.name)


class _Node:
    """A node view with other inputs (QLinear ops reuse the QDQ code paths)."""

    def __init__(self, node: Any, inputs: list[str], op_type: str | None = None):
        self.name = node.name
        self.op_type = op_type or node.op_type
        self.input = inputs
        self.output = list(node.output)
        self.attribute = node.attribute if op_type is None else []
        self.domain = node.domain


def translate(model: Any, file: str) -> QNet:
    """Our integer network of a loaded, shape-inferred QDQ/QLinear model."""
    tr = _Translator(model, file)
    net = tr.run()
    for node in model.graph.node:
        key = node.name or node.output[0]
        if key not in net.placement:
            net.placement[key] = (node.op_type, "", "folded")
    from .fold import FOLDED_KEY
    for prop in model.metadata_props:
        if prop.key == FOLDED_KEY:
            for bn, conv in json.loads(prop.value).items():
                ours = net.placement.get(conv, ("", "", ""))[1]
                net.placement[bn] = ("BatchNormalization", ours, f"folded into {conv}'s weights and bias")
    return net

