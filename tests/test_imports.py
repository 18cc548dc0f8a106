"""Import structure: no module of tlm/, components/ or cosim/ on an import cycle, none
through cosim's core modules (top-level and function-level imports alike); a
single-process run loads neither ZeroMQ, cocotb nor matplotlib unless it uses them; the
CLI limits BLAS threads before numpy loads."""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cosim.threads import THREAD_VARS, limit_blas_threads

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(roots: tuple[str, ...] = ("cosim",)) -> dict[str, set[str]]:
    """Module of the ``roots`` packages -> the modules of theirs it imports anywhere in its
    source (ast walk: module level, inside functions and under TYPE_CHECKING)."""
    files = {_module_name(f): f for r in roots for f in sorted((ROOT / r).rglob("*.py"))}
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


def test_no_module_is_on_an_import_cycle():
    """File by file, with no exemption: no module of tlm/, components/ or cosim/ is on an
    import cycle. (The acyclic-siblings contract in pyproject.toml checks every package
    folder, subpackages as units, but exempts a few imports between cosim's subpackages;
    a new cycle between two files through one of those would pass it, not this.)"""
    bad = cycles(import_graph(("tlm", "components", "cosim")))
    assert bad == [], f"import cycles: {bad}"


def test_no_import_cycle_through_the_core_modules():
    """runner, checks, outcome, partitioned, plots, launch, results, ... and cosim.distributed:
    none of them is on an import cycle (partitioned depends on runner, never the reverse;
    outcome is plain data)."""
    graph = import_graph()
    core = {m for m in graph if m.count(".") == 1 or m.startswith("cosim.distributed")}
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


#: what a single-process TLM run without plots must not import (``-X importtime`` sees
#: every import, even one later dropped from sys.modules)
NOT_IN_A_PLAIN_RUN = ("zmq", "cocotb", "cocotb_tools", "matplotlib")


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    env.update(extra)
    return env


