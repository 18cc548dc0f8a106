"""Scenario checks and the energy summary of a run."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tlm.params import ParameterError
from tlm.units import fmt_time

from .host import resolve_address
from .report import CheckResult

if TYPE_CHECKING:
    from .outcome import Outcome
    from .scenario import Scenario


def energy_summary(out: "Outcome") -> dict[str, Any] | None:
    """Energy per domain, per component, per power class and (for a deployed network) per
    layer (J), average power, the operating point (with any departure from it) and the
    conditions (clocks, supplies, body bias) at the start and the end of the run."""
    pmu = out.pmu
    if pmu is None:
        return None
    stats, sim_time = out.stats, out.sim_time
    per_domain = {d: stats.get(f"{pmu['path']}.{d}", {}).get("energy_pj", 0.0) * 1e-12
                  for d in pmu["domains"]}
    per_component = {p: v * 1e-12 for p, v in stats.get(f"{pmu['energy_path']}.components", {}).items()}
    # activity energy per kind of block (cores, RBE, TCDM, L2, DMA, uDMA, HyperRAM, ...)
    per_class = {c: v * 1e-12 for c, v in stats.get(f"{pmu['energy_path']}.classes", {}).items()}
    total = sum(per_domain.values())
    out_d = {"per_domain_j": per_domain, "per_component_j": per_component,
             "per_class_j": per_class, "total_j": total,
             "average_power_w": total / (sim_time * 1e-12) if sim_time else 0.0,
             "operating_point": pmu["operating_point"], "abb": pmu["abb"],
             "timing_errors": pmu["timing_errors"], "conditions": pmu.get("conditions")}
    layers = layer_energy(out)
    if layers:
        out_d["per_layer_j"] = layers
    return out_d


def layer_energy(out: "Outcome") -> dict[str, float]:
    """Chip energy (J) over each layer's span of a deployed network (its L2->L1 moves and
    compute, as the layer table's span; whatever ran then is counted: the next layer's
    weight prefetch too), from the power samples; layers in time order."""
    samples = (out.pmu or {}).get("samples") or []
    spans: dict[str, tuple[int, int]] = {}
    for r in (out.records or {}).values():
        if not r.layer or r.start is None or r.end is None or r.category == "l3_l2":
            continue
        a, b = spans.get(r.layer, (r.start, r.end))
        spans[r.layer] = (min(a, r.start), max(b, r.end))
    if not samples or not spans:
        return {}
    result = {}
    for layer, (a, b) in sorted(spans.items(), key=lambda kv: kv[1]):
        e = 0.0
        for sm in samples:
            t0, t1 = sm["time"], sm["time"] + sm["duration"]
            if t1 > a and t0 < b:
                e += sum(sm["power_mw"].values()) * (min(b, t1) - max(a, t0)) * 1e-15
        result[layer] = e
    return result


def _where(sc: "Scenario", spec: Any, i: int, key: tuple) -> tuple[str, int]:
    try:
        from .platforms import memory_map_of
        return resolve_address(spec, f"checks[{i}].memory", memory_map_of(sc))
    except ValueError as e:
        raise sc.error(str(e), key) from None


def _want_file(sc: "Scenario", c: dict, i: int) -> bytes:
    return sc.read_data(c["equals_file"], ("checks", i, "memory", "equals_file"))


def _memory_regions(sc: "Scenario", c: dict, i: int, goldens: dict) -> list[tuple[str, int, int, tuple]]:
    """(space, address, size, scenario key) of what memory check ``i`` reads: first the
    region under test, then (equals_memory) the reference region."""
    key = ("checks", i, "memory")
    if "golden" in c:
        if c["golden"] not in goldens:
            from tlm.params import suggest
            raise sc.error(f"no golden result named {c['golden']!r}{suggest(c['golden'], goldens)}",
                           key + ("golden",))
        addr, want = goldens[c["golden"]]
        return [("soc", addr, len(want), key + ("golden",))]
    if "at" not in c:
        raise sc.error("give 'at' (the address to check)", key)
    if "equals_file" in c:
        size = c.get("size", len(_want_file(sc, c, i)))
        return [(*_where(sc, c["at"], i, key + ("at",)), size, key + ("at",))]
    if "equals_memory" in c:
        if "size" not in c:
            raise sc.error("equals_memory needs a size", key)
        return [(*_where(sc, c["at"], i, key + ("at",)), c["size"], key + ("at",)),
                (*_where(sc, c["equals_memory"], i, key + ("equals_memory",)), c["size"],
                 key + ("equals_memory",))]
    raise sc.error("give golden, equals_file or equals_memory", key)


def regions_needed(sc: "Scenario", goldens: dict, deployment: Any = None
                   ) -> list[tuple[str, int, int]]:
    """Every memory region the checks of ``sc`` read (the network ``deployment``'s goldens
    included); a check with a bad specification contributes nothing here (evaluate
    reports it)."""
    out = []
    if deployment is not None:
        out += [("soc", addr, len(want)) for addr, want in deployment.goldens.values()]
    for i, c in enumerate(sc.checks):
        if "memory" in c:
            try:
                out += [r[:3] for r in _memory_regions(sc, c["memory"], i, goldens)]
            except Exception:  # noqa: BLE001 - ScenarioError/file errors: evaluate reports them
                continue
    return out


def _read(sc: "Scenario", out: "Outcome", space: str, addr: int, size: int, key: tuple) -> bytes:
    try:
        return out.memory(space, addr, size)
    except (ValueError, ParameterError) as e:  # a range outside every memory (platforms: ParameterError)
        raise sc.error(str(e), key) from None


def _first_diff(a: bytes, b: bytes) -> str:
    x, y = np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)
    n = min(x.size, y.size)
    idx = np.flatnonzero(x[:n] != y[:n])
    if idx.size == 0:
        return f"sizes differ ({x.size} vs {y.size} bytes)"
    i = int(idx[0])
    return (f"{idx.size} byte(s) differ; first at +0x{i:x}: expected 0x{y[i]:02x}, got 0x{x[i]:02x}")


def _memory(sc: "Scenario", out: "Outcome", goldens: dict, c: dict, i: int,
            name: str | None) -> CheckResult:
    name = name or c.get("name") or f"memory {c.get('at', c.get('golden'))}"
    regions = _memory_regions(sc, c, i, goldens)
    got = _read(sc, out, *regions[0])
    if "golden" in c:
        want = goldens[c["golden"]][1]
    elif "equals_file" in c:
        want = _want_file(sc, c, i)
    else:
        want = _read(sc, out, *regions[1])
    ok = got == want
    return CheckResult(name, ok, f"{len(want)} bytes identical" if ok else _first_diff(got, want))


def _stat(sc: "Scenario", stats: dict, c: dict, i: int, name: str | None) -> CheckResult:
    path, key = c["path"], c["name"]
    name = name or f"{path}.{key}"
    if path not in stats or key not in stats[path]:
        from tlm.params import suggest
        if path not in stats:
            raise sc.error(f"no statistics for {path!r}{suggest(path, stats)}", ("checks", i, "stat", "path"))
        raise sc.error(f"{path} has no statistic {key!r}{suggest(key, stats[path])}",
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


def evaluate(sc: "Scenario", out: "Outcome", goldens: dict, deployment: Any = None) -> list[CheckResult]:
    """The scenario's checks, plus implicit ones: tasks succeeded, firmware did not fault,
    a deployed network's every layer equals the numpy reference."""
    res: list[CheckResult] = []
    records, fw = out.records, out.firmware
    if records is not None:
        bad = [r for r in records.values() if r.error]
        unfinished = [r.id for r in records.values() if r.end is None]
        detail = (f"{len(records)} tasks finished" if not bad and not unfinished else
                  "; ".join([f"{r.id}: {r.error}" for r in bad[:5]] +
                            ([f"unfinished: {', '.join(unfinished[:5])}"] if unfinished else [])))
        res.append(CheckResult("tasks", not bad and not unfinished, detail))
    if fw is not None:
        res.append(CheckResult("firmware", fw["fault"] is None and fw["exit_code"] is not None,
                               fw["fault"] if fw["fault"] is not None else
                               (f"exited with code {fw['exit_code']} at {fmt_time(fw['exit_time'])}"
                                if fw["exit_code"] is not None else "did not exit")))
    if deployment is not None:
        wrong = []
        for name, (addr, want) in deployment.goldens.items():
            got = out.memory("soc", addr, len(want))
            if got != want:
                wrong.append(f"{name} ({_first_diff(got, want)})")
        res.append(CheckResult("network == numpy reference", not wrong,
                               f"{len(deployment.goldens)} tensors identical" if not wrong else
                               f"first wrong: {wrong[0]}" + (f" (+{len(wrong) - 1} more)" if len(wrong) > 1 else "")))
    onnx = getattr(deployment, "onnx", None)
    if onnx and onnx.get("goldens"):
        res.append(_onnxruntime(out, onnx))
    if onnx and onnx.get("float"):
        res.append(_onnxruntime_float(out, onnx["float"]))
    for i, c in enumerate(sc.checks):
        if "memory" in c:
            res.append(_memory(sc, out, goldens, c["memory"], i, c.get("name")))
        if "stat" in c:
            res.append(_stat(sc, out.stats, c["stat"], i, c.get("name")))
        if c.get("no_tlm_errors"):
            n = len(out.errors)
            res.append(CheckResult("no TLM errors", n == 0, "none" if n == 0 else
                                   f"{n}; first: {out.errors[0]}"))
        if "deadline" in c:
            ends = [r.end for r in records.values() if r.end is not None] if records else []
            if fw is not None and fw["exit_time"] is not None:
                ends.append(fw["exit_time"])
            last = max(ends, default=out.sim_time)
            unfinished = records is not None and any(r.end is None for r in records.values())
            res.append(CheckResult(f"deadline {fmt_time(c['deadline'])}",
                                   last <= c["deadline"] and not unfinished,
                                   "work did not finish" if unfinished else
                                   f"work finished at {fmt_time(last)}"))
        if "firmware_exit" in c:
            code = fw["exit_code"] if fw is not None else None
            res.append(CheckResult(f"firmware exit code {c['firmware_exit']}",
                                   code == c["firmware_exit"], f"exit code {code}"))
        if "stdout_contains" in c:
            text = "\n".join(out.stdout)
            res.append(CheckResult(f"stdout contains {c['stdout_contains']!r}",
                                   c["stdout_contains"] in text, f"{len(out.stdout)} line(s)"))
    return res


