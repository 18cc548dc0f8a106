"""Register-map descriptions: one YAML file per memory-mapped block, one schema for all.

A block's ``registers.yaml`` is the single source of its register layout: the model takes
its offsets and bit fields from it, and ``cosim regs`` generates the firmware's C header,
an SV package and the docs tables from it. Schema (docs/registers.md)::

    block: cluster_dma            # identifier; generated names derive from it
    doc: "..."                    # optional
    width: 32                     # register width in bits (8, 16, 32 or 64; default 32)
    c_prefix: DMA                 # optional: C/SV name prefix (default: block in capitals)
    constants:                    # optional named values (ID codes, event numbers, ...)
      - {name: ID_FULL, value: 0xFFFFFFFF, doc: "..."}
    registers:
      - name: CMD
        offset: 0x00              # bytes from the block's base, aligned to the width
        access: rw                # rw, ro, wo or rw1c
        reset: 0                  # optional (default 0)
        group: control            # optional: a section name for docs and views
        doc: "..."
        fields:                   # optional
          - {name: LEN, lsb: 0, width: 18, access: rw, doc: "..."}
    arrays:                       # optional: a register group repeated count times
      - name: CORE                # instance i at base + i * stride
        base: 0x000
        stride: 0x40
        count: 16                 # instances the address space reserves room for
        doc: "..."
        registers: [...]          # offsets inside one instance

Bad input is refused with :class:`RegMapError` naming the file, the line and the key.
Nothing here knows a platform: offsets are relative to whatever base a composer assigns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .yamlfast import SafeLoader

__all__ = ["ACCESS", "Constant", "Field", "Register", "RegisterArray", "RegisterMap",
           "RegMapError", "load_regmap", "parse_regmap"]

#: access codes: rw1c = readable, writing 1 to a bit clears it (sticky status bits)
ACCESS = ("rw", "ro", "wo", "rw1c")
WIDTHS = (8, 16, 32, 64)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class RegMapError(ValueError):
    """A register-map YAML that cannot be used: ``file:line: key: problem``."""

    def __init__(self, source: str, line: int, key: str, problem: str):
        self.source, self.line, self.key, self.problem = source, line, key, problem
        super().__init__(f"{source}:{line}: {key}: {problem}")


@dataclass(frozen=True)
class Field:
    """A bit field: ``width`` bits from ``lsb``."""

    name: str
    lsb: int
    width: int
    access: str = "rw"
    doc: str = ""

    @property
    def mask(self) -> int:
        """The field's bits in place."""
        return ((1 << self.width) - 1) << self.lsb

    @property
    def shift(self) -> int:
        return self.lsb

    def get(self, word: int) -> int:
        """The field's value in ``word``."""
        return (word >> self.lsb) & ((1 << self.width) - 1)

    def put(self, word: int, value: int) -> int:
        """``word`` with the field set to ``value`` (truncated to the field)."""
        return (word & ~self.mask) | ((int(value) << self.lsb) & self.mask)


@dataclass(frozen=True)
class Register:
    """One register at ``offset`` (bytes from the block's, or the array instance's, base)."""

    name: str
    offset: int
    access: str = "rw"
    reset: int = 0
    doc: str = ""
    group: str = ""
    fields: tuple[Field, ...] = ()

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"register {self.name} has no field {name!r}")

    @property
    def bank_access(self) -> str:
        """The access of :class:`tlm.regs.RegisterBank` (w1c is the write hook's job)."""
        return "rw" if self.access == "rw1c" else self.access


@dataclass(frozen=True)
class RegisterArray:
    """A register group repeated ``count`` times at ``base + i * stride``."""

    name: str
    base: int
    stride: int
    count: int
    registers: tuple[Register, ...]
    doc: str = ""

    def register(self, name: str) -> Register:
        for r in self.registers:
            if r.name == name:
                return r
        raise KeyError(f"array {self.name} has no register {name!r}")

    def offset(self, index: int, name: str) -> int:
        """Offset of register ``name`` of instance ``index`` from the block's base."""
        if not 0 <= index < self.count:
            raise IndexError(f"array {self.name} has {self.count} instances, not {index + 1}")
        return self.base + index * self.stride + self.register(name).offset

    @property
    def end(self) -> int:
        return self.base + self.count * self.stride


