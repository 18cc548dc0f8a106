"""The Tensil ISA machine: small programs against numpy and pure-Python references,
the SIMD -> DataMove hazard, the latency model, registers, samples and located errors."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.isa import (
    ConfigReg, Configure, DataFlow, DataMove, LoadLut, LoadWeight, MatMul, NoOp, Simd, SimdOp,
    assemble_binary,
)
from accelerators.tensil.model.latency import TensilTiming
from accelerators.tensil.model.machine import TensilError, TensilMachine

N = 4
ARCH = TensilArch(array_size=N, dram0_depth=1 << 12, dram1_depth=1 << 12, local_depth=1 << 10,
                  accumulator_depth=1 << 8, simd_registers_depth=2)
D0, D1 = DataFlow.DRAM0_TO_LOCAL, DataFlow.DRAM1_TO_LOCAL


def ref_mac(x: int, w: int, z: int, F: int = 8, W: int = 16) -> int:
    r = round(Fraction(x * w, 1 << F) + z)  # exact sum, ties to even
    return max(-(1 << (W - 1)), min((1 << (W - 1)) - 1, r))


def lane_chain(x: list[int], Wm: list[list[int]], b: list[int]) -> list[int]:
    out = []
    for r in range(len(b)):
        p = b[r]
        for j in range(len(x)):
            p = ref_mac(x[j], Wm[r][j], p)
        out.append(p)
    return out


def weight_image(Wm: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vectors to LoadWeight in order: column N-1, ..., column 0, then bias (spec §4)."""
    n = Wm.shape[0]
    return np.stack([Wm[:, j] for j in reversed(range(n))] + [b])


def put(m: TensilMachine, bank: int, vaddr: int, raw: np.ndarray) -> None:
    m.dram[bank].write(vaddr * ARCH.vector_bytes, m.fmt.to_bytes(raw))


def get(m: TensilMachine, bank: int, vaddr: int, n: int) -> np.ndarray:
    return m.fmt.from_bytes(m.dram[bank].read(vaddr * ARCH.vector_bytes, n * ARCH.vector_bytes)).reshape(n, N)


def test_matmul_random_block_bit_exact_vs_lane_chain() -> None:
    rng = np.random.default_rng(1)
    Wm = rng.integers(-600, 600, (N, N))
    b = rng.integers(-3000, 3000, N)
    X = rng.integers(-4000, 4000, (6, N))
    m = TensilMachine(ARCH)
    put(m, 1, 0, weight_image(Wm, b))
    put(m, 0, 0, X)
    m.run([DataMove(D1, 0, 0, N + 1), LoadWeight(0, N + 1), DataMove(D0, 64, 0, 6),
           MatMul(64, 0, 6), DataMove(DataFlow.ACC_TO_LOCAL, 128, 0, 6),
           DataMove(DataFlow.LOCAL_TO_DRAM0, 128, 100, 6)])
    got = get(m, 0, 100, 6)
    wl, bl = Wm.tolist(), b.tolist()
    assert got.tolist() == [lane_chain(list(map(int, x)), wl, bl) for x in X]


def test_loadweight_is_a_shift_register() -> None:
    m = TensilMachine(ARCH)
    m.local[:N + 1] = np.arange((N + 1) * N).reshape(N + 1, N)
    m.run([LoadWeight(0, N + 1)])
    # after N+1 loads: bias = last vector, column j = vector N-1-j
    assert m.stages[0].tolist() == m.local[N].tolist()
    assert [m.stages[1 + j].tolist() for j in range(N)] == [m.local[N - 1 - j].tolist() for j in range(N)]
    before = m.stages.copy()
    m.run([LoadWeight(0, 2, zeroes=True)])
    assert m.stages[0].tolist() == [0] * N and m.stages[1].tolist() == [0] * N
    assert m.stages[2:].tolist() == before[:-2].tolist()  # older columns moved two places on


def exact_values(rng: np.random.Generator, shape: tuple[int, ...], span: int = 2) -> np.ndarray:
    """Multiples of 1/16 in [-span, span): products are multiples of 1/256, nothing rounds."""
    return rng.integers(-16 * span, 16 * span, shape) / 16.0


