"""What a scenario's RTL may make Verilator read, and what it may make the model do.

Verilator reads the files on its command line and whatever they `` `include ``; the model
it builds runs the design's system tasks. A scenario's RTL is data from someone else, so:

- :func:`scan_includes` follows every `` `include `` of the sources before Verilator runs:
  a name is a quoted relative path without ``..`` (searched in the build's own folder and
  the checked include folders, so it cannot climb out of them), and every file it can
  reach must pass the caller's ``allowed`` check after symlinks (a macro for the name,
  an absolute path or ``..`` is refused);
- :func:`unsafe_constructs` lists, from Verilator's JSON tree (after the preprocessor,
  macros and parameters, so a macro cannot hide one), what would run code or touch files
  when the model runs: ``$system``, ``$c``, `` `systemc_*`` sections, DPI imports,
  ``$fopen``, ``$readmem*``/``$writemem*``, ``$dumpfile``;
- :func:`outside_reads` compares the files Verilator says it read (its ``.tree.meta.json``)
  with the files the scan allowed, as a second line of defence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from tlm.files import FileAccessError, read_bytes

#: the libexts Verilator tries after an include name as given
LIBEXTS = ("", ".v", ".sv")
#: bound of the scan: files followed (each read within tlm.files' RTL source cap)
MAX_FILES = 20_000
#: comments and strings (strings are kept: an include inside a string is no directive)
_LEXEME = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.DOTALL)
_INCLUDE = re.compile(r'`include\b[ \t]*(?:"([^"\n]*)"|<([^>\n]*)>|(\S*))')
#: Verilator node types that run code or touch files at run time -> what the user wrote
UNSAFE_NODES = {
    "SYSTEMT": "$system (runs a shell command)",
    "SYSTEMF": "$system (runs a shell command)",
    "CSTMTUSER": "$c (inline C++)",
    "CEXPRUSER": "$c (inline C++)",
    "SYSTEMCSECTION": "a `systemc_* section (inline C++)",
    "FOPEN": "$fopen (opens a file)",
    "FOPENMCD": "$fopen (opens a file)",
    "READMEM": "$readmemh/$readmemb (reads a file)",
    "WRITEMEM": "$writememh/$writememb (writes a file)",
    "DUMPCTL": "$dumpfile/$dumpvars (writes a waveform file)",
}


class SourcePolicyError(ValueError):
    """RTL the policy refuses; ``path``/``line`` locate it (``path`` may be None)."""

    def __init__(self, message: str, path: Path | None = None, line: int = 0):
        super().__init__(message)
        self.path = path
        self.line = line


def _directives(text: str) -> Iterable[tuple[int, str | None, str]]:
    """``(line, name or None, raw)`` of each `` `include `` outside comments and strings."""
    def blank(m: re.Match) -> str:
        s = m[0]
        return s if s.startswith('"') else "".join(c if c == "\n" else " " for c in s)
    code = _LEXEME.sub(blank, text)
    for m in _INCLUDE.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        name = m[1] if m[1] is not None else m[2]
        yield line, name, m[0]


def _name_ok(name: str) -> bool:
    p = Path(name)
    return bool(name) and not p.is_absolute() and ".." not in p.parts and "\\" not in name \
        and not name.startswith("~") and "\0" not in name


def scan_includes(sources: Iterable[Path], include_dirs: Iterable[Path],
                  allowed: Callable[[Path], bool]) -> list[Path]:
    """The files Verilator can read for these sources: the sources, then every file their
    `` `include`` directives can reach in ``include_dirs`` (transitively). Raises
    :class:`SourcePolicyError` at the directive that names something else."""
    dirs = [Path(d) for d in include_dirs]
    todo = [Path(s) for s in sources]
    seen: dict[Path, None] = {}
    while todo:
        f = todo.pop(0)
        real = f.resolve()
        if real in seen:
            continue
        if len(seen) >= MAX_FILES:
            raise SourcePolicyError(f"more than {MAX_FILES} RTL files reached through "
                                    "`include", f)
        seen[real] = None
        try:
            data = read_bytes(real, "rtl_source")
        except FileAccessError as e:
            raise SourcePolicyError(str(e), f) from None
        for line, name, raw in _directives(data.decode("utf-8", errors="replace")):
            if name is None:
                raise SourcePolicyError(f"{raw.strip()!r}: an `include must name its file in "
                                        "quotes (a macro could name any file)", f, line)
            if not _name_ok(name):
                raise SourcePolicyError(f"`include \"{name}\": an included file is named "
                                        "relative to an include folder, without '..' or "
                                        "an absolute path", f, line)
            for d in dirs:
                for ext in LIBEXTS:
                    cand = d / (name + ext)
                    if not cand.exists():
                        continue
                    if not cand.is_file() or not allowed(cand):
                        raise SourcePolicyError(f"`include \"{name}\" reaches {cand}, which "
                                                "is not a regular file inside the folders the "
                                                "scenario may read (--allow-path DIR widens "
                                                "them)", f, line)
                    todo.append(cand)
    return list(seen)


def unsafe_constructs(tree: Mapping[str, Any], meta: Mapping[str, Any]) -> list[dict]:
    """``[{what, file, line}]`` of the constructs of :data:`UNSAFE_NODES` and DPI imports
    in Verilator's JSON tree (``file`` is a real path from ``meta``, or None)."""
    files = {k: v.get("realpath") for k, v in (meta.get("files") or {}).items()}
    found: list[dict] = []
    stack: list[Any] = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            kind = n.get("type")
            what = UNSAFE_NODES.get(kind) if isinstance(kind, str) else None
            if what is None and kind in ("FUNC", "TASK") and n.get("dpiImport"):
                what = f"import \"DPI-C\" {n.get('name')} (calls C code)"
            if what is not None:
                loc = str(n.get("loc") or "")
                m = re.match(r"^(\w+),(\d+):", loc)
                found.append({"what": what, "file": files.get(m[1]) if m else None,
                              "line": int(m[2]) if m else 0})
            stack.extend(v for v in n.values() if isinstance(v, (dict, list)))
        elif isinstance(n, list):
            stack.extend(v for v in n if isinstance(v, (dict, list)))
    found.sort(key=lambda u: (str(u["file"]), u["line"], u["what"]))
    return found


def files_read(meta: Mapping[str, Any]) -> list[str]:
    """The real paths of the files Verilator read (its own built-ins left out)."""
    out = []
    for v in (meta.get("files") or {}).values():
        real = str(v.get("realpath") or "")
        if real.startswith("/"):
            out.append(real)
    return sorted(set(out))


def outside_reads(read: Iterable[str], allowed: Iterable[Path], verilator_root: Path) -> list[str]:
    """The files of ``read`` that are neither in ``allowed`` nor Verilator's own."""
    ok = {str(Path(p).resolve()) for p in allowed}
    own = str(Path(verilator_root).resolve())
    return [r for r in read if r not in ok and not r.startswith(own + "/")]


@dataclass(frozen=True)
class Origin:
    """Where a file of a block came from, for located errors: the scenario key and, for a
    manifest's file, the manifest and its entry."""

    key: tuple
    manifest: Path | None = None
    entry: str = ""

    def describe(self) -> str:
        return f" (listed by {self.manifest}: {self.entry})" if self.manifest else ""
