"""C macros of a register map, for the firmware header (firmware/include/marsellus_map.h).

Naming, with ``P`` the map's prefix: ``P_PRESENT``; constants ``P_NAME``; registers
``P_REG`` (byte offset); fields ``P_REG_FIELD_LSB`` plus ``P_REG_FIELD`` (the bit) for a
1-bit field or ``P_REG_FIELD_MASK`` for a wider one (a field spanning the whole register
gets none); arrays ``P_ARR_BASE``, ``P_ARR_STRIDE``, ``P_ARR_COUNT`` and ``P_ARR_REG`` (the
offset inside an instance), fields as above.
"""
from __future__ import annotations

from tlm.regmap import Register, RegisterMap


def define(name: str, value: int, comment: str = "", digits: int = 8) -> str:
    """``#define NAME 0x...u`` in the header's column layout."""
    c = f"  /* {comment} */" if comment else ""
    return f"#define {name:<36} 0x{value:0{digits}X}u{c}"


def define_dec(name: str, value: int) -> str:
    """A small count or bit number, written in decimal (shift amounts stay plain ints)."""
    return f"#define {name:<36} {value}"


def _register(prefix: str, r: Register, width: int, digits: int) -> list[str]:
    out = [define(f"{prefix}_{r.name}", r.offset, "", digits)]
    for f in r.fields:
        if f.width == width:
            continue  # the whole register: its offset says it all
        stem = f"{prefix}_{r.name}_{f.name.upper()}"
        out.append(define(stem if f.width == 1 else f"{stem}_MASK", f.mask, "", digits))
        out.append(define_dec(f"{stem}_LSB", f.lsb))
    return out


def render_block(m: RegisterMap, source: str) -> list[str]:
    """The header section of block ``m`` (``source``: its YAML path, for the title)."""
    p, digits = m.prefix, m.width // 4
    lines = [f"/* ---- {m.block} ({source}) ---- */", f"#define {p}_PRESENT 1"]
    for c in m.constants:
        lines.append(define(f"{p}_{c.name}", c.value, "", max(digits, 8)))
    for r in m.registers:
        lines += _register(p, r, m.width, digits)
    for a in m.arrays:
        lines.append(define(f"{p}_{a.name}_BASE", a.base, f"{a.name} i at BASE + i * STRIDE",
                            digits))
        lines.append(define(f"{p}_{a.name}_STRIDE", a.stride, "", digits))
        lines.append(define_dec(f"{p}_{a.name}_COUNT", a.count))
        for r in a.registers:
            lines += _register(f"{p}_{a.name}", r, m.width, digits)
    return lines + [""]


def check_unique(lines: list[str]) -> None:
    """Refuse a header in which two sections define the same macro."""
    seen: set[str] = set()
    for line in lines:
        if line.startswith("#define "):
            name = line.split()[1]
            if name in seen:
                raise ValueError(f"generated header: macro {name} is defined twice")
            seen.add(name)