def test_fc_with_k_blocks_matches_numpy() -> None:
    rng = np.random.default_rng(2)
    K, M = 3 * N, 5  # three K blocks accumulate into the same output block
    Wf, bf, Xf = exact_values(rng, (N, K)), exact_values(rng, N), exact_values(rng, (M, K))
    m = TensilMachine(ARCH)
    f = m.fmt
    prog = []
    for kb in range(3):
        blk = f.from_float(Wf[:, kb * N:(kb + 1) * N])
        bias = f.from_float(bf) if kb == 2 else np.zeros(N, dtype=np.int64)
        put(m, 1, kb * (N + 1), weight_image(blk, bias))
        put(m, 0, kb * M, f.from_float(Xf[:, kb * N:(kb + 1) * N]))
        prog += [DataMove(D1, 0, kb * (N + 1), N + 1), LoadWeight(0, N + 1),
                 DataMove(D0, 16, kb * M, M), MatMul(16, 0, M, accumulate=kb > 0)]
    prog += [DataMove(DataFlow.ACC_TO_LOCAL, 32, 0, M), DataMove(DataFlow.LOCAL_TO_DRAM0, 32, 200, M)]
    m.run(prog)
    assert np.array_equal(f.to_float(get(m, 0, 200, M)), Xf @ Wf.T + bf)


def test_conv_as_per_tap_matmuls_matches_numpy() -> None:
    """3x3 VALID convolution of a 5x5xN input: one LoadWeight + MatMul per tap and output
    row, Accumulate on every tap but the first (spec §11)."""
    rng = np.random.default_rng(3)
    H = Wd = 5
    img = exact_values(rng, (H, Wd, N), 1)
    ker = exact_values(rng, (3, 3, N, N), 1)  # ky, kx, cin, cout
    bias = exact_values(rng, N)
    m = TensilMachine(ARCH)
    f = m.fmt
    put(m, 0, 0, f.from_float(img.reshape(H * Wd, N)))
    prog = [DataMove(D0, 0, 0, H * Wd)]
    ACC_T = 0
    for t, (ky, kx) in enumerate((a, b) for a in range(3) for b in range(3)):
        Wt = f.from_float(ker[ky, kx].T)  # W[r][j]: input lane j -> output lane r
        bt = f.from_float(bias) if t == 8 else np.zeros(N, dtype=np.int64)
        put(m, 1, t * (N + 1), weight_image(Wt, bt))
        prog += [DataMove(D1, 100, t * (N + 1), N + 1), LoadWeight(100, N + 1)]
        for oy in range(3):
            prog.append(MatMul((oy + ky) * Wd + kx, ACC_T + oy * 3, 3, accumulate=t > 0))
    prog += [DataMove(DataFlow.ACC_TO_LOCAL, 200, 0, 9), DataMove(DataFlow.LOCAL_TO_DRAM0, 200, 300, 9)]
    m.run(prog)
    ref = np.zeros((3, 3, N))
    for oy in range(3):
        for ox in range(3):
            ref[oy, ox] = np.einsum("yxc,yxco->o", img[oy:oy + 3, ox:ox + 3], ker) + bias
    # bias is added on every MatMul but is zero except on the last tap
    assert np.array_equal(f.to_float(get(m, 0, 300, 9)).reshape(3, 3, N), ref)


def simd_run(op: SimdOp, a: np.ndarray, b: np.ndarray, **kw: object) -> np.ndarray:
    m = TensilMachine(ARCH)
    m.acc[0], m.acc[1] = a, b
    m.run([Simd(SimdOp.MOVE, left=0, dest=1, read=True, read_address=1),
           Simd(op, left=0, right=1, read=True, write=True, read_address=0, write_address=2, **kw)])
    return m.acc[2]


A = np.array([-32768, -256, 0, 32767])
B = np.array([256, -256, 0, 1])


@pytest.mark.parametrize("op,expect", [
    (SimdOp.ZERO, [0, 0, 0, 0]), (SimdOp.MOVE, A), (SimdOp.NOOP, A),
    (SimdOp.NOT, [0, 0, 256, 0]), (SimdOp.AND, [256, 256, 0, 256]), (SimdOp.OR, [256, 256, 0, 256]),
    (SimdOp.INCREMENT, np.clip(A + 256, -32768, 32767)), (SimdOp.DECREMENT, np.clip(A - 256, -32768, 32767)),
    (SimdOp.ADD, np.clip(A + B, -32768, 32767)), (SimdOp.SUBTRACT, np.clip(A - B, -32768, 32767)),
    (SimdOp.MULTIPLY, [-32768, 256, 0, 128]), (SimdOp.ABS, [32767, 256, 0, 32767]),
    (SimdOp.GREATER_THAN, [0, 0, 0, 256]), (SimdOp.GREATER_THAN_EQUAL, [0, 256, 256, 256]),
    (SimdOp.MIN, np.minimum(A, B)), (SimdOp.MAX, np.maximum(A, B)),
])
def test_simd_ops(op: SimdOp, expect: object) -> None:
    # MULTIPLY: 32767 * 1 / 256 = 127.996 -> 128 (round to nearest); -128.0 * 1.0 = -128.0
    assert simd_run(op, A, B).tolist() == list(np.asarray(expect))


