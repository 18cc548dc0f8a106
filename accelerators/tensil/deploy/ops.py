"""The compiler's layer emitters (docs/tensil.md, "Compiler"): each turns one layer into
stages of instructions through :class:`.lir.Lir` and returns its number of stages.

* matrix layers (``conv*``, ``bn``, a copying ``concat`` / ``split``) go through
  :func:`_mm`: per output-channel block, every (source, input block, tap) pass is a weight
  load and MatMuls, the bias on the last pass, then the activation and the move out;
* ``maxpool``: window vectors moved into the accumulators, ``Move`` + ``Max`` chains in
  the SIMD ALUs (a 1x1 window is a strided DataMove copy);
* ``upsample``: DataMoves with a doubled DRAM stride; ``add``: DataMove overwrite + add.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.isa import DataFlow, DataMove, Simd, SimdOp

from cosim.deploy.network import Layer
from accelerators.tensil.deploy.lir import CompileError, Consts, Lir, Var, kernel_of, weight_block

D0L, LD0, D1L = DataFlow.DRAM0_TO_LOCAL, DataFlow.LOCAL_TO_DRAM0, DataFlow.DRAM1_TO_LOCAL
LACC, LACCADD, ACCL = DataFlow.LOCAL_TO_ACC, DataFlow.LOCAL_TO_ACC_ADD, DataFlow.ACC_TO_LOCAL


def _band(rows_out: int, fits: Callable[[int], bool], name: str) -> int:
    band = rows_out
    while band > 1 and not fits(band):
        band -= 1
    if not fits(band):
        raise CompileError(f"layer {name}: one output row does not fit local memory and the accumulators")
    return band


def _alpha(consts: Consts, ly: Layer, n: int, fmt: FixedFormat) -> int:
    """The DRAM1 address of the leaky slope vector (-1: plain ReLU or no activation)."""
    if not (ly.relu and ly.alpha > 0):
        return -1
    return consts.add(np.full(n, int(fmt.from_float(ly.alpha)), dtype=np.int64) if consts.data else 1)


def _activate(lir: Lir, ly: Layer, count: int, alpha: int, lscratch: int, ascratch: int) -> None:
    if not ly.relu or count <= 0:
        return
    if alpha >= 0:
        lir.leaky(count, alpha, lscratch, ascratch)
    else:
        lir.relu(count)
    lir.settle()


def _mm(lir: Lir, ly: Layer, srcs: list[tuple[Var, np.ndarray | None]], k: int, s: int, pad: int,
        bias: np.ndarray | None, out: Var, consts: Consts, arch: TensilArch, sparse: bool = False,
        act: bool = True) -> int:
    """A (multi-source) k x k convolution with zero padding ``pad``: ``srcs`` are (tensor,
    weights (out.cb*n, src.cb*n, k, k) raw or None in a timing-only compile); ``act``: the
    layer's activation applies (not for a copy)."""
    n = arch.array_size
    fmt = FixedFormat(arch.width, arch.frac)
    taps = [(ky, kx) for ky in range(k) for kx in range(k)]
    passes: list[list[tuple[int, int, int, int]]] = []
    masks = [None if w is None or not sparse else
             w.reshape(out.cb, n, src.cb, n, k * k).any(axis=(1, 3)) for src, w in srcs]
    for ob in range(out.cb):
        cand = [(i, cb, t) for i, (src, _) in enumerate(srcs) for cb in range(src.cb) for t in range(len(taps))]
        if sparse:   # all-zero blocks add exactly nothing: skipped (the bias rides the last kept one)
            kept = [c for c in cand if masks[c[0]] is None or masks[c[0]][ob, c[1], c[2]]]
            cand = kept or cand[-1:]
        row = []
        for j, (i, cb, t) in enumerate(cand):
            w = srcs[i][1]
            if w is None or not consts.data:
                addr = consts.add(n + 1)
            else:
                b = bias[ob * n:(ob + 1) * n] if bias is not None and j == len(cand) - 1 else None
                addr = consts.add(weight_block(w[ob * n:(ob + 1) * n, cb * n:(cb + 1) * n, taps[t][0], taps[t][1]],
                                               b, n))
            row.append((i, cb, t, addr))
        passes.append(row)
    alpha = _alpha(consts, ly, n, fmt) if act else -1
    # local layout of each source: its stored rows, a pixel every ``lpx`` vectors; a pixel
    # stride the stride field cannot encode (e.g. 48 vectors) is widened to a power of two
    # by per-pixel DataMoves, so that the MatMuls stay one per row (or band)
    geo = []
    for src, _ in srcs:
        lpx = src.px
        if not lir._ok(s * lpx, arch.stride0_depth):
            wide = 1 << (src.px - 1).bit_length()
            lpx = wide if lir._ok(s * wide, arch.stride0_depth) else src.px
        geo.append((lpx, (src.w + 2 * src.border) * lpx))
    one = len(srcs) == 1 and s == 1
    # stride 1, one source: one MatMul per pass over the whole band, the accumulators
    # holding stored-row pitch (the border columns computed and dropped)
    ap = srcs[0][0].w + 2 * srcs[0][0].border if one else out.w

    def span(band: int) -> int:
        return (band - 1) * ap + out.w

    def fits(band: int) -> bool:
        rows = sum(((band - 1) * s + k) * lp for _, lp in geo)
        return rows + n + 2 + band * ap <= arch.local_depth and band * ap + 1 <= arch.accumulator_depth

    band = _band(out.h, fits, ly.name)
    stages = 0
    for y0 in range(0, out.h, band):
        y1 = min(out.h, y0 + band)
        at, bases = 0, []
        for (src, _), (lpx, lpitch) in zip(srcs, geo):
            off = src.border - pad
            r0 = y0 * s + off
            nrows = (y1 - 1 - y0) * s + k
            if lpx == src.px:
                lir.move(D0L, at, src.base + r0 * src.pitch, nrows * src.pitch)
            else:   # one DataMove per stored pixel (what lir.move would emit, without its checks)
                emit, px, wst = lir.prog.append, src.px, src.w + 2 * src.border
                for r in range(nrows):
                    lrow, drow = at + r * lpitch, src.base + (r0 + r) * src.pitch
                    for x in range(wst):
                        emit(DataMove(D0L, lrow + x * lpx, drow + x * px, px))
            bases.append((at, r0, off))
            at += nrows * lpitch
        wl = at
        scratch, ol = wl + n + 1, wl + n + 2
        count = span(y1 - y0)
        for ob in range(out.cb):
            for j, (i, cb, t, addr) in enumerate(passes[ob]):
                src = srcs[i][0]
                lpx, lpitch = geo[i]
                lb, r0, off = bases[i]
                ky, kx = taps[t]
                lir.weights(addr, wl)
                col = (kx + off) * lpx + src.coff + cb
                if one:
                    lir.matmul(lb + (y0 + ky + off - r0) * lpitch + col, 0, count, lpx, j > 0)
                    continue
                for oy in range(y0, y1):
                    lir.matmul(lb + (oy * s + ky + off - r0) * lpitch + col, (oy - y0) * ap, out.w,
                               s * lpx, j > 0)
            if act:
                _activate(lir, ly, count, alpha, scratch, count)
            lir.move(ACCL, ol, 0, count)
            for oy in range(y0, y1):
                lir.move(LD0, ol + (oy - y0) * ap, out.addr(oy, 0, ob), out.w, 1, out.px)
        stages += 1
    return stages


