"""The ``flexisaga`` task (docs/flexisaga.md, "Tasks"): one FC GEMM or im2col'ed conv on
a platform's FlexiSAGA, with seeded weights pruned to the scenario's target sparsity.

:func:`accelerators.flexisaga.prepare.prepare` fills each task's pruning and checks its shape when
the scenario is loaded; :func:`make_layer` builds the operands, the compressed weight
image and numpy's reference product; :func:`run` is the host's op: it places the operands
by debug access, programs the job registers, waits for the end-of-job interrupt (or polls
STATUS) and compares the output with the reference bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from accelerators.flexisaga.model.config import ArrayConfig

def gemm_shape(t: dict[str, Any]) -> tuple[int, int, int]:
    """(M, K, N) of a (prepared) flexisaga task."""
    if t["kind"] == "fc":
        return t["m"], t["k"], t.get("n", 1)
    c = t["conv"]
    kernel = c.get("kernel", 3)
    out = (c["size"] + 2 * c.get("pad", kernel // 2) - kernel) // c.get("stride", 1) + 1
    return c["c_out"], c["c_in"] * kernel * kernel, out * out


def im2col(x: np.ndarray, kernel: int, stride: int, pad: int) -> np.ndarray:
    """``(C*k*k, H_out*W_out)`` columns of a ``(C, H, W)`` input, rows in (c, ky, kx) order
    (the order of ``w.reshape(C_out, -1)`` for ``(C_out, C, k, k)`` weights)."""
    c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    ho = (h + 2 * pad - kernel) // stride + 1
    wo = (w + 2 * pad - kernel) // stride + 1
    cols = np.empty((c, kernel, kernel, ho, wo), dtype=x.dtype)
    for ky in range(kernel):
        for kx in range(kernel):
            cols[:, ky, kx] = xp[:, ky:ky + stride * ho:stride, kx:kx + stride * wo:stride]
    return cols.reshape(c * kernel * kernel, ho * wo)


@dataclass(frozen=True)
class Layer:
    """One prepared layer: fp32 operands, numpy's product, and what goes into memory."""

    w: np.ndarray            # M x K, pruned
    i: np.ndarray            # K x N
    expected: np.ndarray     # M x N, float32
    dataflow: str
    image: np.ndarray        # uint32 words: dense W row-major, or the compressed tiles
    table: np.ndarray        # uint32 tile offsets (empty for a dense dataflow)


