"""Declarative port maps: which RTL ports form which adapter, and what each binds to.

A port map is plain data (a scenario's YAML section or a dict)::

    top: rbe_top
    clock: {port: clk_i, period_ns: 2.5}
    reset: {port: rst_ni, active_low: true, cycles: 4}
    adapters:
      cfg:  {kind: hwpe_periph, prefix: periph_, bind: cluster.periph}
      tcdm: {kind: tcdm_master, prefix: tcdm_, ports: 9, contiguous: true, bind: cluster.tcdm}
      evt:  {kind: irq_out, port: evt_o, bind: cluster.event_unit.rbe_evt}

Each adapter *kind* declares its signals (roles) with the direction seen from the RTL
and the width as a function of the adapter's parameters. A role's RTL port is found as
``<prefix><role>_i|_o`` (PULP style), ``<prefix><role>``, or given explicitly under
``signals: {role: port}``. :meth:`PortMap.resolve` checks every role against the RTL's
real ports (from Verilator, :func:`rtl_ports`, before anything is simulated): a missing
port, a wrong direction or a width mismatch is a :class:`PortMapError` that names the
adapter, the role, the port and what was expected ("did you mean ..." for typos). So a
third-party block with a standard bus is swapped in with a port map, without Python.
"""
from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from tlm.files import read_text

from .build import RtlBlock, RtlError, RtlSourceError, build_key, cache_root
from .toolchain import setup


class PortMapError(RtlError):
    """A port map that does not fit the RTL (or is malformed)."""


@dataclass(frozen=True)
class Port:
    name: str
    direction: str   # "input" | "output" | "inout" | "?" (unknown, e.g. from cocotb)
    width: int


# ----------------------------------------------------------------------------- kinds
W = Callable[[Mapping[str, Any]], "int | None"]  # width from params; None = any width


def _n(k: int) -> W:
    return lambda p: k * int(p.get("ports", 1))


def _fixed(k: int) -> W:
    return lambda p: k


_ANY: W = lambda p: None  # noqa: E731


@dataclass(frozen=True)
class Role:
    name: str
    direction: str      # from the RTL's point of view: "input" or "output"
    width: W
    optional: bool = False


@dataclass(frozen=True)
class Kind:
    name: str
    doc: str
    roles: tuple[Role, ...]
    params: tuple[str, ...] = ()          # allowed extra keys
    suffix_style: str = "pulp"            # "pulp": role_i/role_o; "plain": role only


def _axil_roles(master: bool, full: bool) -> tuple[Role, ...]:
    # direction of each AXI signal for an RTL *slave* port; flipped for an RTL master
    o, i = ("output", "input") if not master else ("input", "output")
    dw: W = lambda p: int(p.get("data_width", 32))  # noqa: E731
    aw: W = lambda p: int(p.get("addr_width", 32))  # noqa: E731
    sw: W = lambda p: int(p.get("data_width", 32)) // 8  # noqa: E731
    roles = [Role("awaddr", i, aw), Role("awprot", i, _fixed(3), True), Role("awvalid", i, _fixed(1)),
             Role("awready", o, _fixed(1)), Role("wdata", i, dw), Role("wstrb", i, sw),
             Role("wvalid", i, _fixed(1)), Role("wready", o, _fixed(1)),
             Role("bresp", o, _fixed(2), True), Role("bvalid", o, _fixed(1)),
             Role("bready", i, _fixed(1)), Role("araddr", i, aw),
             Role("arprot", i, _fixed(3), True), Role("arvalid", i, _fixed(1)),
             Role("arready", o, _fixed(1)), Role("rdata", o, dw), Role("rresp", o, _fixed(2), True),
             Role("rvalid", o, _fixed(1)), Role("rready", i, _fixed(1))]
    if full:
        roles += [Role(n, i, _ANY, True) for n in ("awid", "awlen", "awsize", "awburst", "arid",
                                                    "arlen", "arsize", "arburst")]
        roles += [Role("wlast", i, _fixed(1)), Role("rlast", o, _fixed(1)),
                  Role("bid", o, _ANY, True), Role("rid", o, _ANY, True)]
    return tuple(roles)