@dataclass(frozen=True)
class Constant:
    name: str
    value: int
    doc: str = ""


@dataclass(frozen=True)
class RegisterMap:
    """A block's register map, loaded from its YAML (``source``)."""

    block: str
    width: int
    registers: tuple[Register, ...]
    arrays: tuple[RegisterArray, ...] = ()
    constants: tuple[Constant, ...] = ()
    doc: str = ""
    c_prefix: str = ""
    source: str = ""

    @property
    def prefix(self) -> str:
        """Name prefix of generated C macros and SV parameters."""
        return self.c_prefix or self.block.upper()

    @property
    def word_bytes(self) -> int:
        return self.width // 8

    def register(self, name: str) -> Register:
        for r in self.registers:
            if r.name == name:
                return r
        raise KeyError(f"{self.block} has no register {name!r}")

    def offset(self, name: str) -> int:
        """Offset of register ``name`` from the block's base."""
        return self.register(name).offset

    def field(self, register: str, field: str) -> Field:
        return self.register(register).field(field)

    def mask(self, register: str, field: str) -> int:
        return self.field(register, field).mask

    def shift(self, register: str, field: str) -> int:
        return self.field(register, field).lsb

    def array(self, name: str) -> RegisterArray:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(f"{self.block} has no register array {name!r}")

    def constant(self, name: str) -> int:
        for c in self.constants:
            if c.name == name:
                return c.value
        raise KeyError(f"{self.block} has no constant {name!r}")

    def group(self, name: str) -> tuple[Register, ...]:
        """The registers of ``group``, in offset order."""
        return tuple(r for r in self.registers if r.group == name)

    def offsets(self) -> dict[str, int]:
        """Register name -> offset (the plain registers; arrays are not expanded)."""
        return {r.name: r.offset for r in self.registers}


# ---- YAML with line numbers -------------------------------------------------------------
class _Located(dict[str, Any]):
    """A mapping that remembers the line of its start and of each key."""

    line: int
    lines: dict[str, int]


class _Loader(SafeLoader):  # type: ignore[valid-type,misc]  # libyaml's when available
    source = "<yaml>"


class _PyLoader(yaml.SafeLoader):
    """The pure-Python parser: parses again a document libyaml refused, so the error reads
    the same with or without libyaml."""

    source = "<yaml>"


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> _Located:
    loader.flatten_mapping(node)
    out = _Located()
    out.line = node.start_mark.line + 1
    out.lines = {}
    for k_node, v_node in node.value:
        key = loader.construct_object(k_node, deep=True)
        if key in out:
            raise RegMapError(loader.source, k_node.start_mark.line + 1, str(key),
                              "duplicate key")
        out[key] = loader.construct_object(v_node, deep=True)
        out.lines[key] = k_node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_PyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# ---- validation -------------------------------------------------------------------------
