"""Partitions: which process simulates which component, and the rules a cut must obey.

A *partition map* is a list of groups of component paths (CLI: ``soc,hyperram|cluster``).
Every process builds the whole platform with the same deterministic builder and then
*activates* only its own group (see :func:`activate`). A module belongs to the partition
of the longest listed path that is a prefix of its own path at a dot boundary, so
``soc`` owns ``soc.l2``; listing ``soc.l2`` elsewhere moves just that sub-tree.

Rules (checked by :func:`plan`, before any process starts):

* every listed path names an existing, non-link module; none is listed twice;
* every component is in exactly one partition. Components nobody listed are an error,
  unless a group contains ``*``, which takes every component not listed elsewhere;
* a socket binding (zero latency: a direct call) never crosses partitions. Sockets owned by
  a :class:`tlm.Link` belong to the side they serve: a transport's ``target_socket`` to the
  initiator side, its ``initiator_socket`` to the target side;
* every initial process belongs to a partitioned component (its name starts with the path);
* links whose sides fall in different partitions are *cut*; the lookahead of the run is
  the smallest ``min_latency`` among them.

Contract for platform builders: a builder is an importable ``"package.module:function"``
taking ``(sim, config)``; it must be deterministic (same modules, same names, same link
order in every process) and must not schedule activity while building: components spawn
processes (which start at elaboration), never ``schedule``/``notify``/``write`` at
construction. Components interact only through socket bindings and links (no Python
objects -- events, clocks, lists -- shared between components in different partitions).
"""
from __future__ import annotations

import difflib
import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from tlm import ElaborationError, InitiatorSocket, Link, Simulator

__all__ = ["PartitionError", "Assignment", "PartitionPlan", "parse_partition", "normalize_partition",
           "load_builder", "allowed_builders", "check_builder_allowed", "build_platform", "build", "collect",
           "plan", "auto_partition", "units", "activate"]

REST = "*"


class PartitionError(ElaborationError):
    """A partition map that breaks a rule; raised before anything runs."""

    def __init__(self, message: str):
        super().__init__(message, None, None)


# ----- parsing -------------------------------------------------------------------------------
def parse_partition(text: str) -> list[list[str]]:
    """``"soc,hyperram|cluster"`` -> ``[["soc", "hyperram"], ["cluster"]]``."""
    if not isinstance(text, str) or not text.strip():
        raise PartitionError("empty partition: expected groups of component paths like "
                             "'soc,hyperram|cluster'")
    groups = []
    for i, part in enumerate(text.split("|")):
        names = [n.strip() for n in part.split(",")]
        if not part.strip() or any(not n for n in names):
            raise PartitionError(f"partition {text!r}: group {i} has an empty component name "
                                 "(groups are separated by '|', components by ',')")
        groups.append(names)
    return groups


def normalize_partition(obj: Any) -> list[list[str]]:
    """Accept the CLI string or a scenario's list of lists (or list of comma strings)."""
    if isinstance(obj, str):
        return parse_partition(obj)
    if isinstance(obj, (list, tuple)) and obj:
        groups = []
        for i, g in enumerate(obj):
            if isinstance(g, str):
                g = [n.strip() for n in g.split(",")]
            if not isinstance(g, (list, tuple)) or not g or not all(isinstance(n, str) and n for n in g):
                raise PartitionError(f"partition group {i} must be a non-empty list of component "
                                     f"paths, got {g!r}")
            groups.append([str(n) for n in g])
        return groups
    raise PartitionError(f"a partition is a string like 'soc|cluster' or a list of groups, got {obj!r}")


# ----- building -------------------------------------------------------------------------------
#: the builders a worker may import without any registration: the scenario builder
BUILTIN_BUILDERS = ("cosim.partitioned:build_worker",)
#: Python entry-point group through which installed packages register their builders
#: (``[project.entry-points."tlm_cosim.builders"] name = "pkg.mod:function"``)
BUILDER_GROUP = "tlm_cosim.builders"
#: environment variable listing more allowed builder modules (or ``module:function``
#: specs), separated by commas: set by the local user only
BUILDERS_ENV = "TLM_COSIM_BUILDERS"


def allowed_builders() -> list[str]:
    """What a worker may build from: the built-in builder, every entry point of the
    :data:`BUILDER_GROUP` group, and the modules or specs listed in ``$TLM_COSIM_BUILDERS``."""
    from importlib.metadata import entry_points
    allowed = list(BUILTIN_BUILDERS)
    allowed += sorted({ep.value.replace(" ", "") for ep in entry_points(group=BUILDER_GROUP)})
    extra = os.environ.get(BUILDERS_ENV, "")
    allowed += [x.strip() for x in extra.split(",") if x.strip()]
    return allowed


