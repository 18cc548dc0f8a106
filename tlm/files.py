"""Reading a file someone else wrote, within bounds: the one reader of the product.

Scenario, platform, sweep and port-map files, and everything they name (data, firmware,
weights, ONNX models, RTL sources, manifests, keys), are shared between people like
documents, so reading one must not hang, exhaust memory or quote a system file. Every read
goes through :func:`read_bytes` / :func:`read_text` (or :func:`load_npy` /
:func:`load_npz` for numpy data), which:

* open the path without blocking (``O_NONBLOCK``): a FIFO is refused at once, never waited
  on for a writer;
* read regular files only: a folder, a device (``/dev/zero``), a FIFO or a socket is
  refused, and so is anything under ``/proc`` or ``/sys`` (their files look regular but
  hold the machine's state: ``/proc/self/environ``);
* read at most the cap of the file's kind (:data:`LIMITS`), checked before reading and
  again while reading (a file that grows meanwhile);
* decode text as UTF-8, naming the first bad byte and its line.

Each refusal is a :class:`FileAccessError` carrying the path and a one-line reason; the
caller that knows where the name came from (a scenario key, a command-line flag) turns it
into its own located error. *Where* a name may resolve is not decided here: that is the
path policy of ``cosim.scenario.paths``.
"""
from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FileAccessError", "Limit", "LIMITS", "decode_utf8", "file_size", "fmt_size", "limit_of", "load_npy",
           "load_npz", "read_bytes", "read_tail", "read_text"]

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class Limit:
    """The cap of one kind of file: at most ``max_bytes``; ``what`` names it in messages."""

    max_bytes: int
    what: str


#: The cap of every kind of file the product reads. Each is the library's largest file of
#: the kind (measured when the table was written, in the comment) with a wide margin, or
#: what the thing it fills can hold. ``docs/security.md`` carries this table (a test
#: checks they agree).
LIMITS: dict[str, Limit] = {
    # largest library scenario 7 KB (abb_phases.yaml); the limited YAML loader also caps
    # values and depth
    "scenario": Limit(4 * MiB, "scenario file"),
    # largest library platform file 3 KB (scenarios/platforms/)
    "platform": Limit(4 * MiB, "platform file"),
    # sweep files are a few hundred bytes; a long grid stays under 100 KB
    "sweep": Limit(4 * MiB, "sweep file"),
    # a port map is a scenario's platform.rtl_blocks entry or a file of the same shape
    "portmap": Limit(4 * MiB, "port map"),
    # one `--set`/`--grid` value: the longest in the docs is a layer list of ~200 characters
    "set_value": Limit(64 * KiB, "--set value"),
    # a CurveZMQ key file (zmq.auth) is ~350 bytes
    "key": Limit(64 * KiB, "key file"),
    # largest library ELF 19 KB (firmware/build/); debug info can add megabytes
    "firmware": Limit(64 * MiB, "firmware ELF"),
    # a load/equals_file/register image fills a memory: the largest (HyperRAM) is at most
    # 1 GiB (HyperRamParams.capacity); the library's largest is 45 KB
    "data": Limit(1 * GiB, "data file"),
    # library models are ~9 KB; a float ResNet-50 is ~100 MB
    "onnx": Limit(256 * MiB, "ONNX model"),
    # an accelerator's program or network file given to its own command: the library's
    # largest program 16 KB, constants 45 KB (scenarios/data/)
    "program": Limit(256 * MiB, "accelerator program or network file"),
    # largest vendored source 39 KB (rbe_ctrl_fsm.sv); generated netlists are larger
    "rtl_source": Limit(16 * MiB, "RTL source"),
    # largest vendored Bender.yml 2.6 KB (hwpe-stream)
    "manifest": Limit(1 * MiB, "source manifest"),
    # the package's own YAML tables: largest 13 KB (a register map under accelerators/)
    "package_data": Limit(4 * MiB, "package data file"),
    # what a tool the product runs wrote for it (Verilator's --json-only tree, build logs):
    # a few MB for the RBE
    "tool_output": Limit(256 * MiB, "tool output"),
}

#: folders whose files look regular but are the kernel's view of the machine
_PSEUDO_ROOTS = ("/proc", "/sys")
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class FileAccessError(ValueError):
    """A file that may not or cannot be read: ``str(e)`` is ``path: reason``, one line
    (``line``: the line of the file at fault, for text that does not decode)."""

    def __init__(self, path: str | os.PathLike[str], reason: str, line: int | None = None):
        self.path = str(path)
        self.reason = reason
        self.line = line
        super().__init__(f"{self.path}: {reason}")


def limit_of(kind: str) -> Limit:
    """The :class:`Limit` of ``kind`` (a key of :data:`LIMITS`; another is a bug)."""
    try:
        return LIMITS[kind]
    except KeyError:
        raise KeyError(f"unknown file kind {kind!r}; known: {', '.join(LIMITS)}") from None