def make_layer(t: dict[str, Any], seed: int, cfg: "ArrayConfig") -> Layer:
    """Seeded integer-valued operands (so every partial sum is exact in fp32 and the
    reference does not depend on the order of the terms), weights pruned with
    :func:`accelerators.flexisaga.model.pruning.prune_group`, the dataflow (``auto``: the fastest
    by the cycle model) and its weight image."""
    from accelerators.flexisaga.model.cycles import best_dataflow
    from accelerators.flexisaga.model.pruning import prune_group
    from accelerators.flexisaga.model.tiles import pack, to_words
    from accelerators.flexisaga.model.config import DATAFLOWS, SPARSE

    m, k, n = gemm_shape(t)
    rng = np.random.default_rng(np.random.SeedSequence([seed, *t["id"].encode()]))
    v = int(t.get("values", 3))
    if t["kind"] == "conv":
        c = t["conv"]
        kernel = c.get("kernel", 3)
        w4 = rng.integers(-v, v + 1, size=(c["c_out"], c["c_in"], kernel, kernel))
        x = rng.integers(-v, v + 1, size=(c["c_in"], c["size"], c["size"]))
        w = w4.reshape(m, k).astype(np.float32)
        i = im2col(x, kernel, c.get("stride", 1), c.get("pad", kernel // 2)).astype(np.float32)
    else:
        w = rng.integers(-v, v + 1, size=(m, k)).astype(np.float32)
        i = rng.integers(-v, v + 1, size=(k, n)).astype(np.float32)
    orient = t.get("orientation", "col")
    vec = int(t.get("vector", cfg.rows if orient == "col" else cfg.cols))
    w = prune_group([w], float(t.get("sparsity", 0.0)), vec, orient)[0]
    # integers: float64 sums are exact, so this is the product whatever the term order
    expected = (w.astype(np.float64) @ i.astype(np.float64)).astype(np.float32)
    # CSB column indices are signed csb_index_bits entries naming a column of the R x K strip
    csb_fits = k - 1 <= (1 << (cfg.csb_index_bits - 1)) - 1
    df = t.get("dataflow", "auto")
    if df == "auto":
        df = best_dataflow(w, n, cfg, tuple(d for d in DATAFLOWS if csb_fits or d != "csOS")).dataflow
    elif df == "csOS" and not csb_fits:
        raise ValueError(f"{t['id']}: csOS cannot index K = {k} columns with "
                         f"{cfg.csb_index_bits}-bit CSB column indices")
    if df in SPARSE:
        image, table = pack(df, w, cfg)
    else:
        image, table = to_words(w, cfg).reshape(-1), np.zeros(0, dtype=np.uint32)
    return Layer(w, i, expected, df, image.astype(np.uint32), table.astype(np.uint32))


def _accelerator(host: Any) -> Any:
    from accelerators.flexisaga.model.peripheral import FlexiSaga
    found = [m for m in host.sim.modules.values() if isinstance(m, FlexiSaga)]
    if len(found) != 1:
        raise ValueError("a flexisaga task needs exactly one FlexiSAGA in the host's process "
                         f"(found {len(found)}; on MARSELLUS set cluster.flexisaga.enabled: true)")
    return found[0]


async def run(host: Any, t: dict[str, Any], rec: Any, base: int) -> None:
    """The ``flexisaga`` op of ``host`` (a :class:`cosim.host.Host`; its task record
    ``rec``) with the operands from ``base`` (the task's ``at``; see
    the module docstring). A refused job, a failed access or a wrong output raises
    ValueError (the task fails with its message)."""
    from accelerators.flexisaga.model.config import DATAFLOWS
    from accelerators.flexisaga.model.peripheral import FlexiSagaJob, encode_job, register_map
    from accelerators.flexisaga.model.pruning import sparsity_of
    from accelerators.flexisaga.model.tiles import from_words, to_words
    from tlm import GenericPayload
    from tlm.payload import READ, WRITE

    acc = _accelerator(host)
    layer = make_layer(t, host.sim.seed, acc.cfg)
    m, k, n = gemm_shape(t)
    w_base = base
    table_at = w_base + 4 * layer.image.size
    i_base = table_at + 4 * layer.table.size
    o_base = i_base + 4 * k * n
    end = o_base + 4 * m * n
    if not acc.mem_region.contains(base, end - base):
        raise ValueError(f"{t['id']}: W, its tile table, I and O take [0x{base:x}, 0x{end:x}), "
                         f"which is not inside {acc.mem_region.name}")

    def put(addr: int, words: np.ndarray) -> None:
        data = bytearray(np.ascontiguousarray(words).tobytes())
        if data and host.socket.transport_dbg(GenericPayload(WRITE, addr, data)) != len(data):
            raise ValueError(f"debug write at 0x{addr:x} failed")
    put(w_base, layer.image)
    put(table_at, layer.table)
    put(i_base, to_words(layer.i, acc.cfg))
    job = FlexiSagaJob(DATAFLOWS.index(layer.dataflow), m, k, n, w_base, table_at, i_base, n,
                       o_base, n, False, acc.cfg.pe_dtype == "int")
    regs = register_map()
    at = host.memory_map[acc.region.name].base
    lock = host.lock("flexisaga")
    await lock.acquire()
    try:
        # MARSELLUS names the line 'flexisaga', the composed platform 'flexisaga_eoj'
        line = next((n for n in ("flexisaga", "flexisaga_eoj") if host.irq_count(n) is not None), "")
        seen = host.irq_count(line) if line else None
        for off, val in encode_job(job):
            await host.wr(at + off, val)
        await host.wr(at + regs.register("CTRL").offset, regs.field("CTRL", "START").put(0, 1))
        status_at = at + regs.register("STATUS").offset
        if seen is not None:
            await host.wait_irq(line, seen)
        status = await host.rd(status_at)
        while regs.field("STATUS", "BUSY").get(status):     # no interrupt line: poll
            await host.sim.wait(acc.clock.period * 64)
            status = await host.rd(status_at)
    finally:
        lock.release()
    if regs.field("STATUS", "ERROR").get(status):
        raise ValueError(f"FlexiSAGA refused the job (ERROR_CODE "
                         f"{regs.field('STATUS', 'ERROR_CODE').get(status)}: {acc.reason})")
    p = GenericPayload(READ, o_base, bytearray(4 * m * n))
    host.socket.transport_dbg(p)
    got_words = np.frombuffer(bytes(p.data), dtype=np.uint32).reshape(m, n)
    # integer PEs: the exact integer product, wrapped to the PE word as the array wraps it
    want = layer.expected if acc.cfg.pe_dtype == "fp32" else \
        layer.w.astype(np.int64) @ layer.i.astype(np.int64)
    want_words = to_words(want, acc.cfg)
    rep = acc.last
    rec.detail.update(dataflow=layer.dataflow, m=m, k=k, n=n,
                      sparsity=round(sparsity_of(layer.w), 4),
                      cycles=rep.cycles if rep is not None else None,
                      macs=rep.macs if rep is not None else None)
    bad = np.argwhere(got_words != want_words)
    if bad.size:
        r, c = (int(x) for x in bad[0])
        got, exp = (from_words(wd[r:r + 1, c], acc.cfg)[0] for wd in (got_words, want_words))
        raise ValueError(f"output differs from numpy's W @ I in {len(bad)} of {m * n} elements, "
                         f"first O[{r}, {c}] = {got!r}, expected {exp!r}")


async def run_task(host: Any, t: dict[str, Any], rec: Any) -> None:
    """The host's ``flexisaga`` operation: :func:`run` with the operands at the task's ``at``."""
    from cosim.host import resolve_address
    await run(host, t, rec, resolve_address(t["at"], f"{t['id']}.at", host.memory_map)[1])
