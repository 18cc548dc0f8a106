"""Import structure of cosim: no import cycle through the core modules (top-level and
function-level imports alike), and a single-process run does not load ZeroMQ."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COSIM = ROOT / "cosim"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """cosim module -> the cosim modules it imports anywhere in its source (ast walk:
    module level, inside functions and under TYPE_CHECKING)."""
    files = {_module_name(f): f for f in sorted(COSIM.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, f in files.items():
        pkg = name if f.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    p = pkg
                    for _ in range(node.level - 1):
                        p = p.rpartition(".")[0]
                    base = f"{p}.{base}" if base else p
                for a in node.names:
                    deps.add(f"{base}.{a.name}" if f"{base}.{a.name}" in files else base)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_through_the_core_modules():
    """runner, checks, outcome, partitioned, plots, launch, results, ... and cosim.dist:
    none of them is on an import cycle (partitioned depends on runner, never the reverse;
    outcome is plain data)."""
    graph = import_graph()
    core = {m for m in graph if m.count(".") == 1 or m.startswith("cosim.dist")}
    assert {"cosim.runner", "cosim.checks", "cosim.outcome", "cosim.partitioned",
            "cosim.plots"} <= core
    bad = [c for c in cycles(graph) if core & set(c)]
    assert bad == [], f"import cycles through cosim's core: {bad}"
    assert "cosim.partitioned" not in graph["cosim.runner"]
    assert graph["cosim.outcome"] & {"cosim.runner", "cosim.checks", "cosim.partitioned"} == set()


def test_single_process_run_does_not_import_zmq(tmp_path):
    """``cosim run`` of the quickstart in one process: no zmq in sys.modules."""
    code = (
        "import json, sys\n"
        "from cosim.cli import main\n"
        f"rc = main(['run', 'quickstart', '-q', '--no-plots', '--out', {str(tmp_path / 'out')!r}])\n"
        "print(json.dumps({'rc': rc, 'loaded': sorted(m for m in sys.modules\n"
        "    if m.split('.')[0] == 'zmq')}))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"rc": 0, "loaded": []}
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["hash"]["link_events"] > 0     # links were hashed all the same
