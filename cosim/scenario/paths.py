"""The path policy: which files a scenario (or a file it names) may make the tool read.

A scenario, platform, sweep or port-map file may come from anyone (docs/security.md), so a
name it gives (data, firmware, weights, ONNX, RTL sources, manifests, include folders,
register images, ``equals_file``, file-valued parameters) must resolve, **after symbolic
links**, inside one of:

* the folder tree of the file that names it (for a scenario given as text, with no file:
  the current directory's tree);
* the library's own data (:data:`PACKAGE_DATA`: its ``scenarios/``, ``firmware/``,
  ``rtl/`` and ``components/`` folders), so a library scenario may name
  ``firmware/build/x.elf`` from anywhere;
* a folder the user allowed on the command line (``--allow-path DIR``, repeatable).

:class:`PathPolicy` holds the command-line part; it is plain data (:meth:`PathPolicy.to_data`)
so it travels with the scenario to the processes that rebuild it (split-run workers, sweep
points). ``Scenario.resolve_file`` / ``Scenario.check_inside`` turn a refusal into a
located error (file, line, key, the name, where it resolved, how to widen).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tlm.files import FileAccessError

from .errors import ScenarioError

REPO_ROOT = Path(__file__).resolve().parents[2]
#: platform parameters that name a file the model reads (resolved under the policy like any
#: other name; tests/test_path_policy.py checks every ``*_file`` parameter is classified)
INPUT_FILE_PARAMS = ("load_file", "timing_file")
#: platform parameters that name a file a model may write when its user asks (never by
#: ``cosim run``: HyperRam.save() is a Python API call)
OUTPUT_FILE_PARAMS = ("save_file",)
#: the library's data a scenario may always name (read-only, shipped with the package)
PACKAGE_DATA: tuple[Path, ...] = tuple(REPO_ROOT / d for d in ("scenarios", "firmware", "rtl", "components"))


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, root: Path) -> bool:
    try:
        return os.path.commonpath([path, root]) == str(root)
    except ValueError:      # another drive (Windows)
        return False


class OutsidePolicy(FileAccessError):
    """A name that resolves outside every folder the policy allows."""

    def __init__(self, name: str, resolved: Path, base: Path):
        self.name = name
        self.resolved = resolved
        self.base = base
        shown = name if len(name) <= 120 else f"{name[:100]}... ({len(name)} characters)"
        where = f"{shown!r} resolves to {resolved}" if str(resolved) != name else f"{shown!r}"
        super().__init__(name, f"{where}, outside the folder of the file naming it ({base}) and the "
                               "library's data: move the file under that folder, or allow its folder "
                               f"on the command line with --allow-path {resolved.parent}")


@dataclass(frozen=True)
class PathPolicy:
    """The folders the command line allows beyond each naming file's own tree and the
    library's data (``--allow-path``), as real paths."""

    allowed: tuple[str, ...] = ()

    @classmethod
    def from_cli(cls, dirs: Iterable[str | os.PathLike[str]] | None) -> PathPolicy:
        """From ``--allow-path`` values: each must be an existing folder (a ScenarioError
        naming the flag otherwise)."""
        out: list[str] = []
        for d in dirs or ():
            real = _real(d)
            if not real.is_dir():
                raise ScenarioError(f"{str(d)!r} is not a folder", key="--allow-path")
            if str(real) not in out:
                out.append(str(real))
        return cls(tuple(out))

    def to_data(self) -> list[str]:
        """Plain data for a child process (:meth:`from_data` rebuilds the policy)."""
        return list(self.allowed)

    @classmethod
    def from_data(cls, data: Sequence[str] | None) -> PathPolicy:
        return cls(tuple(str(d) for d in data or ()))

    def roots(self, base: str | os.PathLike[str]) -> list[Path]:
        """Every folder a file named from ``base`` may be in (real paths)."""
        return [_real(base), *(_real(p) for p in PACKAGE_DATA), *(Path(d) for d in self.allowed)]

    def confine(self, path: str | os.PathLike[str], base: str | os.PathLike[str], name: str | None = None) -> Path:
        """The real path of ``path`` (which must exist) when it lies inside a folder
        :meth:`roots` gives for ``base``; :class:`OutsidePolicy` otherwise (``name``: what
        the user wrote, for the message). Links are resolved first, so a link inside the
        tree pointing out of it is refused."""
        try:
            real = Path(path).resolve(strict=True)
        except FileNotFoundError:
            raise FileAccessError(path, "no such file") from None
        except (OSError, RuntimeError, ValueError) as e:   # a link loop, a NUL byte, a name too long
            raise FileAccessError(str(path)[:120], f"unusable file name: {getattr(e, 'strerror', None) or e}") \
                from None
        if any(_within(real, root) for root in self.roots(base)):
            return real
        raise OutsidePolicy(name if name is not None else str(path), real, _real(base))


#: the policy of a scenario loaded with no command line: nothing widened
DEFAULT_POLICY = PathPolicy()
