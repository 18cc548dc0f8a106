"""Sweep files: the schema, the space of points and the constraints (no Dask here).

A sweep names a base scenario and a space over any ``--set`` path (docs/sweeps.md)::

    scenario: resnet20_cifar          # a scenario file (relative to this file) or a library name
    set: {outputs.trace: false}       # fixed assignments, every point
    space:
      grid: {pmu.operating_point: [nominal, low], seed: [1, 2]}   # cartesian product
      zip:  [{a: [1, 2], b: [x, y]}]  # lists advanced together (one block per group)
      sample: {method: lhs, n: 8, seed: 3, params: {x: {low: 1, high: 4, int: true}}}
    constraints: ["not (pmu.operating_point == 'low' and seed == 2)"]
    metrics: {latency: sim_time_ps, energy: energy.total_j}   # columns latency_ms, energy_uJ
    pareto: [latency_ms, energy_uJ]

The points are the product of the blocks (grid, each zip group, the samples), in that order;
a point a constraint rejects is skipped. Mistakes are ScenarioErrors with file, line and key.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tlm.files import FileAccessError
from tlm.params import suggest

from ..scenario.errors import ScenarioError
from ..scenario.loader import find_scenario
from ..scenario.paths import DEFAULT_POLICY, PathPolicy
from ..scenario.yamlpos import dotted, line_of
from ..scenario.yamlpos import load as load_yaml
from ..scenario.yamlpos import read_text
from . import units
from .expr import Constraint, ConstraintError, compile_constraint, evaluate

TOP_KEYS = ("name", "description", "scenario", "set", "space", "constraints", "metrics", "pareto",
            "options")
SPACE_KEYS = ("grid", "zip", "sample")
SAMPLE_KEYS = ("method", "n", "seed", "params")
PARAM_KEYS = ("low", "high", "int", "log", "choices", "unit")
OPTION_KEYS = ("keep_outputs", "timeout")
#: without ``metrics``: latency and energy (columns latency_ms, energy_uJ: cosim/sweep/units.py)
DEFAULT_METRICS = {"latency": "sim_time_ps", "energy": "energy.total_j"}
#: bounds on what a sweep may ask for (every number a user gives is bounded)
MAX_POINTS = 1_000_000
MAX_SAMPLES = 100_000
MAX_VALUES = 10_000
MAX_CONSTRAINT = 1000
#: how many values, then points, are loaded to check them before a sweep runs (~10 ms each);
#: past it, a value a scenario refuses makes its point ``invalid`` when it runs
MAX_CHECKED = 10_000


@dataclass
class Point:
    """One point of the space: its index, the parameter values and the ``--set`` texts."""

    index: int
    params: dict[str, Any]
    sets: list[str]
    key: str = ""


@dataclass
class SweepSpec:
    """A parsed sweep: the base scenario, the space blocks, the constraints and the metrics."""

    file: Path | None
    name: str
    description: str
    scenario: Path
    scenario_text: str
    fixed: dict[str, Any]
    blocks: list[list[dict[str, Any]]]
    params: list[str]
    constraints: list[tuple[str, Any, tuple]]
    #: table column (with its unit, cosim/sweep/units.py) -> report path
    metrics: dict[str, str]
    pareto: tuple[str, str] | None = None
    keep_outputs: bool = False
    timeout: float | None = None
    lines: dict = field(default_factory=dict, repr=False)
    #: the command line's path policy (``--allow-path``), given to every point
    policy: PathPolicy = field(default=DEFAULT_POLICY, repr=False)

    def error(self, message: str, keypath: tuple) -> ScenarioError:
        return ScenarioError(message, str(self.file) if self.file else None,
                             line_of(self.lines, keypath), dotted(keypath) or None)

    def points(self) -> list[Point]:
        """Every point of the space that the constraints accept, in the space's order."""
        out: list[Point] = []
        total = math.prod(len(b) for b in self.blocks)
        if total > MAX_POINTS:
            raise self.error(f"the space has {total} points, more than {MAX_POINTS}", ("space",))
        fixed = [f"{k}={set_text(v)}" for k, v in self.fixed.items()]
        # each block entry's --set texts once (a grid's values repeat across its points)
        texts = [[[f"{k}={set_text(v)}" for k, v in part.items()] for part in block] for block in self.blocks]
        for combo in itertools.product(*(range(len(b)) for b in self.blocks)):
            params: dict[str, Any] = {}
            for b, i in enumerate(combo):
                params.update(self.blocks[b][i])
            if all(_truth(self, expr, params, where) for _text, expr, where in self.constraints):
                sets = fixed + [t for b, i in enumerate(combo) for t in texts[b][i]]
                out.append(Point(len(out), params, sets, point_key(self.scenario_text, sets)))
        if not out:
            if total == 0:
                raise self.error("the space is empty: give at least one value per parameter", ("space",))
            raise self.error(f"the constraints reject all {total} points of the space", ("constraints",))
        return out