def test_simd_accumulate_write_and_relu_program() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(-1000, 1000, (8, N))
    m = TensilMachine(ARCH)
    m.acc[:8] = x
    prog = [Simd(SimdOp.ZERO, dest=1)]
    prog += [Simd(SimdOp.MAX, left=0, right=1, read=True, write=True, read_address=i,
                  write_address=i) for i in range(8)]
    m.run(prog)
    assert np.array_equal(m.acc[:8], np.maximum(x, 0))
    m.acc[20] = 100
    m.run([Simd(SimdOp.MOVE, left=0, read=True, write=True, accumulate=True, read_address=3,
                write_address=20)])
    assert np.array_equal(m.acc[20], np.clip(100 + np.maximum(x[3], 0), -32768, 32767))


def test_lookup_interpolation_registers() -> None:
    arch = TensilArch(array_size=N, local_depth=64, accumulator_depth=16, dram0_depth=16,
                      dram1_depth=16, simd_registers_depth=3, num_luts=2)
    m = TensilMachine(arch)
    keys = np.array([-512, 0, 256, 1024])
    vals1, vals2 = np.array([1, 2, 3, 4]), np.array([10, 20, 30, 40])
    m.local[0], m.local[1], m.local[2] = keys, vals1, vals2
    m.acc[0] = [-1000, 0, 300, 5000]
    m.run([LoadLut(0, 0), LoadLut(1, 1), LoadLut(2, 2),
           Simd(SimdOp.LOOKUP, left=0, dest=1, read=True, write=True, read_address=0, write_address=1)])
    idx = [0, 1, 2, 3]  # largest key <= x, the first key when x is below it
    assert m.acc[1].tolist() == [-1000 - -512, 0, 300 - 256, 5000 - 1024]
    assert m.regs[0].tolist() == m.acc[1].tolist()
    assert m.regs[1].tolist() == vals1[idx].tolist() and m.regs[2].tolist() == vals2[idx].tolist()


def hazard_prog(noops: int) -> list:
    return ([Simd(SimdOp.INCREMENT, left=0, read=True, write=True, read_address=5, write_address=5)]
            + [NoOp()] * noops + [DataMove(DataFlow.ACC_TO_LOCAL, 0, 4, 3)])


@pytest.mark.parametrize("noops,stale", [(0, True), (1, True), (2, False), (3, False)])
def test_simd_write_datamove_hazard(noops: int, stale: bool) -> None:
    m = TensilMachine(ARCH)
    m.run(hazard_prog(noops))
    assert m.acc[5].tolist() == [256] * N
    assert m.local[1].tolist() == ([0] * N if stale else [256] * N)
    assert [(h.pc, h.simd_pc, h.address) for h in m.hazards] == ([(noops + 1, 0, 5)] if stale else [])
    m2 = TensilMachine(ARCH, TensilTiming(hazard="in_order"))
    m2.run(hazard_prog(noops))
    assert m2.local[1].tolist() == [256] * N and len(m2.hazards) == len(m.hazards)


def test_hazard_error_mode_is_located() -> None:
    m = TensilMachine(ARCH, TensilTiming(hazard="error"))
    with pytest.raises(TensilError) as e:
        m.run(hazard_prog(1))
    assert e.value.pc == 2 and e.value.field == "address" and "DataMove" in e.value.instruction


