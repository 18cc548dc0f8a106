"""The output folder of a run: checked before simulating, written safely.

* :func:`prepare_out_dir` resolves ``--out`` before anything is simulated: it refuses an
  empty name, creates the folder if needed and checks that it is a directory this process
  can write into (a probe file is created and removed), and that no output it may write
  (``report.json``, ``trace.json``, the plots) is a symbolic link. A bad folder is a user
  mistake (:class:`OutputError`, exit 2) found before the run, not after it.
* :func:`write_atomic` writes one file of the folder: the name must be a plain file name
  (no separator, no ``..``, not absolute); the data goes to a temporary file in the same
  folder, opened with ``O_CREAT|O_EXCL|O_NOFOLLOW``, then :func:`os.replace` moves it onto
  the final name, so a reader sees the old file or the new one, never half of one. A
  symbolic link at the final name is refused, never followed.
* :func:`keep_previous` renames an existing ``report.json`` to ``report.prev.json``.
* Where the folder is (docs/security.md): ``--out`` may be anywhere (the user chose it);
  otherwise a scenario's ``outputs.dir`` (:func:`scenario_dir`: relative, resolved against
  the current directory and inside it after links), else ``out/<name>-<time stamp>`` with
  the scenario's name reduced to a plain folder name (:func:`safe_name`). Folders a run
  makes inside its output folder (:func:`subfolder`) are never symbolic links.
"""
from __future__ import annotations

import datetime as _dt
import io
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Union

from .scenario.errors import ScenarioError

#: the files a run may write into its folder (checked for symbolic links before the run)
OUTPUT_NAMES = ("report.json", "trace.json", "stdout.log", "layers.png", "power.png", "timeline.png",
                "utilisation.png")

Data = Union[bytes, str, Callable[[IO[bytes]], None]]


class OutputError(ScenarioError):
    """A bad output folder or output name: ``path: what is wrong`` (exit 2)."""

    def __init__(self, path: str | Path, message: str):
        super().__init__(message, str(path))
        self.path = str(path)