def import_chains(importtime: str, roots: tuple[str, ...]) -> dict[str, list[str]]:
    """From ``python -X importtime`` output (stderr): each imported module whose top-level
    package is in ``roots`` -> the chain of modules that imported it, outermost first."""
    rows = []
    for ln in importtime.splitlines():
        if ln.startswith("import time:") and ln.count("|") == 2:
            name = ln.split("|")[2]
            if name.strip() != "imported package":
                rows.append(((len(name) - len(name.lstrip())) // 2, name.strip()))
    out: dict[str, list[str]] = {}
    # importtime prints a module after its imports, indented one level deeper than it
    for i, (depth, name) in enumerate(rows):
        if name.split(".")[0] in roots and name not in out:
            chain, want = [name], depth - 1
            for d, parent in rows[i + 1:]:
                if d == want:
                    chain.insert(0, parent)
                    want -= 1
            out[name] = chain
    return out


def test_import_chains_reads_importtime_output():
    text = ("import time: self [us] | cumulative | imported package\n"
            "import time:        1 |          1 |       zmq.sugar\n"
            "import time:        1 |          2 |     zmq\n"
            "import time:        1 |          3 |   cosim.distributed\n"
            "import time:        1 |          4 | cosim.launch\n")
    assert import_chains(text, ("zmq",)) == {"zmq.sugar": ["cosim.launch", "cosim.distributed", "zmq", "zmq.sugar"],
                                             "zmq": ["cosim.launch", "cosim.distributed", "zmq"]}


def test_single_process_run_imports_no_zmq_cocotb_or_matplotlib(tmp_path):
    """``cosim run quickstart -q --no-plots`` under ``-X importtime``: none of
    NOT_IN_A_PLAIN_RUN is imported, directly or through anything else."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "cosim.cli", "run", "quickstart",
                           "-q", "--no-plots", "--out", str(tmp_path / "out")],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "import time:" in proc.stderr and "cosim.runner" in proc.stderr
    loaded = import_chains(proc.stderr, NOT_IN_A_PLAIN_RUN)
    assert loaded == {}, "imported by a plain run: " + "; ".join(
        " -> ".join(chain) for chain in list(loaded.values())[:5])


@pytest.mark.parametrize("preset, want", [({}, ("1", True)),
                                          ({"OPENBLAS_NUM_THREADS": "3"}, ("3", False)),
                                          ({"OMP_NUM_THREADS": "2"}, (None, False))])
def test_cli_limits_blas_threads_before_numpy_loads(preset, want):
    """Importing the CLI sets one OpenBLAS thread before numpy loads, unless the user set a
    thread count (then it leaves the environment alone)."""
    code = ("import os\nimport cosim.cli, cosim.threads\n"
            "print(repr((os.environ.get('OPENBLAS_NUM_THREADS'), cosim.threads.EFFECTIVE)))")
    env = {k: v for k, v in _env().items() if k not in THREAD_VARS}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, **preset},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == repr(want)


def test_the_installed_script_limits_blas_threads_before_numpy_loads(tmp_path):
    """The installed ``cosim`` console script (not ``python -m``): cosim.threads runs before
    any module loads numpy, whatever the entry point imports first (issue 32: the CLI's
    signal handlers imported numpy ahead of it, so OpenBLAS started one thread per core)."""
    script = Path(sys.executable).with_name("cosim")
    env = {k: v for k, v in _env().items() if k not in THREAD_VARS}
    proc = subprocess.run([str(script), "validate", "quickstart"], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    order = [ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")]
    assert "cosim.threads" in order and "numpy" in order
    assert order.index("cosim.threads") < order.index("numpy"), "numpy loaded before cosim.threads"


#: what the CLI must not load to parse its arguments or print help (issue 32: they cost
#: `cosim --help` 0.4 s of CPU); each command imports what it needs when it runs
NOT_FOR_HELP = ("numpy", "rich", "jsonschema", "yaml", "tlm", "matplotlib", "zmq", "cocotb")


@pytest.mark.parametrize("argv, code", [(["--help"], 0), (["validate", "--help"], 0), (["list", "--help"], 0),
                                        (["run", "--help"], 0), (["sweep", "--help"], 0), ([], 2),
                                        (["run", "--no-such-flag"], 2), (["no-such-command"], 2)])
def test_cli_help_and_usage_errors_load_nothing_heavy(argv, code):
    """``cosim --help``, a subcommand's help and a usage error, through the console script's
    entry point: none of NOT_FOR_HELP in sys.modules, and of the accelerator families only
    their declarations (``accelerators.<family>.plugin``), never their CLI or models."""
    run = ("import json, sys\n"
           f"sys.argv = ['cosim', *{argv!r}]\n"
           "from cosim.cli import main\n"
           "try:\n    rc = main()\nexcept SystemExit as e:\n    rc = e.code\n"
           "print(json.dumps({'rc': rc, 'modules': sorted(sys.modules)}))\n")
    proc = subprocess.run([sys.executable, "-c", run], cwd=ROOT, env=_env(COLUMNS="120"), capture_output=True,
                          text=True, timeout=120)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["rc"] == code, proc.stderr[-2000:]
    heavy = sorted(m for m in result["modules"] if m.split(".")[0] in NOT_FOR_HELP)
    assert heavy == [], f"cosim {' '.join(argv)} loaded {heavy[:10]}"
    family = [m for m in result["modules"] if m.startswith("accelerators.")]
    assert all(m.count(".") == 1 or m.endswith(".plugin") for m in family), family
    if argv and argv[0] in ("validate", "list", "run", "sweep"):
        assert "components.plugins" not in result["modules"], "a built-in command read the plug-in registry"


def test_cosim_help_lists_the_family_commands_and_each_keeps_its_own_parser():
    """``python -m cosim --help`` lists every family's command (under its family's
    description, its parser not loaded); ``cosim <family command> --help`` is the family's
    own parser."""
    from components.plugins import commands, families
    listed = subprocess.run([sys.executable, "-m", "cosim", "--help"], cwd=ROOT, env=_env(COLUMNS="200"),
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    for name, (family, _) in commands().items():
        assert re.search(rf"^\s+{name}\s+{re.escape(families()[family].doc)}", listed.stdout, re.M), listed.stdout
    own = subprocess.run([sys.executable, "-m", "cosim", "tensil", "--help"], cwd=ROOT, env=_env(COLUMNS="200"),
                         capture_output=True, text=True, timeout=120)
    assert own.returncode == 0, own.stderr[-2000:]
    assert "--board" in own.stdout and "--max-wall" in own.stdout


def test_limit_blas_threads_respects_any_thread_variable():
    env = {"MKL_NUM_THREADS": "4"}
    limit_blas_threads(env)
    assert env == {"MKL_NUM_THREADS": "4"}
    env = {}
    limit_blas_threads(env)
    assert env == {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "BLIS_NUM_THREADS": "1"}


def test_versions_read_without_importlib_metadata_agree_with_it():
    """cosim.results reads package versions for the manifest without importing
    importlib.metadata (start-up time); for every installed distribution it must answer
    what importlib.metadata answers, or defer to it."""
    from importlib import metadata

    from cosim.results import _dist_version, _wheel_version
    names = sorted({d.metadata["Name"] for d in metadata.distributions()}) + ["tlm-cosim"]
    for name in names:
        fast = _wheel_version(name)
        assert fast is None or fast == metadata.version(name), name
    assert _dist_version("surely-not-installed-pkg") == "not installed"