def test_latency_model_cycles() -> None:
    t = TensilTiming(dram_bytes_per_cycle=3, dram_setup=10)
    m = TensilMachine(ARCH, t)
    prog = [DataMove(D1, 0, 0, 5), LoadWeight(0, 5), MatMul(0, 0, 7), MatMul(0, 0, 2), NoOp(),
            MatMul(0, 0, 1), Simd(SimdOp.ZERO), DataMove(DataFlow.ACC_TO_LOCAL, 0, 0, 6),
            Configure(ConfigReg.TIMEOUT, 5)]
    m.run(prog)
    vb = N * 2
    expect = [10 + -(-5 * vb // 3), 5, 7 + N, 2 + 0, 1, 1 + 2 * N, 1, 6, 1]
    assert m.stats.cycles == sum(expect)
    assert m.stats.macs == (7 + 2 + 1) * N * N
    assert m.stats.by_opcode == {"DataMove": 2, "LoadWeight": 1, "MatMul": 3, "NoOp": 1, "SIMD": 1,
                                 "Configure": 1}
    assert m.stats.dram_bytes == {"dram1_read": 5 * vb}


def test_timing_only_mode_same_cycles_and_stats() -> None:
    prog = [DataMove(D1, 0, 0, N + 1), LoadWeight(0, N + 1), DataMove(D0, 64, 0, 6),
            MatMul(64, 0, 6), Simd(SimdOp.MAX, read=True, write=True), NoOp(), NoOp(),
            DataMove(DataFlow.ACC_TO_LOCAL, 128, 0, 6), DataMove(DataFlow.LOCAL_TO_DRAM0, 128, 100, 6)]
    a, b = TensilMachine(ARCH), TensilMachine(ARCH, data=False)
    a.run(prog)
    b.run(prog)
    assert a.stats.as_dict(ARCH) == b.stats.as_dict(ARCH) and a.bursts == b.bursts


def test_dram_offset_register_and_bursts() -> None:
    m = TensilMachine(ARCH)
    raw = np.arange(2 * N).reshape(2, N)
    m.dram[0].write((3 << 16) + 10 * ARCH.vector_bytes, m.fmt.to_bytes(raw))
    m.run([Configure(ConfigReg.DRAM0_OFFSET, 3), DataMove(D0, 7, 10, 2),
           DataMove(DataFlow.LOCAL_TO_DRAM1, 7, 0, 2, stride=4)])
    assert m.local[7:9].tolist() == raw.tolist()
    assert [(b.bank, b.address, b.nbytes, b.write) for b in m.bursts] == [
        (0, (3 << 16) + 10 * 8, 16, False), (1, 0, 8, True), (1, 4 * 8, 8, True)]


def test_samples_tracepoint_and_timeout() -> None:
    m = TensilMachine(ARCH, TensilTiming(sample_block_words=4))
    m.run([Configure(ConfigReg.SAMPLE_INTERVAL, 3), Configure(ConfigReg.TRACEPOINT, 4),
           Configure(ConfigReg.TIMEOUT, 4), MatMul(0, 0, 10, zeroes=True), NoOp()])
    # cycles: 1, 1, 1 (sampling starts after the first), MatMul 10 + 2N = 18 at cycles 3..20,
    # NoOp at 21: samples at 3, 6, ..., 18 (the MatMul) and 21 (the NoOp)
    words = m.samples
    assert len(words) == 6 + 1
    last = words[-1]
    assert last & 0xFFFFFFFF == 4 and (last >> 46) & 3 == 3 and (last >> 32) & 0x3FFF == 0
    mm = words[0]
    assert mm & 0xFFFFFFFF == 3 and all((mm >> bit) & 3 == 3 for bit in (32, 34, 44, 46))
    assert (mm >> 40) & 3 == 0 and mm >> 48 == 0
    assert [len(b) for b in m.sample_blocks()] == [4, 3]
    assert ("timeout", 3, 3 + 4) in m.events and ("tracepoint", 3, 21) in m.events
    assert m.config[ConfigReg.PROGRAM_COUNTER] == 5


def test_bad_inputs_are_located() -> None:
    def err(prog: object, **kw: object) -> TensilError:
        with pytest.raises(TensilError) as e:
            TensilMachine(ARCH, **kw).run(prog)  # type: ignore[arg-type]
        return e.value

    bad = (0x7 << (ARCH.instruction_bits - 4)).to_bytes(ARCH.instruction_bytes, "little")
    e = err(assemble_binary([NoOp()], ARCH) + bad)
    assert (e.pc, e.field) == (1, "opcode") and ".word" in e.instruction
    e = err([NoOp(), MatMul(0, 300, 1)])
    assert (e.pc, e.field) == (1, "accumulator_address") and e.instruction.startswith("MatMul")
    e = err([MatMul(0, 200, 8, accumulator_stride=16)])
    assert e.field == "accumulator_stride"
    e = err([MatMul(0, 250, 8)])
    assert e.field == "size"
    e = err([DataMove(D0, 0, 4090, 8)])
    assert e.field == "size" and "dram0" in str(e)
    e = err([DataMove(D1, 0, 5000, 1)])
    assert e.field == "address" and "dram1" in str(e)
    e = err([Configure(2, 1)])
    assert e.field == "register"
    e = err([Configure(ConfigReg.TIMEOUT, 1 << 16)])
    assert e.field == "value"
    e = err([Simd(SimdOp.ADD, read=True, read_address=999)])
    assert e.field == "read_address"
    with pytest.raises(TensilError) as ei:
        TensilMachine(ARCH).run([NoOp(), NoOp()], count=3)
    assert (ei.value.pc, ei.value.field) == (2, "program")
    with pytest.raises(TensilError) as ei:
        TensilMachine(ARCH).run(assemble_binary([NoOp()], ARCH) + b"\x00\x01")
    assert ei.value.pc == 1 and "partial" in str(ei.value)


SMALL = TensilArch(array_size=2, dram0_depth=64, dram1_depth=64, local_depth=32, accumulator_depth=16,
                   simd_registers_depth=1, num_luts=1)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=SMALL.instruction_bytes * 12), st.booleans())
