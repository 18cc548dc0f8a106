"""The validated scenario (:class:`Scenario`): what the loader (:mod:`.loader`) returns
and the platform builder, the runner and the task preparers read."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .yamlpos import dotted, line_of

#: the memory budget of a run unless ``limits.max_memory`` says otherwise (docs/scenarios.md)
DEFAULT_MAX_MEMORY = 4 << 30
REPO_ROOT = Path(__file__).resolve().parents[2]


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

    @property
    def base_dir(self) -> Path:
        return self.file.parent if self.file else Path.cwd()

    def error(self, message: str, keypath: tuple) -> ScenarioError:
        """A ScenarioError pointing at ``keypath`` in this scenario's file."""
        return ScenarioError(message, str(self.file) if self.file else None,
                             line_of(self.lines, keypath), dotted(keypath) or None)

    def resolve_file(self, name: str, keypath: tuple) -> Path:
        try:
            p = Path(name)
            if not p.is_absolute():
                p = self.base_dir / p
                if not p.exists() and (REPO_ROOT / name).exists():
                    p = REPO_ROOT / name
            if not p.exists():
                raise self.error(f"file not found: {name} (looked in {self.base_dir})", keypath)
            if not p.is_file():     # a folder, a device such as /dev/zero, a FIFO: never read
                raise self.error(f"not a regular file: {name}", keypath)
        except (OSError, ValueError) as e:   # a name too long, a NUL byte: no such file either
            shown = name if len(name) <= 80 else f"{name[:60]}... ({len(name)} characters)"
            raise self.error(f"unusable file name {shown!r}: {getattr(e, 'strerror', None) or e}",
                             keypath) from None
        return p
