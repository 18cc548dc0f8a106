"""A small ELF32 little-endian loader for RISC-V firmware (no third-party dependency).

Reads what the SOC core needs and nothing more: the entry point, the ``PT_LOAD`` segments
(address, file bytes, memory size, flags) and the symbol table (to find symbols such as
``__stack_top`` or a test's result buffer, and to name the function a fault happened in).
Anything that is not a 32-bit little-endian RISC-V executable is refused with a message
that names the file and what is wrong.
"""
from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field
from pathlib import Path

from tlm.files import FileAccessError, read_bytes

EM_RISCV = 243
ET_EXEC = 2
PT_LOAD = 1
PF_X, PF_W, PF_R = 1, 2, 4
SHT_SYMTAB = 2
STT_FUNC = 2


class ElfError(ValueError):
    """The file is not a loadable RV32 ELF executable."""


@dataclass(frozen=True)
class Segment:
    """A ``PT_LOAD`` segment: ``data`` (file bytes) at ``address``, zero-filled up to
    ``memsz`` bytes (``.bss``)."""

    address: int
    data: bytes
    memsz: int
    flags: int

    @property
    def executable(self) -> bool:
        return bool(self.flags & PF_X)


@dataclass(frozen=True)
class Symbol:
    name: str
    address: int
    size: int
    is_function: bool


@dataclass
class ElfImage:
    """A parsed firmware image."""

    path: str
    entry: int
    segments: list[Segment]
    symbols: dict[str, Symbol] = field(default_factory=dict)
    _funcs: list[tuple[int, int, str]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._funcs = sorted((s.address, s.size, s.name) for s in self.symbols.values()
                             if s.is_function)
        self._func_starts = [f[0] for f in self._funcs]

    def symbol(self, name: str) -> int:
        """Address of symbol ``name`` (KeyError naming the file when it is missing)."""
        try:
            return self.symbols[name].address
        except KeyError:
            raise KeyError(f"{self.path}: no symbol {name!r}") from None

    def describe(self, address: int) -> str | None:
        """``'main+0x1c'`` for an address inside a function symbol, else None."""
        i = bisect.bisect_right(self._func_starts, address) - 1
        if i < 0:
            return None
        start, size, name = self._funcs[i]
        if address < start + max(size, 1):
            return f"{name}+0x{address - start:x}" if address != start else name
        return None


def load_elf(source: str | Path | bytes) -> ElfImage:
    """Parse an ELF file (a path or its bytes)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, path = bytes(source), "<elf bytes>"
    else:
        path = str(source)
        try:
            data = read_bytes(source, "firmware")     # regular files only, within the ELF cap
        except FileAccessError as e:
            raise ElfError(str(e)) from None
    return parse_elf(data, path)


def parse_elf(data: bytes, path: str = "<elf>") -> ElfImage:
    def bad(msg: str) -> ElfError:
        return ElfError(f"{path}: {msg}")

    if len(data) < 52 or data[:4] != b"\x7fELF":
        raise bad("not an ELF file")
    if data[4] != 1:
        raise bad("not a 32-bit ELF (the SOC core is RV32)")
    if data[5] != 1:
        raise bad("not a little-endian ELF")
    (e_type, e_machine, _ver, e_entry, e_phoff, e_shoff, _flags, _ehsize, e_phentsize,
     e_phnum, e_shentsize, e_shnum, _shstrndx) = struct.unpack_from("<HHIIIIIHHHHHH", data, 16)
    if e_machine != EM_RISCV:
        raise bad(f"machine {e_machine} is not RISC-V ({EM_RISCV})")
    if e_type != ET_EXEC:
        raise bad(f"ELF type {e_type} is not an executable (link it with the firmware's link.ld)")
    segments: list[Segment] = []
    for i in range(e_phnum):
        off = e_phoff + i * e_phentsize
        if off + 32 > len(data):
            raise bad("truncated program header table")
        p_type, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, p_flags, _align = \
            struct.unpack_from("<IIIIIIII", data, off)
        if p_type != PT_LOAD or p_memsz == 0:
            continue
        if p_offset + p_filesz > len(data):
            raise bad(f"segment {i} extends past the end of the file")
        # Load at the physical address (LMA): initialised data is copied by crt0 from its
        # load address to its run address, as on the real chip.
        segments.append(Segment(p_paddr, bytes(data[p_offset:p_offset + p_filesz]), p_memsz,
                                p_flags))
    if not segments:
        raise bad("no loadable segment")
    symbols: dict[str, Symbol] = {}
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        if off + 40 > len(data):
            break
        (_name, sh_type, _fl, _addr, sh_offset, sh_size, sh_link, _info, _al,
         sh_entsize) = struct.unpack_from("<IIIIIIIIII", data, off)
        if sh_type != SHT_SYMTAB or sh_entsize < 16:
            continue
        stroff = e_shoff + sh_link * e_shentsize
        str_off, str_size = struct.unpack_from("<II", data, stroff + 16)
        strtab = data[str_off:str_off + str_size]
        for j in range(sh_size // sh_entsize):
            st_name, st_value, st_size, st_info, _other, st_shndx = struct.unpack_from(
                "<IIIBBH", data, sh_offset + j * sh_entsize)
            if st_name == 0 or st_shndx == 0:
                continue
            end = strtab.find(b"\0", st_name)
            name = strtab[st_name:end].decode("utf-8", "replace")
            kind = st_info & 0xF
            if kind not in (0, 1, 2):  # NOTYPE, OBJECT, FUNC (skip sections, files)
                continue
            prev = symbols.get(name)
            if prev is None or (st_info >> 4) == 1:  # prefer global bindings
                symbols[name] = Symbol(name, st_value, st_size, kind == STT_FUNC)
    return ElfImage(path, e_entry, segments, symbols)