class _Ctx:
    """Where a value came from, for error messages."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, m: _Located, key: str, path: str, problem: str) -> RegMapError:
        line = m.lines.get(key, m.line) if isinstance(m, _Located) else 0
        return RegMapError(self.source, line, f"{path}.{key}" if path else key, problem)

    def mapping(self, v: Any, line: int, path: str) -> _Located:
        if not isinstance(v, _Located):
            raise RegMapError(self.source, line, path or "<top>", "expected a mapping")
        return v

    def keys(self, m: _Located, path: str, required: tuple[str, ...],
             optional: tuple[str, ...]) -> None:
        for k in m:
            if k not in required and k not in optional:
                allowed = ", ".join(required + optional)
                raise self.fail(m, str(k), path, f"unknown key (allowed: {allowed})")
        for k in required:
            if k not in m:
                raise RegMapError(self.source, m.line, f"{path}.{k}" if path else k,
                                  "missing required key")

    def int_(self, m: _Located, key: str, path: str, default: int | None = None,
             lo: int = 0) -> int:
        v = m.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(m, key, path, f"expected an integer, got {v!r}")
        if v < lo:
            raise self.fail(m, key, path, f"must be >= {lo}, got {v}")
        return v

    def str_(self, m: _Located, key: str, path: str, default: str = "") -> str:
        v = m.get(key, default)
        if not isinstance(v, str):
            raise self.fail(m, key, path, f"expected a string, got {v!r}")
        return v

    def name(self, m: _Located, key: str, path: str) -> str:
        v = self.str_(m, key, path)
        if not _IDENT.match(v):
            raise self.fail(m, key, path, f"{v!r} is not an identifier")
        return v

    def access(self, m: _Located, path: str, default: str) -> str:
        v = m.get("access", default)
        if v not in ACCESS:
            raise self.fail(m, "access", path, f"bad access code {v!r} (use {', '.join(ACCESS)})")
        return str(v)

    def list_(self, m: _Located, key: str, path: str) -> list[Any]:
        v = m.get(key, [])
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(m, key, path, "expected a list")
        return v


def _fields(c: _Ctx, r: _Located, path: str, width: int, reg_access: str) -> tuple[Field, ...]:
    out: list[Field] = []
    line_of: dict[str, _Located] = {}
    for i, f in enumerate(c.list_(r, "fields", path)):
        f = c.mapping(f, r.lines.get("fields", r.line), f"{path}.fields[{i}]")
        c.keys(f, f"{path}.fields[{i}]", ("name", "lsb", "width"), ("access", "doc"))
        name = c.name(f, "name", f"{path}.fields[{i}]")
        fp = f"{path}.fields[{name}]"
        if name in line_of:
            raise c.fail(f, "name", fp, "a field of that name is already defined")
        lsb = c.int_(f, "lsb", fp)
        w = c.int_(f, "width", fp, lo=1)
        if lsb + w > width:
            raise c.fail(f, "width", fp, f"bits [{lsb + w - 1}:{lsb}] lie beyond the "
                         f"{width}-bit register")
        fld = Field(name, lsb, w, c.access(f, fp, reg_access), c.str_(f, "doc", fp))
        for other in out:
            if fld.mask & other.mask:
                raise c.fail(f, "lsb", fp, f"overlaps field {other.name} "
                             f"(bits [{other.lsb + other.width - 1}:{other.lsb}])")
        out.append(fld)
        line_of[name] = f
    return tuple(out)


def _registers(c: _Ctx, parent: _Located, path: str, width: int,
               span: int | None) -> tuple[Register, ...]:
    """The ``registers`` list of ``parent``; ``span``: an array instance's size."""
    wb = width // 8
    regs: list[Register] = []
    where: dict[str, _Located] = {}
    for i, r in enumerate(c.list_(parent, "registers", path)):
        r = c.mapping(r, parent.lines.get("registers", parent.line), f"{path}registers[{i}]")
        c.keys(r, f"{path}registers[{i}]", ("name", "offset"),
               ("access", "reset", "doc", "fields", "group"))
        name = c.name(r, "name", f"{path}registers[{i}]")
        rp = f"{path}registers[{name}]"
        if name in where:
            raise c.fail(r, "name", rp, f"a register of that name is already defined "
                         f"(line {where[name].line})")
        off = c.int_(r, "offset", rp)
        if off % wb:
            raise c.fail(r, "offset", rp, f"0x{off:x} is not aligned to the {width}-bit width")
        if span is not None and off + wb > span:
            raise c.fail(r, "offset", rp, f"0x{off:x} lies outside the array stride 0x{span:x}")
        for other in regs:
            if other.offset == off:
                raise c.fail(r, "offset", rp, f"0x{off:x} overlaps register {other.name}")
        access = c.access(r, rp, "rw")
        reset = c.int_(r, "reset", rp, default=0)
        if reset >> width:
            raise c.fail(r, "reset", rp, f"0x{reset:x} does not fit {width} bits")
        group = c.str_(r, "group", rp)
        regs.append(Register(name, off, access, reset, c.str_(r, "doc", rp), group,
                             _fields(c, r, rp, width, access)))
        where[name] = r
    return tuple(sorted(regs, key=lambda x: x.offset))