def _register_bus_kinds() -> None:
    """Add the kinds whose adapters live in cosim.rtl.adapters.apb/.obi (``apb_master``,
    ``obi_master``); they need cocotb, so they are registered when a port map is read."""
    try:
        from .adapters import apb, obi
    except ImportError:  # no RTL extra installed: those kinds stay unknown
        return
    apb.register_kinds()
    obi.register_kinds()


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("hwpe_periph", "PULP HWPE peripheral target in the RTL (config registers); "
         "the bridge drives it", (
             Role("req", "input", _fixed(1)), Role("gnt", "output", _fixed(1)),
             Role("add", "input", _fixed(32)), Role("wen", "input", _fixed(1)),
             Role("be", "input", _fixed(4)), Role("data", "input", _fixed(32)),
             Role("id", "input", _ANY, True), Role("r_data", "output", _fixed(32)),
             Role("r_valid", "output", _fixed(1)), Role("r_id", "output", _ANY, True)),
         params=("periph_id",)),
    Kind("tcdm_master", "PULP TCDM/HCI master ports in the RTL (packed, `ports` of them); "
         "the bridge responds from memory", (
             Role("req", "output", _n(1)), Role("gnt", "input", _n(1)),
             Role("add", "output", _n(32)), Role("wen", "output", _n(1)),
             Role("be", "output", _n(4)), Role("data", "output", _n(32)),
             Role("r_data", "input", _n(32)), Role("r_valid", "input", _n(1))),
         params=("ports", "contiguous", "policy")),
    Kind("tcdm_slave", "PULP TCDM slave in the RTL (a memory bank); the bridge drives it", (
        Role("req", "input", _fixed(1)), Role("gnt", "output", _fixed(1)),
        Role("add", "input", _fixed(32)), Role("wen", "input", _fixed(1)),
        Role("be", "input", _fixed(4)), Role("data", "input", _fixed(32)),
        Role("r_data", "output", _fixed(32)), Role("r_valid", "output", _fixed(1)))),
    Kind("axi_lite_slave", "AXI-Lite slave port in the RTL (cocotbext-axi AxiLiteMaster drives it)",
         _axil_roles(False, False), params=("data_width", "addr_width"), suffix_style="plain"),
    Kind("axi_lite_master", "AXI-Lite master port in the RTL (served by cocotbext-axi AxiLiteSlave)",
         _axil_roles(True, False), params=("data_width", "addr_width"), suffix_style="plain"),
    Kind("axi_slave", "AXI4 slave port in the RTL (cocotbext-axi AxiMaster drives it)",
         _axil_roles(False, True), params=("data_width", "addr_width"), suffix_style="plain"),
    Kind("axi_master", "AXI4 master port in the RTL (served by cocotbext-axi AxiSlave)",
         _axil_roles(True, True), params=("data_width", "addr_width"), suffix_style="plain"),
    Kind("apb_slave", "APB slave port in the RTL (cocotbext-apb master drives it)", (
        Role("psel", "input", _fixed(1)), Role("penable", "input", _fixed(1)),
        Role("pwrite", "input", _fixed(1)), Role("paddr", "input", _ANY),
        Role("pwdata", "input", _fixed(32)), Role("pstrb", "input", _fixed(4), True),
        Role("pprot", "input", _fixed(3), True), Role("prdata", "output", _fixed(32)),
        Role("pready", "output", _fixed(1)), Role("pslverr", "output", _fixed(1), True)),
         suffix_style="plain"),
    Kind("obi_slave", "OBI slave port in the RTL (cocotbext-obi master drives it)", (
        Role("req", "input", _fixed(1)), Role("gnt", "output", _fixed(1)),
        Role("addr", "input", _fixed(32)), Role("we", "input", _fixed(1)),
        Role("be", "input", _fixed(4)), Role("wdata", "input", _fixed(32)),
        Role("rvalid", "output", _fixed(1)), Role("rdata", "output", _fixed(32)),
        Role("err", "output", _fixed(1), True)), suffix_style="pulp"),
    Kind("irq_out", "an interrupt/event output (rising edges become events): a 1-bit port, "
         "one bit of a vector (`evt_o[0]`) or the OR of a vector's bits (`any(evt_o)`)",
         (Role("port", "output", _fixed(1)),)),
    Kind("wire_in", "an input wire driven from a TLM signal", (Role("port", "input", _ANY),),
         params=("init",)),
)}

_COMMON_KEYS = ("kind", "prefix", "signals", "bind", "port", "timeout_cycles", "doc")