def check_builder_allowed(spec: str) -> None:
    """Raise :class:`PartitionError` unless ``spec`` (``"pkg.mod:function"``) is in
    :func:`allowed_builders` (an entry ``pkg.mod`` allows every function of that module).
    A worker imports what its coordinator names: this keeps that to known code."""
    allowed = allowed_builders()
    module = str(spec).partition(":")[0]
    if spec in allowed or (module and module in allowed):
        return
    raise PartitionError(
        f"builder {spec!r} is not allowed: a distributed worker imports only "
        f"{', '.join(BUILTIN_BUILDERS)}, the entry points of group {BUILDER_GROUP!r} and the "
        f"modules listed in ${BUILDERS_ENV} (docs/distributed.md, 'Builders a worker accepts')")


def load_builder(spec: str | Callable) -> Callable[[Simulator, dict], Any]:
    """Resolve ``"package.module:function"`` (or pass a callable through)."""
    if callable(spec):
        return spec
    mod, sep, fn = str(spec).partition(":")
    if not sep or not mod or not fn:
        raise PartitionError(f"builder {spec!r}: expected 'package.module:function'")
    try:
        obj = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise PartitionError(f"builder {spec!r} cannot be loaded: {e}") from None
    if not callable(obj):
        raise PartitionError(f"builder {spec!r} is not callable")
    return obj


def builder_name(spec: str | Callable) -> str:
    if isinstance(spec, str):
        return spec
    return f"{spec.__module__}:{spec.__qualname__}"


def build_platform(spec: str | Callable, config: dict) -> Simulator:
    """A fresh simulator (seeded from ``config['seed']``) with the platform built in it."""
    return build(spec, config)[0]


def build(spec: str | Callable, config: dict) -> tuple[Simulator, Any]:
    """(simulator, what the builder returned). A builder may return an object with
    ``collect(owns) -> dict`` (plain data): each process calls it at the end with a
    predicate on top-level component names saying which ones it simulated, and the run's
    result carries the parts (``collected``, one per process) -- e.g. the contents of the
    memories a scenario checks, which only their owner holds."""
    sim = Simulator(seed=int(config.get("seed", 0)))
    built = load_builder(spec)(sim, config)
    return sim, built


def collect(built: Any, owns: Callable[[str], bool]) -> dict:
    fn = getattr(built, "collect", None)
    return fn(owns) if callable(fn) else {}


# ----- ownership ------------------------------------------------------------------------------
class Assignment:
    """Maps paths to partition indices by longest listed prefix at a dot boundary."""

    def __init__(self, groups: Sequence[Sequence[str]]):
        self.groups = [list(g) for g in groups]
        self._index = {p: i for i, g in enumerate(self.groups) for p in g}

    def owner(self, path: str) -> int | None:
        idx = self._index
        while True:
            i = idx.get(path)
            if i is not None:
                return i
            cut = path.rfind(".")
            if cut < 0:
                return None
            path = path[:cut]

    def owns(self, index: int, path: str) -> bool:
        return self.owner(path) == index


def _link_of(sim: Simulator, path: str) -> Link | None:
    """The link that ``path`` is, or is inside of."""
    while True:
        m = sim.modules.get(path)
        if isinstance(m, Link):
            return m
        cut = path.rfind(".")
        if cut < 0:
            return None
        path = path[:cut]


def _link_socket_sides(sim: Simulator) -> dict[int, tuple[Link, str]]:
    """id(socket) -> (link, side it serves) for every socket a link's transport owns."""
    out: dict[int, tuple[Link, str]] = {}
    for link in sim.links:
        for ch in link.channels:
            tgt = getattr(ch, "target_socket", None)
            ini = getattr(ch, "initiator_socket", None)
            if tgt is not None:
                out[id(tgt)] = (link, ch.initiator_side)
            if ini is not None:
                out[id(ini)] = (link, ch.target_side)
    return out


def socket_component(sim: Simulator, sock: Any, link_sides: dict | None = None) -> str:
    """The component path a socket belongs to (a link's sockets: the side they serve)."""
    link_sides = _link_socket_sides(sim) if link_sides is None else link_sides
    hit = link_sides.get(id(sock))
    if hit is not None:
        link, side = hit
        return link.side_of[side]
    if _link_of(sim, sock.owner.path) is not None:
        raise PartitionError(f"socket {sock.path} belongs to link {_link_of(sim, sock.owner.path).path} "
                             "but to none of its transports; its side is unknown")
    return sock.owner.path


