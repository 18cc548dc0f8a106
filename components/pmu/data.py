"""Loading the PMU data files: a chip's operating points, power.yaml and abb.yaml.

The files are the single source of truth for every table of the power model; this module
only parses them into typed, immutable objects (units converted: frequencies to Hz, times to
ps, voltages stay in V) and checks their internal consistency. Errors name the file and key.

The operating points (domains, FLLs, supply, delay model, named points) are a fact of the
chip, not of the PMU model: :func:`power_spec` parses the file its caller names (MARSELLUS:
its composition reads its own facts' file), and :func:`power_tables` checks power.yaml
against the :class:`PowerSpec` it is given.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from tlm.units import parse_frequency, parse_time
from tlm.yamlfast import load_file

from .delay import DelayModel, PathFamily

HERE = Path(__file__).parent
POWER_FILE = HERE / "power.yaml"
ABB_FILE = HERE / "abb.yaml"


class DataError(ValueError):
    """A PMU data file is malformed (the message names the file and the key)."""


def _load(path: Path) -> dict:
    try:
        data = load_file(path)       # bounded (tlm.files)
    except (OSError, ValueError, yaml.YAMLError) as e:
        raise DataError(f"{path}: {e}") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a mapping at the top level")
    return data


def _get(d: dict, key: str, where: str) -> Any:
    if key not in d:
        raise DataError(f"{where}: missing key {key!r}")
    return d[key]


@dataclass(frozen=True)
class DomainSpec:
    name: str
    switchable: bool
    body_biased: bool
    main_clock: str | None


@dataclass(frozen=True)
class FllSpec:
    name: str
    domain: str


@dataclass(frozen=True)
class OperatingPoint:
    """A named point: supply per domain (V), frequency per FLL (Hz), ABB on/off."""

    name: str
    vdd: dict[str, float]
    freq: dict[str, float]
    abb: bool
    doc: str = ""


@dataclass(frozen=True)
class CharRow:
    """One measured fact: fmax without ABB, and/or a frequency known to run with ABB."""

    vdd: float
    fmax_no_abb: float | None
    fmax_abb_min: float | None
    source: str


@dataclass(frozen=True)
class PowerSpec:
    """A chip's power description (its operating_points.yaml), parsed: what a :class:`Pmu`
    and a :class:`PowerModel` are given by their composer."""

    reference_vdd: float
    domains: tuple[DomainSpec, ...]
    flls: tuple[FllSpec, ...]
    supply_range: tuple[float, float]
    slew_v_per_us: float
    step_v: float
    power_on_time: int
    lock_time: int
    f_min: float
    f_max: float
    n_vt: float
    body_factor: float
    dibl: float
    families: tuple[PathFamily, ...]
    fmax_scale: dict[str, float]
    characterization: tuple[CharRow, ...]
    operating_points: dict[str, OperatingPoint]

    def delay_model(self, domain: str = "cluster") -> DelayModel:
        """The fmax model of ``domain`` (its families scaled by ``fmax_scale``)."""
        return DelayModel(self.families, self.n_vt, self.fmax_scale.get(domain, 1.0))

    def domain(self, name: str) -> DomainSpec:
        for d in self.domains:
            if d.name == name:
                return d
        raise KeyError(name)


@lru_cache(maxsize=None)
def power_spec(path: Path) -> PowerSpec:
    """Parse a chip's operating_points.yaml at ``path`` (cached by path)."""
    w = str(path)
    d = _load(path)
    tech = _get(d, "technology", w)
    domains = tuple(DomainSpec(x["name"], bool(x["switchable"]), bool(x["body_biased"]),
                               x.get("main_clock")) for x in _get(d, "domains", w))
    names = {x.name for x in domains}
    flls = tuple(FllSpec(x["name"], x["domain"]) for x in _get(d, "flls", w))
    for f in flls:
        if f.domain not in names:
            raise DataError(f"{w}: flls.{f.name}: unknown domain {f.domain!r}")
    for dom in domains:
        if dom.main_clock is not None and dom.main_clock not in {f.name for f in flls}:
            raise DataError(f"{w}: domains.{dom.name}.main_clock: unknown FLL {dom.main_clock!r}")
    bf = float(tech["body_factor"])
    fams = tuple(PathFamily(x["name"], float(x["k_ps"]), float(x["vth"]), float(x["alpha"]),
                            bf if x.get("body_biased") else 0.0, float(x.get("d0_ps", 0.0)))
                 for x in _get(d, "delay_model", w)["families"])
    sup = _get(d, "supply", w)
    fll = _get(d, "fll", w)
    ref = float(_get(d, "reference_vdd", w))
    ops: dict[str, OperatingPoint] = {}
    for x in _get(d, "operating_points", w):
        v = x["vdd"]
        vdd = {k: float(v) for k in ("soc", "cluster")} if not isinstance(v, dict) else \
            {k: float(val) for k, val in v.items()}
        vdd.setdefault("always_on", float(x.get("vdd_always_on", ref)))
        freq = {k: parse_frequency(val) for k, val in x["freq"].items()}
        if set(freq) != {f.name for f in flls}:
            raise DataError(f"{w}: operating_points.{x['name']}.freq must name every FLL "
                            f"({', '.join(f.name for f in flls)})")
        ops[x["name"]] = OperatingPoint(x["name"], vdd, freq, bool(x.get("abb", False)),
                                        x.get("doc", ""))
    chars = tuple(CharRow(float(x["vdd"]),
                          parse_frequency(x["fmax_no_abb"]) if "fmax_no_abb" in x else None,
                          parse_frequency(x["fmax_abb_min"]) if "fmax_abb_min" in x else None,
                          x.get("source", "")) for x in d.get("characterization", []))
    lo, hi = (float(v) for v in sup["range_v"])
    return PowerSpec(
        reference_vdd=ref, domains=domains, flls=flls, supply_range=(lo, hi),
        slew_v_per_us=float(sup["slew_v_per_us"]), step_v=float(sup["step_v"]),
        power_on_time=parse_time(sup["power_on_time"]), lock_time=parse_time(fll["lock_time"]),
        f_min=parse_frequency(fll["f_min"]), f_max=parse_frequency(fll["f_max"]),
        n_vt=float(tech["n_vt"]), body_factor=bf, dibl=float(tech["dibl"]), families=fams,
        fmax_scale={k: float(v) for k, v in d["delay_model"].get("fmax_scale", {}).items()},
        characterization=chars, operating_points=ops)