def prepare_out_dir(out: str | Path | None) -> Path:
    """Check (and create) the output folder ``out`` before the run; returns it as a Path."""
    if out is None or str(out).strip() == "":
        raise OutputError("--out", "empty output folder name (give a folder, e.g. --out out/run1)")
    path = Path(out)
    if path.is_symlink() and not path.exists():
        raise OutputError(path, "the output folder is a dangling symbolic link")
    if path.exists() and not path.is_dir():
        raise OutputError(path, "the output folder exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(path, "cannot create the output folder: a file is in the way") from None
    except NotADirectoryError:
        raise OutputError(path, "cannot create the output folder: a parent is not a directory") from None
    except OSError as e:
        raise OutputError(path, f"cannot create the output folder: {e.strerror or e}") from None
    probe = path / f".cosim-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputError(path, f"the output folder is not writable: {e.strerror or e}") from None
    for name in OUTPUT_NAMES:
        if (path / name).is_symlink():
            raise OutputError(path / name, "is a symbolic link; refusing to write through it")
    return path


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

#: the longest folder name made from a scenario's or a sweep's name
MAX_NAME = 64


def safe_name(name: object, fallback: str = "run") -> str:
    """``name`` as one plain folder name: letters, digits and ``_.-`` (runs of anything else
    become ``_``), no leading dot (so never ``..``), at most :data:`MAX_NAME` characters."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name))[:MAX_NAME].lstrip(".")
    return slug or fallback


def default_out_dir(name: object, parent: str | Path = "out") -> Path:
    """A fresh ``out/<safe name>-<time stamp>`` (``-2``, ``-3``... when it exists)."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(parent) / f"{safe_name(name)}-{stamp}"
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def scenario_dir(value: str, error: Callable[[str], Exception]) -> Path:
    """A scenario's ``outputs.dir``: a relative name that stays inside the current directory,
    also after symbolic links (an existing link on the way that leads out is refused).
    ``error(message)`` makes the located error to raise."""
    text = str(value)
    if "\0" in text or not text.strip():
        raise error("the output folder name is empty or holds a NUL byte")
    if Path(text).is_absolute() or (os.altsep and text.startswith(os.altsep)):
        raise error(f"{text!r} is absolute: outputs.dir is relative to the current directory "
                    "(give `cosim run --out DIR` to write anywhere else)")
    norm = os.path.normpath(text)
    if norm == ".." or norm.startswith(".." + os.sep):
        raise error(f"{text!r} leaves the current directory: outputs.dir stays inside it (give "
                    "`cosim run --out DIR` to write anywhere else)")
    cwd = Path(os.path.realpath(os.getcwd()))
    real = Path(os.path.realpath(cwd / norm))   # the links that exist on the way, resolved
    if real != cwd and cwd not in real.parents:
        raise error(f"{text!r} leads to {real} through a symbolic link, outside the current directory "
                    f"{cwd}; refusing to follow it (give `cosim run --out DIR` to write there)")
    return Path(norm)


def scenario_out_dir(sc: Any) -> Path:
    """Where a run of the Scenario ``sc`` writes when the command line names no folder: its
    ``outputs.dir`` (:func:`scenario_dir`), else :func:`default_out_dir` of its name."""
    if sc.outputs.get("dir"):
        return scenario_dir(sc.outputs["dir"], lambda m: sc.error(m, ("outputs", "dir")))
    return default_out_dir(sc.name)


def subfolder(out: str | Path, *names: str) -> Path:
    """The folder ``out/names[0]/names[1]/...``, created as needed, each level a plain name
    (:func:`_target`) and a real folder, never a symbolic link (a link planted in an output
    folder must not send the outputs elsewhere)."""
    path = Path(out)
    for name in names:
        path = _target(path, name)
        if path.is_symlink():
            raise OutputError(path, "is a symbolic link; refusing to write through it")
        try:
            path.mkdir(exist_ok=True)
        except OSError as e:
            raise OutputError(path, f"cannot create the folder: {e.strerror or e}") from None
        if path.is_symlink() or not path.is_dir():
            raise OutputError(path, "exists and is not a folder")
    return path


def _target(out_dir: Path, name: str) -> Path:
    if (not name or name in (".", "..") or "/" in name or "\\" in name or os.sep in name
            or (os.altsep and os.altsep in name) or "\0" in name or Path(name).is_absolute()):
        raise OutputError(out_dir / name if name else out_dir,
                          f"output name {name!r} is not a plain file name inside the output folder")
    return out_dir / name


def write_atomic(out_dir: str | Path, name: str, data: Data) -> Path:
    """Write ``data`` (bytes, text, or a function writing to a binary file object) as
    ``out_dir/name`` through a temporary file and :func:`os.replace`; returns the path."""
    out_dir = Path(out_dir)
    target = _target(out_dir, name)
    if target.is_symlink():
        raise OutputError(target, "is a symbolic link; refusing to write through it")
    if target.exists() and not target.is_file():
        raise OutputError(target, "exists and is not a regular file")
    tmp = out_dir / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, str):
                f.write(data.encode("utf-8"))
            elif isinstance(data, bytes):
                f.write(data)
            else:
                data(f)
            f.flush()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def text_writer(write: Callable[[IO[str]], None]) -> Callable[[IO[bytes]], None]:
    """Adapt a function writing text (``write_chrome_trace``) to :func:`write_atomic`."""
    def run(f: IO[bytes]) -> None:
        t = io.TextIOWrapper(f, encoding="utf-8", newline="")  # type: ignore[arg-type]
        write(t)
        t.flush()
        t.detach()
    return run


def keep_previous(out_dir: str | Path, name: str = "report.json",
                  prev: str = "report.prev.json") -> Path | None:
    """Rename an existing ``out_dir/name`` to ``out_dir/prev`` (replacing an older one);
    returns the new path of the kept file, or None when there was none."""
    out_dir = Path(out_dir)
    old = _target(out_dir, name)
    kept = _target(out_dir, prev)
    if old.is_symlink():
        raise OutputError(old, "is a symbolic link; refusing to write through it")
    if not old.is_file():
        return None
    if kept.exists() and not kept.is_symlink() and not kept.is_file():
        raise OutputError(kept, "exists and is not a regular file")
    os.replace(old, kept)
    return kept