def set_text(value: Any) -> str:
    """``value`` as the text of a ``--set`` that reads back as the same value (YAML flow)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30).strip()
    if text.endswith("\n..."):
        text = text[:-4].strip()
    elif text.endswith("..."):
        text = text[:-3].strip()
    return text


def point_key(text: str, sets: list[str]) -> str:
    """The cache key of a point: the base scenario's text, the assignments and the tool's
    version (a point of the same scenario in another sweep shares its entry)."""
    from tlm import __version__
    blob = json.dumps({"version": __version__, "text": text, "sets": sets}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def load_sweep(path: str | Path | None = None, *, scenario: str | Path | None = None,
               grid: dict[str, list] | None = None, zips: list[dict[str, list]] | None = None,
               sets: dict[str, Any] | None = None, metrics: dict[str, str] | None = None,
               pareto: tuple[str, str] | None = None, check_keys: bool = True,
               policy: PathPolicy | None = None) -> SweepSpec:
    """A sweep from a file and/or arguments: ``path`` may be a sweep file or a scenario (then
    ``grid``/``zips`` give the space); arguments add to the file's space and replace its
    metrics and Pareto pair. ``policy``: the command line's path policy (``--allow-path``;
    a sweep file's ``scenario:`` must lie in the sweep file's folder tree, the library or
    an allowed folder)."""
    policy = policy or DEFAULT_POLICY
    data: dict[str, Any] = {}
    lines: dict = {}
    file: Path | None = None
    if path is not None:
        p = Path(path)
        target = p if p.exists() else find_scenario(str(path))
        text = read_text(target, "sweep")
        loaded, lines = load_yaml(text, str(target))
        if isinstance(loaded, dict) and ("space" in loaded or "scenario" in loaded):
            data, file = loaded, target
        else:      # a scenario: the space comes from the arguments
            scenario = target
            lines = {}
    fname = str(file) if file else None

    def err(message: str, keypath: tuple) -> ScenarioError:
        return ScenarioError(message, fname, line_of(lines, keypath), dotted(keypath) or None)

    _known(data, TOP_KEYS, (), err)
    base = scenario if scenario is not None else data.get("scenario")
    if base is None:
        raise err("name the base scenario: `scenario: FILE` (a file or a library name)", ("scenario",))
    if not isinstance(base, (str, Path)):
        raise err("scenario must be a file name or a library name", ("scenario",))
    base_path = Path(base)
    if file is not None and not base_path.is_absolute() and (file.parent / base_path).exists():
        base_path = file.parent / base_path
    try:
        base_path = find_scenario(str(base_path))
    except ScenarioError as e:
        raise err(e.message, ("scenario",)) from None
    if file is not None and scenario is None:     # named by the sweep file: the path policy holds
        try:
            policy.confine(base_path, file.parent, str(base))
        except FileAccessError as e:
            raise err(str(e), ("scenario",)) from None
    base_path = base_path.resolve()     # workers elsewhere resolve the scenario's own files from it
    base_text = read_text(base_path, "scenario")

    fixed = _mapping(data.get("set") or {}, ("set",), err)
    fixed.update(sets or {})
    blocks: list[list[dict[str, Any]]] = []
    params: list[str] = []
    where: dict[str, tuple] = {}
    space = data.get("space") or {}
    if not isinstance(space, dict):
        raise err("space must be a mapping with grid, zip and/or sample", ("space",))
    _known(space, SPACE_KEYS, ("space",), err)
    g = _mapping(space.get("grid") or {}, ("space", "grid"), err)
    g.update(grid or {})
    for k, values in g.items():
        key = ("space", "grid", k)
        vals = _values(values, key, err)
        blocks.append([{k: v} for v in vals])
        _add_param(params, where, k, key, err)
    zip_groups = space.get("zip") or []
    if isinstance(zip_groups, dict):
        zip_groups = [zip_groups]
    if not isinstance(zip_groups, list):
        raise err("zip must be a list of mappings {path: [values]}", ("space", "zip"))
    zip_groups = [(grp, ("space", "zip", i)) for i, grp in enumerate(zip_groups)]
    zip_groups += [(grp, ("--zip",)) for grp in zips or []]
    for grp, key in zip_groups:
        grp = _mapping(grp, key, err)
        lists = {k: _values(v, key + (k,), err) for k, v in grp.items()}
        lengths = {len(v) for v in lists.values()}
        if len(lengths) > 1:
            raise err("zipped lists must have the same length; got "
                      + ", ".join(f"{k}: {len(v)}" for k, v in lists.items()), key)
        for k in lists:
            _add_param(params, where, k, key + (k,), err)
        n = lengths.pop() if lengths else 0
        blocks.append([{k: v[i] for k, v in lists.items()} for i in range(n)])
    if "sample" in space:
        block, names = _samples(space["sample"], ("space", "sample"), err)
        for k in names:
            _add_param(params, where, k, ("space", "sample", "params", k), err)
        blocks.append(block)
    if not blocks:
        raise err("the space is empty: give space.grid, space.zip or space.sample "
                  "(or --grid PATH=V1,V2 on the command line)", ("space",))
    raw_constraints = data.get("constraints") or []
    if isinstance(raw_constraints, str):
        raw_constraints = [raw_constraints]
    if not isinstance(raw_constraints, list):
        raise err("constraints must be a list of expressions", ("constraints",))
    constraints = []
    for i, text in enumerate(raw_constraints):
        key = ("constraints", i)
        if not isinstance(text, str) or len(text) > MAX_CONSTRAINT:
            raise err(f"a constraint is an expression of at most {MAX_CONSTRAINT} characters", key)
        constraints.append((text, _compile(text, params, key, err), key))

    raw_metrics = data.get("metrics")
    if metrics:
        mets = dict(metrics)
    elif isinstance(raw_metrics, list):       # metrics: [sim_time_ps, energy.total_j]: named by their paths
        mets = {str(m): str(m) for m in raw_metrics}
    elif raw_metrics:
        mets = _mapping(raw_metrics, ("metrics",), err)
    else:
        mets = dict(DEFAULT_METRICS)
    report_keys = _report_keys()
    columns: dict[str, str] = {}        # table column (the name with its unit) -> report path
    named: dict[str, str] = {}          # the metric's name as given -> its column
    for name, mpath in mets.items():
        key = ("metrics", name)
        if not isinstance(mpath, str) or not mpath:
            raise err("a metric is a report path such as energy.total_j", key)
        root = mpath.split(".")[0]
        if root not in report_keys:
            raise err(f"{mpath!r} is not a report path: {root!r} is no report key"
                      f"{suggest(root, report_keys)}; report keys: {', '.join(report_keys)}", key)
        col = units.column(str(name), mpath)
        if name in params or name in TABLE_COLUMNS or col in params or col in TABLE_COLUMNS:
            raise err(f"metric name {name!r} is already a column of the table", key)
        if col in columns:
            raise err(f"metrics {next(n for n, c in named.items() if c == col)!r} and {name!r} are both "
                      f"column {col!r}", key)
        columns[col], named[str(name)] = mpath, col
    par = pareto if pareto is not None else data.get("pareto")
    if par is not None:
        # a pair names metrics as written or by their column (latency_ps or latency_ms)
        pick = {**named, **{c: c for c in columns}}
        if not (isinstance(par, (list, tuple)) and len(par) == 2 and all(str(m) in pick for m in par)):
            raise err(f"pareto names two metrics (of: {', '.join(columns)})", ("pareto",))
        par = (pick[str(par[0])], pick[str(par[1])])
    opts = data.get("options") or {}
    if not isinstance(opts, dict):
        raise err("options must be a mapping", ("options",))
    _known(opts, OPTION_KEYS, ("options",), err)
    timeout = opts.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout <= 7 * 86400):
        raise err("timeout is seconds per point, in (0, 604800]", ("options", "timeout"))
    if timeout is not None:     # a point's wall-time limit is the scenario's own (limits.max_wall)
        fixed.setdefault("limits.max_wall", timeout)
    else:                       # the sweep's deadline follows the scenario's limit, if any
        given = fixed.get("limits.max_wall")
        if given is None:
            base_data, _ = load_yaml(base_text, str(base_path))
            lim = base_data.get("limits") if isinstance(base_data, dict) else None
            given = lim.get("max_wall") if isinstance(lim, dict) else None
        timeout = given if isinstance(given, (int, float)) and not isinstance(given, bool) and given > 0 else None
    spec = SweepSpec(file=file, name=str(data.get("name") or (file.stem if file else base_path.stem)),
                     description=str(data.get("description") or ""), scenario=base_path,
                     scenario_text=base_text, fixed=fixed, blocks=blocks, params=params,
                     constraints=constraints, metrics=columns, pareto=par,
                     keep_outputs=bool(opts.get("keep_outputs", False)), timeout=timeout, lines=lines,
                     policy=policy)
    if check_keys:
        check_paths(spec, where)
    return spec


#: the table's own columns (cosim/sweep/table.py); no parameter or metric may take them
TABLE_COLUMNS = ("point", "status", "error", "scenario_hash", "run_hash", "wall_s")


def _report_keys() -> tuple[str, ...]:
    """The report's top-level keys (cosim/report.py), ``hash`` and ``manifest`` included: a
    metric path starts with one of them."""
    from ..report import Report
    return (*Report(scenario={}).as_dict(), "hash", "manifest")


def _check_sets(spec: SweepSpec, sets: list[str]) -> None:
    """Load the base scenario with ``sets`` the way ``cosim validate`` does (schema,
    parameters, models); the loader's ScenarioError if it refuses them."""
    from ..platforms import check_models, resolved_parameters
    from ..scenario.loader import load_scenario_text
    sc = load_scenario_text(spec.scenario_text, spec.scenario, sets, spec.policy)
    check_models(sc)
    resolved_parameters(sc)


