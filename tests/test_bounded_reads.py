"""Every file the product reads goes through the bounded reader (tlm/files.py): this test
walks the syntax trees of tlm/, components/ and cosim/ for the other ways of reading a file
and fails on one that is not in the short allow-list below (each entry says why). Writes
are fine."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tlm", "components", "cosim")

#: (file, what is called) -> why it may read without the bounded reader
ALLOWED = {
    ("tlm/files.py", "os.open"): "the bounded reader itself",
    ("tlm/files.py", "np.load"): "parses bytes the bounded reader read (io.BytesIO), no pickles",
    ("tlm/yamlfast.py", "yaml.safe_load"): "parses text the bounded reader read (package data only)",
    ("tlm/yamlfast.py", "yaml.load"): "the libyaml variant of the line above",
    ("components/plugins.py", "open"): "entry_points.txt of the installed distributions on sys.path "
                                       "(package metadata, not a user's file; read before tlm loads so "
                                       "that `cosim --help` stays fast)",
    ("cosim/limits.py", "open"): "/proc/self/statm: this process's own resident size, read on purpose",
    ("cosim/proc/tmpdir.py", "Path.read_text"): "/proc/<pid>/stat: whether a private folder's owner "
                                                "process is alive, read on purpose",
}

#: calls that read a file (or parse one by name) whatever their arguments
_READERS = {("np", "load"), ("numpy", "load"), ("np", "fromfile"), ("numpy", "fromfile"), ("onnx", "load"),
            ("onnx", "load_model"), ("yaml", "safe_load"), ("yaml", "load"), ("yaml", "full_load"),
            ("yaml", "unsafe_load"), ("json", "load"), ("auth", "load_certificate"),
            ("auth", "load_certificates"), ("np", "loadtxt"), ("np", "genfromtxt"), ("pickle", "load")}
#: attribute calls on a path that read it
_PATH_READS = {"read_text", "read_bytes"}


def _mode_writes(call: ast.Call, pos: int) -> bool:
    """Whether the mode argument of an open() call (positional ``pos`` or ``mode=``) writes."""
    mode = call.args[pos] if len(call.args) > pos else next((k.value for k in call.keywords if k.arg == "mode"),
                                                            None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+")


def _os_open_writes(call: ast.Call) -> bool:
    flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
    return any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT"))


def _path_open(call: ast.Call) -> bool:
    """``p.open()`` / ``p.open("rb")``: a path's open takes a mode first, if anything (a
    transport's ``open(bind, keys)`` does not)."""
    return not call.args or (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str))


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every call that reads a file without the bounded reader."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open" and not _mode_writes(node, 1):
            out.append((node.lineno, "open"))
        elif isinstance(f, ast.Attribute):
            base = f.value
            owner = base.id if isinstance(base, ast.Name) else (base.attr if isinstance(base, ast.Attribute) else "")
            if (owner, f.attr) in _READERS:
                out.append((node.lineno, f"{owner}.{f.attr}"))
            elif f.attr == "open" and owner == "os" and not _os_open_writes(node):
                out.append((node.lineno, "os.open"))
            elif f.attr == "fdopen" and owner == "os" and not _mode_writes(node, 1):
                out.append((node.lineno, "os.fdopen"))
            elif f.attr == "open" and _path_open(node) and not _mode_writes(node, 0):
                out.append((node.lineno, "Path.open"))
            elif f.attr in _PATH_READS and owner != "files":
                out.append((node.lineno, f"Path.{f.attr}"))
    return out


def test_every_file_read_goes_through_the_bounded_reader():
    found = []
    seen_allowed = set()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), rel)
            for line, what in _reads(tree):
                if (rel, what) in ALLOWED:
                    seen_allowed.add((rel, what))
                    continue
                found.append(f"{rel}:{line}: {what}")
    assert not found, ("read these through tlm.files (read_bytes/read_text/load_npy/load_npz, "
                       "tlm.yamlfast.load_file for package data, cosim.scenario.yamlpos for a user's "
                       "YAML), or add an entry to ALLOWED saying why:\n" + "\n".join(found))
    # an entry that no longer matches anything is dead: remove it
    assert seen_allowed == set(ALLOWED), sorted(set(ALLOWED) - seen_allowed)


def test_the_scan_finds_what_it_looks_for():
    """The walker itself: each way of reading is found, writes are not."""
    code = "\n".join([
        "open(p)", "open(p, 'rb')", "open(p, 'w')", "Path(p).read_text()", "p.read_bytes()",
        "np.load(p)", "np.fromfile(p)", "onnx.load(p)", "yaml.safe_load(f)", "zmq.auth.load_certificate(p)",
        "os.open(p, os.O_RDONLY)", "os.open(p, os.O_WRONLY | os.O_CREAT)", "p.open()", "p.open('w')",
        "files.read_text(p, 'data')", "read_text(p, 'data')", "json.load(f)", "os.fdopen(fd, 'wb')",
    ])
    got = [what for _line, what in sorted(_reads(ast.parse(code)))]
    assert got == ["open", "open", "Path.read_text", "Path.read_bytes", "np.load", "np.fromfile", "onnx.load",
                   "yaml.safe_load", "auth.load_certificate", "os.open", "Path.open", "json.load"]