# ----------------------------------------------------------------------------- map
@dataclass(frozen=True)
class AdapterSpec:
    name: str
    kind: str
    prefix: str = ""
    signals: Mapping[str, str] = field(default_factory=dict)
    bind: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout_cycles: int = 1000


@dataclass(frozen=True)
class ResolvedAdapter:
    spec: AdapterSpec
    ports: Mapping[str, str]   # role -> RTL port name (only roles that exist)
    #: irq_out on a vector: the bit it watches, or "any" (the OR of all bits); None: 1 bit
    select: "int | str | None" = None

    @property
    def kind(self) -> str:
        return self.spec.kind


@dataclass(frozen=True)
class ResolvedPortMap:
    top: str
    clock: str
    period_ns: float
    reset: str | None
    reset_active_low: bool
    reset_cycles: int
    adapters: Mapping[str, ResolvedAdapter]


_IRQ_BIT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_$]*)\s*\[\s*(\d+)\s*\]\s*$")
_IRQ_ANY = re.compile(r"^\s*any\s*\(\s*([A-Za-z_][A-Za-z0-9_$]*)\s*\)\s*$")


def irq_select(expr: str) -> tuple[str, "int | str | None"]:
    """``evt_o`` -> (evt_o, None); ``evt_o[3]`` -> (evt_o, 3); ``any(evt_o)`` -> (evt_o, "any")."""
    m = _IRQ_BIT.match(expr)
    if m:
        return m[1], int(m[2])
    m = _IRQ_ANY.match(expr)
    if m:
        return m[1], "any"
    return expr, None


def _suggest(name: str, options: list[str]) -> str:
    m = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return f"; did you mean {m[0]!r}?" if m else ""


