"""What a scenario may pass to Verilator: an allow-list of exact options and value shapes.

A scenario (or a manifest it names) is data from someone else, so nothing in it may reach
the C/C++ compiler, the linker or make (``-CFLAGS -B/dir/`` runs the assembler found in
that folder), add a search path (``-I``, ``-y``, ``+incdir+``: Verilator would read files
outside the scenario), read an option file (``-f``) or change where the build writes.
Every item of ``verilator_args`` is matched against :data:`FLAGS` (no value) or
:data:`VALUED` (the next item is its value, of a fixed shape) or one of the ``-D``/``-G``/
``-W`` patterns; anything else is refused with the reason. Include folders, defines and
parameters are not strings here: the scenario gives them as keys, this module checks the
names and values, and the build passes them itself (docs/rtl.md, "What a scenario's RTL
can make the toolchain do").
"""
from __future__ import annotations

import re
from typing import Any

#: an identifier: a define, parameter or warning name
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
#: a define's or parameter's value: a number (``12``, ``-3``, ``32'h0001_0000``, ``1.5``),
#: an identifier, or a short quoted word; no spaces, slashes, shell or macro characters
VALUE = re.compile(r"^([A-Za-z0-9_'.+-]{1,128}|\"[A-Za-z0-9_.:+-]{0,64}\")$")
#: options taken as they are
FLAGS = frozenset({
    "--no-timing", "--timing", "--assert", "--no-assert", "--no-assert-case", "--assert-case",
    "--x-initial-edge", "-O0", "-O1", "-O2", "-O3",
    "-Wall", "-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wpedantic", "-Wwarn-lint",
    "-Wwarn-style", "-Wno-context",
})
#: options whose value is the next item, and that value's shape
VALUED: dict[str, tuple[re.Pattern, str]] = {
    "--x-assign": (re.compile(r"^(0|1|fast|unique)$"), "0, 1, fast or unique"),
    "--x-initial": (re.compile(r"^(0|fast|unique)$"), "0, fast or unique"),
    "--unroll-count": (re.compile(r"^[1-9][0-9]{0,5}$"), "a number 1 .. 999999"),
    "--unroll-stmts": (re.compile(r"^[1-9][0-9]{0,5}$"), "a number 1 .. 999999"),
    "--converge-limit": (re.compile(r"^[1-9][0-9]{0,5}$"), "a number 1 .. 999999"),
    "--error-limit": (re.compile(r"^[1-9][0-9]{0,3}$"), "a number 1 .. 9999"),
}
#: ``-Wno-WIDTH``, ``-Wwarn-UNUSED``, ``-Werror-LATCH``: a warning switch by message name
_WARNING = re.compile(r"^-W(no|warn|error)-[A-Z][A-Z0-9_]{0,63}$")
#: ``-DNAME`` / ``-DNAME=VALUE``, ``-GNAME=VALUE``
_DEFINE = re.compile(r"^-D([^=]*)(?:=(.*))?$", re.DOTALL)
_PARAM = re.compile(r"^-G([^=]*)=(.*)$", re.DOTALL)

#: why the dangerous families are refused: (exact options, glued prefixes, reason)
_REFUSED: tuple[tuple[frozenset[str], tuple[str, ...], str], ...] = (
    (frozenset({"-CFLAGS", "-LDFLAGS", "-MAKEFLAGS", "--compiler", "--compiler-include",
                "--make", "--build", "--build-jobs", "--build-dep-bin", "-j", "--exe",
                "--binary", "--main", "--main-top-name", "--threads", "--threads-dpi",
                "--hierarchical"}), (),
     "it reaches the C/C++ compiler, the linker or make, which a scenario may not drive"),
    (frozenset({"-y", "-v", "-f", "-F", "--relative-includes", "--waiver-output", "--no-std",
                "--no-std-package", "--no-std-waiver"}), ("-I", "+incdir+", "+libext+"),
     "it makes Verilator read files or search folders; give HDL files in 'sources' and "
     "folders in 'include_dirs', which are checked against the scenario's folder"),
    (frozenset({"-o", "-Mdir", "--Mdir", "--prefix", "--top-module", "--top", "--cc", "--sc",
                "--lib-create", "--json-only", "--lint-only", "--xml-only", "-E", "--vpi",
                "--l2-name"}), ("--dump", "--debug"),
     "the build sets it itself (the top module is the port map's 'top')"),
    (frozenset(), ("--trace", "--coverage", "--no-trace"),
     "waves are asked for with --waves / outputs.waves, not with Verilator options"),
    (frozenset(), ("+define+",), "give defines as -D<NAME>=<VALUE> or in 'defines'"),
)


class ArgError(ValueError):
    """An item of ``verilator_args`` the policy refuses; ``index`` is its position."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


def check_name(name: Any, what: str) -> str:
    """``name`` as a checked identifier (a define, parameter or warning name)."""
    if not isinstance(name, str) or not IDENT.match(name):
        raise ValueError(f"{what} name {name!r} is not an identifier (letters, digits, _)")
    return name


def check_value(value: Any, what: str) -> Any:
    """A define's or parameter's value: an integer, or text of :data:`VALUE`'s shape."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{what}: {value!r} is not an integer or a short literal")
    if isinstance(value, str) and not VALUE.match(value):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise ValueError(f"{what}: {shown!r} is not a literal the build passes on (a number, "
                         "an identifier or a short \"quoted\" word; no spaces, slashes, "
                         "backticks or shell characters)")
    return value


def _refusal(item: str) -> str | None:
    for exact, prefixes, why in _REFUSED:
        if item in exact or item.split("=", 1)[0] in exact or item.startswith(prefixes):
            return why
    return None


def check_args(args: list[Any]) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """Split ``verilator_args`` into plain options, defines and parameters, each checked;
    raises :class:`ArgError` naming the item and why it is refused."""
    out: list[str] = []
    defines: dict[str, Any] = {}
    params: dict[str, Any] = {}
    i = 0
    while i < len(args):
        item = args[i]
        if not isinstance(item, str):
            raise ArgError(i, f"{item!r} is not an option (give each option as text)")
        shown = item if len(item) <= 60 else item[:60] + "..."
        try:
            if item in FLAGS or _WARNING.match(item):
                out.append(item)
            elif item in VALUED:
                shape, says = VALUED[item]
                if i + 1 >= len(args) or not isinstance(args[i + 1], str) \
                        or not shape.match(args[i + 1]):
                    got = repr(args[i + 1]) if i + 1 < len(args) else "nothing"
                    raise ArgError(i + 1 if i + 1 < len(args) else i,
                                   f"{item} takes {says} as the next item, got {got}")
                out += [item, args[i + 1]]
                i += 1
            elif (m := _DEFINE.match(item)) is not None:
                name = check_name(m[1], "-D")
                defines[name] = None if m[2] is None else check_value(m[2], f"-D{name}")
            elif (m := _PARAM.match(item)) is not None:
                name = check_name(m[1], "-G")
                params[name] = check_value(m[2], f"-G{name}")
            else:
                why = _refusal(item) or (
                    "not one of the options a scenario may pass: "
                    f"{', '.join(sorted(FLAGS))}, {', '.join(VALUED)} (each with its value as "
                    "the next item), -W(no|warn|error)-<WARNING>, -D<NAME>[=<VALUE>], "
                    "-G<NAME>=<VALUE>")
                raise ArgError(i, f"{shown!r} is not allowed ({why})")
        except ArgError:
            raise
        except ValueError as e:
            raise ArgError(i, f"{shown!r} is not allowed ({e})") from None
        i += 1
    return out, defines, params