def _onnxruntime(out: "Outcome", onnx: dict) -> CheckResult:
    """An imported ONNX model: every quantised tensor in memory equals onnxruntime's, bit for
    bit (docs/onnx.md: the requantisation mapping makes this exact), or, with ``lsb`` set,
    differs from it by at most that many int8 codes (a target whose arithmetic is not exact)."""
    if onnx.get("lsb") is not None:
        return _onnxruntime_lsb(out, onnx)
    wrong = []
    for name, (addr, want) in onnx["goldens"].items():
        got = out.memory("soc", addr, len(want))
        if got != want:
            wrong.append(f"{name} ({_first_diff(got, want)})")
    n = len(onnx["goldens"])
    hint = "" if onnx.get("proven", True) else "; the model's scales are outside the provably exact form (docs/onnx.md)"
    return CheckResult("network == onnxruntime (bit for bit)", not wrong,
                       f"{n} tensors identical" if not wrong else
                       f"first wrong: {wrong[0]}" + (f" (+{len(wrong) - 1} more)" if len(wrong) > 1 else "") + hint)


def _onnxruntime_lsb(out: "Outcome", onnx: dict) -> CheckResult:
    """Every quantised tensor within ``onnx['lsb']`` int8 codes of onnxruntime's."""
    k = int(onnx["lsb"])
    worst, where, same = 0, "", 0
    for name, (addr, want) in onnx["goldens"].items():
        got = np.frombuffer(out.memory("soc", addr, len(want)), np.int8).astype(np.int64)
        d = int(np.abs(got - np.frombuffer(want, np.int8)).max()) if want else 0
        same += d == 0
        if d > worst:
            worst, where = d, name
    n = len(onnx["goldens"])
    what = onnx.get("lsb_reference", "onnxruntime")
    return CheckResult(f"network ~ {what} (every tensor within {k} LSB)", worst <= k,
                       f"{same}/{n} tensors identical; largest difference {worst} LSB"
                       + (f" ({where})" if where else ""))


def _onnxruntime_float(out: "Outcome", f: dict) -> CheckResult:
    """A float model (quantised on import): the dequantised output in memory against
    onnxruntime's float output, within ``tolerance`` x its largest magnitude."""
    if f.get("dtype") == "bf16":      # a bf16 output: the top half of a float32
        raw = np.frombuffer(out.memory("soc", f["addr"], 2 * f["size"]), "<u2").astype(np.uint32) << 16
        got = raw.view(np.float32).astype(np.float64)
    else:
        got = np.frombuffer(out.memory("soc", f["addr"], f["size"]), np.int8).astype(np.float64)
    y = (got - f["zp"]) * f["scale"]
    ref = np.asarray(f["reference"], np.float64)
    top = float(np.abs(ref).max()) or 1.0
    err = float(np.abs(y - ref).max()) / top if y.size == ref.size else float("inf")
    return CheckResult(f"network ~ onnxruntime float (max error <= {f['tolerance']:.0%} of max |y|)",
                       err <= f["tolerance"], f"max error {err:.1%} of max |y| = {top:.4g}")