def _arrays(c: _Ctx, top: _Located, width: int) -> tuple[RegisterArray, ...]:
    out: list[RegisterArray] = []
    for i, a in enumerate(c.list_(top, "arrays", "")):
        a = c.mapping(a, top.lines.get("arrays", top.line), f"arrays[{i}]")
        c.keys(a, f"arrays[{i}]", ("name", "base", "stride", "count", "registers"), ("doc",))
        name = c.name(a, "name", f"arrays[{i}]")
        ap = f"arrays[{name}]"
        if any(x.name == name for x in out):
            raise c.fail(a, "name", ap, "an array of that name is already defined")
        base = c.int_(a, "base", ap)
        stride = c.int_(a, "stride", ap, lo=width // 8)
        if base % (width // 8) or stride % (width // 8):
            raise c.fail(a, "stride" if base % (width // 8) == 0 else "base", ap,
                         f"not aligned to the {width}-bit width")
        count = c.int_(a, "count", ap, lo=1)
        regs = _registers(c, a, f"{ap}.", width, stride)
        if not regs:
            raise c.fail(a, "registers", ap, "an array needs at least one register")
        out.append(RegisterArray(name, base, stride, count, regs, c.str_(a, "doc", ap)))
    return tuple(out)


def _check_overlaps(c: _Ctx, top: _Located, m: RegisterMap) -> None:
    """Plain registers and array spans must not share an address."""
    spans = [(r.offset, r.offset + m.word_bytes, f"register {r.name}", "registers")
             for r in m.registers]
    spans += [(a.base, a.end, f"array {a.name}", "arrays") for a in m.arrays]
    spans.sort()
    for (a0, a1, an, _), (b0, b1, bn, key) in zip(spans, spans[1:]):
        if b0 < a1:
            raise RegMapError(c.source, top.lines.get(key, top.line), key,
                              f"{bn} at 0x{b0:x} overlaps {an} [0x{a0:x}, 0x{a1:x})")


def _compose(loader_cls: Any, text: str, source: str) -> Any:
    loader = loader_cls(text)
    loader.source = source
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def parse_regmap(text: str, source: str = "<string>") -> RegisterMap:
    """Parse and check a register-map YAML document."""
    try:
        top = _compose(_Loader, text, source)
    except yaml.YAMLError:   # libyaml refused it: the pure-Python parser words the error
        try:
            top = _compose(_PyLoader, text, source)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            raise RegMapError(source, mark.line + 1 if mark else 0, "<yaml>",
                              str(e.problem or e)) from None
    c = _Ctx(source)
    top = c.mapping(top, 1, "")
    c.keys(top, "", ("block", "registers"),
           ("doc", "width", "c_prefix", "constants", "arrays"))
    block = c.name(top, "block", "")
    width = c.int_(top, "width", "", default=32)
    if width not in WIDTHS:
        raise c.fail(top, "width", "", f"register width must be one of {WIDTHS}, got {width}")
    prefix = c.str_(top, "c_prefix", "")
    if prefix and not _IDENT.match(prefix):
        raise c.fail(top, "c_prefix", "", f"{prefix!r} is not an identifier")
    consts: list[Constant] = []
    for i, k in enumerate(c.list_(top, "constants", "")):
        k = c.mapping(k, top.lines.get("constants", top.line), f"constants[{i}]")
        c.keys(k, f"constants[{i}]", ("name", "value"), ("doc",))
        name = c.name(k, "name", f"constants[{i}]")
        if any(x.name == name for x in consts):
            raise c.fail(k, "name", f"constants[{name}]", "a constant of that name is "
                         "already defined")
        consts.append(Constant(name, c.int_(k, "value", f"constants[{name}]"),
                               c.str_(k, "doc", f"constants[{name}]")))
    m = RegisterMap(block, width, _registers(c, top, "", width, None), _arrays(c, top, width),
                    tuple(consts), c.str_(top, "doc", ""), prefix, source)
    names = [r.name for r in m.registers]
    for a in m.arrays:
        if a.name in names:
            raise c.fail(top, "arrays", "", f"array {a.name} has a register's name")
    _check_overlaps(c, top, m)
    return m


@lru_cache(maxsize=None)
def load_regmap(path: str | Path) -> RegisterMap:
    """Load (once) the register map in ``path``."""
    from .files import read_text
    p = Path(path)
    return parse_regmap(read_text(p, "package_data"), str(p))

