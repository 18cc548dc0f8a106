"""The validated scenario (:class:`Scenario`): what the loader (:mod:`.loader`) returns
and the platform builder, the runner and the task preparers read."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlm.files import FileAccessError, load_npy, read_bytes

from .errors import ScenarioError
from .paths import DEFAULT_POLICY, REPO_ROOT, PathPolicy
from .yamlpos import dotted, line_of

__all__ = ["DEFAULT_MAX_MEMORY", "REPO_ROOT", "Scenario"]

#: the memory budget of a run unless ``limits.max_memory`` says otherwise (docs/scenarios.md)
DEFAULT_MAX_MEMORY = 4 << 30


@dataclass
class Scenario:
    """A validated scenario. Times are ps; paths are resolved relative to the file."""

    file: Path | None
    name: str
    description: str
    seed: int
    #: the platform's name (a registered platform, or a composed platform's ``name``)
    preset: str
    overrides: dict[str, Any]
    models: dict[str, str]
    #: RTL blocks added from a port map (``platform.rtl_blocks``)
    rtl_blocks: dict[str, dict]
    partition: list[list[str]] | None
    firmware: Path | None
    tasks: list[dict]
    network: dict | None
    checks: list[dict]
    outputs: dict[str, Any]
    max_time: int | None
    max_wall: float | None
    #: bytes the run may use (``limits.max_memory``; checked before and during the run)
    max_memory: int = DEFAULT_MAX_MEMORY
    raw: dict = field(repr=False, default_factory=dict)
    lines: dict = field(repr=False, default_factory=dict)
    #: the YAML text and the ``--set`` assignments it was loaded with (what a worker
    #: process needs to rebuild it)
    text: str = field(repr=False, default="")
    sets: list[str] = field(repr=False, default_factory=list)
    #: a platform composed in YAML (``platform.file`` / ``platform.compose``), validated
    composed: Any = field(repr=False, default=None)
    #: the folders the command line allowed beyond the scenario's own (``--allow-path``;
    #: cosim/scenario/paths.py): travels with ``text`` and ``sets`` to worker processes
    policy: PathPolicy = field(repr=False, default=DEFAULT_POLICY)

    @property
    def base_dir(self) -> Path:
        """The folder names in the scenario are relative to, whose tree they must stay in:
        the file's folder, or the current directory for a scenario given as text."""
        return self.file.parent if self.file else Path.cwd()

    def error(self, message: str, keypath: tuple) -> ScenarioError:
        """A ScenarioError pointing at ``keypath`` in this scenario's file."""
        return ScenarioError(message, str(self.file) if self.file else None,
                             line_of(self.lines, keypath), dotted(keypath) or None)

    def resolve_file(self, name: str, keypath: tuple, base: Path | None = None) -> Path:
        """The real path of the regular file ``name`` given at ``keypath``: relative to
        ``base`` (default :attr:`base_dir`; a library name such as ``firmware/build/x.elf``
        falls back to the repository), and inside the path policy (:meth:`check_inside`).
        A located error otherwise."""
        base = self.base_dir if base is None else Path(base)
        try:
            p = Path(name)
            if not p.is_absolute():
                p = base / p
                if not p.exists() and (REPO_ROOT / name).exists():
                    p = REPO_ROOT / name
            if not p.exists():
                raise self.error(f"file not found: {name} (looked in {base})", keypath)
            if not p.is_file():     # a folder, a device such as /dev/zero, a FIFO: never read
                raise self.error(f"not a regular file: {name}", keypath)
        except (OSError, ValueError) as e:   # a name too long, a NUL byte: no such file either
            shown = name if len(name) <= 80 else f"{name[:60]}... ({len(name)} characters)"
            raise self.error(f"unusable file name {shown!r}: {getattr(e, 'strerror', None) or e}",
                             keypath) from None
        return self.check_inside(p, keypath, name=name, base=base)

    def check_inside(self, path: str | Path, keypath: tuple, name: str | None = None,
                     base: Path | None = None) -> Path:
        """The real path of ``path`` (a file or a folder that exists) if the path policy
        lets this scenario read it: inside ``base``'s tree (default :attr:`base_dir`; for a
        file found in another named file, e.g. a manifest, that file's folder), the
        library's data or an ``--allow-path`` folder. A located error at ``keypath``
        otherwise, naming ``name`` (what the user wrote), where it resolved and the flag
        that widens the policy."""
        try:
            return self.policy.confine(path, self.base_dir if base is None else base, name)
        except FileAccessError as e:
            raise self.file_error(e, keypath) from None

    def file_error(self, e: FileAccessError, keypath: tuple) -> ScenarioError:
        """A refused or unreadable file (:mod:`tlm.files`) as a located error at ``keypath``."""
        return self.error(str(e), keypath)

    def read_file(self, name: str, keypath: tuple, kind: str) -> bytes:
        """The bytes of the file ``name`` given at ``keypath``: resolved and confined
        (:meth:`resolve_file`), then read within the cap of ``kind`` (:data:`tlm.files.LIMITS`)."""
        path = self.resolve_file(name, keypath)
        try:
            return read_bytes(path, kind)
        except FileAccessError as e:
            raise self.file_error(e, keypath) from None

    def read_data(self, name: str, keypath: tuple) -> bytes:
        """The bytes of a data file (``load``, ``equals_file``): a ``.npy`` array's raw C-order
        bytes (by the name's suffix; no pickles), any other file as it is."""
        if Path(name).suffix.lower() != ".npy":
            return self.read_file(name, keypath, "data")
        path = self.resolve_file(name, keypath)
        try:
            return load_npy(path, "data").tobytes()
        except FileAccessError as e:
            raise self.file_error(e, keypath) from None
