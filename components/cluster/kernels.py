"""The cluster kernel registry: arguments, checks, and the per-core plan of each kernel.

A :class:`Kernel` names its arguments in a fixed order (the *args block* the SOC writes for
an offload is one 32-bit word per argument, in that order), checks them against the TCDM,
and *plans* a run on N cores: per core, a list of :class:`~.core.Chunk` and
:class:`~.core.Barrier` steps. Each chunk carries the TCDM accesses it really makes, a numpy
function computing its outputs from the bytes it read (through :mod:`.ops`), and its
compute cycles (from :mod:`.timing`). :func:`job_steps` adds the per-core prologue and the
final barrier; the same steps drive the simulation and the analytical estimate.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tlm.params import suggest

from tlm.address_map import Region
from . import ops
from .core import Access, Barrier, Chunk, Step
from .timing import ISAS, KernelTiming

__all__ = ["Arg", "Kernel", "KernelArgError", "KERNELS", "KERNELS_BY_ID", "job_steps", "split",
           "list_kernels"]

REQUIRED = object()


class KernelArgError(ValueError):
    """Bad kernel arguments (the message names the kernel and the argument)."""


@dataclass(frozen=True)
class Arg:
    """One kernel argument: ``kind`` is ``addr`` (a TCDM address, unsigned), ``int``
    (signed 32-bit), ``bool`` or ``enum`` (encoded as the index into ``choices``)."""

    name: str
    kind: str
    default: Any = REQUIRED
    choices: tuple = ()
    lo: int | None = None
    hi: int | None = None
    doc: str = ""

    def coerce(self, v: Any, where: str) -> Any:
        if self.kind == "enum":
            if v not in self.choices:
                raise KernelArgError(f"{where}: expected one of {', '.join(map(repr, self.choices))}, "
                                     f"got {v!r}{suggest(str(v), map(str, self.choices))}")
            return v
        if self.kind == "bool":
            if isinstance(v, bool) or v in (0, 1):
                return bool(v)
            raise KernelArgError(f"{where}: expected true or false, got {v!r}")
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise KernelArgError(f"{where}: expected an integer, got {v!r}")
        v = int(v)
        lo = self.lo if self.lo is not None else (0 if self.kind == "addr" else -(1 << 31))
        hi = self.hi if self.hi is not None else ((1 << 32) - 1 if self.kind == "addr" else (1 << 31) - 1)
        if not lo <= v <= hi:
            raise KernelArgError(f"{where}: {v} is outside [{lo}, {hi}]")
        return v

    def encode(self, v: Any) -> int:
        if self.kind == "enum":
            return self.choices.index(v)
        return int(v) & 0xFFFFFFFF

    def decode(self, w: int, where: str) -> Any:
        w &= 0xFFFFFFFF
        if self.kind == "enum":
            if w >= len(self.choices):
                raise KernelArgError(f"{where}: enum index {w} is not one of 0..{len(self.choices) - 1}")
            return self.choices[w]
        if self.kind == "bool":
            return bool(w)
        if self.kind == "int":
            w = w - (1 << 32) if w & 0x80000000 else w
        return self.coerce(w, where)


def split(total: int, n: int, i: int) -> tuple[int, int]:
    """Core ``i`` of ``n``'s contiguous share of ``total`` items (balanced within one)."""
    return i * total // n, (i + 1) * total // n


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _runs(base: int, elem: int, idx: np.ndarray) -> Access:
    """One access reading elements ``idx`` (sorted, unique) of ``elem`` bytes at ``base``:
    contiguous runs of equal length become pattern rows; the data holds the elements in
    ``idx`` order."""
    breaks = np.flatnonzero(np.diff(idx) != 1) + 1
    starts = idx[np.concatenate(([0], breaks))]
    lengths = np.diff(np.concatenate(([0], breaks, [len(idx)])))
    if np.all(lengths == lengths[0]):
        return Access.rows_at(base + starts * elem, int(lengths[0]) * elem)
    return Access.rows_at(base + idx * elem, elem)


def _i32(b: np.ndarray) -> np.ndarray:
    return b.view("<i4").astype(np.int64)


