"""``network: {onnx: model.onnx}`` on the ``tensil`` platform: a float model imported
(:mod:`.onnx_float`), compiled for the platform's TCU (its ``soc.tcu.*`` architecture) and
deployed as loads and one register task; the output is checked bit for bit against the
numpy fixed-point reference (docs/tensil.md, "ONNX models").

DRAM0 holds the variables from its start, then the program (4 KiB aligned); DRAM1 the
constants. The input is drawn from the scenario's seed, uniform in [0, 1).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from components.tensil.fixed import FixedFormat

from ..mapping import Deployment

if TYPE_CHECKING:
    from ...scenario import Scenario

#: TCU register offsets (components/tensil/accelerator.py)
PROG_ADDR, PROG_COUNT, DRAM0_BASE, DRAM1_BASE, START, STATUS = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x14


def var_image(v: Any, x: np.ndarray, n: int) -> np.ndarray:
    """The (vectors, n) DRAM0 image of variable ``v`` holding ``x`` (H, W, C), zero border
    and zero padding lanes."""
    image = np.zeros((v.size, n), dtype=np.int64)
    for y in range(v.h):
        for xx in range(v.w):
            a = v.addr(y, xx) - v.base
            image[a:a + v.cb].reshape(-1)[:v.c] = x[y, xx]
    return image


def tcu_arch(sc: "Scenario") -> Any:
    """The architecture of the scenario's TCU (``soc.tcu.*`` after the overrides)."""
    from components.tensil.accelerator import TensilParams

    from ...platforms import resolved_parameters
    return TensilParams(**resolved_parameters(sc)["soc.tcu"]).arch()


def deploy_onnx(sc: "Scenario", path: str, label: str, input_shape: list[int] | None) -> Deployment:
    from ...platforms import memory_map_of
    from .compiler import compile_network
    from .onnx_float import import_float, to_raw
    from .reference import network as reference
    arch = tcu_arch(sc)
    n, vb = arch.array_size, arch.vector_bytes
    imp = import_float(path, arch, input_shape, label=label)
    prog = compile_network(imp.net, arch, params=imp.params)
    fmt = FixedFormat(arch.width, arch.frac)
    x = np.random.default_rng(sc.seed).uniform(0, 1, imp.input_nchw)
    raw = to_raw(x, fmt)
    vals = reference(imp.net, imp.params, raw, n, arch.width, arch.frac)
    mm = memory_map_of(sc)
    d0, d1, tcu = mm["dram0"].base, mm["dram1"].base, mm["tcu"].base
    binary = prog.binary()
    prog_at = d0 + -(-prog.dram0_vectors * vb // 4096) * 4096
    last = imp.net.layers[-1].name
    out = prog.vars[last]
    loads = [("soc", d0 + prog.vars["input"].base * vb, fmt.to_bytes(var_image(prog.vars["input"], raw, n))),
             ("soc", prog_at, binary), ("soc", d1, prog.consts_bytes())]
    goldens = {last: (d0 + out.base * vb, fmt.to_bytes(var_image(out, vals[last].reshape(out.h, out.w, -1), n)))}
    count = len(binary) // arch.instruction_bytes
    tasks = [{"id": "tensil_run", "op": "mmio", "accesses": [
        {"write": tcu + PROG_ADDR, "value": prog_at}, {"write": tcu + PROG_COUNT, "value": count},
        {"write": tcu + DRAM0_BASE, "value": d0}, {"write": tcu + DRAM1_BASE, "value": d1},
        {"write": tcu + START, "value": 1}, {"wait_irq": "tcu_done"},
        {"read": tcu + STATUS, "expect": 0}]}]
    return Deployment(network=imp.net, params=imp.params, tensors={}, tasks=tasks, loads=loads,
                      goldens=goldens, outputs={k: np.asarray(v) for k, v in vals.items()})