# ----- plan ------------------------------------------------------------------------------------
@dataclass
class PartitionPlan:
    """A checked partition of one platform."""

    groups: list[list[str]]
    lookahead: int | None                   # ps; None when no link is cut
    cut_links: list[str] = field(default_factory=list)
    link_paths: list[str] = field(default_factory=list)  # every link, in build order

    @property
    def processes(self) -> int:
        return len(self.groups)

    def assignment(self) -> Assignment:
        return Assignment(self.groups)

    def as_dict(self) -> dict:
        return {"groups": self.groups, "lookahead": self.lookahead, "cut_links": self.cut_links}


def _top_uncovered(sim: Simulator, asg: Assignment, listed: Iterable[str]) -> list[str]:
    """Modules in no partition that are not containers of listed paths (topmost only)."""
    listed = list(listed)
    out = []
    for path, m in sim.modules.items():
        if isinstance(m, Link) or _link_of(sim, path) is not None or asg.owner(path) is not None:
            continue
        if any(lp.startswith(path + ".") for lp in listed):
            continue  # a container of partitioned components
        parent = path.rpartition(".")[0]
        if parent and asg.owner(parent) is None and not any(lp.startswith(parent + ".") for lp in listed):
            continue  # its parent is reported instead
        out.append(path)
    return sorted(out)


def _resolve_rest(sim: Simulator, groups: list[list[str]]) -> list[list[str]]:
    rest = [i for i, g in enumerate(groups) if REST in g]
    if len(rest) > 1:
        raise PartitionError(f"'*' (every component not listed elsewhere) may appear in one group "
                             f"only; it is in groups {rest}")
    if not rest:
        return groups
    explicit = [[p for p in g if p != REST] for g in groups]
    left = _top_uncovered(sim, Assignment(explicit), [p for g in explicit for p in g])
    explicit[rest[0]] += left
    if not explicit[rest[0]]:
        raise PartitionError("the '*' group would be empty: every component is already listed")
    return explicit


