"""Load a scenario: YAML with line numbers, ``--set`` overrides, schema validation, and a
resolved :class:`Scenario` the platform builder and the runner use."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tlm.files import FileAccessError
from tlm.units import FREQ_MAX, FREQ_MIN, TIME_MAX, fmt_bytes, fmt_time, parse_bytes, parse_frequency, parse_time

from .errors import ScenarioError
from .model import DEFAULT_MAX_MEMORY, REPO_ROOT, Scenario
from .paths import DEFAULT_POLICY, INPUT_FILE_PARAMS, PathPolicy, outputs_dir
from .validate import validate
from .yamlpos import dotted, line_of, load_value
from .yamlpos import load as load_yaml
from .yamlpos import read_text

TOP_LEVEL = ("name", "description", "seed", "platform", "partition", "workload", "checks",
             "outputs", "limits")
#: the largest budget one may ask for (the machines this runs on have tens of GiB)
MAX_MEMORY_LIMIT = 1 << 40
SCENARIO_DIR = REPO_ROOT / "scenarios"


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
    value = load_value(text, f"--set {path}"[:120])
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


def load_scenario_text(text: str, file: Path | None = None, sets: list[str] = (),
                       policy: PathPolicy | None = None) -> Scenario:
    """A validated Scenario from its YAML ``text`` (``file``: where it was read, the folder
    its names are relative to; None: the current directory), with the ``--set``
    assignments ``sets`` applied and the path ``policy`` of the command line (default:
    nothing widened)."""
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
        else DEFAULT_MAX_MEMORY, raw=data, lines=lines, text=text, sets=list(sets),
        policy=policy or DEFAULT_POLICY)
    if sc.outputs.get("dir"):        # relative, inside the current directory (paths.outputs_dir)
        outputs_dir(sc.outputs["dir"], lambda m: sc.error(m, ("outputs", "dir")))
    if "file" in plat or "compose" in plat:
        from ..platforms.composed import load_file, parse
        if "file" in plat:
            sc.composed = load_file(sc.resolve_file(plat["file"], ("platform", "file")))
        else:
            sc.composed = parse(plat["compose"], lines, fname, ("platform", "compose"))
        sc.preset = sc.composed.name
    _confine_file_params(sc)
    _check_data_files(sc)
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


def _check_data_files(sc: Scenario) -> None:
    """The data files of ``load`` tasks and ``equals_file`` checks exist and are inside the
    path policy: found by ``cosim validate`` and before a run starts, not when it needs them."""
    for i, t in enumerate(sc.tasks):
        data = t.get("data") if t.get("op") == "load" else None
        if isinstance(data, dict) and "file" in data:
            sc.resolve_file(str(data["file"]), ("workload", "tasks", i, "data", "file"))
    for i, c in enumerate(sc.checks):
        mem = c.get("memory")
        if isinstance(mem, dict) and "equals_file" in mem:
            sc.resolve_file(str(mem["equals_file"]), ("checks", i, "memory", "equals_file"))


def _confine_file_params(sc: Scenario) -> None:
    """Platform parameters that name a file to read (:data:`INPUT_FILE_PARAMS`), from the
    scenario's overrides or a composed platform's blocks, resolved under the path policy
    (relative to the file that gives them) and replaced by their real path; a YAML one is
    read once through the limited loader (a user's file, not the package's)."""
    def check(path: Path, fail: Any) -> str:
        if path.suffix.lower() in (".yaml", ".yml"):
            try:
                load_yaml(read_text(path, "package_data"), str(path))
            except ScenarioError as e:
                raise fail(f"{path}: {e.message}" + (f" (line {e.line})" if e.line else "")) from None
        return str(path)

    for k, v in list(sc.overrides.items()):
        if k.rsplit(".", 1)[-1] in INPUT_FILE_PARAMS and v not in (None, ""):
            key = ("platform", "overrides", k)
            sc.overrides[k] = check(sc.resolve_file(str(v), key), lambda m, key=key: sc.error(m, key))
    spec = sc.composed
    if spec is None:
        return
    base = Path(spec.file).parent if spec.file else sc.base_dir
    for b in spec.blocks.values():
        for k in INPUT_FILE_PARAMS:
            v = b.params.get(k)
            if v in (None, ""):
                continue
            key = b.key + ("params", k)
            try:
                real = sc.policy.confine(base / str(v), base, str(v))
            except FileAccessError as e:
                raise spec.error(str(e), key) from None
            b.params[k] = check(real, lambda m, key=key: spec.error(m, key))


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


def load_scenario(path: str | Path | None, sets: list[str] = (), policy: PathPolicy | None = None) -> Scenario:
    """The scenario file ``path`` (or a library name; default quickstart), loaded with
    ``sets`` and the path ``policy`` (:func:`load_scenario_text`)."""
    file = find_scenario(str(path) if path is not None else None)
    return load_scenario_text(read_text(file, "scenario"), file, list(sets), policy)
