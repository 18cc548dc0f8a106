"""Private temporary folders for child processes (sockets, logs), reaped after a crash.

A coordinator (``tlm-cosim-*``: its ipc socket and the workers' logs) and the RTL bridge
(``tlm-cosim-rtl-*``: the simulator's socket and run folder) remove their folder when they
end; a process killed with -9 cannot. So each folder holds an owner file (pid and the
process's start time, which tells a reused pid apart), and every new one first removes the
folders of this prefix whose owner is gone -- only folders of the current user, never
symbolic links, never a folder whose owner is unknown (one being created right now).
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from tlm.files import FileAccessError, read_text

__all__ = ["PREFIX", "OWNER_FILE", "private_dir", "reap_stale"]

#: every private folder's name starts with this (``tlm-cosim-``, ``tlm-cosim-rtl-``)
PREFIX = "tlm-cosim-"
#: ``"<pid> <start time>"`` of the process that made the folder
OWNER_FILE = "owner.pid"
#: a folder without an owner file (made by an older version) is stale after this long (s)
ORPHAN_AGE = 24 * 3600.0


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), '' elsewhere."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return ""


def _owner_alive(pid: int, started: str) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        state = None
    if state in ("Z", "X"):         # killed, not yet reaped by its parent: gone
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:         # someone else's process now: our owner is gone... or not
        return True
    return not started or not _start_time(pid) or _start_time(pid) == started


def _stale(folder: Path) -> bool:
    owner = folder / OWNER_FILE
    if not owner.exists() and not owner.is_symlink():
        try:
            return time.time() - folder.stat().st_mtime > ORPHAN_AGE
        except OSError:
            return False
    try:
        text = read_text(owner, "tool_output")      # bounded: never a FIFO or a device
    except FileAccessError:
        return False
    fields = text.split()
    if not fields or not fields[0].isdigit():
        return False                # being written right now, or not ours to judge
    return not _owner_alive(int(fields[0]), fields[1] if len(fields) > 1 else "")


def reap_stale(base: str | os.PathLike[str] | None = None, prefix: str = PREFIX) -> list[Path]:
    """Remove the folders ``base/prefix*`` (default: the temporary directory) of this user
    whose owner process is gone; returns them."""
    root = Path(base if base is not None else tempfile.gettempdir())
    uid = os.getuid()
    gone = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return gone
    for e in entries:
        if not e.name.startswith(prefix):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
            continue
        folder = Path(e.path)
        if _stale(folder):
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder)
    return gone


def private_dir(prefix: str, base: str | os.PathLike[str] | None = None) -> Path:
    """A new folder ``base/prefix*`` (mode 0700) owned by this process, after removing the
    stale ones (:func:`reap_stale`). The caller removes it when done."""
    reap_stale(base)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    tmp = folder / f".{OWNER_FILE}"
    tmp.write_text(f"{os.getpid()} {_start_time(os.getpid())}\n")
    tmp.replace(folder / OWNER_FILE)       # atomic: a reader sees all of it or nothing
    return folder