def check_paths(spec: SweepSpec, where: dict[str, tuple]) -> None:
    """Each fixed assignment, and every value of the space (each grid value, zip row and
    sample, with the other blocks at their first entry; the first :data:`MAX_CHECKED`),
    must be one the base scenario takes: the loader's message at the sweep file's line and
    key, naming the value."""
    fixed = [f"{k}={set_text(v)}" for k, v in spec.fixed.items()]
    for k, v in spec.fixed.items():
        try:
            _check_sets(spec, [f"{k}={set_text(v)}"])
        except ScenarioError as e:
            raise spec.error(f"{k}: {e.message}", ("set", k)) from None
    firsts = [block[0] for block in spec.blocks]
    budget = MAX_CHECKED
    for b, block in enumerate(spec.blocks):
        for entry in block[:budget]:
            budget -= 1
            own = [f"{k}={set_text(v)}" for part in (firsts[:b] + [entry] + firsts[b + 1:])
                   for k, v in part.items()]
            try:
                _check_sets(spec, fixed + own)
            except ScenarioError as e:
                key = where.get(next(iter(entry)), ("space",))
                if len(entry) > 1:          # a zip row or a sample: the group, not one key
                    key = key[:-1]
                raise spec.error(f"{_shown(entry)} is refused: {e.message}", key) from None


