"""Memory-mapped register banks: the target side of every peripheral.

Registers are 32-bit, little-endian, at 4-byte aligned offsets. Accesses of 1, 2 or 4 bytes
inside one register are allowed (a partial write merges into the current value); an access
that spans registers, or a length other than 1/2/4, gets BURST_ERROR; an offset with no
register gets ADDRESS_ERROR. A write to a read-only register is ignored (as PULP peripherals
do) and counted in the ``ignored_writes`` statistic. Read hooks may have side effects (the
HWPE ``acquire`` register does), so debug reads return the stored value without calling
hooks.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from .clock import Clock
from .module import Module
from .payload import OK, READ, WRITE, Command, GenericPayload, Status, record_error
from .regmap import Register as MapRegister
from .regmap import RegisterArray, RegisterMap
from .sockets import TargetSocket
from .timing import HopTiming

if TYPE_CHECKING:
    from .kernel import Simulator

#: a register's hooks for :meth:`RegisterBank.add_map`: ``{"read": fn, "write": fn}`` (either
#: optional; ``"reset"`` too, for a reset the model's parameters decide)
Hooks = Mapping[str, Any]

MASK32 = 0xFFFFFFFF


def _arity(fn: Callable[..., Any]) -> int:
    """The positional parameters of ``fn`` without a default (what ``inspect.signature``
    says), read from the code object for plain functions and bound methods: signature()
    on each of a platform's ~1200 register hooks cost ~5 % of a run's start-up."""
    func, bound = fn, 0
    if isinstance(fn, types.MethodType):
        func, bound = fn.__func__, 1
    if type(func) is types.FunctionType and not hasattr(func, "__wrapped__"):
        required = func.__code__.co_argcount - len(func.__defaults__ or ())
        return max(0, required - bound)
    import inspect
    try:
        return sum(1 for p in inspect.signature(fn).parameters.values()
                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                   and p.default is p.empty)
    except (TypeError, ValueError):
        return 1


@dataclass
class Register:
    """One 32-bit register. ``read``/``write`` hooks replace the stored-value behaviour:
    ``read() -> int`` and ``write(value)`` or ``write(value, mask)``. For a partial write the
    value's unwritten bytes come from the stored value (the last write), never from the
    read hook, and ``mask`` (0xFF per written byte) says which bytes the access wrote, so a
    write-1-to-clear or a self-starting register can act on the written bytes only."""

    offset: int
    name: str
    reset: int = 0
    access: str = "rw"            # "rw", "ro" or "wo"
    read: Callable[[], int] | None = None
    write: Callable[..., None] | None = None   # write(value) or write(value, mask)
    doc: str = ""
    value: int = 0
    write_takes_mask: bool = False


class RegisterBank(Module):
    """A peripheral's register file on ``socket``. Access time: ``latency`` cycles of
    ``clock`` (or ps without a clock)."""

    def __init__(self, parent: "Module | Simulator", name: str, size: int, *,
                 clock: Clock | None = None, latency: int = 1, max_bindings: int = 8,
                 optional: bool = False):
        super().__init__(parent, name)
        self.size = size
        self.timing = HopTiming(clock, latency if clock is not None else 0, None, False, self.path)
        self.socket = TargetSocket(self, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.transport_dbg, max_bindings=max_bindings,
                                   optional=optional)
        self.registers: dict[int, Register] = {}
        self.ignored_writes = 0

    def add(self, offset: int, name: str, *, reset: int = 0, access: str = "rw",
            read: Callable[[], int] | None = None, write: Callable[..., None] | None = None,
            doc: str = "") -> Register:
        """Declare a register at ``offset`` (4-byte aligned, unique)."""
        if offset % 4 or not 0 <= offset < self.size:
            raise ValueError(f"{self.path}: register {name} at bad offset 0x{offset:x}")
        if offset in self.registers:
            raise ValueError(f"{self.path}: offset 0x{offset:x} already holds "
                             f"{self.registers[offset].name}")
        if access not in ("rw", "ro", "wo"):
            raise ValueError(f"{self.path}: register {name}: access must be rw, ro or wo")
        reg = Register(offset, name, reset & MASK32, access, read, write, doc, reset & MASK32,
                       write is not None and _arity(write) >= 2)
        self.registers[offset] = reg
        return reg

    def add_from_map(self, reg: MapRegister, *, base: int = 0, name: str | None = None,
                     read: Callable[[], int] | None = None,
                     write: Callable[..., None] | None = None,
                     reset: int | None = None) -> Register:
        """Declare register ``reg`` of a register map (:mod:`tlm.regmap`) at ``base +
        reg.offset``, named ``name`` (default: the map's name). The access
        (:attr:`~tlm.regmap.Register.bank_access`: a rw1c register is rw, its write hook
        clears), the reset and the doc come from the map; the model gives only the hooks.
        ``reset`` replaces the map's reset for a register whose reset value is a model
        parameter (an INFO word, a configured default)."""
        return self.add(base + reg.offset, reg.name if name is None else name,
                        access=reg.bank_access, reset=reg.reset if reset is None else reset,
                        read=read, write=write, doc=reg.doc)

    def add_map(self, source: RegisterMap | RegisterArray | Iterable[MapRegister],
                hooks: Mapping[str, Hooks] | None = None, *, index: int | None = None,
                base: int = 0, prefix: str = "", suffix: str = "") -> list[Register]:
        """Declare every register of ``source`` with :meth:`add_from_map`: a
        :class:`~tlm.regmap.RegisterMap` (its plain registers; arrays are not expanded), instance
        ``index`` of a :class:`~tlm.regmap.RegisterArray` (at ``array.base + index *
        array.stride``), or any registers of a map (e.g. ``map.group("rx")``). ``hooks`` maps a
        register's map name to its hooks (keyword arguments of :meth:`add_from_map`: ``read``,
        ``write``, ``reset``); a register without hooks keeps a plain stored value. Bank names
        are ``prefix + map name + suffix``; offsets are relative to ``base``."""
        hooks = hooks or {}
        if isinstance(source, RegisterArray):
            if index is None or not 0 <= index < source.count:
                raise ValueError(f"{self.path}: array {source.name} has {source.count} "
                                 f"instances; index {index} is not one")
            base += source.base + index * source.stride
            regs: tuple[MapRegister, ...] = source.registers
        elif index is not None:
            raise ValueError(f"{self.path}: index is for a register array")
        elif isinstance(source, RegisterMap):
            regs = source.registers
        else:
            regs = tuple(source)
        unknown = set(hooks) - {r.name for r in regs}
        if unknown:
            raise ValueError(f"{self.path}: hooks for registers not in the map: "
                             f"{', '.join(sorted(unknown))}")
        return [self.add_from_map(r, base=base, name=f"{prefix}{r.name}{suffix}",
                                  **hooks.get(r.name, {})) for r in regs]

    def __getitem__(self, name: str) -> Register:
        for r in self.registers.values():
            if r.name == name:
                return r
        raise KeyError(f"{self.path} has no register {name!r}")

    def reset(self) -> None:
        for r in self.registers.values():
            r.value = r.reset

    # ----- value access used by b_transport and by models ---------------------------------
    def read_reg(self, reg: Register) -> int:
        if reg.access == "wo":
            return 0
        return (reg.read() if reg.read is not None else reg.value) & MASK32

    def write_reg(self, reg: Register, value: int, mask: int = MASK32) -> None:
        if reg.access == "ro":
            self.ignored_writes += 1
            self.stats.add("ignored_writes")
            return
        value = ((reg.value & ~mask) | (value & mask)) & MASK32
        reg.value = value
        if reg.write is not None:
            if reg.write_takes_mask:
                reg.write(value, mask)
            else:
                reg.write(value)

    def _decode(self, p: GenericPayload) -> tuple[Register, int] | None:
        a, n = p.address, p.length
        if n not in (1, 2, 4) or (a % 4) + n > 4:
            record_error(self.sim, p, self.path, Status.BURST_ERROR,
                         f"register access of {n} bytes at offset 0x{a:x} (use 1, 2 or 4 bytes "
                         "inside one 32-bit register)")
            return None
        reg = self.registers.get(a & ~3)
        if reg is None:
            record_error(self.sim, p, self.path, Status.ADDRESS_ERROR,
                         f"no register at offset 0x{a & ~3:x}")
            return None
        return reg, (a % 4) * 8

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        a, n = p.address, p.length
        # an aligned word at a register (nearly every access): no decode call
        reg = self.registers.get(a) if n == 4 and not a & 3 else None
        if reg is not None:
            shift = 0
        else:
            dec = self._decode(p)
            if dec is None:
                return delay
            reg, shift = dec
        mask = ((1 << (8 * n)) - 1) << shift
        buf = memoryview(p.data).cast("B")
        if p.command == READ:
            value = self.read_reg(reg)
            buf[:n] = ((value & mask) >> shift).to_bytes(n, "little")
        elif p.command == WRITE:
            self.write_reg(reg, int.from_bytes(buf[:n], "little") << shift, mask)
        elif p.command != Command.IGNORE:
            record_error(self.sim, p, self.path, Status.COMMAND_ERROR, "unknown command")
            return delay
        p.status = OK
        return self.timing.apply(p, delay, self.sim.now)

    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug access: reads return stored values, writes set them; no hooks run."""
        a, n = p.address, p.length
        reg = self.registers.get(a & ~3)
        if reg is None or n not in (1, 2, 4) or (a % 4) + n > 4:
            return 0
        shift = (a % 4) * 8
        mask = ((1 << (8 * n)) - 1) << shift
        buf = memoryview(p.data).cast("B")
        if p.command == READ:
            buf[:n] = ((reg.value & mask) >> shift).to_bytes(n, "little")
        elif p.command == WRITE:
            reg.value = (reg.value & ~mask) | (int.from_bytes(buf[:n], "little") << shift)
        p.status = OK
        return n

    def table(self) -> list[dict[str, Any]]:
        """The register map (for docs and reports)."""
        return [{"offset": r.offset, "name": r.name, "access": r.access, "reset": r.reset,
                 "doc": r.doc} for r in sorted(self.registers.values(), key=lambda r: r.offset)]
