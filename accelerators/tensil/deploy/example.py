"""The small library example: one dense layer + ReLU compiled by hand into a Tensil
program, its constants and input, and the expected output from the numpy reference
(:mod:`.reference`); and a small network compiled by :mod:`.compiler`.
``python -m accelerators.tensil.deploy.example`` rewrites the files of ``scenarios/tensil_dense.yaml``
and ``scenarios/tensil_resnet_small.yaml`` (scenarios/data/tensil_*/)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.model.isa import (
    DataFlow, DataMove, Instruction, LoadWeight, MatMul, NoOp, Simd, SimdOp, assemble_binary,
)

from .reference import dense

# vector addresses inside the banks (DRAM0 byte 0 holds the program)
INPUT_AT, OUTPUT_AT = 0x1000, 0x2000
DATA_DIR = Path(__file__).resolve().parents[3] / "scenarios" / "data" / "tensil_dense"


def weight_vectors(w_block: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """The N+1 vectors LoadWeight takes for one N x N block: column N-1 first, bias last."""
    n = w_block.shape[0]
    return np.stack([w_block[:, j] for j in reversed(range(n))] + [bias])


def dense_relu_program(arch: TensilArch, m: int, kb: int, ob: int) -> list[Instruction]:
    """y = relu(x W^T + b) for ``m`` rows of ``kb`` input and ``ob`` output vectors."""
    n = arch.array_size
    w_local = m * kb
    out_local = w_local + n + 1
    prog: list[Instruction] = [DataMove(DataFlow.DRAM0_TO_LOCAL, 0, INPUT_AT, m * kb)]
    for o in range(ob):
        for k in range(kb):
            prog += [DataMove(DataFlow.DRAM1_TO_LOCAL, w_local, (o * kb + k) * (n + 1), n + 1),
                     LoadWeight(w_local, n + 1),
                     MatMul(k, o * m, m, local_stride=kb, accumulate=k > 0)]
    prog.append(Simd(SimdOp.ZERO, dest=1))
    prog += [Simd(SimdOp.MAX, left=0, right=1, read=True, write=True, read_address=i,
                  write_address=i) for i in range(ob * m)]
    prog += [NoOp(), NoOp(), DataMove(DataFlow.ACC_TO_LOCAL, out_local, 0, ob * m)]
    prog += [DataMove(DataFlow.LOCAL_TO_DRAM0, out_local + o * m, OUTPUT_AT + o, m, stride=ob)
             for o in range(ob)]
    return prog


def dense_relu_files(arch: TensilArch, m: int = 16, k: int = 16, o: int = 16,
                     seed: int = 1) -> dict[str, bytes]:
    """program.tprog, consts.bin (DRAM1), input.bin and expected.bin (DRAM0) of the example."""
    n = arch.array_size
    if k % n or o % n:
        raise ValueError(f"k = {k} and o = {o} must be multiples of the array size {n}")
    kb, ob = k // n, o // n
    fmt = FixedFormat(arch.width, arch.frac)
    rng = np.random.default_rng(seed)
    x = fmt.from_float(rng.normal(0, 1, (m, k)))
    w = fmt.from_float(rng.normal(0, 1 / np.sqrt(k), (o, k)))
    b = fmt.from_float(rng.normal(0, 0.1, o))
    consts = [weight_vectors(w[oo * n:(oo + 1) * n, kk * n:(kk + 1) * n],
                             b[oo * n:(oo + 1) * n] if kk == kb - 1 else np.zeros(n, dtype=np.int64))
              for oo in range(ob) for kk in range(kb)]
    y = np.maximum(dense(x, w, b, n, arch.width, arch.frac), 0)
    return {"program.tprog": assemble_binary(dense_relu_program(arch, m, kb, ob), arch),
            "consts.bin": fmt.to_bytes(np.concatenate(consts)),
            "input.bin": fmt.to_bytes(x), "expected.bin": fmt.to_bytes(y)}


#: the compiled-network example (scenarios/tensil_resnet_small.yaml)
SMALL_NET = {"preset": "resnet20_cifar", "options": {"width": 8, "blocks": 1, "input_hw": 8}}
NET_DIR = DATA_DIR.parent / "tensil_resnet_small"


def network_files(arch: TensilArch, spec: dict = SMALL_NET, seed: int = 1) -> dict[str, bytes]:
    """A network compiled for ``arch``: program, constants (DRAM1), manifest, the DRAM0
    image holding the input, and the expected logits from the numpy reference."""
    import json

    from cosim.deploy.network import family_types, parse_network
    from .compiler import compile_network
    from .reference import network as reference_network
    net = parse_network(spec, types=family_types("tensil"))
    prog = compile_network(net, arch, seed=seed)
    fmt = FixedFormat(arch.width, arch.frac)
    x = fmt.from_float(np.random.default_rng(seed + 1).uniform(0, 1, net.input_shape))
    v = prog.vars["input"]
    image = np.zeros((v.size, arch.array_size), dtype=np.int64)
    for y in range(v.h):
        for xx in range(v.w):
            a = v.addr(y, xx) - v.base
            image[a:a + v.cb].reshape(-1)[:v.c] = x[y, xx]
    logits = reference_network(net, prog.params, x, arch.array_size, arch.width, arch.frac)["fc"]
    out = prog.vars["fc"]
    expected = np.zeros((out.size, arch.array_size), dtype=np.int64)
    expected.reshape(-1)[:out.c] = logits.reshape(-1)
    manifest = prog.manifest("resnet_small")
    return {"program.tprog": prog.binary(), "consts.bin": prog.consts_bytes(),
            "input.bin": fmt.to_bytes(image), "expected.bin": fmt.to_bytes(expected),
            "manifest.json": (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()}


def main(argv: list[str] | None = None) -> int:
    for out, files in ((DATA_DIR, dense_relu_files(TensilArch())),
                       (NET_DIR, network_files(TensilArch()))):
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (out / name).write_bytes(data)
            print(f"{out / name}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
