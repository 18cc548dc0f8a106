"""The accelerator families and platforms installed, as their packages declare them.

A package declares itself through a Python entry point (``pyproject.toml``)::

    [project.entry-points."tlm_cosim.accelerators"]
    mine = "my_package.plugin:FAMILY"                   # an AcceleratorFamily

    [project.entry-points."tlm_cosim.platforms"]
    marsellus = "components.marsellus.plugin:PLATFORM"  # a PlatformEntry

so nothing outside the package names it: the scenario schema, the block types of composed
platforms, the RTL kinds, task operations, network deployment, presets and ``cosim``
subcommands all come from what is registered here (docs/plugins.md).

Declarations are cheap to import: every hook that needs more than this module is a
``"module:attribute"`` reference (:class:`Ref`), imported only when used, so listing the
families costs no numpy, no ONNX and no cocotb. Families and platforms are sorted by
name: the order never depends on how the environment was installed.

Run from a source checkout that was never installed (no ``tlm-cosim`` distribution), the
built-in declarations are read from the checkout's ``pyproject.toml``: one place declares
them either way.

Reading the registry is cheap too, since ``cosim --help`` lists the families' commands: the
entry points are read from the ``.dist-info`` folders on ``sys.path`` directly
(:func:`_scan_entry_points`), as importlib.metadata finds them, without importing it (its
e-mail parser and the scan of every distribution cost ~45 ms of CPU per start);
importlib.metadata answers whenever that reading is not clear-cut.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

#: entry-point group of accelerator families (values: :class:`AcceleratorFamily`)
ACCELERATORS = "tlm_cosim.accelerators"
#: entry-point group of platforms (values: :class:`PlatformEntry`)
PLATFORMS = "tlm_cosim.platforms"
_DISTRIBUTION = "tlm-cosim"
_ROOT = Path(__file__).resolve().parents[1]


class PluginError(RuntimeError):
    """A declaration that cannot be loaded or is inconsistent: names the entry point."""


@dataclass(frozen=True)
class Ref:
    """A lazy ``"module:attribute"`` reference, imported on first :meth:`load`."""

    target: str

    def __post_init__(self) -> None:
        mod, sep, attr = self.target.partition(":")
        if not (mod and sep and attr):
            raise PluginError(f"{self.target!r} is not a 'module:attribute' reference")

    def load(self) -> Any:
        mod, _, attr = self.target.partition(":")
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj


def _refs(mapping: Mapping[str, str | Ref]) -> dict[str, Ref]:
    return {k: v if isinstance(v, Ref) else Ref(v) for k, v in mapping.items()}


def _ref(value: str | Ref | None) -> Ref | None:
    return value if value is None or isinstance(value, Ref) else Ref(value)


@dataclass(frozen=True)
class RtlKind:
    """A Verilated block that can stand in for a TLM block: what it is, and its transactor
    (``"module:Class"``, imported only when the block is swapped in)."""

    doc: str
    transactor: str


@dataclass(frozen=True)
class Command:
    """A ``cosim`` subcommand: ``add_parser(subparsers)`` adds it, ``run(args, console)``
    runs it and returns the exit code."""

    name: str
    add_parser: Ref
    run: Ref


@dataclass(frozen=True)
class AcceleratorFamily:
    """Everything the framework needs to know about one accelerator family.

    Every hook is optional; a family declares what it has:

    * ``block_types``: block type name -> a ``cosim.platforms.composed.BlockType`` (how a
      platform file composes it);
    * ``rtl_kinds``: RTL kind -> :class:`RtlKind`;
    * ``schema``: a :class:`cosim.scenario.schema.SchemaFragment` (task operations, layer
      types and keys, network and workload keys the family adds to the scenario schema);
    * ``task_ops``: task operation -> ``async handler(host, task, record)``;
    * ``prepare``: task operation -> ``prepare(scenario)``, run once at load when a task of
      that operation is present (located errors before anything is built);
    * ``deployers``: name -> a network deployer (``cosim.deploy.Deployer``); a platform
      names the deployer its networks use;
    * ``units``: block type -> a GEMM unit factory for the ONNX pipeline
      (``cosim.deploy.pipeline``): how a block of that type runs a layer's GEMM, at what cost;
    * ``passes``: network key -> a model pass of the pipeline (``pass(model, value, units)``);
    * ``layer_types``: network layer types the family's deployer adds (type -> shape
      inference, ``cosim.deploy.network``);
    * ``presets``: network presets ``(builders, option schemas)``;
    * ``commands``: ``cosim`` subcommands.
    """

    name: str
    doc: str
    docs: str = ""
    block_types: Mapping[str, Ref] = field(default_factory=dict)
    rtl_kinds: Mapping[str, RtlKind] = field(default_factory=dict)
    schema: Ref | None = None
    task_ops: Mapping[str, Ref] = field(default_factory=dict)
    prepare: Mapping[str, Ref] = field(default_factory=dict)
    deployers: Mapping[str, Ref] = field(default_factory=dict)
    units: Mapping[str, Ref] = field(default_factory=dict)
    passes: Mapping[str, Ref] = field(default_factory=dict)
    layer_types: Ref | None = None
    presets: Ref | None = None
    commands: tuple[Command, ...] = ()

    @classmethod
    def declare(cls, name: str, doc: str, *, docs: str = "",
                block_types: Mapping[str, str | Ref] = {}, rtl_kinds: Mapping[str, RtlKind] = {},
                schema: str | Ref | None = None, task_ops: Mapping[str, str | Ref] = {},
                prepare: Mapping[str, str | Ref] = {}, deployers: Mapping[str, str | Ref] = {},
                units: Mapping[str, str | Ref] = {}, passes: Mapping[str, str | Ref] = {},
                layer_types: str | Ref | None = None, presets: str | Ref | None = None,
                commands: Mapping[str, tuple[str, str]] = {}) -> "AcceleratorFamily":
        """A family from plain ``"module:attribute"`` strings (what a plug-in writes)."""
        return cls(name, doc, docs, _refs(block_types), dict(rtl_kinds), _ref(schema), _refs(task_ops),
                   _refs(prepare), _refs(deployers), _refs(units), _refs(passes), _ref(layer_types),
                   _ref(presets), tuple(Command(n, Ref(a), Ref(r)) for n, (a, r) in commands.items()))


@dataclass(frozen=True)
class PlatformEntry:
    """A registered platform (``platform: <name>`` in a scenario).

    Either built in Python (``build(sim, overrides, firmware, echo)``, ``params(has
    firmware)``, ``memory_map()``) or composed in YAML (``file``: a platform file, relative
    to the installed tree; the three callables then come from it). ``rtl``: component path
    pattern -> RTL kind that can replace it (a composed platform derives it from its
    blocks). ``complete``: fills the defaults the platform's facts give (e.g. the PMU's from
    the operating points). ``deployer``: the registered network deployer its networks use
    (None: the one its blocks name, for a composed platform; otherwise networks are
    refused)."""

    build: Callable[..., Any] | None = None
    params: Callable[[bool], dict[str, type]] | None = None
    memory_map: Callable[[], Any] | None = None
    doc: str = ""
    rtl: Mapping[str, str] = field(default_factory=dict)
    complete: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    file: str | None = None
    deployer: str | None = None

    def path(self) -> Path | None:
        """The platform file of a composed platform, absolute: ``"package:relative/path"``
        is relative to that package's folder, a plain path to the tlm-cosim tree."""
        if self.file is None:
            return None
        pkg, sep, rel = self.file.rpartition(":")
        if not sep:
            return _ROOT / self.file
        import importlib.util
        spec = importlib.util.find_spec(pkg)
        if spec is None or not spec.submodule_search_locations:
            raise PluginError(f"platform file {self.file!r}: no package {pkg!r}")
        return Path(list(spec.submodule_search_locations)[0]) / rel


