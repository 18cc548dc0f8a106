"""Scenario checks and the energy summary of a run."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tlm.units import fmt_time

from .host import resolve_address
from .report import CheckResult

if TYPE_CHECKING:
    from .runner import Run


def energy_summary(plat: Any, sim_time: int) -> dict[str, Any] | None:
    """Energy per domain and per component (J), average power, the operating point."""
    pmu = getattr(plat, "pmu", None)
    if pmu is None:
        return None
    stats = plat.sim.stats.as_dict()
    per_domain = {d: stats.get(f"{pmu.path}.{d}", {}).get("energy_pj", 0.0) * 1e-12 for d in pmu.domains}
    per_component = {p: v * 1e-12 for p, v in stats.get(f"{pmu.energy.path}.components", {}).items()}
    total = sum(per_domain.values())
    return {"per_domain_j": per_domain, "per_component_j": per_component, "total_j": total,
            "average_power_w": total / (sim_time * 1e-12) if sim_time else 0.0,
            "operating_point": pmu.operating_point, "abb": bool(pmu.abb.enabled),
            "timing_errors": [str(e) for e in getattr(pmu, "timing_errors", [])]}


def _bytes_at(run: "Run", spec: Any, size: int, where: str, key: tuple) -> bytes:
    try:
        space, addr = resolve_address(spec, where)
        return run.platform.dump(space, addr, size)
    except ValueError as e:  # unknown region, or a range outside every memory
        raise run.sc.error(str(e), key) from None


def _first_diff(a: bytes, b: bytes) -> str:
    x, y = np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)
    n = min(x.size, y.size)
    idx = np.flatnonzero(x[:n] != y[:n])
    if idx.size == 0:
        return f"sizes differ ({x.size} vs {y.size} bytes)"
    i = int(idx[0])
    return (f"{idx.size} byte(s) differ; first at +0x{i:x}: expected 0x{y[i]:02x}, got 0x{x[i]:02x}")


def _memory(run: "Run", c: dict, i: int, name: str | None) -> CheckResult:
    sc = run.sc
    where = f"checks[{i}].memory"
    key = ("checks", i, "memory")
    name = name or c.get("name") or f"memory {c.get('at', c.get('golden'))}"
    if "golden" not in c and "at" not in c:
        raise sc.error("give 'at' (the address to check)", key)
    if "golden" in c:
        key = c["golden"]
        if key not in run.goldens:
            from tlm.params import suggest
            raise sc.error(f"no golden result named {key!r}{suggest(key, run.goldens)}",
                           ("checks", i, "memory", "golden"))
        addr, want = run.goldens[key]
        got = run.platform.dump("soc", addr, len(want))
    elif "equals_file" in c:
        path = sc.resolve_file(c["equals_file"], ("checks", i, "memory", "equals_file"))
        want = np.load(path).tobytes() if path.suffix == ".npy" else path.read_bytes()
        got = _bytes_at(run, c["at"], c.get("size", len(want)), where, key + ("at",))
    elif "equals_memory" in c:
        if "size" not in c:
            raise sc.error("equals_memory needs a size", ("checks", i, "memory"))
        want = _bytes_at(run, c["equals_memory"], c["size"], where, key + ("equals_memory",))
        got = _bytes_at(run, c["at"], c["size"], where, key + ("at",))
    else:
        raise sc.error("give golden, equals_file or equals_memory", ("checks", i, "memory"))
    ok = got == want
    return CheckResult(name, ok, f"{len(want)} bytes identical" if ok else _first_diff(got, want))


def _stat(run: "Run", c: dict, i: int, name: str | None) -> CheckResult:
    stats = run.sim.stats.as_dict()
    path, key = c["path"], c["name"]
    name = name or f"{path}.{key}"
    if path not in stats or key not in stats[path]:
        from tlm.params import suggest
        if path not in stats:
            raise run.sc.error(f"no statistics for {path!r}{suggest(path, stats)}", ("checks", i, "stat", "path"))
        raise run.sc.error(f"{path} has no statistic {key!r}{suggest(key, stats[path])}",
                           ("checks", i, "stat", "name"))
    v = stats[path][key]
    ok = True
    if "min" in c and not v >= c["min"]:
        ok = False
    if "max" in c and not v <= c["max"]:
        ok = False
    if "equals" in c and v != c["equals"]:
        ok = False
    bounds = ", ".join(f"{k} {c[k]}" for k in ("min", "max", "equals") if k in c)
    return CheckResult(name, ok, f"{v} ({bounds})")


def evaluate(run: "Run", sim_time: int) -> list[CheckResult]:
    """The scenario's checks, plus implicit ones: tasks succeeded, firmware did not fault,
    a deployed network's every layer equals the numpy reference."""
    out: list[CheckResult] = []
    host, plat = run.host, run.platform
    if host is not None:
        bad = [r for r in host.records.values() if r.error]
        unfinished = [r.id for r in host.records.values() if r.end is None]
        detail = (f"{len(host.records)} tasks finished" if not bad and not unfinished else
                  "; ".join([f"{r.id}: {r.error}" for r in bad[:5]] +
                            ([f"unfinished: {', '.join(unfinished[:5])}"] if unfinished else [])))
        out.append(CheckResult("tasks", not bad and not unfinished, detail))
    fc = getattr(plat, "fc", None)
    if fc is not None:
        fault = fc.fault
        out.append(CheckResult("firmware", fault is None and fc.exit_code is not None,
                               fault.message() if fault is not None else
                               (f"exited with code {fc.exit_code} at {fmt_time(fc.exit_time)}"
                                if fc.exit_code is not None else "did not exit")))
    if run.deployment is not None:
        dep = run.deployment
        wrong = []
        for name, (addr, want) in dep.goldens.items():
            got = plat.dump("soc", addr, len(want))
            if got != want:
                wrong.append(f"{name} ({_first_diff(got, want)})")
        out.append(CheckResult("network == numpy reference", not wrong,
                               f"{len(dep.goldens)} tensors identical" if not wrong else
                               f"first wrong: {wrong[0]}" + (f" (+{len(wrong) - 1} more)" if len(wrong) > 1 else "")))
    for i, c in enumerate(run.sc.checks):
        if "memory" in c:
            out.append(_memory(run, c["memory"], i, c.get("name")))
        if "stat" in c:
            out.append(_stat(run, c["stat"], i, c.get("name")))
        if c.get("no_tlm_errors"):
            n = len(run.sim.errors)
            out.append(CheckResult("no TLM errors", n == 0, "none" if n == 0 else
                                   f"{n}; first: {run.sim.errors[0]}"))
        if "deadline" in c:
            ends = [r.end for r in host.records.values() if r.end is not None] if host else []
            if fc is not None and fc.exit_time is not None:
                ends.append(fc.exit_time)
            last = max(ends, default=sim_time)
            unfinished = host is not None and any(r.end is None for r in host.records.values())
            out.append(CheckResult(f"deadline {fmt_time(c['deadline'])}",
                                   last <= c["deadline"] and not unfinished,
                                   "work did not finish" if unfinished else
                                   f"work finished at {fmt_time(last)}"))
        if "firmware_exit" in c:
            code = fc.exit_code if fc is not None else None
            out.append(CheckResult(f"firmware exit code {c['firmware_exit']}",
                                   code == c["firmware_exit"], f"exit code {code}"))
        if "stdout_contains" in c:
            text = "\n".join(ln.text for ln in plat.stdout.lines)
            out.append(CheckResult(f"stdout contains {c['stdout_contains']!r}",
                                   c["stdout_contains"] in text, f"{len(plat.stdout.lines)} line(s)"))
    return out