def plan(sim: Simulator, groups: Any) -> PartitionPlan:
    """Check ``groups`` against the built platform ``sim``; raise :class:`PartitionError`
    naming the first class of problem found (all instances of it)."""
    groups = _resolve_rest(sim, normalize_partition(groups))
    known = sim.modules
    seen: dict[str, int] = {}
    for i, g in enumerate(groups):
        for p in g:
            if p not in known:
                close = difflib.get_close_matches(p, list(known), n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                tops = sorted(q for q, m in known.items() if "." not in q and not isinstance(m, Link))
                raise PartitionError(f"partition group {i} names unknown component {p!r}{hint} "
                                     f"(top-level components: {', '.join(tops)})")
            if _link_of(sim, p) is not None:
                raise PartitionError(f"partition group {i} names {p!r}, which is (inside) a link: "
                                     "links are cut between partitions, not placed in one")
            if p in seen:
                where = f"groups {seen[p]} and {i}" if seen[p] != i else f"group {i} twice"
                raise PartitionError(f"component {p!r} is in two partitions ({where})")
            seen[p] = i
    asg = Assignment(groups)
    left = _top_uncovered(sim, asg, seen)
    if left:
        raise PartitionError(f"component(s) {', '.join(left)} are in no partition: add them to a "
                             "group, or put '*' in one group to take every component not listed")
    cut_links, lat = [], []
    for link in sim.links:
        sides = {}
        for side, comp in link.side_of.items():
            o = asg.owner(comp)
            if o is None:
                raise PartitionError(f"link {link.path}: side {side} ({comp!r}) is in no partition: "
                                     f"list {comp!r} or a parent of it in one group")
            sides[side] = o
        if sides["a"] != sides["b"]:
            cut_links.append(link.path)
            lat.append(link.min_latency)
    link_sides = _link_socket_sides(sim)
    # sockets of unpartitioned containers
    part_of_sock: dict[int, int] = {}
    orphans = []
    for s in sim.sockets:
        comp = socket_component(sim, s, link_sides)
        o = asg.owner(comp)
        if o is None:
            orphans.append(s.path)
        else:
            part_of_sock[id(s)] = o
    if orphans:
        raise PartitionError(f"socket(s) {', '.join(sorted(orphans))} belong to no partition "
                             "(their module only contains partitioned components)")
    cuts = []
    for s in sim.sockets:
        if isinstance(s, InitiatorSocket) and s.target is not None:
            a, b = part_of_sock[id(s)], part_of_sock[id(s.target)]
            if a != b:
                cuts.append(f"{s.path} -> {s.target.path} (partition {a} -> {b})")
    if cuts:
        raise PartitionError("the partition cuts zero-latency socket binding(s), which are direct "
                             "calls and cannot cross processes: " + "; ".join(sorted(cuts)) +
                             ". Keep both ends in one partition, or put a tlm.Link between them.")
    unowned = sorted(p.name for p in sim.initial_processes if asg.owner(p.name) is None)
    if unowned:
        raise PartitionError(f"initial process(es) {', '.join(unowned)} belong to no partitioned "
                             "component: name processes after their module (module.spawn does)")
    return PartitionPlan(groups, min(lat) if lat else None, cut_links, [lk.path for lk in sim.links])


# ----- automatic partition -----------------------------------------------------------------------
def units(sim: Simulator) -> list[str]:
    """The placeable components: top-level non-link modules; a lone root is descended into."""
    def kids(prefix: str | None) -> list[str]:
        out = []
        for path, m in sim.modules.items():
            if isinstance(m, Link) or _link_of(sim, path) is not None:
                continue
            parent = path.rpartition(".")[0] if "." in path else None
            if parent == prefix:
                out.append(path)
        return sorted(out)

    level = kids(None)
    while len(level) == 1 and kids(level[0]):
        level = kids(level[0])
    return level


def auto_partition(sim: Simulator, processes: int,
                   weights: dict[str, float] | None = None) -> list[list[str]]:
    """Split into ``processes`` groups: components joined by socket bindings form atoms
    (union-find), atoms are balanced by weight (largest first onto the lightest group;
    ties by name), so the result is deterministic."""
    if processes < 1:
        raise PartitionError(f"--processes must be >= 1, got {processes}")
    us = units(sim)
    if not us:
        raise PartitionError("the platform has no components to partition")
    asg = Assignment([[u] for u in us])
    parent = list(range(len(us)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    link_sides = _link_socket_sides(sim)
    for s in sim.sockets:
        if isinstance(s, InitiatorSocket) and s.target is not None:
            a = asg.owner(socket_component(sim, s, link_sides))
            b = asg.owner(socket_component(sim, s.target, link_sides))
            if a is not None and b is not None:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    atoms: dict[int, list[str]] = {}
    for i, u in enumerate(us):
        atoms.setdefault(find(i), []).append(u)
    atom_list = sorted(atoms.values())
    if processes > len(atom_list):
        desc = "; ".join(",".join(a) for a in atom_list)
        raise PartitionError(f"cannot split into {processes} processes: the platform has only "
                             f"{len(atom_list)} group(s) of components that socket bindings keep "
                             f"together ({desc})")
    w = weights or {}
    weighted = sorted(((sum(float(w.get(u, 1.0)) for u in a), a) for a in atom_list),
                      key=lambda x: (-x[0], x[1]))
    load = [0.0] * processes
    groups: list[list[str]] = [[] for _ in range(processes)]
    for wt, a in weighted:
        k = min(range(processes), key=lambda j: (load[j], j))
        load[k] += wt
        groups[k] += a
    return sorted(sorted(g) for g in groups)


# ----- activation ---------------------------------------------------------------------------------
def check_quiet(sim: Simulator) -> None:
    """Refuse a platform that scheduled activity while being built (it would run in every
    process, including those that do not own the component)."""
    items = sim.pending_items()
    if items or sim.pending_posts():
        names = sorted({getattr(it, "name", None) or getattr(getattr(it, "fn", None), "__qualname__", repr(it))
                        for it in items})[:5]
        raise PartitionError("the platform scheduled activity while being built "
                             f"({', '.join(names) or 'link posts'}): components must spawn "
                             "processes instead of scheduling, notifying or writing signals at "
                             "construction, so that each process runs only its own partition")


def activate(sim: Simulator, asg: Assignment, index: int,
             remote: Callable[[Link], Callable | None]) -> list[str]:
    """Make ``sim`` simulate partition ``index`` only: drop initial processes of other
    partitions (at elaboration, after the builder's own elaboration hooks) and route
    cut links through ``remote(link)``. Returns the paths of the cut links."""
    check_quiet(sim)

    sim.on_elaboration(lambda: sim.keep_initial(lambda p: asg.owner(p.name) == index))
    cut = []
    for link in sim.links:
        a, b = asg.owner(link.side_of["a"]), asg.owner(link.side_of["b"])
        if a != b:
            link.remote = remote(link)
            cut.append(link.path)
    return cut