def fmt_size(n: int) -> str:
    """``4 MiB``, ``64 KiB``, ``1 GiB``, ``300 bytes``: a cap as people read it."""
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def _kind_of_node(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _pseudo(path: str | os.PathLike[str], st: os.stat_result) -> bool:
    """Whether ``path`` (opened, ``st`` its status) lives in /proc or /sys: by its resolved
    name, or by the device of the file system it is on (a link elsewhere into /proc)."""
    real = os.path.realpath(path)
    for root in _PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return True
        try:
            if os.stat(root).st_dev == st.st_dev:
                return True
        except OSError:
            continue
    return False


def _open_regular(path: str | os.PathLike[str], lim: Limit) -> tuple[int, os.stat_result]:
    """An open descriptor on the regular file ``path`` and its status; a
    :class:`FileAccessError` (the descriptor closed) for anything else."""
    try:
        # non-blocking: a FIFO is opened at once (and refused below), never waited on
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY)
    except OSError as e:
        raise FileAccessError(path, f"cannot read the {lim.what}: {e.strerror or e}") from None
    except ValueError as e:           # a NUL byte in the name
        raise FileAccessError(repr(str(path))[:80], f"unusable file name: {e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileAccessError(path, f"the {lim.what} is {_kind_of_node(st.st_mode)}, not a "
                                        "regular file: refused")
        if _pseudo(path, st):
            raise FileAccessError(path, f"the {lim.what} is a /proc or /sys file (the machine's "
                                        "state, not data): refused")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_bytes(path: str | os.PathLike[str], kind: str) -> bytes:
    """The bytes of the regular file ``path``, at most the cap of ``kind``; a
    :class:`FileAccessError` naming the path otherwise."""
    lim = limit_of(kind)
    fd, st = _open_regular(path, lim)
    try:
        if st.st_size > lim.max_bytes:
            raise FileAccessError(path, f"the {lim.what} holds {st.st_size:,} bytes, more than "
                                        f"the {fmt_size(lim.max_bytes)} a {lim.what} may have")
        data = _read_at_most(fd, lim.max_bytes + 1)
    except OSError as e:
        raise FileAccessError(path, f"cannot read the {lim.what}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > lim.max_bytes:      # it grew while being read
        raise FileAccessError(path, f"the {lim.what} is larger than the {fmt_size(lim.max_bytes)} "
                                    f"a {lim.what} may have")
    return data


def read_tail(path: str | os.PathLike[str], n: int, kind: str = "tool_output") -> bytes:
    """The last ``n`` bytes of the regular file ``path`` (a log that may be long): never more
    than ``n`` bytes are read, whatever the file's size; same refusals as :func:`read_bytes`."""
    lim = limit_of(kind)
    fd, st = _open_regular(path, lim)
    try:
        os.lseek(fd, max(0, st.st_size - n), os.SEEK_SET)
        return _read_at_most(fd, n)
    except OSError as e:
        raise FileAccessError(path, f"cannot read the {lim.what}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _read_at_most(fd: int, n: int) -> bytes:
    chunks = []
    left = n
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def decode_utf8(data: bytes, path: str | os.PathLike[str], what: str) -> str:
    """``data`` as UTF-8 text; a :class:`FileAccessError` naming the first bad byte and its
    line otherwise (a leading byte-order mark is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise FileAccessError(path, f"the {what} is not UTF-8 text (byte 0x{data[e.start]:02x} "
                                    f"at line {line})", line) from None


def read_text(path: str | os.PathLike[str], kind: str) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_bytes`, then decoded)."""
    return decode_utf8(read_bytes(path, kind), path, limit_of(kind).what)


def load_npy(path: str | os.PathLike[str], kind: str = "data") -> np.ndarray[Any, Any]:
    """The array of a ``.npy`` file (no pickled objects), read through :func:`read_bytes`
    (the array cannot be larger than the file: ``.npy`` is not compressed)."""
    data = read_bytes(path, kind)
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise FileAccessError(path, f"not a .npy array: {str(e).splitlines()[0] if str(e) else e!r}") from None
    if not isinstance(arr, np.ndarray):
        raise FileAccessError(path, "not a .npy array (an archive of several?)")
    return arr


def load_npz(path: str | os.PathLike[str], kind: str = "data") -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of a ``.npz`` archive (no pickled objects). The archive is read through
    :func:`read_bytes`; its members are compressed, so their declared sizes together must
    also stay within the cap of ``kind`` (a small archive cannot unpack into gigabytes:
    :mod:`zipfile` stops each member at its declared size)."""
    lim = limit_of(kind)
    data = read_bytes(path, kind)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            unpacked = sum(i.file_size for i in z.infolist())
        if unpacked > lim.max_bytes:
            raise FileAccessError(path, f"the archive unpacks into {unpacked:,} bytes, more than the "
                                        f"{fmt_size(lim.max_bytes)} a {lim.what} may hold")
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        if isinstance(e, FileAccessError):
            raise
        raise FileAccessError(path, f"not a .npz archive: {str(e).splitlines()[0] if str(e) else e!r}") from None


def file_size(path: str | os.PathLike[str]) -> int:
    """The size of ``path`` as it stands (0 when it is not a readable regular file): for
    budgets computed before reading."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0

