"""Load a scenario: YAML with line numbers, ``--set`` overrides, schema validation, and a
resolved :class:`Scenario` the platform builder and the runner use."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tlm.units import FREQ_MAX, FREQ_MIN, TIME_MAX, fmt_bytes, fmt_time, parse_bytes, parse_frequency, parse_time

from .errors import ScenarioError
from .validate import validate
from .yamlpos import dotted, line_of
from .yamlpos import load as load_yaml
from .yamlpos import read_text

TOP_LEVEL = ("name", "description", "seed", "platform", "partition", "workload", "checks",
             "outputs", "limits")
#: the memory budget of a run unless ``limits.max_memory`` says otherwise (docs/scenarios.md)
DEFAULT_MAX_MEMORY = 4 << 30
#: the largest budget one may ask for (the machines this runs on have tens of GiB)
MAX_MEMORY_LIMIT = 1 << 40
REPO_ROOT = Path(__file__).resolve().parents[2]
SCENARIO_DIR = REPO_ROOT / "scenarios"


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


def parse_partition(spec: str | list, where: str = "partition") -> list[list[str]]:
    """``'soc,hyperram|cluster'`` -> ``[['soc', 'hyperram'], ['cluster']]``."""
    if isinstance(spec, list):
        groups = [list(g) for g in spec]
    else:
        groups = [[c.strip() for c in part.split(",") if c.strip()] for part in str(spec).split("|")]
    if not groups or any(not g for g in groups):
        raise ScenarioError(f"bad partition {spec!r}: expected groups of component paths "
                            "separated by '|', e.g. 'soc,hyperram|cluster'", key=where)
    return groups


def apply_set(data: dict, assignment: str) -> None:
    """Apply one ``--set path=value`` (value parsed as YAML) to the raw scenario mapping.

    ``seed=3``, ``limits.max_time=2ms`` set scenario keys; ``X.model=rtl`` selects the model
    of component X; any other path is a platform parameter override."""
    if "=" not in assignment:
        raise ScenarioError(f"--set expects path=value, got {assignment!r}", key="--set")
    path, _, text = assignment.partition("=")
    path = path.strip()
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        value = text
    parts = path.split(".")
    if not path or any(not p for p in parts):
        raise ScenarioError(f"bad path {path!r}", key="--set")
    if parts[0] in TOP_LEVEL and parts[0] != "platform":
        node = data
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ScenarioError(f"cannot set {path}: {p} is not a mapping", key="--set")
        node[parts[-1]] = value
        return
    plat = data.setdefault("platform", {})
    if parts[0] == "platform":
        parts = parts[1:]
        if parts and parts[0] in ("preset", "file"):
            plat[parts[0]] = value
            return
        if len(parts) >= 2 and parts[0] == "models":     # platform.models.cluster.rbe=rtl
            plat.setdefault("models", {})[".".join(parts[1:])] = value
            return
    if len(parts) >= 2 and parts[-1] == "model":
        plat.setdefault("models", {})[".".join(parts[:-1])] = value
    else:
        plat.setdefault("overrides", {})[".".join(parts)] = value


def load_scenario_text(text: str, file: Path | None = None, sets: list[str] = ()) -> Scenario:
    fname = str(file) if file else None
    data, lines = load_yaml(text, fname)
    if data is None:
        raise ScenarioError("the scenario is empty", fname, 1)
    if not isinstance(data, dict):
        raise ScenarioError("a scenario must be a mapping", fname, 1)
    if isinstance(data.get("platform"), str):      # platform: marsellus
        data["platform"] = {"preset": data["platform"]}
    for s in sets:
        apply_set(data, s)
    validate(data, lines, fname)
    plat = data["platform"]
    given = [k for k in ("preset", "file", "compose") if k in plat]
    if len(given) != 1:
        raise ScenarioError("name the platform once: a platform name (`platform: marsellus`), "
                            "`file:` or `compose:`" + (f"; got {', '.join(given)}" if given else ""),
                            fname, line_of(lines, ("platform",)), "platform")
    wl = data.get("workload") or {}
    limits = data.get("limits") or {}

    def time_of(key: tuple, value: Any) -> int | None:
        if value is None:
            return None
        try:
            t = parse_time(value)
        except ValueError as e:
            raise ScenarioError(str(e), fname, line_of(lines, key), dotted(key)) from None
        if not 0 <= t <= TIME_MAX:
            raise ScenarioError(f"{value!r} is out of range [0 ps, {fmt_time(TIME_MAX)}]", fname,
                                line_of(lines, key), dotted(key))
        return t

    def size_of(key: tuple, value: Any) -> int:
        try:
            n = parse_bytes(value)
        except ValueError as e:
            raise ScenarioError(str(e), fname, line_of(lines, key), dotted(key)) from None
        if not 1 << 20 <= n <= MAX_MEMORY_LIMIT:
            raise ScenarioError(f"{value!r} is out of range [1 MiB, {fmt_bytes(MAX_MEMORY_LIMIT)}]",
                                fname, line_of(lines, key), dotted(key))
        return n

    for i, chk in enumerate(data.get("checks") or []):
        if "deadline" in chk:
            chk["deadline"] = time_of(("checks", i, "deadline"), chk["deadline"])
    for i, task in enumerate(wl.get("tasks") or []):
        task.setdefault("id", f"{task['op']}{i}")
        if task["op"] == "wait":
            task["time"] = time_of(("workload", "tasks", i, "time"), task["time"])
        if task["op"] == "pmu" and "frequency" in task:
            key = ("workload", "tasks", i, "frequency")
            try:
                hz = parse_frequency(task["frequency"])
            except ValueError as e:
                raise ScenarioError(str(e), fname, line_of(lines, key), dotted(key)) from None
            if not FREQ_MIN <= hz <= FREQ_MAX:
                raise ScenarioError(f"{task['frequency']!r} is out of range [{FREQ_MIN:g} Hz, {FREQ_MAX:g} Hz]",
                                    fname, line_of(lines, key), dotted(key))
    sc = Scenario(
        file=file, name=data.get("name") or (file.stem if file else "scenario"),
        description=data.get("description", ""), seed=int(data.get("seed", 0)),
        preset=plat.get("preset", ""), overrides=dict(plat.get("overrides") or {}),
        models=dict(plat.get("models") or {}),
        rtl_blocks=dict(plat.get("rtl_blocks") or {}),
        partition=parse_partition(data["partition"]) if data.get("partition") else None,
        firmware=None, tasks=list(wl.get("tasks") or []), network=wl.get("network"),
        checks=list(data.get("checks") or []), outputs=dict(data.get("outputs") or {}),
        max_time=time_of(("limits", "max_time"), limits.get("max_time")),
        max_wall=limits.get("max_wall"),
        max_memory=size_of(("limits", "max_memory"), limits["max_memory"]) if "max_memory" in limits
        else DEFAULT_MAX_MEMORY, raw=data, lines=lines, text=text, sets=list(sets))
    if "file" in plat or "compose" in plat:
        from ..platforms.composed import load_file, parse
        if "file" in plat:
            sc.composed = load_file(sc.resolve_file(plat["file"], ("platform", "file")))
        else:
            sc.composed = parse(plat["compose"], lines, fname, ("platform", "compose"))
        sc.preset = sc.composed.name
    if wl.get("firmware"):
        sc.firmware = sc.resolve_file(wl["firmware"], ("workload", "firmware"))
    if not (sc.firmware or sc.tasks or sc.network):
        raise sc.error("the workload is empty: give firmware, tasks or a network", ("workload",))
    if any(t["op"] == "mmio" for t in sc.tasks):
        from ..mmio import prepare     # expressions checked, register images read (located)
        prepare(sc)
    from components.plugins import prepare_hooks
    ops = {t["op"] for t in sc.tasks}
    for op, (_, hook) in prepare_hooks().items():   # a family's load-time checks (located)
        if op in ops:
            hook.load()(sc)
    return sc


def find_scenario(name: str | None) -> Path:
    """A scenario file by path, or by name in the scenario library (default: quickstart)."""
    if name is None:
        name = "quickstart"
    p = Path(name)
    if p.exists():
        return p
    for cand in (SCENARIO_DIR / name, SCENARIO_DIR / f"{name}.yaml"):
        if cand.exists():
            return cand
    known = sorted(f.stem for f in SCENARIO_DIR.glob("*.yaml"))
    from tlm.params import suggest
    raise ScenarioError(f"no scenario file {name!r}{suggest(p.stem, known)}; the library has: "
                        f"{', '.join(known) or '(none)'}")


def load_scenario(path: str | Path | None, sets: list[str] = ()) -> Scenario:
    file = find_scenario(str(path) if path is not None else None)
    return load_scenario_text(read_text(file, "scenario"), file, list(sets))