def test_random_programs_end_or_stop_with_a_located_error(blob: bytes, data: bool) -> None:
    m = TensilMachine(SMALL, data=data)
    try:
        m.run(blob)
    except TensilError as e:
        assert 0 <= e.pc <= len(blob) // SMALL.instruction_bytes and e.field and e.instruction
    else:
        assert m.stats.instructions == len(blob) // SMALL.instruction_bytes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 15).flatmap(lambda op: st.integers(0, (1 << (SMALL.instruction_bits - 4)) - 1)
                                           .map(lambda rest: op << (SMALL.instruction_bits - 4) | rest)),
                max_size=12))
def test_random_words_with_real_opcodes(words: list[int]) -> None:
    blob = b"".join(w.to_bytes(SMALL.instruction_bytes, "little") for w in words)
    m = TensilMachine(SMALL)
    try:
        m.run(blob)
    except TensilError as e:
        assert e.pc < len(words) and e.field


def test_overlap_refinement_runs_independent_units_in_parallel() -> None:
    ov = TensilTiming(overlap=True)
    # a DRAM load into local 100.. and a MatMul reading local 0..: independent -> overlap
    prog = [DataMove(D0, 100, 0, 50), MatMul(0, 0, 40)]
    ser, par = TensilMachine(ARCH), TensilMachine(ARCH, ov)
    ser.run(prog)
    par.run(prog)
    assert ser.stats.cycles == 50 + 40 + 2 * N
    assert par.stats.cycles == max(50, 1 + 40 + 2 * N)
    # the MatMul reads what the DataMove writes: it waits for it
    dep = [DataMove(D0, 0, 0, 50), MatMul(0, 0, 40)]
    m = TensilMachine(ARCH, ov)
    m.run(dep)
    assert m.stats.cycles == 50 + 40 + 2 * N
    # the same unit serialises; Configure waits for everything in flight
    m = TensilMachine(ARCH, ov)
    m.run([DataMove(D0, 100, 0, 50), DataMove(D0, 200, 60, 10), Configure(ConfigReg.DRAM0_OFFSET, 1)])
    assert m.stats.cycles == 50 + 10 + 1


def test_overlap_never_slower_and_same_data() -> None:
    from cosim.deploy.network import parse_network
    from accelerators.tensil.deploy.compiler import compile_network
    from accelerators.tensil.deploy.run import read_var, run_program
    net = parse_network({"preset": "resnet20_cifar", "options": {"width": 8, "blocks": 1, "input_hw": 8}})
    arch = TensilArch(array_size=8, local_depth=4096, accumulator_depth=1024)
    prog = compile_network(net, arch)
    x = np.random.default_rng(0).integers(0, 256, net.input_shape)
    a = run_program(prog, x)
    b = run_program(prog, x, timing=TensilTiming(overlap=True))
    c = run_program(prog, x, data=False, timing=TensilTiming(overlap=True))
    assert b.stats.cycles < a.stats.cycles and b.stats.cycles == c.stats.cycles
    busy = max(sum(v for k, v in a.stats.cycles_by_opcode.items() if k in ("MatMul", "LoadWeight")), 1)
    assert b.stats.cycles >= busy                       # never faster than the array's own work
    assert np.array_equal(read_var(a, prog.vars["fc"]), read_var(b, prog.vars["fc"]))