def _padded(w: np.ndarray, ob: int, cb: int, n: int) -> np.ndarray:
    wp = np.zeros((ob * n, cb * n) + w.shape[2:], dtype=np.int64)
    wp[:w.shape[0], :w.shape[1]] = w
    return wp


def conv(lir: Lir, ly: Layer, src: Var, out: Var, prm: dict[str, np.ndarray] | None, consts: Consts,
         arch: TensilArch) -> int:
    """A k x k convolution (any odd k, any stride), zero padding k // 2."""
    n, k = arch.array_size, kernel_of(ly)
    w = b = None
    if prm is not None and consts.data:
        w = _padded(prm["w"], out.cb, src.cb, n)
        b = np.zeros(out.cb * n, dtype=np.int64)
        b[:ly.out] = prm["b"]
    return _mm(lir, ly, [(src, w)], k, ly.stride, (k - 1) // 2, b, out, consts, arch)


def bn(lir: Lir, ly: Layer, src: Var, out: Var, prm: dict[str, np.ndarray], consts: Consts,
       arch: TensilArch) -> int:
    """Per-channel ``x * scale + offset`` (+ activation): a MatMul with diagonal blocks."""
    n, c = arch.array_size, src.c
    w = np.zeros((out.cb * n, src.cb * n, 1, 1), dtype=np.int64)
    w[np.arange(c), np.arange(c), 0, 0] = prm["scale"]
    b = np.zeros(out.cb * n, dtype=np.int64)
    b[:c] = prm["offset"]
    return _mm(lir, ly, [(src, w)], 1, 1, 0, b, out, consts, arch, sparse=True)


def gather(lir: Lir, ly: Layer, srcs: list[Var], out: Var, consts: Consts, arch: TensilArch) -> int:
    """A concat or split that copies: DataMoves when every channel group starts on a vector,
    else a MatMul with 0/1 selection weights (exact: x * 1.0 + 0 rounds to x)."""
    n = arch.array_size
    one = 1 << arch.frac
    if ly.type == "concat":
        offs = np.cumsum([0] + [s_.c for s_ in srcs[:-1]]).tolist()
        picks = [(s_, 0, o) for s_, o in zip(srcs, offs)]
    else:
        picks = [(srcs[0], ly.group * ly.k, 0)]
    if all(s_.c % n == 0 and sel % n == 0 and o % n == 0 for s_, sel, o in picks):
        return _copy(lir, ly, picks, out, arch)
    weighted = []
    for s_, sel, o in picks:
        w = np.zeros((out.cb * n, s_.cb * n, 1, 1), dtype=np.int64)
        c = out.c if ly.type == "split" else s_.c
        w[o + np.arange(c), sel + np.arange(c), 0, 0] = one
        weighted.append((s_, w))
    return _mm(lir, ly, weighted, 1, 1, 0, None, out, consts, arch, sparse=True, act=False)


def _load_row(lir: Lir, v: Var, y: int, local: int) -> None:
    """The w * cb vectors of row ``y`` of ``v`` into local memory, pixel-major."""
    if v.px == v.cb:
        lir.move(D0L, local, v.addr(y, 0), v.w * v.cb)
        return
    for cb in range(v.cb):
        lir.move(D0L, local + cb, v.addr(y, 0, cb), v.w, v.cb, v.px)


def _copy(lir: Lir, ly: Layer, picks: list[tuple[Var, int, int]], out: Var, arch: TensilArch) -> int:
    n = arch.array_size
    for s_, sel, o in picks:
        if s_.w * s_.cb > arch.local_depth:
            raise CompileError(f"layer {ly.name}: one row of {s_.name} does not fit local memory")
        for y in range(out.h):
            _load_row(lir, s_, y, 0)
            for cb in range(out.cb if ly.type == "split" else s_.cb):
                lir.move(LD0, sel // n + cb, out.addr(y, 0, o // n + cb), out.w, s_.cb, out.px)
    return out.h


def maxpool(lir: Lir, ly: Layer, src: Var, out: Var, arch: TensilArch) -> int:
    """A k x k max-pool with stride s and zero padding (k - 1) // 2 (as after a zero-padding
    layer); per output row and channel block: the k^2 window vectors of every output pixel
    into the accumulators (one strided DataMove per window position), then ``Move`` into
    reg1 and ``Max`` into reg1, the last ``Max`` writing the result."""
    k, s = kernel_of(ly), ly.stride
    off = src.border - (k - 1) // 2
    ow = out.w
    if k * src.pitch + ow > arch.local_depth or (k * k + 1) * ow > arch.accumulator_depth:
        raise CompileError(f"layer {ly.name}: a {k}x{k} window row does not fit local memory "
                           f"({arch.local_depth}) and the accumulators ({arch.accumulator_depth})")
    for oy in range(out.h):
        r0 = oy * s + off
        lir.move(D0L, 0, src.base + r0 * src.pitch, k * src.pitch)
        stage = k * src.pitch
        for cb in range(out.cb):
            if k == 1:        # a subsampling copy
                lir.move(LD0, off * src.px + src.coff + cb, out.addr(oy, 0, cb), ow, s * src.px, out.px)
                continue
            for e in range(k * k):
                dy, dx = divmod(e, k)
                lir.move(LACC, dy * src.pitch + (dx + off) * src.px + src.coff + cb, e * ow, ow, s * src.px, 1)
            res = k * k * ow
            for x in range(ow):
                lir.prog.append(Simd(SimdOp.MOVE, left=0, dest=1, read=True, read_address=x))
                for e in range(1, k * k):
                    last = e == k * k - 1
                    lir.prog.append(Simd(SimdOp.MAX, left=0, right=1, dest=0 if last else 1, read=True,
                                         read_address=e * ow + x, write=last, write_address=res + x if last else 0))
            lir.settle()
            lir.move(ACCL, stage, res, ow)
            lir.move(LD0, stage, out.addr(oy, 0, cb), ow, 1, out.px)
    return out.h


def upsample(lir: Lir, ly: Layer, src: Var, out: Var, arch: TensilArch) -> int:
    """Nearest 2x: each input row once into local memory, stored four times (two rows, even
    and odd columns) with a doubled DRAM stride."""
    if src.w * src.cb > arch.local_depth:
        raise CompileError(f"layer {ly.name}: one input row does not fit local memory")
    for y in range(src.h):
        _load_row(lir, src, y, 0)
        for dy in (0, 1):
            for dx in (0, 1):
                for cb in range(src.cb):
                    lir.move(LD0, cb, out.addr(2 * y + dy, dx, cb), src.w, src.cb, 2 * out.px)
    return src.h


def add(lir: Lir, ly: Layer, a: Var, b: Var, out: Var, consts: Consts, arch: TensilArch,
        fmt: FixedFormat) -> int:
    """Element-wise saturating sum (+ activation): DataMove overwrite, then add."""
    row = a.w * a.cb
    alpha = _alpha(consts, ly, arch.array_size, fmt)

    def fits(band: int) -> bool:
        return 3 * band * row + 1 <= arch.local_depth and band * row + 1 <= arch.accumulator_depth

    band = _band(out.h, fits, ly.name)
    stages = 0
    for y0 in range(0, out.h, band):
        y1 = min(out.h, y0 + band)
        nb = (y1 - y0) * row
        for oy in range(y0, y1):
            _load_row(lir, a, oy, (oy - y0) * row)
            _load_row(lir, b, oy, nb + (oy - y0) * row)
        lir.move(LACC, 0, 0, nb)
        lir.move(LACCADD, nb, 0, nb)
        _activate(lir, ly, nb, alpha, 3 * nb, nb)
        lir.move(ACCL, 2 * nb, 0, nb)
        for oy in range(y0, y1):
            if out.px == out.cb:
                lir.move(LD0, 2 * nb + (oy - y0) * row, out.addr(oy, 0), row)
                continue
            for cb in range(out.cb):
                lir.move(LD0, 2 * nb + (oy - y0) * row + cb, out.addr(oy, 0, cb), out.w, out.cb, out.px)
        stages += 1
    return stages


def pool_fc(lir: Lir, ly: Layer, src: Var, out: Var, prm: dict[str, np.ndarray] | None, consts: Consts,
            arch: TensilArch, fmt: FixedFormat) -> int:
    """Global average pool (pixels summed with DataMove 0xF, times 1/pixels in a register)
    fused with the fully connected layer after it."""
    n, cb = arch.array_size, src.cb
    pixels = src.h * src.w
    if 2 * cb + 1 + out.cb > arch.accumulator_depth:
        raise CompileError(f"layer {ly.name}: the pooled vector does not fit the accumulators")
    factor = consts.add(np.full(n, int(fmt.from_float(1.0 / pixels)), dtype=np.int64) if consts.data else 1)
    ob_n = out.cb
    blocks: dict[tuple[int, int], int] = {}
    if prm is None or not consts.data:
        blocks = {(ob, k): consts.add(n + 1) for ob in range(ob_n) for k in range(cb)}
    else:
        w = np.zeros((ob_n * n, cb * n), dtype=np.int64)
        w[:ly.out, :src.c] = prm["w"]
        b = np.zeros(ob_n * n, dtype=np.int64)
        b[:ly.out] = prm["b"]
        blocks = {(ob, k): consts.add(weight_block(w[ob * n:(ob + 1) * n, k * n:(k + 1) * n],
                                                   b[ob * n:(ob + 1) * n] if k == cb - 1 else None, n))
                  for ob in range(ob_n) for k in range(cb)}
    top = 1 + cb + n + 1 + out.cb          # pooling factor, pooled vector, weights, output
    rows = (arch.local_depth - top) // src.pitch
    if rows < 1:
        raise CompileError(f"layer {ly.name}: one row of the pooled tensor does not fit local memory")
    kl = rows * src.pitch
    pl, wl = kl + 1, kl + 1 + cb
    ol = wl + n + 1
    stored = src.h + 2 * src.border
    for r0 in range(0, stored, rows):      # pixels summed into the accumulators, a band of rows at a time
        r1 = min(stored, r0 + rows)
        lir.move(D0L, 0, src.base + r0 * src.pitch, (r1 - r0) * src.pitch)
        for y in range(max(0, r0 - src.border), min(src.h, r1 - src.border)):
            for x in range(src.w):
                local = src.addr(y, x) - src.base - r0 * src.pitch
                lir.move(LACC if y == 0 and x == 0 else LACCADD, local, 0, cb)
    lir.move(D1L, kl, factor, 1)
    lir.move(LACC, kl, cb, 1)
    lir.prog.append(Simd(SimdOp.MOVE, left=0, dest=1, read=True, read_address=cb))
    lir.prog += [Simd(SimdOp.MULTIPLY, left=0, right=1, read=True, write=True, read_address=k,
                      write_address=k) for k in range(cb)]
    lir.settle()
    lir.move(ACCL, pl, 0, cb)
    acc0 = cb + 1
    for ob in range(ob_n):
        for k in range(cb):
            lir.weights(blocks[ob, k], wl)
            lir.matmul(pl + k, acc0 + ob, 1, 1, k > 0)
    lir.move(ACCL, ol, acc0, ob_n)
    lir.move(LD0, ol, out.base, ob_n)
    return 1


__all__: list[Any] = ["conv", "bn", "gather", "maxpool", "upsample", "add", "pool_fc"]