class Kernel(ABC):
    """Base class: subclasses set ``name``, ``kid``, ``doc``, ``args`` and implement
    :meth:`operands`, :meth:`validate`, :meth:`plan` and :meth:`total_ops`."""

    name = ""
    kid = 0
    doc = ""
    args: tuple[Arg, ...] = ()
    #: output operands that may alias an input operand exactly (in-place)
    inplace: tuple[tuple[str, str], ...] = ()

    # ----- arguments --------------------------------------------------------------------------
    def normalize(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults filled, types checked; unknown names are errors ("did you mean")."""
        names = [a.name for a in self.args]
        for k in given:
            if k not in names:
                raise KernelArgError(f"kernel {self.name}: unknown argument {k!r}{suggest(k, names)}; "
                                     f"arguments: {', '.join(names)}")
        out: dict[str, Any] = {}
        for a in self.args:
            if a.name in given:
                out[a.name] = a.coerce(given[a.name], f"kernel {self.name}: argument {a.name!r}")
            elif a.default is REQUIRED:
                raise KernelArgError(f"kernel {self.name}: missing argument {a.name!r} ({a.doc})")
            else:
                out[a.name] = a.default
        return out

    def encode(self, args: dict[str, Any]) -> list[int]:
        """The args block: one 32-bit word per argument, in declaration order."""
        return [a.encode(args[a.name]) for a in self.args]

    def decode(self, words: list[int]) -> dict[str, Any]:
        if len(words) != len(self.args):
            raise KernelArgError(f"kernel {self.name}: args block of {len(words)} words, "
                                 f"expected {len(self.args)}")
        return {a.name: a.decode(w, f"kernel {self.name}: argument {a.name!r}")
                for a, w in zip(self.args, words)}

    # ----- checks -----------------------------------------------------------------------------
    @abstractmethod
    def operands(self, a: dict[str, Any]) -> list[tuple[str, int, bool]]:
        """(address argument, size in bytes, is output) of every TCDM operand."""

    def validate(self, a: dict[str, Any]) -> None:
        """Shape and value checks beyond the argument types (raise KernelArgError)."""

    def check(self, a: dict[str, Any], tcdm: Region) -> None:
        """Validate ``a`` and that every operand lies in the TCDM; outputs may not overlap
        inputs (except the declared in-place pairs, which must alias exactly)."""
        self.validate(a)
        region = tcdm
        spans = []
        for name, size, out in self.operands(a):
            addr = a[name]
            local = addr - region.base if addr >= region.base else addr
            if size <= 0:
                raise KernelArgError(f"kernel {self.name}: operand {name!r} is empty")
            if local < 0 or local + size > region.size:
                raise KernelArgError(
                    f"kernel {self.name}: operand {name!r} [0x{addr:x}, +{size}) is not inside the "
                    f"TCDM [0x{region.base:x}, 0x{region.end:x})")
            spans.append((name, local, size, out))
        for on, oa, osz, oo in spans:
            if not oo:
                continue
            for iname, ia, isz, io in spans:
                if iname == on or (io and iname < on):
                    continue
                if oa < ia + isz and ia < oa + osz:
                    if (on, iname) in self.inplace and oa == ia and osz == isz:
                        continue
                    raise KernelArgError(f"kernel {self.name}: output {on!r} overlaps operand {iname!r}")

    # ----- planning -----------------------------------------------------------------------------
    @abstractmethod
    def plan(self, a: dict[str, Any], n: int, tm: KernelTiming) -> list[list[Step]]:
        """The steps (compute chunks, TCDM accesses, barriers) of each of ``n`` cores."""

    @abstractmethod
    def total_ops(self, a: dict[str, Any]) -> int:
        """Arithmetic ops of the whole kernel (a MAC is 2 ops; FFT: 5 N log2 N flops)."""

    def describe(self) -> str:
        return f"{self.name} (id {self.kid}): {self.doc}"


def _arg(name: str, kind: str = "int", default: Any = REQUIRED, doc: str = "", **kw: Any) -> Arg:
    return Arg(name, kind, default, doc=doc, **kw)


def _addr(name: str, doc: str) -> Arg:
    return Arg(name, "addr", doc=doc)


# ----- integer matmul -------------------------------------------------------------------------------
class MatMul(Kernel):
    name = "matmul"
    kid = 1
    doc = ("C[m,n] = sum_k A[m,k] W[n,k]; signed 8/4/2-bit operands (sub-byte packed), int32 "
           "result; isa xpulp | xpulpnn | macload")
    args = (_arg("m", lo=1, hi=4096, doc="rows of A and C"),
            _arg("n", lo=1, hi=4096, doc="rows of W = columns of C"),
            _arg("k", lo=1, hi=65536, doc="dot-product length"),
            _arg("bits", "enum", 8, choices=(8, 4, 2), doc="operand precision"),
            _arg("isa", "enum", "macload", choices=ISAS, doc="instruction set variant"),
            _addr("a", "A (M, K), rows packed"), _addr("w", "W (N, K), rows packed"),
            _addr("out", "C (M, N) int32"))

    @staticmethod
    def kbytes(a: dict) -> int:
        return a["k"] * a["bits"] // 8

    def validate(self, a: dict) -> None:
        if a["k"] * a["bits"] % 8:
            raise KernelArgError(f"kernel matmul: k={a['k']} does not fill whole bytes at "
                                 f"{a['bits']} bits (k must be a multiple of {8 // a['bits']})")

    def operands(self, a: dict) -> list:
        kb = self.kbytes(a)
        return [("a", a["m"] * kb, False), ("w", a["n"] * kb, False), ("out", a["m"] * a["n"] * 4, True)]

    def total_ops(self, a: dict) -> int:
        return 2 * a["m"] * a["n"] * a["k"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        m, nn, k, bits, isa = a["m"], a["n"], a["k"], a["bits"], a["isa"]
        kb = self.kbytes(a)
        rpc = int(tm.mm["rows_per_chunk"])
        reps = _ceil(nn, int(tm.mm["cols_per_block"]))
        w_acc = Access(a["w"], nn * kb)

        def compute(rr: int) -> Callable:
            def f(bufs: list[np.ndarray]) -> list:
                av = ops.unpack_subbyte(bufs[0][:rr * kb].reshape(rr, kb), bits)
                wv = ops.unpack_subbyte(bufs[1].reshape(nn, kb), bits)
                return [ops.matmul(av, wv, bits).astype("<i4")]
            return f

        plans = []
        for i in range(n):
            lo, hi = split(m, n, i)
            steps: list[Step] = []
            for r0 in range(lo, hi, rpc):
                rr = min(rpc, hi - r0)
                rows = np.tile(a["a"] + (r0 + np.arange(rr)) * kb, reps)
                steps.append(Chunk(tm.matmul_chunk(rr, nn, k, bits, isa),
                                   [Access.rows_at(rows, kb), w_acc],
                                   [Access(a["out"] + r0 * nn * 4, rr * nn * 4)],
                                   compute(rr), 2 * rr * nn * k))
            plans.append(steps)
        return plans


# ----- int8 convolution on the cores ------------------------------------------------------------------
class Conv2d(Kernel):
    name = "conv2d"
    kid = 2
    doc = ("int8 convolution (HWC input, (Cout,KH,KW,Cin) weights, PULP-NN style): "
           "out = clip((scale[co]*acc + bias[co]) >> shift) to int8 ([0,127] with relu)")
    args = (_arg("h", lo=1, hi=1024, doc="input height"), _arg("w", lo=1, hi=1024, doc="input width"),
            _arg("cin", lo=1, hi=4096, doc="input channels"), _arg("cout", lo=1, hi=4096, doc="output channels"),
            _arg("kh", default=3, lo=1, hi=16, doc="kernel height"),
            _arg("kw", default=3, lo=1, hi=16, doc="kernel width"),
            _arg("stride", default=1, lo=1, hi=8, doc="stride"), _arg("pad", default=0, lo=0, hi=8, doc="zero padding"),
            _arg("shift", default=0, lo=0, hi=47, doc="requantisation shift"),
            _arg("relu", "bool", False, doc="clip at 0"),
            _arg("isa", "enum", "macload", choices=("xpulp", "macload"), doc="instruction set variant"),
            _addr("x", "input (H, W, Cin) int8"), _addr("weights", "weights (Cout, KH, KW, Cin) int8"),
            _addr("scale", "per-channel scale, Cout int32"), _addr("bias", "per-channel bias, Cout int32"),
            _addr("out", "output (Ho, Wo, Cout) int8"))

    @staticmethod
    def out_hw(a: dict) -> tuple[int, int]:
        ho = (a["h"] + 2 * a["pad"] - a["kh"]) // a["stride"] + 1
        wo = (a["w"] + 2 * a["pad"] - a["kw"]) // a["stride"] + 1
        return ho, wo

    def validate(self, a: dict) -> None:
        ho, wo = self.out_hw(a)
        if ho < 1 or wo < 1:
            raise KernelArgError(f"kernel conv2d: a {a['kh']}x{a['kw']} kernel does not fit a "
                                 f"{a['h']}x{a['w']} input with pad {a['pad']}")

    def operands(self, a: dict) -> list:
        ho, wo = self.out_hw(a)
        return [("x", a["h"] * a["w"] * a["cin"], False),
                ("weights", a["cout"] * a["kh"] * a["kw"] * a["cin"], False),
                ("scale", a["cout"] * 4, False), ("bias", a["cout"] * 4, False),
                ("out", ho * wo * a["cout"], True)]

    def total_ops(self, a: dict) -> int:
        ho, wo = self.out_hw(a)
        return 2 * ho * wo * a["cout"] * a["kh"] * a["kw"] * a["cin"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        h, w, cin, cout = a["h"], a["w"], a["cin"], a["cout"]
        kh, kw, st, pad = a["kh"], a["kw"], a["stride"], a["pad"]
        ho, wo = self.out_hw(a)
        wbytes = cout * kh * kw * cin
        row = w * cin
        patch = kh * kw * cin
        # the weights are streamed once per pair of output pixels (4x2 blocking)
        w_acc = Access.rows_at(np.full(_ceil(wo, 2), a["weights"]), wbytes)
        s_acc, b_acc = Access(a["scale"], cout * 4), Access(a["bias"], cout * 4)

        def compute(oy: int, y0: int, y1: int) -> Callable:
            def f(bufs: list[np.ndarray]) -> list:
                # the rows this output row needs, zero-padded to a (kh, w + 2 pad) slab
                slab = np.zeros((kh, w + 2 * pad, cin), dtype=np.int64)
                if y1 > y0:
                    off = y0 - (oy * st - pad)
                    slab[off:off + y1 - y0, pad:pad + w] = bufs[0].view(np.int8).reshape(y1 - y0, w, cin)
                    bufs = bufs[1:]
                wt = bufs[0][:wbytes].view(np.int8).reshape(cout, kh, kw, cin)
                out = ops.conv2d(slab, wt, _i32(bufs[1]), _i32(bufs[2]), a["shift"], st, 0, a["relu"])
                return [out.astype(np.int8)]
            return f

        plans = []
        for i in range(n):
            lo, hi = split(ho, n, i)
            steps: list[Step] = []
            for oy in range(lo, hi):
                iy = oy * st - pad
                y0, y1 = max(0, iy), min(h, iy + kh)
                reads = [Access(a["x"] + y0 * row, (y1 - y0) * row)] if y1 > y0 else []
                steps.append(Chunk(tm.conv_row(wo, cout, patch, a["isa"]), reads + [w_acc, s_acc, b_acc],
                                   [Access(a["out"] + oy * wo * cout, wo * cout)],
                                   compute(oy, y0, y1), 2 * wo * cout * patch))
            plans.append(steps)
        return plans


# ----- element-wise add -------------------------------------------------------------------------------
_REQUANT = (_arg("m1", default=1, lo=0, hi=65535, doc="multiplier of a"),
            _arg("m2", default=1, lo=0, hi=65535, doc="multiplier of b"),
            _arg("bias", default=0, doc="added before the shift"),
            _arg("shift", default=0, lo=0, hi=31, doc="right shift (floor)"))


class AddInt8(Kernel):
    name = "add_int8"
    kid = 3
    doc = ("element-wise add of two 8-bit vectors with requantisation: "
           "out = clip((m1*a + m2*b + bias) >> shift) to int8 (signed) or uint8")
    args = (_arg("n", lo=1, hi=1 << 17, doc="elements"),
            _arg("signed", "bool", True, doc="int8 (true) or uint8 (false) values"),
            *_REQUANT, _addr("a", "first input"), _addr("b", "second input"), _addr("out", "output"))
    inplace = (("out", "a"), ("out", "b"))

    def operands(self, a: dict) -> list:
        return [("a", a["n"], False), ("b", a["n"], False), ("out", a["n"], True)]

    def total_ops(self, a: dict) -> int:
        return 4 * a["n"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        dt = np.int8 if a["signed"] else np.uint8
        per = int(tm.ew["add_elements_per_chunk"])

        def f(bufs: list[np.ndarray]) -> list:
            y = ops.add_requant(bufs[0].view(dt), bufs[1].view(dt), a["m1"], a["m2"], a["bias"],
                                a["shift"], 8, a["signed"])
            return [y.astype(dt)]

        plans = []
        for i in range(n):
            lo, hi = split(a["n"], n, i)
            steps: list[Step] = []
            for e0 in range(lo, hi, per):
                cnt = min(per, hi - e0)
                steps.append(Chunk(tm.add_int8_chunk(cnt),
                                   [Access(a["a"] + e0, cnt), Access(a["b"] + e0, cnt)],
                                   [Access(a["out"] + e0, cnt)], f, 4 * cnt))
            plans.append(steps)
        return plans


def _pix_bytes(k: int, bits: int) -> int:
    return (k // 32) * bits * 4


def _check_k(kernel: str, k: int) -> None:
    if k % 32:
        raise KernelArgError(f"kernel {kernel}: k={k} is not a multiple of 32 (bit-plane layout)")


class AddRequant(Kernel):
    name = "add_requant"
    kid = 4
    doc = ("residual add of two bit-plane tensors (pixels, K/32, bits) into a bit-plane tensor: "
           "out = clip((m1*a + m2*b + bias) >> shift, 0, 2^o_bits - 1)")
    args = (_arg("pixels", lo=1, hi=1 << 16, doc="pixels (H x W)"),
            _arg("k", lo=32, hi=4096, doc="channels (multiple of 32)"),
            _arg("a_bits", lo=1, hi=8, doc="precision of a"), _arg("b_bits", lo=1, hi=8, doc="precision of b"),
            _arg("o_bits", lo=1, hi=8, doc="precision of out"),
            *_REQUANT, _addr("a", "first input (bit planes)"), _addr("b", "second input (bit planes)"),
            _addr("out", "output (bit planes)"),
            _arg("channels", default=0, lo=0, hi=4096,
                 doc="real channels (0 = k): the rest are padding, never unpacked, left 0"))

    @staticmethod
    def real(a: dict) -> int:
        return a["channels"] or a["k"]

    def validate(self, a: dict) -> None:
        _check_k(self.name, a["k"])
        if a["channels"] > a["k"]:
            raise KernelArgError(f"kernel add_requant: channels={a['channels']} exceeds k={a['k']}")

    def operands(self, a: dict) -> list:
        p = a["pixels"]
        return [("a", p * _pix_bytes(a["k"], a["a_bits"]), False),
                ("b", p * _pix_bytes(a["k"], a["b_bits"]), False),
                ("out", p * _pix_bytes(a["k"], a["o_bits"]), True)]

    def total_ops(self, a: dict) -> int:
        return 4 * a["pixels"] * self.real(a)

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        k, b1, b2, bo = a["k"], a["a_bits"], a["b_bits"], a["o_bits"]
        ch = self.real(a)
        g = k // 32
        p1, p2, po = _pix_bytes(k, b1), _pix_bytes(k, b2), _pix_bytes(k, bo)
        per = int(tm.ew["pixels_per_chunk"])

        def f(bufs: list[np.ndarray]) -> list:
            w1 = bufs[0].view("<u4").reshape(-1, g, b1)
            w2 = bufs[1].view("<u4").reshape(-1, g, b2)
            x1, x2 = ops.unpack_bitplanes(w1), ops.unpack_bitplanes(w2)
            y = np.zeros_like(x1)
            y[..., :ch] = ops.add_requant(x1[..., :ch], x2[..., :ch], a["m1"], a["m2"], a["bias"],
                                          a["shift"], bo)
            return [ops.pack_bitplanes(y, bo).astype("<u4")]

        plans = []
        for i in range(n):
            lo, hi = split(a["pixels"], n, i)
            steps: list[Step] = []
            for q0 in range(lo, hi, per):
                cnt = min(per, hi - q0)
                steps.append(Chunk(tm.add_bitplane_chunk(cnt * ch, b1, b2, bo),
                                   [Access(a["a"] + q0 * p1, cnt * p1), Access(a["b"] + q0 * p2, cnt * p2)],
                                   [Access(a["out"] + q0 * po, cnt * po)], f, 4 * cnt * ch))
            plans.append(steps)
        return plans


# ----- global average pooling -------------------------------------------------------------------------
class AvgPool(Kernel):
    name = "avgpool"
    kid = 5
    doc = ("global average pooling of a bit-plane tensor (pixels, K/32, bits) into K 8-bit values: "
           "out[k] = clip((sum x * mult + bias) >> shift) to uint8 (or int8 with signed)")
    args = (_arg("pixels", lo=1, hi=1 << 16, doc="pixels (H x W)"),
            _arg("k", lo=32, hi=4096, doc="channels (multiple of 32)"),
            _arg("bits", lo=1, hi=8, doc="input precision"),
            _arg("mult", default=1, lo=0, hi=65535, doc="multiplier (~ 2^shift / pixels)"),
            _arg("bias", default=0, doc="added before the shift (rounding)"),
            _arg("shift", default=0, lo=0, hi=47, doc="right shift (floor)"),
            _arg("signed", "bool", False, doc="int8 output (true) or uint8 (false)"),
            _addr("x", "input (bit planes)"), _addr("out", "output: K bytes"))

    def validate(self, a: dict) -> None:
        _check_k(self.name, a["k"])

    def operands(self, a: dict) -> list:
        return [("x", a["pixels"] * _pix_bytes(a["k"], a["bits"]), False), ("out", a["k"], True)]

    def total_ops(self, a: dict) -> int:
        return a["pixels"] * a["k"] + 2 * a["k"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        k, bits, pix = a["k"], a["bits"], a["pixels"]
        pb = _pix_bytes(k, bits)
        dt = np.int8 if a["signed"] else np.uint8
        plans = []
        for i in range(n):
            c0, c1 = split(k, n, i)        # channels: no reduction across cores needed
            steps: list[Step] = []
            if c1 > c0:
                g0, g1 = c0 // 32, _ceil(c1, 32)
                rb = (g1 - g0) * bits * 4
                acc = (Access(a["x"], pix * pb) if rb == pb else
                       Access.rows_at(a["x"] + np.arange(pix) * pb + g0 * bits * 4, rb))

                def f(bufs: list[np.ndarray], g0=g0, g1=g1, c0=c0, c1=c1) -> list:
                    words = bufs[0].view("<u4").reshape(pix, g1 - g0, bits)
                    x = ops.unpack_bitplanes(words)[:, c0 - 32 * g0:c1 - 32 * g0]
                    return [ops.avgpool(x, a["mult"], a["bias"], a["shift"], a["signed"]).astype(dt)]

                steps.append(Chunk(tm.pool_chunk(pix, c1 - c0, bits), [acc],
                                   [Access(a["out"] + c0, c1 - c0)], f, pix * (c1 - c0) + 2 * (c1 - c0)))
            plans.append(steps)
        return plans


# ----- fully connected ---------------------------------------------------------------------------------
class FullyConnected(Kernel):
    name = "fc"
    kid = 6
    doc = "fully connected: out[n] = sum_k x[k] W[n,k] + bias[n]; x 8-bit, W int8 (N,K), out int32"
    args = (_arg("n_in", lo=1, hi=1 << 16, doc="inputs K"), _arg("n_out", lo=1, hi=1 << 16, doc="outputs N"),
            _arg("x_signed", "bool", False, doc="x is int8 (true) or uint8 (false)"),
            _addr("x", "input vector, K bytes"), _addr("w", "weights (N, K) int8"),
            _addr("bias", "bias, N int32"), _addr("out", "output, N int32"))

    def operands(self, a: dict) -> list:
        k, nn = a["n_in"], a["n_out"]
        return [("x", k, False), ("w", nn * k, False), ("bias", nn * 4, False), ("out", nn * 4, True)]

    def total_ops(self, a: dict) -> int:
        return 2 * a["n_out"] * a["n_in"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        k = a["n_in"]
        xdt = np.int8 if a["x_signed"] else np.uint8
        plans = []
        for i in range(n):
            o0, o1 = split(a["n_out"], n, i)
            steps: list[Step] = []
            if o1 > o0:
                cnt = o1 - o0

                def f(bufs: list[np.ndarray], cnt=cnt) -> list:
                    x = bufs[0][:k].view(xdt)
                    wt = bufs[1].view(np.int8).reshape(cnt, k)
                    return [ops.fc(x, wt, _i32(bufs[2])).astype("<i4")]

                # x is re-read once per pair of outputs (2 accumulators in flight)
                steps.append(Chunk(tm.fc_chunk(cnt, k),
                                   [Access.rows_at(np.full(_ceil(cnt, 2), a["x"]), k),
                                    Access(a["w"] + o0 * k, cnt * k), Access(a["bias"] + o0 * 4, cnt * 4)],
                                   [Access(a["out"] + o0 * 4, cnt * 4)], f, 2 * cnt * k))
            plans.append(steps)
        return plans


# ----- int8 <-> RBE bit planes ------------------------------------------------------------------------
class PackRbe(Kernel):
    name = "pack_rbe"
    kid = 8
    doc = ("int8 HWC tensor into the RBE's unsigned bit-plane input (pixels, K/32, 8): per output "
           "pixel its kh x kw window at stride, x + 128 then 127 - x per value, zeros up to k")
    args = (_arg("h", lo=1, hi=1024, doc="input height"), _arg("w", lo=1, hi=1024, doc="input width"),
            _arg("c", lo=1, hi=2048, doc="input channels"),
            _arg("kh", default=1, lo=1, hi=16, doc="window height (1: pixel by pixel)"),
            _arg("kw", default=1, lo=1, hi=16, doc="window width"),
            _arg("stride", default=1, lo=1, hi=8, doc="window stride"),
            _arg("k", lo=32, hi=4096, doc="output channels per pixel (multiple of 32)"),
            _addr("x", "input (H, W, C) int8"), _addr("out", "output bit planes (Ho, Wo, K/32, 8)"))

    @staticmethod
    def out_hw(a: dict) -> tuple[int, int]:
        return (a["h"] - a["kh"]) // a["stride"] + 1, (a["w"] - a["kw"]) // a["stride"] + 1

    def validate(self, a: dict) -> None:
        _check_k(self.name, a["k"])
        ho, wo = self.out_hw(a)
        if ho < 1 or wo < 1:
            raise KernelArgError(f"kernel pack_rbe: a {a['kh']}x{a['kw']} window does not fit "
                                 f"a {a['h']}x{a['w']} input")
        if 2 * a["kh"] * a["kw"] * a["c"] > a["k"]:
            raise KernelArgError(f"kernel pack_rbe: {a['kh']}x{a['kw']}x{a['c']} values and their "
                                 f"complements exceed k={a['k']}")

    def operands(self, a: dict) -> list:
        ho, wo = self.out_hw(a)
        return [("x", a["h"] * a["w"] * a["c"], False), ("out", ho * wo * _pix_bytes(a["k"], 8), True)]

    def total_ops(self, a: dict) -> int:
        ho, wo = self.out_hw(a)
        return ho * wo * a["kh"] * a["kw"] * a["c"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        w, c, kh, kw, st, k = a["w"], a["c"], a["kh"], a["kw"], a["stride"], a["k"]
        ho, wo = self.out_hw(a)
        row, pb = w * c, _pix_bytes(k, 8)
        vals = wo * kh * kw * c

        def f(bufs: list[np.ndarray]) -> list:
            x = bufs[0].view(np.int8).reshape(kh, w, c)
            return [ops.pack_bitplanes(ops.rbe_input(x, kh, kw, st, k), 8).astype("<u4")]

        # one bit extract/insert per value bit (the measured bit-plane cost), then per word
        # a NOT (the complements) or a zero store (the padding)
        cyc = vals * 8 * tm.ew["bit_cycles"] + wo * (k // 32) * 8 + tm.ew["chunk_overhead_cycles"]
        plans = []
        for i in range(n):
            lo, hi = split(ho, n, i)
            plans.append([Chunk(cyc, [Access(a["x"] + oy * st * row, kh * row)],
                                [Access(a["out"] + oy * wo * pb, wo * pb)], f, vals) for oy in range(lo, hi)])
        return plans


class UnpackRbe(Kernel):
    name = "unpack_rbe"
    kid = 9
    doc = ("the RBE's unsigned 8-bit bit-plane output (H, W, K/32, 8) into int8 HWC: every stride-th "
           "pixel, the first c channels, y - 128")
    args = (_arg("h", lo=1, hi=1024, doc="height of the bit-plane tensor"),
            _arg("w", lo=1, hi=1024, doc="width of the bit-plane tensor"),
            _arg("k", lo=32, hi=4096, doc="channels of the bit-plane tensor (multiple of 32)"),
            _arg("c", lo=1, hi=4096, doc="channels kept"),
            _arg("stride", default=1, lo=1, hi=8, doc="keep every stride-th row and column"),
            _addr("x", "input bit planes (H, W, K/32, 8)"), _addr("out", "output (Ho, Wo, c) int8"))

    @staticmethod
    def out_hw(a: dict) -> tuple[int, int]:
        return (a["h"] - 1) // a["stride"] + 1, (a["w"] - 1) // a["stride"] + 1

    def validate(self, a: dict) -> None:
        _check_k(self.name, a["k"])
        if a["c"] > a["k"]:
            raise KernelArgError(f"kernel unpack_rbe: c={a['c']} exceeds k={a['k']}")

    def operands(self, a: dict) -> list:
        ho, wo = self.out_hw(a)
        return [("x", a["h"] * a["w"] * _pix_bytes(a["k"], 8), False), ("out", ho * wo * a["c"], True)]

    def total_ops(self, a: dict) -> int:
        ho, wo = self.out_hw(a)
        return ho * wo * a["c"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        w, k, c, st = a["w"], a["k"], a["c"], a["stride"]
        ho, wo = self.out_hw(a)
        pb = _pix_bytes(k, 8)
        g = k // 32

        def f(bufs: list[np.ndarray]) -> list:
            y = ops.unpack_bitplanes(bufs[0].view("<u4").reshape(1, wo, g, 8))
            return [ops.rbe_output(y, c, 1).astype(np.int8)]

        cyc = wo * c * 8 * tm.ew["bit_cycles"] + tm.ew["chunk_overhead_cycles"]
        plans = []
        for i in range(n):
            lo, hi = split(ho, n, i)
            steps: list[Step] = []
            for oy in range(lo, hi):
                base = a["x"] + oy * st * w * pb
                rd = Access(base, wo * pb) if st == 1 else Access.rows_at(base + np.arange(wo) * st * pb, pb)
                steps.append(Chunk(cyc, [rd], [Access(a["out"] + oy * wo * c, wo * c)], f, wo * c))
            plans.append(steps)
        return plans


# ----- int8 max pooling and LeakyRelu -------------------------------------------------------------------
class MaxPoolInt8(Kernel):
    name = "maxpool_int8"
    kid = 10
    doc = ("max pooling of an int8 HWC tensor over k x k windows at stride; pad rows/columns "
           "count as -128: out (Ho, Wo, C) int8")
    args = (_arg("h", lo=1, hi=1024, doc="input height"), _arg("w", lo=1, hi=1024, doc="input width"),
            _arg("c", lo=1, hi=4096, doc="channels"), _arg("k", default=2, lo=1, hi=16, doc="window edge"),
            _arg("stride", default=2, lo=1, hi=16, doc="stride"), _arg("pad", default=0, lo=0, hi=8, doc="padding"),
            _addr("x", "input (H, W, C) int8"), _addr("out", "output (Ho, Wo, C) int8"),
            _arg("pad_top", default=-1, lo=-1, hi=8, doc="rows above (-1: pad; a band of rows: 0 inside)"),
            _arg("pad_bottom", default=-1, lo=-1, hi=8, doc="rows below (-1: pad)"))

    @staticmethod
    def pads(a: dict) -> tuple[int, int]:
        return (a["pad"] if a["pad_top"] < 0 else a["pad_top"]), (a["pad"] if a["pad_bottom"] < 0 else a["pad_bottom"])

    @classmethod
    def out_hw(cls, a: dict) -> tuple[int, int]:
        pt, pb = cls.pads(a)
        return (a["h"] + pt + pb - a["k"]) // a["stride"] + 1, (a["w"] + 2 * a["pad"] - a["k"]) // a["stride"] + 1

    def validate(self, a: dict) -> None:
        ho, wo = self.out_hw(a)
        if ho < 1 or wo < 1 or max(a["pad"], *self.pads(a)) >= a["k"]:
            raise KernelArgError(f"kernel maxpool_int8: a {a['k']}x{a['k']} window with pad {a['pad']} "
                                 f"does not fit a {a['h']}x{a['w']} input (pad < k)")

    def operands(self, a: dict) -> list:
        ho, wo = self.out_hw(a)
        return [("x", a["h"] * a["w"] * a["c"], False), ("out", ho * wo * a["c"], True)]

    def total_ops(self, a: dict) -> int:
        ho, wo = self.out_hw(a)
        return ho * wo * a["c"] * a["k"] * a["k"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        h, w, c, k, st, pad = a["h"], a["w"], a["c"], a["k"], a["stride"], a["pad"]
        pt, _ = self.pads(a)
        ho, wo = self.out_hw(a)
        row = w * c

        def compute(oy: int, y0: int, y1: int) -> Callable:
            def f(bufs: list[np.ndarray]) -> list:
                slab = np.full((k, w + 2 * pad, c), -128, dtype=np.int64)
                off = y0 - (oy * st - pt)
                slab[off:off + y1 - y0, pad:pad + w] = bufs[0].view(np.int8).reshape(y1 - y0, w, c)
                return [ops.maxpool(slab, k, st, 0).astype(np.int8)]
            return f

        cyc = wo * c * k * k * tm.pl["max_cycles_per_tap"] + tm.pl["chunk_overhead_cycles"]
        plans = []
        for i in range(n):
            lo, hi = split(ho, n, i)
            steps: list[Step] = []
            for oy in range(lo, hi):
                y0, y1 = max(0, oy * st - pt), min(h, oy * st - pt + k)
                steps.append(Chunk(cyc, [Access(a["x"] + y0 * row, (y1 - y0) * row)],
                                   [Access(a["out"] + oy * wo * c, wo * c)], compute(oy, y0, y1), wo * c * k * k))
            plans.append(steps)
        return plans


class LeakyInt8(Kernel):
    name = "leaky_int8"
    kid = 11
    doc = ("int8 LeakyRelu with requantisation: d = x - zp, out = clip(rne(d * (d >= 0 ? m_pos : m_neg) "
           "/ 2^shift) + zp_out) to int8 (rne: round half to even)")
    args = (_arg("n", lo=1, hi=1 << 20, doc="elements"), _arg("zp", default=0, lo=-255, hi=255, doc="input zero point"),
            _arg("m_pos", default=1, lo=0, hi=65535, doc="multiplier for d >= 0"),
            _arg("m_neg", default=0, lo=0, hi=65535, doc="multiplier for d < 0 (the slope)"),
            _arg("shift", default=0, lo=0, hi=31, doc="right shift, rounding half to even"),
            _arg("zp_out", default=0, lo=-255, hi=255, doc="output zero point"),
            _addr("x", "input int8"), _addr("out", "output int8"))
    inplace = (("out", "x"),)

    def operands(self, a: dict) -> list:
        return [("x", a["n"], False), ("out", a["n"], True)]

    def total_ops(self, a: dict) -> int:
        return 3 * a["n"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        per = int(tm.ew["leaky_elements_per_chunk"])

        def f(bufs: list[np.ndarray]) -> list:
            y = ops.leaky_requant(bufs[0].view(np.int8), a["zp"], a["m_pos"], a["m_neg"], a["shift"], a["zp_out"])
            return [y.astype(np.int8)]

        plans = []
        for i in range(n):
            lo, hi = split(a["n"], n, i)
            steps: list[Step] = []
            for e0 in range(lo, hi, per):
                cnt = min(per, hi - e0)
                steps.append(Chunk(cnt * tm.ew["leaky_cycles_per_element"] + tm.ew["chunk_overhead_cycles"],
                                   [Access(a["x"] + e0, cnt)], [Access(a["out"] + e0, cnt)], f, 3 * cnt))
            plans.append(steps)
        return plans


class LutInt8(Kernel):
    name = "lut_int8"
    kid = 12
    doc = "int8 table look-up: out[i] = table[x[i] + 128] (any element-wise function of an int8 tensor)"
    args = (_arg("n", lo=1, hi=1 << 20, doc="elements"), _addr("table", "256 int8 values, for x = -128..127"),
            _addr("x", "input int8"), _addr("out", "output int8"))
    inplace = (("out", "x"),)

    def operands(self, a: dict) -> list:
        return [("table", 256, False), ("x", a["n"], False), ("out", a["n"], True)]

    def total_ops(self, a: dict) -> int:
        return a["n"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        per = int(tm.ew["leaky_elements_per_chunk"])

        def f(bufs: list[np.ndarray]) -> list:
            return [ops.lut(bufs[1].view(np.int8), bufs[0].view(np.int8)).astype(np.int8)]

        plans = []
        for i in range(n):
            lo, hi = split(a["n"], n, i)
            steps: list[Step] = []
            for e0 in range(lo, hi, per):
                cnt = min(per, hi - e0)
                # the table is read once per chunk (it stays in registers' reach: 256 B)
                steps.append(Chunk(cnt * tm.ew["lut_cycles_per_element"] + tm.ew["chunk_overhead_cycles"],
                                   [Access(a["table"], 256), Access(a["x"] + e0, cnt)],
                                   [Access(a["out"] + e0, cnt)], f, cnt))
            plans.append(steps)
        return plans


class RequantInt32(Kernel):
    name = "requant_int32"
    kid = 13
    doc = ("int32 accumulators (C, N) (a GEMM unit's output, channel-major) into int8 (N, C) HWC: "
           "out[p, c] = clip((scale[c]*acc[c, p] + bias[c]) >> shift) to int8 ([0,127] with relu)")
    args = (_arg("n", lo=1, hi=1 << 16, doc="pixels (columns of acc)"),
            _arg("c", lo=1, hi=4096, doc="channels (rows of acc)"),
            _arg("shift", default=0, lo=0, hi=47, doc="requantisation shift"),
            _arg("relu", "bool", False, doc="clip at 0"),
            _addr("acc", "accumulators (C, N) int32"), _addr("scale", "per-channel scale, C int32"),
            _addr("bias", "per-channel bias, C int32"), _addr("out", "output (N, C) int8"))

    def operands(self, a: dict) -> list:
        return [("acc", 4 * a["n"] * a["c"], False), ("scale", 4 * a["c"], False), ("bias", 4 * a["c"], False),
                ("out", a["n"] * a["c"], True)]

    def total_ops(self, a: dict) -> int:
        return 3 * a["n"] * a["c"]

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        npx, c = a["n"], a["c"]
        per = int(tm.ew["pixels_per_chunk"])
        s_acc, b_acc = Access(a["scale"], c * 4), Access(a["bias"], c * 4)

        def compute(cnt: int) -> Callable:
            def f(bufs: list[np.ndarray]) -> list:
                acc = _i32(bufs[0]).reshape(c, cnt).T
                y = ops.requantize(acc, _i32(bufs[1]), _i32(bufs[2]), a["shift"], 0 if a["relu"] else -128, 127)
                return [np.ascontiguousarray(y, np.int8)]
            return f

        plans = []
        for i in range(n):
            lo, hi = split(npx, n, i)
            steps: list[Step] = []
            for p0 in range(lo, hi, per):
                cnt = min(per, hi - p0)
                # one row of cnt words per channel: the accumulator is channel-major
                rows = a["acc"] + (np.arange(c) * npx + p0) * 4
                steps.append(Chunk(tm.requant_chunk(cnt * c), [Access.rows_at(rows, cnt * 4), s_acc, b_acc],
                                   [Access(a["out"] + p0 * c, cnt * c)], compute(cnt), 3 * cnt * c))
            plans.append(steps)
        return plans


# ----- FFT ------------------------------------------------------------------------------------------------
class Fft(Kernel):
    name = "fft"
    kid = 7
    doc = ("radix-2 DIT complex FFT, FP32 or FP16 (interleaved re/im), out of place: bit-reversed "
           "read of src, log2(n) butterfly stages in dst, barrier between stages")
    args = (_arg("n", lo=2, hi=1 << 14, doc="points (power of two)"),
            _arg("precision", "enum", "fp32", choices=ops.FFT_PRECISIONS, doc="FP32 or FP16"),
            _addr("src", "input, n complex values"), _addr("dst", "output, n complex values"),
            _addr("twiddles", "twiddle table, n/2 complex values (ops.fft_twiddles)"),
            _arg("make_twiddles", "bool", False, doc="the cores first compute and store the table"))

    @staticmethod
    def elem(a: dict) -> int:
        return 8 if a["precision"] == "fp32" else 4

    def validate(self, a: dict) -> None:
        if a["n"] & (a["n"] - 1):
            raise KernelArgError(f"kernel fft: n={a['n']} is not a power of two")

    def operands(self, a: dict) -> list:
        e = self.elem(a)
        return [("src", a["n"] * e, False), ("twiddles", a["n"] // 2 * e, False), ("dst", a["n"] * e, True)]

    def total_ops(self, a: dict) -> int:
        return 5 * a["n"] * int(math.log2(a["n"]))

    def plan(self, a: dict, n: int, tm: KernelTiming) -> list[list[Step]]:
        npts, prec = a["n"], a["precision"]
        e = self.elem(a)
        stages = int(math.log2(npts))
        rev = ops.bitreverse_indices(npts)
        plans: list[list[Step]] = [[] for _ in range(n)]
        if a["make_twiddles"]:
            table = ops.fft_twiddles(npts, prec)
            for i in range(n):
                t0, t1 = split(npts // 2, n, i)
                if t1 > t0:
                    plans[i].append(Chunk(tm.fft_twiddle_init(t1 - t0), [],
                                          [Access(a["twiddles"] + t0 * e, (t1 - t0) * e)],
                                          lambda bufs, t0=t0, t1=t1:
                                              [table[t0:t1].astype(table.dtype.newbyteorder("<"))]))
                plans[i].append(Barrier())
        for s in range(stages):
            h = 1 << s
            for i in range(n):
                j0, j1 = split(npts // 2, n, i)
                if j1 > j0:
                    plans[i].append(self._stage(a, npts, h, j0, j1, rev if s == 0 else None, e, prec, n, tm))
                if s < stages - 1:
                    plans[i].append(Barrier())
        return plans

    def _stage(self, a: dict, npts: int, h: int, j0: int, j1: int, rev: np.ndarray | None,
               e: int, prec: str, n: int, tm: KernelTiming) -> Chunk:
        i0, i1, t = ops.fft_butterflies(npts, h, j0, j1)
        dst_idx = np.union1d(i0, i1)
        if rev is None:            # in place in dst
            s0, s1, src_base, src_idx = i0, i1, a["dst"], dst_idx
        else:                      # first stage: bit-reversed gather from src
            s0, s1, src_base = rev[i0], rev[i1], a["src"]
            src_idx = np.union1d(s0, s1)
        tw_idx = np.unique(t)
        p0, p1 = np.searchsorted(src_idx, s0), np.searchsorted(src_idx, s1)
        q0, q1 = np.searchsorted(dst_idx, i0), np.searchsorted(dst_idx, i1)
        pt = np.searchsorted(tw_idx, t)

        def f(bufs: list[np.ndarray]) -> list:
            data = ops.bytes_to_complex(bufs[0], prec)
            tw = ops.bytes_to_complex(bufs[1], prec)
            y0, y1 = ops.butterfly(data[p0], data[p1], tw[pt])
            out = np.empty((len(dst_idx), 2), dtype=data.dtype)
            out[q0] = y0
            out[q1] = y1
            return [out.astype(data.dtype.newbyteorder("<"))]

        cyc = tm.fft_stage(j1 - j0, n, prec, 2 * (j1 - j0) if rev is not None else 0)
        return Chunk(cyc, [_runs(src_base, e, src_idx), _runs(a["twiddles"], e, tw_idx)],
                     [_runs(a["dst"], e, dst_idx)], f, 10 * (j1 - j0))


KERNELS: dict[str, Kernel] = {k.name: k for k in (MatMul(), Conv2d(), AddInt8(), AddRequant(),
                                                   AvgPool(), FullyConnected(), Fft(), PackRbe(),
                                                   UnpackRbe(), MaxPoolInt8(), LeakyInt8(),
                                                   LutInt8(), RequantInt32())}
KERNELS_BY_ID: dict[int, Kernel] = {k.kid: k for k in KERNELS.values()}


def list_kernels() -> list[tuple[str, str]]:
    """(name, one-line description) of every kernel, for ``cosim list kernels``."""
    return [(k.name, k.doc) for k in KERNELS.values()]


def job_steps(kernel: Kernel, args: dict[str, Any], n: int, tm: KernelTiming) -> list[list[Step]]:
    """Per core: the prologue, the kernel's plan, and the final barrier (the end of job)."""
    plans = kernel.plan(args, n, tm)
    return [[Chunk(tm.setup_cycles)] + p + [Barrier()] for p in plans]
