"""One ``platform.rtl_blocks`` entry read and checked without simulating: its sources
(listed, or from manifests), build options, port map resolved against the RTL's real
ports, bindings and busy rule. ``cosim run`` (cosim/rtl/transactors/portmapped.py) and
``cosim validate`` both go through :func:`block_spec`, so they report the same located
errors (the validate side builds nothing: the ports come from ``verilator --json-only``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: adapter kinds where the RTL is the bus target, so TLM initiators can reach it
TARGET_KINDS = ("apb_slave", "obi_slave", "axi_lite_slave", "axi_slave", "hwpe_periph",
                "tcdm_slave")
#: adapter kinds where the RTL is the initiator, served from a TLM target
MASTER_KINDS = ("tcdm_master", "axi_master", "axi_lite_master", "apb_master", "obi_master")
#: where an initiator port may be bound
MASTER_BINDS = ("soc", "cluster", "cluster.tcdm")
_NAME = re.compile(r"^(soc|cluster)\.[A-Za-z_][A-Za-z0-9_]*$")
#: where an irq_out may be bound: the host, a line of the cluster Event Unit (0..31 or a
#: name of :data:`EU_LINES`), a fabric-controller interrupt line (a name or a number)
_EU_BIND = re.compile(r"^cluster\.event_unit\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+)$")
_FC_BIND = re.compile(r"^fc\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+)$")
_WINDOW = re.compile(r"^\s*(0x[0-9a-fA-F_]+|[0-9_]+)\s*\+\s*(0x[0-9a-fA-F_]+|[0-9_]+)\s*$")
@dataclass
class BlockSpec:
    """What a port-mapped block is, once checked."""
    block: Any                   # cosim.rtl.build.RtlBlock
    portmap: dict                # the port map as plain data (for the child process)
    resolved: Any                # cosim.rtl.portmap.ResolvedPortMap
    period_ps: int
    windows: list[tuple[int, int, str]] = field(default_factory=list)
    masters: dict[str, str] = field(default_factory=dict)     # adapter -> bind target
    irqs: dict[str, Any] = field(default_factory=dict)        # adapter -> "host" | None
    #: adapter -> ("event_unit", line) | ("fc", line name) for irq_out bound into the platform
    lines: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: "soc" (the SOC interconnect) or "cluster" (the cluster peripheral bus)
    bus: str = "soc"
    busy: dict | None = None     # {"port"|"signal": name} or {"write": addr, "until": adapter}


def build_options(sc: Any, key: tuple, spec: dict) -> tuple[list[str], dict, dict]:
    """``verilator_args``, ``defines``, ``parameters`` of an entry, checked against the
    allow-list of :mod:`cosim.rtl.argpolicy` (a ``-D``/``-G`` item joins the defines or
    parameters, which the build passes itself)."""
    from .argpolicy import ArgError, check_args, check_name, check_value
    try:
        args, defines, parameters = check_args(list(spec.get("verilator_args") or []))
    except ArgError as e:
        raise sc.error(f"verilator_args: {e}", key + ("verilator_args", e.index)) from None
    for field_, into in (("defines", defines), ("parameters", parameters)):
        for k, v in (spec.get(field_) or {}).items():
            try:
                what = field_[:-1]
                into[check_name(k, what)] = (None if v is None and field_ == "defines"
                                             else check_value(v, f"{what} {k}"))
            except ValueError as e:
                raise sc.error(str(e), key + (field_, k)) from None
    return args, defines, parameters


def sources(sc: Any, key: tuple, spec: dict) -> tuple[list, list, dict, dict]:
    """Files (manifests first, in order, then ``sources``), include dirs, defines, and
    where each file came from (:class:`~cosim.rtl.sourcepolicy.Origin`, for errors)."""
    from .build import HDL_SUFFIXES
    from .manifest import DEFAULT_TARGETS, ManifestError, read_manifest
    from .sourcepolicy import Origin
    files: list = []
    includes: list = []
    defines: dict = {}
    origins: dict[Path, Origin] = {}
    for i, m in enumerate(spec.get("manifests") or []):
        mkey = key + ("manifests", i)
        path = sc.resolve_file(m["file"], mkey + ("file",))
        try:    # a manifest's names: inside its own folder's tree, or where the scenario's may be
            got = read_manifest(path, m.get("targets") or DEFAULT_TARGETS, m.get("exclude") or (),
                                inside=_inside(sc, path.parent))
        except ManifestError as e:
            raise sc.error(str(e), mkey) from None
        for f in got.files:
            if f not in files:
                files.append(f)
                origins.setdefault(f.resolve(), Origin(mkey, path, got.where.get(f, "")))
        includes += [d for d in got.include_dirs if d not in includes]
        defines.update(got.defines)
    for i, s in enumerate(spec.get("sources") or []):
        f = sc.resolve_file(s, key + ("sources", i))     # inside the path policy
        files.append(f)
        origins.setdefault(f.resolve(), Origin(key + ("sources", i)))
    if not files:
        raise sc.error("no sources: give 'sources' (HDL files) or 'manifests' (Bender.yml, "
                       "src_files.yml)", key)
    for f in files:    # Verilator compiles and links a .cpp, .c, .o, .a or .so it is given
        if f.suffix not in HDL_SUFFIXES:
            raise _located(sc, key, origins, f, f"{f.name}: a source is an HDL file "
                           f"({', '.join(HDL_SUFFIXES)}); Verilator would hand a "
                           f"{f.suffix or 'suffix-less'} file to the C++ compiler or linker")
    for i, s in enumerate(spec.get("include_dirs") or []):
        p = sc.base_dir / s
        if not p.is_dir():
            raise sc.error(f"include directory not found: {s} (looked in {sc.base_dir})",
                           key + ("include_dirs", i))
        includes.append(sc.check_inside(p, key + ("include_dirs", i), name=str(s)))   # the path policy
    return files, includes, defines, origins


def _inside(sc: Any, *bases: Path) -> Callable[[Path], bool]:
    """Whether a path, after symlinks, lies where the scenario's RTL may read: the path
    policy (cosim/scenario/paths.py) from the scenario's folder or one of ``bases`` (the
    folders of the manifests, which name files relative to themselves)."""
    from tlm.files import FileAccessError

    def inside(p: Path) -> bool:
        for base in (sc.base_dir, *bases):
            try:
                sc.policy.confine(p, base)
                return True
            except FileAccessError:
                continue
        return False
    return inside


def _located(sc: Any, key: tuple, origins: dict, path: Any, message: str) -> Exception:
    """A ScenarioError at the key that listed ``path`` (a source or a manifest's entry)."""
    o = origins.get(Path(path).resolve()) if path else None
    if o is None:
        return sc.error(message, key + ("sources",))
    return sc.error(message + o.describe(), o.key)


def _check_rtl(sc: Any, key: tuple, origins: dict, facts: Any,
               scanned: list) -> None:
    """The RTL runs no code and touches no file when simulated, and Verilator read no
    file the include scan did not allow (docs/rtl.md, "What a scenario's RTL can make the
    toolchain do")."""
    from .sourcepolicy import outside_reads
    from .toolchain import setup
    if facts.unsafe:
        u = facts.unsafe[0]
        raise _located(sc, key, origins, u["file"],
                       f"{u['file']}:{u['line']}: {u['what']} is not allowed in the RTL of a "
                       "scenario: it would run code or touch files when the model runs")
    bad = outside_reads(facts.reads, scanned, setup().verilator_root)
    if bad:
        raise sc.error(f"Verilator read {bad[0]}, which no source or checked include folder "
                       "names", key + ("sources",))


def check_blocks(sc: Any) -> None:
    """Every ``platform.rtl_blocks`` entry read and checked (:func:`block_spec`), as
    ``cosim validate`` does and ``cosim run`` does before it creates its output folder: a
    refused block leaves nothing behind. A missing toolchain is a located error too."""
    if not sc.rtl_blocks:
        return
    from .toolchain import ToolchainError, setup
    try:
        setup()
    except ToolchainError as e:
        first = sorted(sc.rtl_blocks)[0]
        raise sc.error(f"RTL block {first} needs the RTL toolchain: {e}",
                       ("platform", "rtl_blocks", first)) from None
    for path, spec in sorted(sc.rtl_blocks.items()):
        block_spec(sc, path, spec)


def block_spec(sc: Any, path: str, spec: dict) -> BlockSpec:
    """Read and check ``platform.rtl_blocks[path]``: every error is a located
    :class:`cosim.scenario.ScenarioError`."""
    from .build import RtlBlock, RtlError
    from .portmap import PortMap, PortMapError, rtl_facts
    from .sourcepolicy import SourcePolicyError, scan_includes
    key = ("platform", "rtl_blocks", path)
    where = f"{sc.file}:{'.'.join(map(str, key))}" if sc.file else ".".join(key)
    if not _NAME.match(path):
        raise sc.error(f"an RTL block added from a port map must be named soc.<name> (it "
                       "joins the SOC interconnect) or cluster.<name> (the cluster peripheral "
                       f"bus), not {path!r}", key)
    top = spec["top"]
    from .argpolicy import IDENT
    if not isinstance(top, str) or not IDENT.match(top):   # it names the built executable
        raise sc.error(f"top {top!r} is not a module name (letters, digits, _)", key + ("top",))
    files, includes, mdefines, origins = sources(sc, key, spec)
    args, defines, parameters = build_options(sc, key, spec)
    try:
        scanned = scan_includes(files, includes, _inside(sc, *{Path(o.manifest).parent for o in
                                                                origins.values() if o.manifest}))
    except SourcePolicyError as e:
        raise _located(sc, key, origins, e.path, f"{e.path}:{e.line}: {e}") from None
    # a define without a value (Bender's `FOO: ~`, a scenario's `FOO: null`) stays None:
    # the build passes it as -DFOO
    block = RtlBlock.make(path.replace(".", "_"), files, top, parameters=parameters,
                          defines={**mdefines, **defines}, includes=includes, build_args=args)
    pm_dict = {"top": top, "clock": spec["clock"], "adapters": spec["adapters"]}
    if spec.get("reset"):
        pm_dict["reset"] = spec["reset"]
    try:
        pm = PortMap.from_dict(pm_dict, where=where)
        facts = rtl_facts(block)
        _check_rtl(sc, key, origins, facts, scanned)
        ports = facts.ports
        resolved = pm.resolve(ports)
    except PortMapError as e:
        raise sc.error(str(e).removeprefix(f"{where}: "), key + ("adapters",)) from None
    except RtlError as e:
        raise _located(sc, key, origins, _first_file(str(e)), f"the RTL of {path}: {e}") from None
    out = BlockSpec(block, pm_dict, resolved, round(pm.period_ns * 1000),
                    bus=path.split(".", 1)[0])
    _bindings(sc, key, resolved, out)
    out.busy = _busy(sc, key, spec.get("busy"), ports, out)
    if not out.windows:
        raise sc.error("the port map has no target adapter bound to an address window, so "
                       "nothing could reach the block", key + ("adapters",))
    _free_windows(sc, key, out.windows, out.bus)
    return out


def _first_file(message: str) -> str | None:
    """The file of the first located diagnostic in a tool's message (None: none)."""
    from .build import diagnostic_path
    return next(filter(None, map(diagnostic_path, message.splitlines())), None)


def cluster_periph_window(mm: Any) -> tuple[int, int] | None:
    """``(base, end)`` of the cluster peripheral bus: the span of the memory map's cluster
    peripherals (the cluster interconnect routes exactly that range to it)."""
    sel = [r for r in mm.regions if r.domain == "cluster" and r.kind == "peripheral"]
    if not sel:
        return None
    return min(r.base for r in sel), max(r.end for r in sel)


def _free_windows(sc: Any, key: tuple, windows: list[tuple[int, int, str]],
                  bus: str = "soc") -> None:
    """No window overlaps a region of the platform's memory map (the interconnect's other
    routes are checked when the block is mapped, in ``run``); a cluster block's windows
    lie inside the cluster peripheral bus's range."""
    from ..platforms import memory_map_of
    mm = memory_map_of(sc)
    if bus == "cluster":
        span = cluster_periph_window(mm)
        for base, size, name in windows:
            if span is None or not (span[0] <= base and base + size <= span[1]):
                where = ("the platform has no cluster peripheral bus" if span is None else
                         f"the cluster peripheral bus spans [0x{span[0]:08x}, 0x{span[1]:08x})")
                raise sc.error(f"adapter {name!r}: window [0x{base:08x}, 0x{base + size:08x}) "
                               f"is not on the cluster peripheral bus ({where}; name the "
                               "block soc.<name> to place it on the SOC interconnect)",
                               key + ("adapters", name, "bind"))
    for base, size, name in windows:
        hit = next((r for r in mm.regions if base < r.end and r.base < base + size), None)
        if hit is not None:
            raise sc.error(f"adapter {name!r}: window [0x{base:08x}, 0x{base + size:08x}) "
                           f"overlaps {hit.name} [0x{hit.base:08x}, 0x{hit.end:08x}) of the "
                           "memory map", key + ("adapters", name, "bind"))


def _bindings(sc: Any, key: tuple, resolved: Any, out: BlockSpec) -> None:
    for name, ra in resolved.adapters.items():
        akey = key + ("adapters", name)
        bind = ra.spec.bind
        if ra.kind in TARGET_KINDS:
            if bind is None:
                raise sc.error(f"adapter {name!r} ({ra.kind}) needs 'bind: BASE+SIZE', the "
                               "address window of the SOC interconnect it answers", akey)
            m = _WINDOW.match(str(bind))
            if not m:
                raise sc.error(f"adapter {name!r}: bind {bind!r} is not BASE+SIZE "
                               "(e.g. 0x1A120000+0x1000)", akey + ("bind",))
            out.windows.append((int(m[1], 0), int(m[2], 0), name))
        elif ra.kind in MASTER_KINDS:
            if bind not in MASTER_BINDS:
                raise sc.error(f"adapter {name!r} ({ra.kind}) is an initiator: bind it to "
                               f"the target that serves it, one of {', '.join(MASTER_BINDS)}"
                               f" (got {bind!r})", akey + ("bind",))
            out.masters[name] = bind
        elif ra.kind == "irq_out":
            out.irqs[name] = _irq_bind(sc, akey, name, bind, out)
        elif ra.kind == "wire_in":
            if bind is not None:
                raise sc.error(f"adapter {name!r} (wire_in): an input wire is driven with "
                               "its 'init' value; binding it to a platform signal is not "
                               "available yet, remove 'bind'", akey + ("bind",))
        else:
            raise sc.error(f"adapter {name!r} ({ra.kind}): a block added from its port map "
                           "can use target ports, initiator ports, irq_out and wire_in, "
                           f"not {ra.kind} yet", akey)


def _irq_bind(sc: Any, akey: tuple, name: str, bind: Any, out: BlockSpec) -> str | None:
    """``host`` | ``cluster.event_unit.<line>`` | ``fc.<line>`` | unbound; the platform
    lines go to ``out.lines``. Returns what ``irqs`` keeps ("host" or None)."""
    if bind is None or bind == "host":
        return bind
    b = str(bind)
    m = _EU_BIND.match(b)
    if m:
        line = _eu_line(m[1])
        if line is None:
            raise sc.error(f"adapter {name!r} (irq_out): {bind!r} names no Event Unit line; "
                           f"give 0..31 or one of {', '.join(EU_LINES)}", akey + ("bind",))
        out.lines[name] = ("event_unit", line)
        return None
    m = _FC_BIND.match(b)
    if m:
        from components.marsellus.facts import IRQ_LINES
        line = m[1]
        names = {str(n): k for k, (n, _) in IRQ_LINES.items()}
        if line.isdigit():
            line = names.get(line, line)
            if line.isdigit():
                raise sc.error(f"adapter {name!r} (irq_out): the fabric controller has no "
                               f"interrupt line {line}; its lines: "
                               + ", ".join(f"{k} ({n})" for k, (n, _) in IRQ_LINES.items()),
                               akey + ("bind",))
        if line not in IRQ_LINES:
            from tlm.params import suggest
            raise sc.error(f"adapter {name!r} (irq_out): the fabric controller has no "
                           f"interrupt line {line!r}{suggest(line, IRQ_LINES)}; its lines: "
                           f"{', '.join(IRQ_LINES)}", akey + ("bind",))
        if sc.firmware is None:
            raise sc.error(f"adapter {name!r} (irq_out): {bind!r} needs the fabric controller, "
                           "which runs only with 'workload.firmware'", akey + ("bind",))
        out.lines[name] = ("fc", line)
        return None
    raise sc.error(f"adapter {name!r} (irq_out): bind it to 'host' (an interrupt the host's "
                   "mmio tasks can wait for), 'cluster.event_unit.<line>' (a line of the "
                   "cluster Event Unit: 0..31 or a name), 'fc.<line>' (an interrupt line "
                   f"of the fabric controller) or leave it unbound, not {bind!r}",
                   akey + ("bind",))


#: named Event Unit lines (a binding may also give the number)
EU_LINES = ("sw0", "sw1", "sw2", "sw3", "sw4", "sw5", "sw6", "sw7", "dma", "dma_irq", "rbe",
            "barrier", "soc")


def _eu_line(text: str) -> int | None:
    from components.cluster.event_unit import EVT_BARRIER, EVT_DMA, EVT_DMA_IRQ, EVT_RBE, EVT_SOC
    named = {**{f"sw{i}": i for i in range(8)}, "dma": EVT_DMA, "dma_irq": EVT_DMA_IRQ,
             "rbe": EVT_RBE, "barrier": EVT_BARRIER, "soc": EVT_SOC}
    if text.isdigit():
        return int(text) if int(text) < 32 else None
    return named.get(text)


def _busy(sc: Any, key: tuple, busy: Any, ports: dict, out: BlockSpec) -> dict | None:
    """``busy: PORT`` | ``{port: PORT}`` | ``{signal: a.b.c}`` (a 1-bit signal inside the
    design, or a list of them: busy while any is 1) | ``{from_write: ADDRESS, until:
    IRQ_ADAPTER}`` (busy from a write to that address until that irq_out adapter pulses)."""
    if busy is None:
        return None
    bkey = key + ("busy",)
    if isinstance(busy, str):
        busy = {"port": busy}
    if "port" in busy:
        bp = ports.get(busy["port"])
        if bp is None or bp.direction != "output" or bp.width != 1:
            raise sc.error(f"busy: {busy['port']!r} must be a 1-bit output of "
                           f"{out.resolved.top}", bkey)
        return {"port": busy["port"]}
    if "signal" in busy:    # checked in the simulator (a wrong path fails the run, named)
        sig = busy["signal"]
        return {"signal": [str(x) for x in sig] if isinstance(sig, list) else str(sig)}
    if "from_write" not in busy or "until" not in busy:
        raise sc.error("busy: give a port ('busy: busy_o'), {signal: a.b.c} or both "
                       "from_write (the trigger register's address) and until (an irq_out "
                       "adapter)", bkey)
    addr = busy["from_write"]
    addr = int(addr, 0) if isinstance(addr, str) else int(addr)
    win = next((w for w in out.windows if w[0] <= addr < w[0] + w[1]), None)
    if win is None:
        raise sc.error(f"busy.from_write: 0x{addr:08x} is in no address window of the block "
                       f"({', '.join(f'0x{b:08x}+0x{s:x}' for b, s, _ in out.windows)})",
                       bkey + ("from_write",))
    until = busy["until"]
    if until not in out.irqs:
        raise sc.error(f"busy.until: {until!r} is not an irq_out adapter of the block "
                       f"(irq_out adapters: {', '.join(out.irqs) or 'none'})", bkey + ("until",))
    return {"write": addr & ~3, "adapter": win[2], "offset": (addr & ~3) - win[0],
            "until": until}