@dataclass(frozen=True)
class ActivityClass:
    """A kind of component: its domain, energy per activity kind (pJ at Vref), and the
    per-cycle rate of each compute kind that counts as OCM activity level 1."""

    name: str
    domain: str
    energy_pj: dict[str, float]
    ocm_peak: dict[str, float] = field(default_factory=dict)
    doc: str = ""
    #: a block a platform may leave out (an optional SOC accelerator): its class is listed
    #: in the class energy only once something booked under it
    optional: bool = False


@dataclass(frozen=True)
class PowerTables:
    """power.yaml, parsed."""

    classes: dict[str, ActivityClass]
    bindings: tuple[tuple[str, str], ...]
    clock_tree_pj: dict[str, float]
    clock_dco_pj: dict[str, float]
    leakage_mw: dict[str, float]
    off_fraction: float
    abb_overhead_pj: dict[str, float]
    calibration: dict[str, dict]


def power_tables(spec: PowerSpec, path: Path = POWER_FILE) -> PowerTables:
    """power.yaml at ``path`` (parsed once per path), checked against the chip's ``spec``:
    every class in one of its domains, a clock entry per FLL, leakage per domain."""
    w = str(path)
    tables = _parse_power(path)
    domains = {x.name for x in spec.domains}
    for name, c in tables.classes.items():
        if c.domain not in domains:
            raise DataError(f"{w}: classes.{name}.domain must be one of {sorted(domains)}")
    if set(tables.clock_tree_pj) != {f.name for f in spec.flls}:
        raise DataError(f"{w}: clocks must list every FLL ({', '.join(f.name for f in spec.flls)})")
    if set(tables.leakage_mw) != domains:
        raise DataError(f"{w}: leakage_mw must list every domain ({', '.join(sorted(domains))})")
    return tables


@lru_cache(maxsize=None)
def _parse_power(path: Path) -> PowerTables:
    """Parse power.yaml (cached by path; :func:`power_tables` checks it against a chip)."""
    w = str(path)
    d = _load(path)
    classes = {}
    for name, c in _get(d, "classes", w).items():
        if "domain" not in c:
            raise DataError(f"{w}: classes.{name}: missing key 'domain'")
        e = {k: float(v) for k, v in c["energy_pj"].items()}
        peak = {k: float(v) for k, v in c.get("ocm_peak", {}).items()}
        for k in peak:
            if k not in e:
                raise DataError(f"{w}: classes.{name}.ocm_peak.{k} is not an activity kind")
        classes[name] = ActivityClass(name, c["domain"], e, peak, c.get("doc", ""),
                                      bool(c.get("optional", False)))
    bindings = tuple((b["pattern"], b["class"]) for b in d.get("bindings", []))
    for pat, cls in bindings:
        if cls not in classes:
            raise DataError(f"{w}: bindings: pattern {pat!r} names unknown class {cls!r}")
    clocks = _get(d, "clocks", w)
    leak = {k: float(v) for k, v in _get(d, "leakage_mw", w).items()}
    return PowerTables(classes, bindings,
                       {k: float(v["tree_pj"]) for k, v in clocks.items()},
                       {k: float(v["dco_pj"]) for k, v in clocks.items()},
                       leak, float(d.get("off_fraction", 0.0)),
                       {k: float(v) for k, v in _get(d, "abb_overhead_pj", w).items()},
                       dict(d.get("calibration", {})))


@lru_cache(maxsize=None)
def abb_tables(path: Path = ABB_FILE) -> dict:
    """Parse abb.yaml (cached) into plain values: ``ocm`` and ``controller`` dicts."""
    w = str(path)
    d = _load(path)
    ocm = _get(d, "ocm", w)
    c = _get(d, "controller", w)
    clock_hz = parse_frequency(c["clock"])
    period = round(1e12 / clock_hz)

    def cycles(key: str) -> int:
        return max(1, round(parse_time(c[key]) / period))

    return {
        "monitored_domains": tuple(d.get("monitored_domains", ())),
        "ocm": {"window": float(ocm["window"]), "p_max": float(ocm["p_max"]),
                "idle_level": float(ocm.get("idle_level", 0.0)),
                "light_margin": float(ocm.get("light_margin", 0.0))},
        "controller": {
            "clock_hz": clock_hz, "vbb_step_v": float(c["vbb_step_v"]),
            "max_code": int(c["max_code"]), "raise_codes": int(c["raise_codes"]),
            "relax_codes": int(c["relax_codes"]), "raise_cycles": cycles("raise_time"),
            "relax_cycles": cycles("relax_time"), "quiet_cycles": cycles("quiet_window"),
            "relax_when_idle": bool(c["relax_when_idle"]),
            "relax_load_ratio": float(c.get("relax_load_ratio", 1.0))},
    }