def validate_points(spec: SweepSpec, points: list[Point], limit: int = MAX_CHECKED) -> None:
    """Every point's scenario is one the loader takes (each value alone was checked by
    :func:`check_paths`; this finds values that are refused only together), before any
    point runs: a ScenarioError naming the point and its assignments. Past ``limit``
    points only the values alone are checked (a point refused later is ``invalid``)."""
    if len(points) > limit:
        return
    for p in points:
        try:
            _check_sets(spec, p.sets)
        except ScenarioError as e:
            raise spec.error(f"point {p.index} ({_shown(p.params)}) is refused: {e.message}", ("space",)) from None


def _shown(params: dict[str, Any]) -> str:
    """A point's or an entry's values as short text: ``pmu.operating_point=turbo``."""
    text = ", ".join(f"{k}={set_text(v)}" for k, v in params.items())
    return text if len(text) <= 300 else text[:297] + "..."


def _known(mapping: dict, allowed: tuple[str, ...], key: tuple, err: Any) -> None:
    """Every key of ``mapping`` is one of ``allowed`` (else: the nearest, and the list)."""
    for k in mapping:
        if k not in allowed:
            raise err(f"unknown key {k!r}{suggest(str(k), allowed)}; expected one of: {', '.join(allowed)}",
                      key + (k,))