@dataclass(frozen=True)
class PortMap:
    top: str
    clock: str
    period_ns: float = 2.5
    reset: str | None = None
    reset_active_low: bool = True
    reset_cycles: int = 4
    adapters: Mapping[str, AdapterSpec] = field(default_factory=dict)
    where: str = "port map"

    # ---------------------------------------------------------------- parsing
    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "port map") -> "PortMap":
        _register_bus_kinds()

        def err(msg: str) -> PortMapError:
            return PortMapError(f"{where}: {msg}")
        if not isinstance(d, Mapping):
            raise err(f"expected a mapping, got {type(d).__name__}")
        allowed = ("top", "clock", "reset", "adapters")
        for k in d:
            if k not in allowed:
                raise err(f"unknown key {k!r}{_suggest(str(k), list(allowed))} "
                          f"(expected one of {', '.join(allowed)})")
        if "clock" not in d or not isinstance(d["clock"], Mapping) or "port" not in d["clock"]:
            raise err("'clock: {port: NAME, period_ns: P}' is required")
        rst = d.get("reset") or {}
        adapters = {}
        for name, a in (d.get("adapters") or {}).items():
            if not isinstance(a, Mapping) or "kind" not in a:
                raise err(f"adapter {name!r}: a mapping with 'kind' is required")
            kind = KINDS.get(a["kind"])
            if kind is None:
                raise err(f"adapter {name!r}: unknown kind {a['kind']!r}"
                          f"{_suggest(str(a['kind']), list(KINDS))} (known: {', '.join(KINDS)})")
            params = {}
            for k, v in a.items():
                if k in _COMMON_KEYS:
                    continue
                if k not in kind.params:
                    raise err(f"adapter {name!r} ({kind.name}): unknown key {k!r}"
                              f"{_suggest(str(k), list(kind.params) + list(_COMMON_KEYS))}")
                params[k] = v
            signals = dict(a.get("signals") or {})
            if "port" in a:
                signals["port"] = a["port"]
            roles = {r.name for r in kind.roles}
            for r in signals:
                if r not in roles:
                    raise err(f"adapter {name!r} ({kind.name}): no signal role {r!r}"
                              f"{_suggest(r, sorted(roles))} (roles: {', '.join(sorted(roles))})")
            adapters[name] = AdapterSpec(name, kind.name, a.get("prefix", ""), signals,
                                         a.get("bind"), params, int(a.get("timeout_cycles", 1000)))
        return cls(d.get("top", ""), d["clock"]["port"], float(d["clock"].get("period_ns", 2.5)),
                   rst.get("port"), bool(rst.get("active_low", True)), int(rst.get("cycles", 4)),
                   adapters, where)

    # ---------------------------------------------------------------- validation
    def resolve(self, ports: Mapping[str, Port]) -> ResolvedPortMap:
        """Map every role to an RTL port and check direction and width."""
        _register_bus_kinds()
        names = sorted(ports)
        top = self.top or "the RTL top"

        def need(port: str, what: str, direction: str | None, width: int | None) -> Port:
            p = ports.get(port)
            if p is None:
                raise PortMapError(f"{self.where}: {what}: RTL port {port!r} does not exist in "
                                   f"{top}{_suggest(port, names)}")
            if direction and p.direction not in ("?", direction):
                raise PortMapError(f"{self.where}: {what}: RTL port {port!r} is an {p.direction}, "
                                   f"expected an {direction}")
            if width is not None and p.width != width:
                raise PortMapError(f"{self.where}: {what}: RTL port {port!r} is {p.width} bit(s) "
                                   f"wide, expected {width}")
            return p

        need(self.clock, "clock", "input", 1)
        if self.reset:
            need(self.reset, "reset", "input", 1)
        out: dict[str, ResolvedAdapter] = {}
        for name, spec in self.adapters.items():
            kind = KINDS[spec.kind]
            if kind.name == "irq_out" and spec.signals.get("port"):
                out[name] = self._resolve_irq(name, spec, need)
                continue
            mapping: dict[str, str] = {}
            for role in kind.roles:
                what = f"adapter {name!r} ({kind.name}) signal {role.name!r}"
                explicit = spec.signals.get(role.name)
                if explicit:
                    cands = [explicit]
                else:
                    sfx = "_i" if role.direction == "input" else "_o"
                    base = spec.prefix + role.name
                    if kind.suffix_style == "pulp":
                        cands = [base + sfx, base]
                    else:
                        cands = [base, spec.prefix + "_" + role.name if spec.prefix and not
                                 spec.prefix.endswith("_") else base, base + sfx]
                found = next((c for c in cands if c in ports), None)
                if found is None and explicit:
                    need(explicit, what, role.direction, None)  # raises: names the port
                if found is None:
                    if role.optional:
                        continue
                    tried = ", ".join(dict.fromkeys(cands))
                    raise PortMapError(f"{self.where}: {what}: no RTL port {tried} in {top}"
                                       f"{_suggest(cands[0], names)}")
                need(found, what, role.direction, role.width(spec.params))
                mapping[role.name] = found
            if "periph_id" in spec.params and "id" in mapping:
                pid, w = spec.params["periph_id"], ports[mapping["id"]].width
                if isinstance(pid, bool) or not isinstance(pid, int) or not 0 <= pid < 1 << w:
                    raise PortMapError(f"{self.where}: adapter {name!r} ({kind.name}): periph_id "
                                       f"{pid!r} does not fit the {w}-bit port "
                                       f"{mapping['id']!r} (0 .. {(1 << w) - 1})")
            out[name] = ResolvedAdapter(spec, mapping)
        return ResolvedPortMap(self.top, self.clock, self.period_ns, self.reset,
                               self.reset_active_low, self.reset_cycles, out)


    def _resolve_irq(self, name: str, spec: AdapterSpec, need: Callable) -> ResolvedAdapter:
        expr = str(spec.signals["port"])
        base, sel = irq_select(expr)
        what = f"adapter {name!r} (irq_out) signal 'port'"
        if sel is None:
            need(base, what, "output", 1)
        else:
            p = need(base, what, "output", None)
            if isinstance(sel, int) and sel >= p.width:
                raise PortMapError(f"{self.where}: {what}: bit {sel} of RTL port {base!r}, "
                                   f"which is {p.width} bit(s) wide (bits 0 .. {p.width - 1})")
        return ResolvedAdapter(spec, {"port": base}, sel)