def _from_pyproject(group: str) -> dict[str, str]:
    """``name -> "module:attr"`` of ``group`` as the checkout's pyproject.toml declares."""
    import tomllib

    from tlm.files import read_text
    try:
        data = tomllib.loads(read_text(_ROOT / "pyproject.toml", "package_data"))
    except (OSError, ValueError):
        return {}
    return dict(data.get("project", {}).get("entry-points", {}).get(group, {}))


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _scan_entry_points(group: str) -> tuple[bool, list[tuple[str, str, str]]] | None:
    """(whether tlm-cosim is installed, ``[(name, "module:attr", distribution)]`` of
    ``group``), read the way importlib.metadata reads them: the ``.dist-info`` and
    ``.egg-info`` folders of each ``sys.path`` entry in order, the first folder holding a
    distribution's metadata wins, ``entry_points.txt`` in INI form. None when that is not
    clear-cut (another finder of distributions, a zip on ``sys.path``, one distribution
    twice in one folder): importlib.metadata answers then."""
    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return None
    seen: set[str] = set()
    found: list[tuple[str, str, str]] = []
    for entry in sys.path:
        folder = entry or "."
        if os.path.isfile(folder):
            return None
        try:
            listing = os.listdir(folder)
        except OSError:
            continue
        here: set[str] = set()
        for f in listing:
            if not f.endswith((".dist-info", ".egg-info")):
                continue
            dist = f.rsplit(".", 1)[0].split("-")[0]
            key = _normalize(dist)
            if key in here:
                return None
            here.add(key)
            if key in seen:
                continue
            try:
                with open(os.path.join(folder, f, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError):
                return None
            found.extend((name, value, dist) for name, value in _group_of(text, group))
        seen |= here
    return _normalize(_DISTRIBUTION) in seen, found


def _group_of(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of section ``[group]`` of an entry_points.txt."""
    out: list[tuple[str, str]] = []
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _metadata_entry_points(group: str) -> tuple[bool, list[tuple[str, str, str]]]:
    """What :func:`_scan_entry_points` reads, from importlib.metadata."""
    from importlib import metadata
    try:
        metadata.distribution(_DISTRIBUTION)
        installed = True
    except metadata.PackageNotFoundError:
        installed = False
    found = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        found.append((ep.name, ep.value, dist.name if dist is not None else "?"))
    return installed, found


def _declared(group: str) -> dict[str, tuple[str, str]]:
    """``name -> ("module:attr", where)`` of every declaration in ``group``."""
    out: dict[str, tuple[str, str]] = {}
    installed, found = _scan_entry_points(group) or _metadata_entry_points(group)
    if not installed:
        for name, value in _from_pyproject(group).items():
            out[name] = (value, "pyproject.toml")
    for name, value, dist in found:
        where = f"{dist} ({group})"
        if name_taken := out.get(name):
            if name_taken[0] == value:
                continue
            raise PluginError(f"{name!r} is declared twice in {group}: {name_taken[1]} and {where}")
        out[name] = (value, where)
    return dict(sorted(out.items()))


def _load(group: str, kind: type) -> dict[str, Any]:
    loaded: dict[str, Any] = {}
    for name, (value, where) in _declared(group).items():
        try:
            obj = Ref(value).load()
        except Exception as e:  # noqa: BLE001 - a broken plug-in is named, not a traceback
            raise PluginError(f"cannot load {name!r} ({value}, from {where}): "
                              f"{type(e).__name__}: {e}") from e
        if not isinstance(obj, kind):
            raise PluginError(f"{name!r} ({value}, from {where}) is a {type(obj).__name__}, "
                              f"not a {kind.__name__}")
        if isinstance(obj, AcceleratorFamily) and obj.name != name:
            raise PluginError(f"{value} declares family {obj.name!r} under the entry-point name {name!r}")
        loaded[name] = obj
    return loaded


@lru_cache(maxsize=1)
def families() -> dict[str, AcceleratorFamily]:
    """Every installed accelerator family, by name (sorted)."""
    return _load(ACCELERATORS, AcceleratorFamily)


@lru_cache(maxsize=1)
def platforms() -> dict[str, PlatformEntry]:
    """Every installed platform, by name (sorted)."""
    return _load(PLATFORMS, PlatformEntry)


def refresh() -> None:
    """Forget what was loaded (tests that install a plug-in into a running process)."""
    families.cache_clear()
    platforms.cache_clear()
    _merged.cache_clear()


def _collect(attr: str) -> Iterator[tuple[str, str, Any]]:
    for fam in families().values():
        for key, value in getattr(fam, attr).items():
            yield fam.name, key, value


@lru_cache(maxsize=None)
def _merged(attr: str) -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for fam, key, value in _collect(attr):
        if key in out:
            raise PluginError(f"{attr[:-1].replace('_', ' ')} {key!r} is declared by two families: "
                              f"{out[key][0]} and {fam}")
        out[key] = (fam, value)
    return out


def block_types() -> dict[str, tuple[str, Ref]]:
    """Composed-platform block type -> (family, BlockType reference)."""
    return _merged("block_types")


def rtl_kinds() -> dict[str, tuple[str, RtlKind]]:
    """RTL kind -> (family, :class:`RtlKind`)."""
    return _merged("rtl_kinds")


def task_ops() -> dict[str, tuple[str, Ref]]:
    """Task operation -> (family, handler reference)."""
    return _merged("task_ops")


def prepare_hooks() -> dict[str, tuple[str, Ref]]:
    """Task operation -> (family, scenario prepare hook reference)."""
    return _merged("prepare")


def deployers() -> dict[str, tuple[str, Ref]]:
    """Deployer name -> (family, deployer reference)."""
    return _merged("deployers")


def units() -> dict[str, tuple[str, Ref]]:
    """Block type -> (family, GEMM unit factory reference)."""
    return _merged("units")


def passes() -> dict[str, tuple[str, Ref]]:
    """Network key -> (family, model pass reference)."""
    return _merged("passes")


def commands() -> dict[str, tuple[str, Command]]:
    """``cosim`` subcommand -> (family, :class:`Command`)."""
    out: dict[str, tuple[str, Command]] = {}
    for fam in families().values():
        for c in fam.commands:
            if c.name in out:
                raise PluginError(f"command {c.name!r} is declared by two families: {out[c.name][0]} and {fam.name}")
            out[c.name] = (fam.name, c)
    return out


def loaded(refs: Mapping[str, tuple[str, Ref]]) -> dict[str, Any]:
    """``{key: ref.load()}`` of a merged table."""
    return {k: ref.load() for k, (_, ref) in refs.items()}