def _mapping(value: Any, key: tuple, err: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise err("expected a mapping {path: value}", key)
    for k in value:
        if not isinstance(k, str) or not k or "=" in k:
            raise err(f"bad path {k!r}: a --set path such as pmu.operating_point", key)
    return dict(value)


def _values(values: Any, key: tuple, err: Any) -> list:
    if not isinstance(values, list):
        raise err("expected a list of values", key)
    if len(values) > MAX_VALUES:
        raise err(f"more than {MAX_VALUES} values", key)
    if not values:
        raise err("the space is empty: this parameter has no values", key)
    return values


def _add_param(params: list[str], where: dict[str, tuple], name: str, key: tuple, err: Any) -> None:
    if name in params:
        raise err(f"{name} is in the space twice (first at {dotted(where[name])})", key)
    if name in TABLE_COLUMNS:
        raise err(f"{name!r} is a column of the table; it cannot be a parameter", key)
    params.append(name)
    where[name] = key


def _samples(spec: Any, key: tuple, err: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Random or Latin-hypercube samples (numpy's PCG64 from ``seed``: the same every run)."""
    import numpy as np
    if not isinstance(spec, dict):
        raise err("sample must be a mapping: method, n, seed, params", key)
    _known(spec, SAMPLE_KEYS, key, err)
    method = spec.get("method", "random")
    if method not in ("random", "lhs"):
        raise err(f"method {method!r}: expected random or lhs", key + ("method",))
    n, seed = spec.get("n"), spec.get("seed", 0)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SAMPLES:
        raise err(f"n is the number of samples, an integer in [1, {MAX_SAMPLES}]", key + ("n",))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise err("seed is an integer in [0, 2^63)", key + ("seed",))
    params = spec.get("params")
    if not isinstance(params, dict) or not params:
        raise err("params maps each --set path to {low, high} or {choices: [...]}", key + ("params",))
    names = list(params)
    rng = np.random.default_rng(seed)
    d = len(names)
    if method == "lhs":      # one sample per stratum of [0, 1) in every dimension
        u = (np.stack([rng.permutation(n) for _ in range(d)], axis=1) + rng.random((n, d))) / n
    else:
        u = rng.random((n, d))
    cols = [_sample_column(params[nm], u[:, j], key + ("params", nm), err) for j, nm in enumerate(names)]
    return [{nm: cols[j][i] for j, nm in enumerate(names)} for i in range(n)], names


def _sample_column(p: Any, u: Any, key: tuple, err: Any) -> list:
    if not isinstance(p, dict):
        raise err("expected {low, high[, int, log, unit]} or {choices: [...]}", key)
    _known(p, PARAM_KEYS, key, err)
    if "choices" in p:
        ch = _values(p["choices"], key + ("choices",), err)
        return [ch[min(int(x * len(ch)), len(ch) - 1)] for x in u]
    lo, hi = p.get("low"), p.get("high")
    for v, name in ((lo, "low"), (hi, "high")):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or abs(v) > 1e18:
            raise err(f"{name} must be a finite number (|x| <= 1e18)", key + (name,))
    if not lo < hi:
        raise err(f"low ({lo}) must be below high ({hi})", key)
    log, integer, unit = bool(p.get("log")), bool(p.get("int")), p.get("unit")
    if log and lo <= 0:
        raise err("log sampling needs low > 0", key + ("low",))
    if unit is not None and (not isinstance(unit, str) or len(unit) > 16):
        raise err("unit is a short text appended to the value, e.g. MHz", key + ("unit",))
    out = []
    for x in u:
        if integer:
            v: Any = int(math.floor(lo + x * (hi - lo + 1)))
            v = min(max(v, int(math.ceil(lo))), int(math.floor(hi)))
        elif log:
            v = float(f"{math.exp(math.log(lo) + x * (math.log(hi) - math.log(lo))):.6g}")
        else:
            v = float(f"{lo + x * (hi - lo):.6g}")   # six digits: readable --set values
        out.append(f"{v} {unit}" if unit else v)
    return out


# -- constraints: the expression language lives in expr.py; here its errors get file, line and key

def _compile(text: str, params: list[str], key: tuple, err: Any) -> Constraint:
    """``text`` compiled, or the reason it is refused at the constraint's line and key."""
    try:
        return compile_constraint(text, params)
    except ConstraintError as e:
        raise err(str(e), key) from None


def _truth(spec: SweepSpec, constraint: Constraint, params: dict[str, Any], key: tuple) -> bool:
    try:
        return evaluate(constraint, params)
    except ConstraintError as e:
        raise spec.error(f"the constraint fails on point {params}: {e}", key) from None


def report_value(report: dict[str, Any], path: str) -> Any:
    """The value at a dotted report path; keys may hold dots themselves (``utilisation.cluster.rbe``:
    the longest key that matches wins), list items by index. None when absent."""
    parts = path.split(".")
    node: Any = report
    i = 0
    while i < len(parts):
        if isinstance(node, dict):
            for j in range(len(parts), i, -1):
                k = ".".join(parts[i:j])
                if k in node:
                    node, i = node[k], j
                    break
            else:
                return None
        elif isinstance(node, list) and parts[i].lstrip("-").isdigit():
            idx = int(parts[i])
            if not -len(node) <= idx < len(node):
                return None
            node, i = node[idx], i + 1
        else:
            return None
    return node
