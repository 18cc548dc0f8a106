"""The Tensil ISA machine: executes an instruction stream bit-exactly on local memory,
accumulators and the two DRAM banks, counting cycles with the latency model
(docs/tensil.md; spec §4-§9).

DRAM is reached through two byte-addressed ports (:class:`DramPort`): a plain sparse
memory standalone, the accelerator's memory view in a co-simulation. Vector address v of
bank x is byte ``(DRAMx offset register << 16) + v * N * W/8``. Every DRAM transfer is also
recorded as a burst so a TLM wrapper can replay it through its sockets.

Bad input stops the run with a :class:`TensilError` naming the program counter, the
disassembled instruction and the field.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from tlm.errors import SimulationError

from .arch import TensilArch
from .fixed import FixedFormat
from .isa import (
    CONFIG_WIDTHS, ConfigReg, Configure, DataFlow, DataMove, Instruction, IsaError, LoadLut,
    LoadWeight, MatMul, NoOp, Simd, SimdOp, decode, describe_word, disassemble, words_of,
)
from .latency import DRAM_FLOWS, TensilTiming, cycles, sample_word
from .overlap import OverlapModel


class TensilError(SimulationError):
    """Bad input found while executing: ``pc`` (instruction index), ``instruction`` (its
    disassembly), ``field`` (the operand at fault)."""

    def __init__(self, message: str, pc: int, instruction: str, field: str,
                 path: str | None = None, time: int | None = None):
        self.pc = pc
        self.instruction = instruction
        self.field = field
        self.detail = message
        super().__init__(f"pc {pc} [{instruction}] {field}: {message}", path, time)


class DramPort(Protocol):
    """Byte-addressed access to one DRAM bank."""

    def read(self, address: int, nbytes: int) -> bytes: ...

    def write(self, address: int, data: bytes) -> None: ...


class SparseDram:
    """A byte-addressed memory allocated in 64 KiB pages on first touch (reads of untouched
    bytes give zeros)."""

    PAGE = 1 << 16

    def __init__(self) -> None:
        self.pages: dict[int, bytearray] = {}

    def read(self, address: int, nbytes: int) -> bytes:
        out = bytearray()
        while nbytes:
            page, off = divmod(address, self.PAGE)
            k = min(nbytes, self.PAGE - off)
            buf = self.pages.get(page)
            out += buf[off:off + k] if buf is not None else bytes(k)
            address, nbytes = address + k, nbytes - k
        return bytes(out)

    def write(self, address: int, data: bytes) -> None:
        view = memoryview(data)
        while view.nbytes:
            page, off = divmod(address, self.PAGE)
            k = min(view.nbytes, self.PAGE - off)
            buf = self.pages.setdefault(page, bytearray(self.PAGE))
            buf[off:off + k] = view[:k]
            address, view = address + k, view[k:]


@dataclass(frozen=True)
class DramBurst:
    """One DRAM transfer of a DataMove: bank, byte address, length, direction."""

    bank: int
    address: int
    nbytes: int
    write: bool


@dataclass(frozen=True)
class Hazard:
    """A DataMove at ``pc`` that read accumulator ``address`` too soon after the SIMD write
    at ``simd_pc``."""

    pc: int
    simd_pc: int
    address: int


@dataclass
class MachineStats:
    """What a run did (stable keys, in :meth:`as_dict`)."""

    instructions: int = 0
    cycles: int = 0
    by_opcode: Counter = field(default_factory=Counter)
    cycles_by_opcode: Counter = field(default_factory=Counter)
    macs: int = 0
    matmul_vectors: int = 0
    vectors_moved: Counter = field(default_factory=Counter)
    dram_bytes: Counter = field(default_factory=Counter)

    def as_dict(self, arch: TensilArch) -> dict[str, Any]:
        ideal = self.matmul_vectors
        return {"instructions": self.instructions, "cycles": self.cycles,
                "by_opcode": dict(sorted(self.by_opcode.items())),
                "cycles_by_opcode": dict(sorted(self.cycles_by_opcode.items())),
                "macs": self.macs, "array_utilisation": ideal / self.cycles if self.cycles else 0.0,
                "vectors_moved": dict(sorted(self.vectors_moved.items())),
                "dram_bytes": dict(sorted(self.dram_bytes.items()))}


_NAMES = {NoOp: "NoOp", MatMul: "MatMul", DataMove: "DataMove", LoadWeight: "LoadWeight",
          Simd: "SIMD", LoadLut: "LoadLUT", Configure: "Configure"}

CONFIG_DEFAULTS = {ConfigReg.DRAM0_OFFSET: 0, ConfigReg.DRAM0_CACHE: 0, ConfigReg.DRAM1_OFFSET: 0,
                   ConfigReg.DRAM1_CACHE: 0, ConfigReg.TIMEOUT: 0x64,
                   ConfigReg.TRACEPOINT: 0xFFFFFFFF, ConfigReg.PROGRAM_COUNTER: 0,
                   ConfigReg.SAMPLE_INTERVAL: 0}


# plain ints: an IntEnum key hashes through Python code, once per instruction here
_PC, _TIMEOUT, _TRACEPOINT = (int(ConfigReg.PROGRAM_COUNTER), int(ConfigReg.TIMEOUT),
                              int(ConfigReg.TRACEPOINT))
_SAMPLE, _D0OFF, _D1OFF = (int(ConfigReg.SAMPLE_INTERVAL), int(ConfigReg.DRAM0_OFFSET),
                           int(ConfigReg.DRAM1_OFFSET))


class _Fault(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


class TensilMachine:
    """The state of one TCU and the executor of its instructions.

    ``data=False`` is the timing-only mode: every check, counter and cycle is the same but
    no scalar is computed (memories keep their contents)."""

    def __init__(self, arch: TensilArch, timing: TensilTiming | None = None, *,
                 dram0: DramPort | None = None, dram1: DramPort | None = None,
                 data: bool = True, path: str | None = None, keep_bursts: bool = True):
        self.arch = arch.checked()
        self._depths = self.arch.depths
        self._vb = self.arch.vector_bytes
        #: record every DRAM transfer in ``bursts`` (a TLM wrapper replays them; a long
        #: standalone run may turn it off)
        self.keep_bursts = keep_bursts
        self.timing = timing or TensilTiming()
        self.fmt = FixedFormat(arch.width, arch.frac)
        self.data = data
        self.path = path
        n = arch.array_size
        self.local = np.zeros((arch.local_depth, n), dtype=np.int64)
        self.acc = np.zeros((arch.accumulator_depth, n), dtype=np.int64)
        self.dram: list[DramPort] = [dram0 or SparseDram(), dram1 or SparseDram()]
        #: weight shift register: stage 0 = bias, stage 1 + j = column j
        self.stages = np.zeros((n + 1, n), dtype=np.int64)
        self.regs = np.zeros((arch.simd_registers_depth, n), dtype=np.int64)
        self.luts = np.zeros((arch.num_luts + 1, arch.lut_depth_vectors * n), dtype=np.int64)
        self.config: dict[int, int] = {int(k): v for k, v in CONFIG_DEFAULTS.items()}
        self.stats = MachineStats()
        self.hazards: list[Hazard] = []
        self.events: list[tuple[str, int, int]] = []  # (kind, pc, cycle)
        self.samples: list[int] = []
        self.bursts: list[DramBurst] = []
        self.index = 0
        self.prev: Instruction | None = None
        # SIMD writes not yet visible to DataMoves: (index, address, value before the write)
        self._pending: list[tuple[int, int, np.ndarray]] = []
        self.on_instruction: Callable[[int, Instruction, int], None] | None = None
        #: the overlap refinement's schedule (None: the serial model)
        self.overlap = OverlapModel() if self.timing.overlap else None

    # ---------------------------------------------------------------- running
    def restart(self) -> None:
        """Start a new instruction stream at index 0 (memories, weights, registers and
        configuration keep their contents, as on the hardware)."""
        self.index, self.prev, self._pending = 0, None, []

    def run(self, program: Sequence[Instruction] | bytes, count: int | None = None) -> MachineStats:
        """Execute ``program`` (instructions, or ``.tprog`` bytes decoded as they are
        fetched); ``count`` instructions if given (more than the program has is an error)."""
        if isinstance(program, (bytes, bytearray, memoryview)):
            return self._run_binary(bytes(program), count)
        total = len(program) if count is None else count
        for i in range(total):
            if i >= len(program):
                self._off_end(len(program))
            self.step(program[i])
        return self.stats

    def _run_binary(self, binary: bytes, count: int | None) -> MachineStats:
        k = self.arch.instruction_bytes
        whole = len(binary) // k
        total = whole if count is None else count
        if count is None and len(binary) % k:
            total = whole + 1
        words = words_of(binary[:whole * k], self.arch)
        for i in range(total):
            if i >= whole:
                self._off_end(whole, len(binary) - whole * k)
            try:
                ins = decode(words[i], self.arch)
            except IsaError as e:
                raise TensilError(e.detail, self.index, describe_word(words[i], self.arch),
                                  e.field, self.path) from None
            self.step(ins)
        return self.stats

    def _off_end(self, length: int, ragged: int = 0) -> None:
        tail = f" ({ragged} bytes of a partial instruction)" if ragged else ""
        raise TensilError(f"the program runs off its end after {length} instructions{tail}",
                          self.index, "<end of program>", "program", self.path)

    def step(self, ins: Instruction) -> int:
        """Execute one instruction; returns its cycles."""
        pc = self.index
        interval = self.config[_SAMPLE]  # a new interval starts after its Configure
        try:
            self._execute(ins, pc)
        except _Fault as f:
            raise TensilError(f.message, pc, disassemble(ins), f.field, self.path) from None
        c = cycles(ins, self.prev, self.arch, self.timing)
        self._account(ins, pc, c, interval)
        self.prev = ins
        self.index += 1
        return c

    def _account(self, ins: Instruction, pc: int, c: int, interval: int) -> None:
        s = self.stats
        name = _NAMES[type(ins)]
        s.instructions += 1
        if self.overlap is None:
            start = s.cycles
            s.cycles += c
        else:
            start = self.overlap.add(ins, c, self.arch.lut_depth_vectors)
            s.cycles = self.overlap.total
        s.by_opcode[name] += 1
        s.cycles_by_opcode[name] += c
        cfg = self.config
        reg_pc = cfg[_PC]
        if interval:
            first = -(-start // interval) * interval
            if first < start + c:
                word = sample_word(reg_pc, ins)
                self.samples.extend([word] * ((start + c - 1 - first) // interval + 1))
        timeout = cfg[_TIMEOUT]
        if timeout and c > timeout:
            self.events.append(("timeout", pc, start + timeout))
        if not isinstance(ins, Configure) or ins.register != _PC:
            cfg[_PC] = (reg_pc + 1) & 0xFFFFFFFF
        if cfg[_PC] == cfg[_TRACEPOINT]:
            self.events.append(("tracepoint", pc, start + c))
        if self.on_instruction is not None:
            self.on_instruction(pc, ins, c)

    def sample_blocks(self) -> list[list[int]]:
        """The performance samples in blocks of ``sample_block_words`` (the last block of a
        stream carries TLAST on its last word)."""
        k = self.timing.sample_block_words
        return [self.samples[i:i + k] for i in range(0, len(self.samples), k)]

    # ---------------------------------------------------------------- helpers
    def _rows(self, memory: str, address: int, stride: int, n: int, afield: str,
              sfield: str) -> Any:
        depth = self._depths[memory]
        if address >= depth:
            raise _Fault(afield, f"address {address} is outside {memory} (depth {depth})")
        last = address + (n - 1) * stride
        if last >= depth:
            culprit = sfield if stride > 1 and address + (n - 1) < depth else "size"
            raise _Fault(culprit, f"{n} vectors from {address} with stride {stride} reach "
                                  f"{last}, outside {memory} (depth {depth})")
        return slice(address, last + 1, stride)

    def _dram_rows(self, bank: int, address: int, stride: int, n: int) -> list[tuple[int, int]]:
        """(byte address, vectors) runs of a strided DRAM access."""
        vb = self._vb
        base = self.config[_D1OFF if bank else _D0OFF] << 16
        if stride == 1:
            return [(base + address * vb, n)]
        return [(base + (address + i * stride) * vb, 1) for i in range(n)]

    # ---------------------------------------------------------------- semantics
    def _execute(self, ins: Instruction, pc: int) -> None:
        hz = self.timing.simd_write_hazard
        if self._pending:
            self._pending = [p for p in self._pending if pc - p[0] <= hz]
        if isinstance(ins, NoOp):
            return
        if isinstance(ins, MatMul):
            self._matmul(ins)
        elif isinstance(ins, DataMove):
            self._datamove(ins, pc)
        elif isinstance(ins, LoadWeight):
            rows = self._rows("local", ins.local_address, ins.local_stride, ins.size,
                              "local_address", "local_stride")
            if self.data:
                vecs = (np.zeros((ins.size, self.arch.array_size), dtype=np.int64) if ins.zeroes
                        else self.local[rows])
                n1 = self.arch.array_size + 1
                for v in vecs[-n1:] if ins.size > n1 else vecs:
                    self.stages[1:] = self.stages[:-1].copy()
                    self.stages[0] = v
        elif isinstance(ins, Simd):
            self._simd(ins, pc)
        elif isinstance(ins, LoadLut):
            k = self.arch.lut_depth_vectors
            rows = self._rows("local", ins.local_address, ins.local_stride, k,
                              "local_address", "local_stride")
            if self.data:
                self.luts[ins.table] = self.local[rows].reshape(-1)
        elif isinstance(ins, Configure):
            width = CONFIG_WIDTHS.get(ins.register)
            if width is None:
                raise _Fault("register", f"register 0x{ins.register:X} is not a configuration register")
            if ins.value >> width:
                raise _Fault("value", f"0x{ins.value:X} does not fit the {width}-bit register "
                                      f"{ConfigReg(ins.register).name}")
            self.config[ins.register] = ins.value

    def _matmul(self, ins: MatMul) -> None:
        n = ins.size
        lrows = None if ins.zeroes else self._rows(
            "local", ins.local_address, ins.local_stride, n, "local_address", "local_stride")
        arows = self._rows("accumulator", ins.accumulator_address, ins.accumulator_stride, n,
                           "accumulator_address", "accumulator_stride")
        self.stats.macs += n * self.arch.array_size ** 2
        self.stats.matmul_vectors += n
        if not self.data:
            return
        N, f = self.arch.array_size, self.fmt
        x = np.zeros((n, N), dtype=np.int64) if lrows is None else self.local[lrows]
        # lane chain of each output lane r: p_-1 = b[r], p_j = mac(x[j], W[r][j], p_{j-1});
        # stage 1 + j holds column j, i.e. W[:, j]
        p = f.chain(x, self.stages[1:].T, self.stages[0])
        self.acc[arows] = f.add(self.acc[arows], p) if ins.accumulate else p

    def _datamove(self, ins: DataMove, pc: int) -> None:
        n, flow = ins.size, ins.flow
        lrows = self._rows("local", ins.local_address, ins.local_stride, n,
                           "local_address", "local_stride")
        self.stats.vectors_moved[flow.name.lower()] += n
        bank = DRAM_FLOWS.get(flow)
        if bank is not None:
            name = f"dram{bank}"
            self._rows(name, ins.address, ins.stride, n, "address", "stride")
            to_dram = flow in (DataFlow.LOCAL_TO_DRAM0, DataFlow.LOCAL_TO_DRAM1)
            vb = self._vb
            self.stats.dram_bytes[f"{name}_{'write' if to_dram else 'read'}"] += n * vb
            if not self.data and not self.keep_bursts:
                return
            runs = self._dram_rows(bank, ins.address, ins.stride, n)
            if self.keep_bursts:
                self.bursts.extend(DramBurst(bank, a, k * vb, to_dram) for a, k in runs)
            if not self.data:
                return
            port = self.dram[bank]
            if to_dram:
                data = self.local[lrows]
                i = 0
                for a, k in runs:
                    port.write(a, self.fmt.to_bytes(data[i:i + k]))
                    i += k
            else:
                raw = b"".join(port.read(a, k * vb) for a, k in runs)
                self.local[lrows] = self.fmt.from_bytes(raw).reshape(n, self.arch.array_size)
            return
        arows = self._rows("accumulator", ins.address, ins.stride, n, "address", "stride")
        if flow == DataFlow.ACC_TO_LOCAL:
            addrs = range(ins.address, ins.address + n * ins.stride, ins.stride)
            stale = self._stale(pc, addrs)
            if self.data:
                vecs = self.acc[arows].copy()
                for i, old in stale.items():
                    vecs[i] = old
                self.local[lrows] = vecs
        elif self.data:
            src = self.local[lrows]
            self.acc[arows] = self.fmt.add(self.acc[arows], src) if flow == DataFlow.LOCAL_TO_ACC_ADD else src

    def _stale(self, pc: int, addrs: range) -> dict[int, np.ndarray]:
        """Rows of a DataMove read that a recent SIMD write has not reached yet."""
        out: dict[int, np.ndarray] = {}
        if not self._pending:
            return out
        where = {a: i for i, a in enumerate(addrs)}
        for simd_pc, address, old in self._pending:
            i = where.get(address)
            if i is None:
                continue
            self.hazards.append(Hazard(pc, simd_pc, address))
            mode = self.timing.hazard
            if mode == "error":
                raise _Fault("address", f"reads accumulator {address} {pc - simd_pc} "
                                        f"instruction(s) after the SIMD write at pc {simd_pc} "
                                        f"(needs more than {self.timing.simd_write_hazard})")
            if mode == "stale" and i not in out:
                out[i] = old
        return out

    def _simd(self, ins: Simd, pc: int) -> None:
        depth = self.arch.accumulator_depth
        if ins.read and ins.read_address >= depth:
            raise _Fault("read_address", f"accumulator {ins.read_address} is outside the "
                                         f"accumulators (depth {depth})")
        if ins.write and ins.write_address >= depth:
            raise _Fault("write_address", f"accumulator {ins.write_address} is outside the "
                                          f"accumulators (depth {depth})")
        R = self.arch.simd_registers_depth
        if ins.op == SimdOp.LOOKUP and ins.dest + self.arch.num_luts > R:
            raise _Fault("dest", f"Lookup into register {ins.dest} needs {ins.dest} + "
                                 f"{self.arch.num_luts} <= {R} registers")
        if ins.write:
            self._pending.append((pc, ins.write_address, self.acc[ins.write_address].copy()))
        if not self.data:
            return
        N, f = self.arch.array_size, self.fmt
        inp = self.acc[ins.read_address].copy() if ins.read else np.zeros(N, dtype=np.int64)

        def src(k: int) -> np.ndarray:
            return inp if k == 0 else self.regs[k - 1]

        a, b = src(ins.left), src(ins.right)
        one, zero = f.one, 0
        op = ins.op
        if op == SimdOp.LOOKUP:
            keys = self.luts[0]
            idx = np.maximum(np.searchsorted(keys, a, side="right") - 1, 0)
            out = f.sat(a - keys[idx])
            if ins.dest:
                self.regs[ins.dest - 1] = out
            for i in range(self.arch.num_luts):
                self.regs[ins.dest + i] = self.luts[1 + i][idx]
        else:
            out = _ALU[op](f, a, b, one, zero)
            if ins.dest:
                self.regs[ins.dest - 1] = out
        if ins.write:
            w = ins.write_address
            self.acc[w] = f.add(self.acc[w], out) if ins.accumulate else out


def _bool(x: Any, one: int) -> Any:
    return np.where(x, one, 0).astype(np.int64)


_ALU: dict[SimdOp, Callable[[FixedFormat, Any, Any, int, int], Any]] = {
    SimdOp.NOOP: lambda f, a, b, one, z: a.copy(),
    SimdOp.ZERO: lambda f, a, b, one, z: np.zeros_like(a),
    SimdOp.MOVE: lambda f, a, b, one, z: a.copy(),
    SimdOp.NOT: lambda f, a, b, one, z: _bool(a == 0, one),
    SimdOp.AND: lambda f, a, b, one, z: _bool((a != 0) & (b != 0), one),
    SimdOp.OR: lambda f, a, b, one, z: _bool((a != 0) | (b != 0), one),
    SimdOp.INCREMENT: lambda f, a, b, one, z: f.add(a, one),
    SimdOp.DECREMENT: lambda f, a, b, one, z: f.add(a, -one),
    SimdOp.ADD: lambda f, a, b, one, z: f.add(a, b),
    SimdOp.SUBTRACT: lambda f, a, b, one, z: f.add(a, -b),
    SimdOp.MULTIPLY: lambda f, a, b, one, z: f.mac(a, b, 0),
    SimdOp.ABS: lambda f, a, b, one, z: f.sat(np.abs(a)),
    SimdOp.GREATER_THAN: lambda f, a, b, one, z: _bool(a > b, one),
    SimdOp.GREATER_THAN_EQUAL: lambda f, a, b, one, z: _bool(a >= b, one),
    SimdOp.MIN: lambda f, a, b, one, z: np.minimum(a, b),
    SimdOp.MAX: lambda f, a, b, one, z: np.maximum(a, b),
}