# ----------------------------------------------------------------------------- RTL ports
def rtl_ports(block: RtlBlock, *, cache_dir: Path | None = None) -> dict[str, Port]:
    """Top-level ports of ``block`` (names, directions, widths after parameters), read from
    Verilator's JSON AST (``--json-only``; ~50 ms, cached by the block's build key)."""
    block.check_sources()
    tools = setup()
    key = build_key(block, tools)
    root = Path(cache_dir) if cache_dir else cache_root()
    # .w2: widths are the product of all packed dimensions (the outer range before)
    path = root / "ports" / f"{block.name}-{key}.w2.json"
    if path.exists():
        return {n: Port(n, d, w) for n, (d, w) in json.loads(read_text(path, "tool_output")).items()}
    tmp = root / "ports" / f"{block.name}-{key}.d"
    tmp.mkdir(parents=True, exist_ok=True)
    cmd = [str(tools.verilator), "--json-only", "-Wno-fatal", "-Wno-lint", "-Wno-style",
           *block.build_args, "-Mdir", str(tmp), "--top-module", block.toplevel,
           *[f"-G{k}={v}" for k, v in block.parameters.items()],
           *[f"-D{k}={v}" for k, v in block.defines.items()],
           *[f"-I{i}" for i in block.includes], *[str(s) for s in block.sources]]
    res = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    tree = tmp / f"V{block.toplevel}.tree.json"
    if res.returncode != 0 or not tree.exists():
        from .build import RtlBuildError, compiler_message
        raise RtlBuildError(f"reading the ports of {block.name!r} (top {block.toplevel}) failed:\n"
                            f"{compiler_message(res.stdout + res.stderr)}", res.stdout + res.stderr)
    ports = _ports_from_tree(json.loads(read_text(tree, "tool_output")))
    if not ports:
        raise RtlSourceError(f"no ports found for top {block.toplevel!r} in {block.name!r}")
    path.write_text(json.dumps({p.name: [p.direction, p.width] for p in ports.values()}))
    return ports


def _ports_from_tree(tree: dict) -> dict[str, Port]:
    index: dict[str, dict] = {}

    def walk(n: Any) -> None:
        if isinstance(n, dict):
            if "addr" in n:
                index[n["addr"]] = n
            for v in n.values():
                walk(v)
        elif isinstance(n, list):
            for v in n:
                walk(v)
    walk(tree)
    out: dict[str, Port] = {}
    top = tree["modulesp"][0] if tree.get("modulesp") else {}
    for n in top.get("stmtsp", []):
        if n.get("type") == "VAR" and n.get("isPrimaryIO"):
            d = (n.get("direction") or "?").lower()
            out[n["name"]] = Port(n["name"], d, dtype_width(index, n.get("dtypep")))
    return out


#: widths of Verilator's BASICDTYPE keywords that are not one bit wide
_KEYWORD_WIDTH = {"int": 32, "integer": 32, "byte": 8, "shortint": 16, "longint": 64,
                  "time": 64}


def _span(text: str) -> int:
    hi, lo = (int(x) for x in text.strip("[]").split(":"))
    return abs(hi - lo) + 1


def dtype_width(index: Mapping[str, dict], addr: Any, depth: int = 0) -> int:
    """Bits of the Verilator JSON dtype at ``addr``: a packed array is the product of all
    its dimensions times its element, a packed struct the sum of its members (a union the
    widest), a typedef/enum the width of what it names."""
    dt = index.get(addr) if isinstance(addr, str) else None
    if dt is None or depth > 64:
        return 1
    kind = dt.get("type")
    ref = dt.get("refDTypep")
    if not isinstance(ref, str) or ref == addr:
        ref = None
    if kind == "BASICDTYPE":
        if dt.get("range"):
            return _span(dt["range"])
        return _KEYWORD_WIDTH.get(str(dt.get("keyword")), 1)
    if kind == "PACKARRAYDTYPE":
        elem = ref or _child(dt)
        return _span(dt.get("declRange", "[0:0]")) * dtype_width(index, elem, depth + 1)
    if kind in ("STRUCTDTYPE", "UNIONDTYPE"):
        ws = [dtype_width(index, m.get("refDTypep") or _child(m), depth + 1)
              for m in dt.get("membersp") or []]
        return (sum(ws) if kind == "STRUCTDTYPE" else max(ws, default=1)) or 1
    target = ref or (dt.get("dtypep") if dt.get("dtypep") != addr else None) or _child(dt)
    return dtype_width(index, target, depth + 1)


def _child(dt: Mapping[str, Any]) -> str | None:
    kids = dt.get("childDTypep") or []
    return kids[0].get("addr") if kids and isinstance(kids[0], dict) else None


def ports_from_dut(dut: Any) -> dict[str, Port]:
    """Ports seen through cocotb (width only; direction unknown) for in-simulation checks."""
    out = {}
    for h in dut:
        try:
            out[h._name] = Port(h._name, "?", len(h))
        except TypeError:
            continue
    return out
